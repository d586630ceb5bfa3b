"""BM25 implementations by name: rank-bm25.v1 (BM25Matrix, unchanged) and bm25s.v1 (the bm25s library)."""

from __future__ import annotations

import numpy as np
import pytest
from rank_bm25 import BM25Okapi
from retrieval_samples import TOKEN_CORPUS as CORPUS

import aqgr.eval.systems.bm25s  # noqa: F401 (registers bm25s.v1, the implementation compared with rank-bm25.v1)
from aqgr.foundation.errors import UnknownNameError
from aqgr.retrieval.lexical.bm25 import (
    DEFAULT_BM25,
    BM25Matrix,
    BM25Scorer,
    RankBM25,
    bm25_implementations,
)
from aqgr.retrieval.spec import BM25_B, BM25_K1

QUERIES = ["dowry death".split(), "husband wife wife cruelty unknownterm".split(), "land compensation".split()]


def lucene_scores(corpus, query, k1=BM25_K1, b=BM25_B):
    """Lucene's BM25 by hand: idf log(1 + (N - df + .5) / (df + .5)), tf / (tf + k1 (1 - b + b dl / avgdl))."""
    n = len(corpus)
    avgdl = sum(map(len, corpus)) / n
    out = np.zeros(n)
    for term in query:
        df = sum(term in doc for doc in corpus)
        if not df:
            continue
        idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
        for d, doc in enumerate(corpus):
            tf = doc.count(term)
            out[d] += idf * tf / (tf + k1 * (1 - b + b * len(doc) / avgdl))
    return out


def test_registry_names_and_default():
    assert {"rank-bm25.v1", "bm25s.v1"} <= set(bm25_implementations.names())
    assert DEFAULT_BM25 == "rank-bm25.v1"


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(
        UnknownNameError,
        match=r"unknown BM25 implementation 'bm25\.v9'; known BM25 implementations: .*bm25s\.v1.*rank-bm25\.v1",
    ):
        bm25_implementations.create("bm25.v9")


def test_rank_bm25_path_is_unchanged():
    impl = bm25_implementations.create("rank-bm25.v1")
    assert impl == RankBM25() and impl.params() == {"k1": BM25_K1, "b": BM25_B, "epsilon": 0.25}
    scorer = impl.build(CORPUS)
    assert isinstance(scorer, BM25Matrix) and isinstance(scorer, BM25Scorer)
    for query in QUERIES:
        np.testing.assert_array_equal(scorer.scores(query), BM25Matrix.build(CORPUS).scores(query))
        np.testing.assert_allclose(
            scorer.scores(query), BM25Okapi(CORPUS, k1=BM25_K1, b=BM25_B).get_scores(query), atol=1e-6
        )


# ------------------------------------------------------------------------------ bm25s.v1


@pytest.fixture
def bm25s_impl():
    pytest.importorskip("bm25s")
    return bm25_implementations.create("bm25s.v1")


def test_bm25s_defaults(bm25s_impl):
    assert bm25s_impl.params() == {"k1": BM25_K1, "b": BM25_B, "method": "lucene", "delta": 0.5, "dtype": "float32"}


@pytest.mark.parametrize("query", QUERIES)
def test_bm25s_lucene_scores_equal_the_formula(bm25s_impl, query):
    scores = bm25s_impl.build(CORPUS).scores(query)
    assert scores.dtype == np.float64 and scores.shape == (len(CORPUS),)
    np.testing.assert_allclose(scores, lucene_scores(CORPUS, query), rtol=1e-5, atol=1e-6)


def test_bm25s_ranks_a_tiny_corpus_sensibly(bm25s_impl):
    scorer = bm25s_impl.build(CORPUS)
    order = np.argsort(-scorer.scores("dowry death".split()), kind="stable")
    assert order[0] == 0 and order[1] == 3  # both dowry judgments first, the dowry death one on top
    assert scorer.scores("land compensation".split()).argmax() == 1


def test_bm25s_robertson_is_rank_bm25_without_the_idf_floor(bm25s_impl):
    """bm25s' robertson floors negative idf at 0; rank-bm25 with epsilon 0 does the same, and
    scales every term by (k1 + 1): the same ranking."""
    corpus = [["common", "a"], ["common", "b"], ["common", "c"], ["rare", "common"], ["x"]]
    robertson = bm25_implementations.create("bm25s.v1", method="robertson").build(corpus)
    rank_bm25 = bm25_implementations.create("rank-bm25.v1", epsilon=0.0).build(corpus)
    for query in (["common", "rare"], ["a", "common", "common"]):
        np.testing.assert_allclose(
            robertson.scores(query) * (BM25_K1 + 1), rank_bm25.scores(query), rtol=1e-5, atol=1e-6
        )


def test_bm25s_empty_and_unknown_queries_score_zero(bm25s_impl):
    scorer = bm25s_impl.build(CORPUS)
    for query in ([], ["unknownterm"], [""]):
        assert scorer.scores(query).tolist() == [0.0] * len(CORPUS)


def test_bm25s_corpus_without_terms(bm25s_impl):
    scorer = bm25s_impl.build([[], []])
    assert scorer.n_docs == 2 and scorer.scores(["anything"]).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("method", ["lucene", "robertson", "atire", "bm25l", "bm25+"])
def test_bm25s_methods_save_and_load(tmp_path, method):
    pytest.importorskip("bm25s")
    impl = bm25_implementations.create("bm25s.v1", method=method)
    scorer = impl.build(CORPUS)
    names = scorer.save(tmp_path, "fulltext")
    assert names == ["fulltext.bm25s"] and (tmp_path / "fulltext.bm25s").is_dir()
    again = impl.load(tmp_path, "fulltext")
    assert again.n_docs == len(CORPUS)
    for query in QUERIES:
        np.testing.assert_array_equal(again.scores(query), scorer.scores(query))
    assert scorer.scores(["dowry"])[0] > scorer.scores(["dowry"])[1]


def test_bm25s_load_refuses_other_parameters(tmp_path, bm25s_impl):
    bm25s_impl.build(CORPUS).save(tmp_path)
    with pytest.raises(ValueError, match="rebuild"):
        bm25_implementations.create("bm25s.v1", method="atire").load(tmp_path)


def test_bm25s_rejects_unknown_parameters():
    with pytest.raises(ValueError, match="unknown method 'bm25x'; known: lucene, robertson, atire, bm25l, bm25\\+"):
        bm25_implementations.create("bm25s.v1", method="bm25x")
    with pytest.raises(TypeError):
        bm25_implementations.create("bm25s.v1", epsilon=0.25)  # a rank-bm25 parameter
