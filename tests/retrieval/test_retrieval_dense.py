"""Windows, embedders, the embedding cache and the dense index."""

from __future__ import annotations

import numpy as np
import pytest

from aqgr.foundation.errors import UnknownNameError
from aqgr.retrieval.dense import DenseIndex, document_windows, embed_query, split_windows
from aqgr.retrieval.embed_cache import EmbeddingCache, embed_with_cache
from aqgr.retrieval.embedders import Embedder, embedders
from retrieval_samples import Counting


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


def test_dense_index_max_over_windows(tmp_path):
    emb = embedders.create("hashing.v1")
    docs = [["land acquisition compensation", "dowry death of the bride"], ["income tax deduction"], []]
    dense, n = DenseIndex.build(docs, emb)
    assert n == 3 and dense.index.ntotal == 3
    q = embed_query("dowry death of the bride", emb)
    scores = dense.scores(q)
    assert scores[0] == pytest.approx(1.0, abs=1e-5) and scores[1] < 0.5 and scores[2] == -np.inf
    dense.save(tmp_path)
    np.testing.assert_array_equal(DenseIndex.load(tmp_path).scores(q), scores)
    assert embed_query("   ", emb) is None
