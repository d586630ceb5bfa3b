"""An index build killed (SIGKILL) while embedding keeps the vectors of the batches it finished:
the rerun embeds only the rest. And the texts to embed go shortest first."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
from retrieval_samples import Counting

from aqgr.retrieval.dense.cache import EmbeddingCache, embed_with_cache
from aqgr.retrieval.dense.embedders import embedders
from aqgr.retrieval.embedded.index import IndexSpec, SummaryIndex

N_DOCS = 300  # one window each: 5 batches of 64 (the last one 44)
KILL_AT_CALL = 4  # three batches (192 windows) done when the process dies


def _texts(n: int) -> dict[str, dict[str, str]]:
    return {
        f"D{i}": {"facts": f"judgment {i} on the matter of case {i * 7919 % 1000} and rule {i % 13}"} for i in range(n)
    }


BUILD = textwrap.dedent(f"""
    import os, signal, sys
    from aqgr.retrieval.dense.cache import EmbeddingCache
    from aqgr.retrieval.dense.embedders import embedders
    from aqgr.retrieval.embedded.index import IndexSpec, SummaryIndex

    class DiesMidway:
        def __init__(self):
            self.inner = embedders.create("hashing.v1")
            self.name, self.dim, self.fingerprint, self.calls = self.inner.name, self.inner.dim, self.inner.fingerprint, 0

        def embed(self, texts):
            self.calls += 1
            if self.calls == {KILL_AT_CALL}:
                os.kill(os.getpid(), signal.SIGKILL)  # as kill -9: no cleanup, no atexit
            return self.inner.embed(texts)

    texts = {{f"D{{i}}": {{"facts": f"judgment {{i}} on the matter of case {{i * 7919 % 1000}} and rule {{i % 13}}"}} for i in range({N_DOCS})}}
    with EmbeddingCache(sys.argv[1]) as cache:
        SummaryIndex.from_texts(list(texts), texts, IndexSpec(embedder="hashing.v1"), cache=cache, embedder=DiesMidway())
    print("finished")  # never reached
""")


def test_killed_build_resumes_from_committed_batches(tmp_path):
    path = tmp_path / "embeddings.sqlite"
    killed = subprocess.run([sys.executable, "-c", BUILD, str(path)], capture_output=True, text=True, timeout=300)
    assert killed.returncode == -9, killed.stderr
    assert "finished" not in killed.stdout

    texts = _texts(N_DOCS)
    with EmbeddingCache(path) as cache:
        assert len(cache) == (KILL_AT_CALL - 1) * 64
        counting = Counting(embedders.create("hashing.v1"))
        index = SummaryIndex.from_texts(
            list(texts), texts, IndexSpec(embedder="hashing.v1"), cache=cache, embedder=counting
        )
        assert sum(map(len, counting.calls)) == N_DOCS - (KILL_AT_CALL - 1) * 64
        assert len(cache) == N_DOCS
    fresh = SummaryIndex.from_texts(list(texts), texts, IndexSpec(embedder="hashing.v1"))
    query = "the matter of case 17 and rule 4"
    assert index.retrieve(query, 10, retrievers=("dense",)) == fresh.retrieve(query, 10, retrievers=("dense",))


class _Measured(Counting):
    """Counting, plus what the embedder reads of each text (here: its number of words)."""

    def text_lengths(self, texts):
        return [len(t.split()) for t in texts]


def test_texts_embedded_shortest_first_by_what_the_embedder_reads():
    texts = ["a b c d", "aaaaaaaaaaaaaaaa", "a b", "a b c d", "x y z"]
    plain = Counting(embedders.create("hashing.v1"))
    vectors, n = embed_with_cache(plain, texts, batch_size=2)
    assert n == 4 and plain.calls == [["a b", "x y z"], ["a b c d", "aaaaaaaaaaaaaaaa"]]  # characters
    measured = _Measured(embedders.create("hashing.v1"))
    again, _ = embed_with_cache(measured, texts, batch_size=2)
    assert measured.calls == [["aaaaaaaaaaaaaaaa", "a b"], ["x y z", "a b c d"]]  # words; ties keep their order
    np.testing.assert_array_equal(vectors, again)
    np.testing.assert_array_equal(vectors, embedders.create("hashing.v1").embed(texts))  # rows in the given order
