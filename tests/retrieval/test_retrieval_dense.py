"""Windows, embedders, the embedding cache and query vectors."""

from __future__ import annotations

import numpy as np
import pytest
from retrieval_samples import Counting

from aqgr.foundation.errors import UnknownNameError
from aqgr.retrieval.dense.cache import EmbeddingCache, embed_with_cache
from aqgr.retrieval.dense.embedders import Embedder, embedders
from aqgr.retrieval.dense.windows import document_windows, embed_query, split_windows


def test_split_windows_on_word_boundaries():
    text = " ".join(f"word{i}" for i in range(500))
    windows = split_windows(text, 100)
    assert all(len(w) <= 100 for w in windows)
    assert " ".join(windows) == text
    assert split_windows("x" * 250, 100) == ["x" * 100, "x" * 100, "x" * 50]
    assert split_windows("   \n ", 100) == []


def test_document_windows_packs_short_slots_and_sees_every_slot():
    texts = {"parties": "A v. B", "case_number": "CA 1/2000", "facts": "f " * 300, "issues": "whether x"}
    windows = document_windows(texts, 200)
    assert windows[0].startswith("A v. B\nCA 1/2000")
    assert all(len(w) <= 200 for w in windows)
    assert "whether x" in windows[-1]
    assert document_windows({"facts": ""}, 200) == []


def test_hashing_embedder_deterministic_normalised():
    emb = embedders.create("hashing.v1")
    assert isinstance(emb, Embedder) and emb.dim == 384
    v = emb.embed(["dowry death of the wife", "dowry death of the wife", ""])
    assert v.dtype == np.float32 and v.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(v[:2], axis=1), 1.0, rtol=1e-6)
    assert np.array_equal(v[0], v[1]) and not v[2].any()
    assert emb.fingerprint == embedders.create("hashing.v1").fingerprint
    assert emb.fingerprint != embedders.create("hashing.v1", dim=128).fingerprint
    with pytest.raises(UnknownNameError, match="minilm-l6.v1"):
        embedders.create("bert.v9")


def test_cache_round_trip_and_hits(tmp_path):
    emb = Counting(embedders.create("hashing.v1"))
    texts = ["alpha beta", "gamma", "alpha beta"]
    with EmbeddingCache(tmp_path / "cache.sqlite") as cache:
        first, n = embed_with_cache(emb, texts, cache)
        assert n == 2 and emb.calls == [["gamma", "alpha beta"]] and len(cache) == 2  # shortest first
    with EmbeddingCache(tmp_path / "cache.sqlite") as cache:  # reopened from disk
        again, n = embed_with_cache(emb, texts, cache)
        assert n == 0 and len(emb.calls) == 1
        np.testing.assert_array_equal(first, again)
        assert cache.get_many("other-fingerprint", ["gamma"]) == [None]


class _Held:
    """An embedder whose first call waits until released (another thread can ask meanwhile);
    it fails that first call when told to. Records each call's texts."""

    def __init__(self, fail_first: bool = False):
        import threading

        self.inner = embedders.create("hashing.v1")
        self.name, self.dim, self.fingerprint = self.inner.name, self.inner.dim, self.inner.fingerprint
        self.calls: list[list[str]] = []
        self.entered, self.release = threading.Event(), threading.Event()
        self.fail_first = fail_first

    def embed(self, texts):
        self.calls.append(list(texts))
        if len(self.calls) == 1:
            self.entered.set()
            assert self.release.wait(5)
            if self.fail_first:
                raise RuntimeError("model crashed")
        return self.inner.embed(texts)


def _in_thread(call):
    import threading

    out: dict = {}

    def run():
        try:
            out["value"] = call()
        except Exception as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def test_a_text_another_thread_is_embedding_is_waited_for_not_embedded_twice():
    from aqgr.retrieval.dense.embedders import MemoEmbedder

    held = _Held()
    memo = MemoEmbedder(held)
    first, got_first = _in_thread(lambda: memo.embed(["dowry death"]))
    assert held.entered.wait(5)
    second, got_second = _in_thread(lambda: memo.embed(["dowry death", "cruelty"]))
    import time

    time.sleep(0.05)  # the second thread is waiting for "dowry death", having embedded "cruelty"
    held.release.set()
    first.join(5), second.join(5)
    assert held.calls == [["dowry death"], ["cruelty"]]
    expected = held.inner.embed(["dowry death", "cruelty"])
    assert np.array_equal(got_first["value"][0], expected[0]) and np.array_equal(got_second["value"], expected)


