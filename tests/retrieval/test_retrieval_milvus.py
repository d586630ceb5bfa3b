"""The Milvus backend (retrieval/milvus.py) against milvus-lite, started by the test itself.

milvus-lite (pure Python) serves a local path embedded, over gRPC on 127.0.0.1. It stands in
for a cluster: its BM25 scores differ from one (sign, absolute values), so these tests
compare rankings and overlap with the embedded backend, never raw scores.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pymilvus", reason="pymilvus not installed: pip install 'aqgr[milvus]'")
pytest.importorskip("milvus_lite", reason="milvus-lite not installed: pip install 'aqgr[milvus]'")

from aqgr.retrieval.backends import backend_class, load_index, recorded_backend  # noqa: E402
from aqgr.retrieval.index import IndexSpec, SummaryIndex  # noqa: E402
from aqgr.retrieval.milvus import MilvusIndex, filter_expr  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
SCENARIOS = json.loads((SAMPLE / "scenarios.json").read_text(encoding="utf-8"))
# Stated agreement with the embedded backend on the sample scenarios (hashing embedder):
# mean top-5 overlap per retriever at least 0.8, and never below 0.6 for one query.
MEAN_OVERLAP, MIN_OVERLAP = 0.8, 0.6


@pytest.fixture
def milvus(tmp_path, corpus, hashing_spec):
    index = MilvusIndex.build(corpus, hashing_spec, uri=str(tmp_path / "milvus.db"))
    index.save(tmp_path / "index")
    yield index
    index.drop()


def test_filter_expression_quotes_ids():
    assert filter_expr(None, None) == ""
    assert filter_expr({"b", 'a"x'}, {"c"}) == 'doc_id in ["a\\"x", "b"] and doc_id not in ["c"]'


def test_retrieve_matches_the_embedded_rankings_on_the_tiny_corpus(milvus, index):
    for query in ("dowry death of the wife by burns", "market value compensation for acquired land"):
        for name in ("bm25", "dense"):
            got = [d.doc_id for d in milvus.retrieve(query, 3, retrievers=(name,))[name]]
            want = [d.doc_id for d in index.retrieve(query, 3, retrievers=(name,))[name]]
            assert got[:1] == want[:1] and set(got) == set(want), (query, name, got, want)


def test_restrict_exclude_and_edge_cases(milvus, corpus):
    ids = [s.judgment_id for s in corpus]
    query = "dowry death of the wife by burns"
    runs = milvus.retrieve(query, 10, restrict={ids[1], ids[2]}, exclude={ids[2]})
    for run in runs.values():
        assert {d.doc_id for d in run} <= {ids[1]}
    assert milvus.retrieve(query, 10, restrict=set()) == {"bm25": [], "dense": []}
    assert milvus.retrieve(query, 0) == {"bm25": [], "dense": []}
    assert milvus.retrieve("zzzz qqqq", 5, retrievers=("bm25",)) == {"bm25": []}
    dense = milvus.retrieve(query, 10, retrievers=("dense",))["dense"]
    assert len({d.doc_id for d in dense}) == len(dense) == len(ids)  # one hit per document (group by)
    assert [d.score for d in dense] == sorted((d.score for d in dense), reverse=True)


def test_save_load_and_backend_dispatch(milvus, tmp_path, hashing_spec, corpus):
    assert recorded_backend(tmp_path / "index") == "milvus.v1"
    loaded = load_index(tmp_path / "index", expect=hashing_spec)
    assert isinstance(loaded, MilvusIndex) and loaded.doc_ids == milvus.doc_ids and len(loaded) == len(corpus)
    assert loaded.texts(corpus[0].judgment_id)["case_number"] == corpus[0].case_number
    assert loaded.idf() and all(v > 0 for v in loaded.idf().values())
    from aqgr.errors import IndexMismatchError

    with pytest.raises(IndexMismatchError):
        load_index(tmp_path / "index", expect=IndexSpec(embedder="hashing.v1", slots=("facts",)))
    assert backend_class("embedded") is SummaryIndex


def test_rebuild_swaps_the_collection_and_drops_the_old_one(milvus, tmp_path, corpus, hashing_spec):
    again = MilvusIndex.build(corpus, hashing_spec, uri=str(tmp_path / "milvus.db"))
    again.save(tmp_path / "index")
    assert again.collection != milvus.collection
    assert not again._client.has_collection(milvus.collection)
    assert load_index(tmp_path / "index").collection == again.collection


def test_the_collection_scores_bm25_with_the_spec_parameters(milvus, hashing_spec):
    # pymilvus 3 sends index params flat; milvus-lite reads only a "params" pair and fell back to k1 = 1.5.
    info = milvus._client.describe_index(milvus.collection, "sparse")
    params = info.get("params", info)
    assert float(params["bm25_k1"]) == hashing_spec.bm25_k1 and float(params["bm25_b"]) == hashing_spec.bm25_b


def test_issue_sentences_are_embedded_once_and_kept_beside_the_manifest(tmp_path, corpus, hashing_spec):
    """As on the embedded backend: ranking a harvested question (an issue) costs no model call."""
    from aqgr.retrieval.embedders import embedders
    from retrieval_samples import Counting

    counting = Counting(embedders.create("hashing.v1"))
    built = MilvusIndex.build(corpus, hashing_spec, uri=str(tmp_path / "s.db"), embedder=counting)
    try:
        built.save(tmp_path / "index")
        issue = corpus[0].issues[0]
        loaded = MilvusIndex.load(tmp_path / "index", expect=hashing_spec, embedder=counting)
        assert loaded.manifest["sentences"] == ["sentences.npz"]
        calls = len(counting.calls)
        assert loaded.embed_query(issue) is not None and len(counting.calls) == calls
        assert loaded.embed_query("A question nobody harvested about land.") is not None and len(counting.calls) == calls + 1
    finally:
        built.drop()


def test_refuses_an_idf_milvus_does_not_compute(tmp_path, corpus, hashing_spec):
    with pytest.raises(ValueError, match="Lucene"):
        MilvusIndex.build(corpus, hashing_spec.model_copy(update={"bm25_idf": "okapi"}), uri=str(tmp_path / "m.db"))


def test_hybrid_search_with_milvus_rankers(milvus):
    query = "presumption under Section 113-B of the Evidence Act when the wife died of burns: dowry death"
    for ranker in ("rrf", "weighted"):
        hits = milvus.hybrid(query, 3, ranker=ranker)
        assert hits and len({d.doc_id for d in hits}) == len(hits)
        assert hits[0].doc_id == "C1"
    assert milvus.hybrid(query, 3, restrict={"C2"}) and {d.doc_id for d in milvus.hybrid(query, 3, restrict={"C2"})} == {"C2"}


@pytest.fixture(scope="module")
def sample_archive(tmp_path_factory):
    from aqgr import Archive

    archive = Archive(tmp_path_factory.mktemp("milvus-sample"))
    report = archive.summarize([SAMPLE / "judgments"])
    assert not report.failed
    return archive


def test_sample_archive_agreement_and_searcher_unchanged(sample_archive, tmp_path):
    spec = IndexSpec(embedder="hashing.v1")
    summaries = sample_archive.summaries()
    embedded = SummaryIndex.build(summaries, spec)
    manifest = sample_archive.build_index(spec=spec, backend="milvus", uri=str(tmp_path / "milvus.db"))
    assert manifest["backend"] == "milvus.v1" and manifest["milvus"]["uri"] == str(tmp_path / "milvus.db")
    searcher = sample_archive._searcher()
    assert isinstance(searcher.index, MilvusIndex)

    overlaps = {"bm25": [], "dense": []}
    for scenario in SCENARIOS:
        for name in overlaps:
            got = {d.doc_id for d in searcher.index.retrieve(scenario["facts"], 5, retrievers=(name,))[name]}
            want = {d.doc_id for d in embedded.retrieve(scenario["facts"], 5, retrievers=(name,))[name]}
            overlaps[name].append(len(got & want) / 5)
    for name, values in overlaps.items():
        assert sum(values) / len(values) >= MEAN_OVERLAP and min(values) >= MIN_OVERLAP, (name, values)

    for scenario in SCENARIOS:  # the Searcher, unchanged, over the Milvus index
        result = sample_archive.search(scenario["facts"])
        assert result.hits and result.questions
        assert {h.judgment_id for h in result.hits} <= set(embedded.doc_ids)
        top = [h.judgment_id for h in result.hits[:5]]
        assert any(wanted in top for wanted in scenario["relevant"]), (scenario["id"], top)
    searcher.index.drop()
