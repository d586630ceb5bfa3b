"""BM25 as a sparse matrix gives rank-bm25's BM25Okapi scores."""

from __future__ import annotations

import numpy as np
import pytest
from rank_bm25 import BM25Okapi
from retrieval_samples import TOKEN_CORPUS as CORPUS

from aqgr.retrieval.lexical.bm25 import BM25Matrix
from aqgr.retrieval.spec import BM25_K1


@pytest.mark.parametrize(
    "query",
    [
        "dowry death".split(),
        "dowry dowry cruelty".split(),  # repeated terms count once per occurrence
        "husband wife wife cruelty unknownterm".split(),
        "nothing matches".split(),
        [],
    ],
)
@pytest.mark.parametrize("k1,b", [(BM25_K1, 0.75), (1.5, 0.3)])
def test_scores_equal_rank_bm25(query, k1, b):
    ours = BM25Matrix.build(CORPUS, k1=k1, b=b)
    theirs = BM25Okapi(CORPUS, k1=k1, b=b)
    np.testing.assert_allclose(ours.scores(query), theirs.get_scores(query), rtol=0, atol=1e-6)


def test_negative_idf_floor_matches():
    corpus = [["common", "a"], ["common", "b"], ["common", "c"], ["rare"]]
    np.testing.assert_allclose(
        BM25Matrix.build(corpus).scores(["common", "rare"]),
        BM25Okapi(corpus, k1=BM25_K1).get_scores(["common", "rare"]),
        atol=1e-9,
    )


def test_save_load_round_trip(tmp_path):
    bm = BM25Matrix.build(CORPUS)
    names = bm.save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names)
    again = BM25Matrix.load(tmp_path)
    assert again.terms == bm.terms and (again.k1, again.b, again.epsilon) == (bm.k1, bm.b, bm.epsilon)
    np.testing.assert_array_equal(again.scores(["dowry", "wife"]), bm.scores(["dowry", "wife"]))
    assert again.idf_map() == bm.idf_map()


def test_idf_is_rank_bm25s():
    assert BM25Matrix.build(CORPUS).idf_map() == pytest.approx(BM25Okapi(CORPUS).idf)


def test_corpus_without_terms():
    bm = BM25Matrix.build([[], []])
    assert bm.scores(["anything"]).tolist() == [0.0, 0.0]


def test_lucene_idf_falls_with_document_frequency_and_survives_save(tmp_path):
    # "common" is in 3 of 4 documents, "half" in 2, "rare" in 1: okapi's floor makes the
    # commoner term weigh more than "half"; Lucene's idf keeps them in rarity order.
    corpus = [["common", "half", "rare"], ["common", "half"], ["common"], ["other"]]
    okapi = BM25Matrix.build(corpus).idf_map()
    lucene = BM25Matrix.build(corpus, idf_kind="lucene")
    idf = lucene.idf_map()
    assert idf["rare"] > idf["half"] > idf["common"] > 0
    assert okapi["common"] > okapi["half"] == 0
    lucene.save(tmp_path, "x")
    loaded = BM25Matrix.load(tmp_path, "x")
    assert loaded.idf_kind == "lucene"
    np.testing.assert_allclose(loaded.scores(["half", "rare"]), lucene.scores(["half", "rare"]))
    with pytest.raises(ValueError, match="idf"):
        BM25Matrix.build(corpus, idf_kind="bm42")


def test_log_query_tf_damps_repeated_query_words_and_survives_save(tmp_path):
    """query_tf="log": a word said n times in the query weighs 1 + ln(n), not n, so a long
    query's most repeated word cannot outvote the rest; the index remembers the choice."""
    raw = BM25Matrix.build(CORPUS)
    log = BM25Matrix.build(CORPUS, query_tf="log")
    np.testing.assert_array_equal(log.scores(["dowry", "cruelty"]), raw.scores(["dowry", "cruelty"]))
    expected = (1 + np.log(3)) * raw.scores(["dowry"]) + raw.scores(["cruelty"])
    np.testing.assert_allclose(log.scores(["dowry"] * 3 + ["cruelty"]), expected, atol=1e-12)
    log.save(tmp_path, "q")
    assert BM25Matrix.load(tmp_path, "q").query_tf == "log"
    np.testing.assert_array_equal(BM25Matrix.load(tmp_path, "q").scores(["dowry"] * 3), log.scores(["dowry"] * 3))
    with pytest.raises(ValueError, match="query_tf"):
        BM25Matrix.build(CORPUS, query_tf="unique")