def test_a_thread_waiting_for_a_text_whose_embedding_failed_embeds_it_itself():
    from aqgr.retrieval.dense.embedders import MemoEmbedder

    held = _Held(fail_first=True)
    memo = MemoEmbedder(held)
    first, got_first = _in_thread(lambda: memo.embed(["dowry death"]))
    assert held.entered.wait(5)
    second, got_second = _in_thread(lambda: memo.embed(["dowry death"]))
    import time

    time.sleep(0.05)
    held.release.set()
    first.join(5), second.join(5)
    assert isinstance(got_first["error"], RuntimeError)
    assert np.array_equal(got_second["value"], held.inner.embed(["dowry death"]))
    assert np.array_equal(memo.embed(["dowry death"]), got_second["value"])  # nothing half-made stays memoised


def test_a_querys_window_calls_make_the_vector_embed_query_makes():
    from aqgr.retrieval.dense.windows import QueryVectors

    text = " ".join(f"word{i} dowry cruelty" for i in range(120))
    counting = Counting(embedders.create("hashing.v1"))
    vectors = QueryVectors(counting, window_chars=300)
    calls = vectors.calls(text)
    assert len(calls) == len(split_windows(text, 300)) > 2
    for call in calls[::-1]:  # in any order, on any thread
        call()
    assert all(len(texts) == 1 for texts in counting.calls)  # one window a model call
    before = len(counting.calls)
    assert np.array_equal(vectors.one(text), embed_query(text, embedders.create("hashing.v1"), 300))
    assert len(counting.calls) == before  # every window was ready
    known = QueryVectors(counting, window_chars=300, known={"a known question": np.ones(3, dtype=np.float32)})
    assert known.calls("a  known\nquestion") == []


def test_a_querys_vector_is_kept_read_only_and_the_oldest_forgotten(monkeypatch):
    """A text asked for again gets the vector it got, without windowing or embedding it again; the
    vector cannot be changed by one caller under another; past VECTORS_KEPT texts the oldest is
    made again (from the windows' memo: the model is not called)."""
    from aqgr.retrieval.dense import windows as dense
    from aqgr.retrieval.dense.windows import QueryVectors

    monkeypatch.setattr(QueryVectors, "VECTORS_KEPT", 2)
    counting = Counting(embedders.create("hashing.v1"))
    vectors = QueryVectors(counting, window_chars=300)
    facts = " ".join(f"word{i} dowry cruelty" for i in range(60))
    first = vectors.one(facts)
    assert np.array_equal(first, embed_query(facts, embedders.create("hashing.v1"), 300))
    windowed = []
    monkeypatch.setattr(dense, "split_windows", lambda *a: windowed.append(a) or split_windows(*a))
    assert vectors.one(facts) is first and windowed == [] and len(counting.calls) == 1
    with pytest.raises(ValueError):
        first[0] = 1.0
    vectors.one("a question"), vectors.one("another question")  # facts is now the oldest of three
    again = vectors.one(facts)
    assert again is not first and np.array_equal(again, first) and len(windowed) == 3 and len(counting.calls) == 3


def test_many_looks_the_known_texts_up_together_and_embeds_the_others_in_one_call():
    from aqgr.retrieval.dense.windows import QueryVectors

    class Known(dict):
        """A store's known vectors, counting how it is asked."""

        def __init__(self, *args):
            super().__init__(*args)
            self.asked: list = []

        def get(self, key, default=None):
            self.asked.append(("get", key))
            return super().get(key, default)

        def get_many(self, keys):
            self.asked.append(("get_many", sorted(keys)))
            return {k: self[k] for k in keys if k in self}

    known = Known(
        {"a known issue": np.ones(3, dtype=np.float32), "another known issue": np.full(3, 2.0, dtype=np.float32)}
    )
    counting = Counting(embedders.create("hashing.v1"))
    vectors = QueryVectors(counting, window_chars=300, known=known)
    got = vectors.many(["a known  issue", "a new question", "another known issue", "a known  issue"])
    assert known.asked[0] == ("get_many", ["a known issue", "a new question", "another known issue"])
    assert ("get", "a known issue") not in known.asked and len(counting.calls) == 1  # the new one, one call
    assert np.array_equal(got[0], known["a known issue"]) and got[3] is got[0]
    assert np.array_equal(got[1], embed_query("a new question", embedders.create("hashing.v1"), 300))
