"""The Milvus backend (retrieval/milvus.py) against milvus-lite, started by the test itself.

milvus-lite (pure Python) serves a local path embedded, over gRPC on 127.0.0.1. It stands in
for a cluster: its BM25 scores differ from one (sign, absolute values), so these tests
compare rankings and overlap with the embedded backend, never raw scores.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pymilvus", reason="pymilvus not installed: pip install 'aqgr[milvus]'")
pytest.importorskip("milvus_lite", reason="milvus-lite not installed: pip install 'aqgr[milvus]'")

from datetime import UTC

from aqgr.retrieval.backends import backend_class, load_index, recorded_backend  # noqa: E402
from aqgr.retrieval.embedded.index import IndexSpec, SummaryIndex  # noqa: E402
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
    from aqgr.foundation.errors import IndexMismatchError

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
    from retrieval_samples import Counting

    from aqgr.retrieval.dense.embedders import embedders

    counting = Counting(embedders.create("hashing.v1"))
    built = MilvusIndex.build(corpus, hashing_spec, uri=str(tmp_path / "s.db"), embedder=counting)
    try:
        built.save(tmp_path / "index")
        issue = corpus[0].issues[0]
        loaded = MilvusIndex.load(tmp_path / "index", expect=hashing_spec, embedder=counting)
        assert loaded.manifest["sentences"] == ["sentences.npz"]
        calls = len(counting.calls)
        assert loaded.embed_query(issue) is not None and len(counting.calls) == calls
        assert (
            loaded.embed_query("A question nobody harvested about land.") is not None
            and len(counting.calls) == calls + 1
        )
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
    assert milvus.hybrid(query, 3, restrict={"C2"}) and {
        d.doc_id for d in milvus.hybrid(query, 3, restrict={"C2"})
    } == {"C2"}


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


# --- updates (the contract itself: tests/retrieval/test_index_contract.py) -----------------


def _new_summaries():
    from datetime import datetime

    from retrieval_samples import summary

    from aqgr.schemas.summary import Provenance

    tenancy = summary(
        "C6",
        facts="The landlord sought eviction of the tenant for arrears of rent.",
        issues=["Whether the tenant can be evicted for default in paying rent under the Rent Control Act."],
        reasoning="Wilful default in paying rent justifies the eviction of the tenant.",
    )
    later = Provenance(
        engine="other.v1",
        engine_version="2",
        source_sha256="2" * 64,
        created_at=datetime(2026, 2, 1, tzinfo=UTC),
    )
    arbitration = summary(
        "C2",
        facts="An arbitral award was challenged as patently illegal.",
        issues=["Whether the arbitral award can be set aside under Section 34 of the Arbitration Act."],
        reasoning="The arbitral award was set aside for patent illegality.",
    ).model_copy(update={"provenance": later})
    return tenancy, arbitration


def test_update_keeps_the_rebuilt_index_statistics_and_embeds_only_the_change(tmp_path, corpus, hashing_spec):
    """idf, windows and dense runs equal a rebuild's over the same summaries; only the new
    summaries' windows and issue sentences reach the model; replaced ids keep their place."""
    from retrieval_samples import Counting

    from aqgr.retrieval.dense.embedders import embedders
    from aqgr.retrieval.dense.windows import document_windows
    from aqgr.retrieval.documents import dense_texts, query_sentences, slot_texts

    tenancy, arbitration = _new_summaries()
    counting = Counting(embedders.create("hashing.v1"))
    index = MilvusIndex.build(corpus, hashing_spec, uri=str(tmp_path / "m.db"), embedder=counting)
    final = [s for s in corpus if s.judgment_id not in ("C2", "C3")] + [arbitration, tenancy]
    rebuilt = MilvusIndex.build(final, hashing_spec, uri=str(tmp_path / "m.db"))
    try:
        counting.calls.clear()
        assert index.update([arbitration, tenancy], removed=["C3"]) == {"added": 1, "replaced": 1, "removed": 1}
        windows = [
            w
            for s in (arbitration, tenancy)
            for w in document_windows(
                dense_texts(slot_texts(s, hashing_spec.slots), hashing_spec.dense_slots), hashing_spec.window_chars
            )
        ]
        embedded = [t for call in counting.calls for t in call]
        assert sorted(embedded) == sorted(
            set(windows) | {t for s in (arbitration, tenancy) for t in query_sentences(s.issues)}
        )
        assert index.doc_ids == ("C1", "C2", "C4", "C5", "C6")
        assert index.idf() == rebuilt.idf() and index.manifest["n_terms"] == rebuilt.manifest["n_terms"]
        assert index.manifest["n_windows"] == rebuilt.manifest["n_windows"]
        count = index._client.query(index.collection, filter="", output_fields=["count(*)"])[0]["count(*)"]
        assert count == index.manifest["n_windows"]
        for query in ("dowry death of the wife by burns", "arbitral award set aside", "eviction of a tenant for rent"):
            got, want = (i.retrieve(query, 5, retrievers=["dense"])["dense"] for i in (index, rebuilt))
            assert [d.doc_id for d in got] == [d.doc_id for d in want]
            assert np.allclose([d.score for d in got], [d.score for d in want], atol=1e-6)
            # BM25 statistics are per segment on milvus-lite: the same documents match, scores differ
            got, want = (i.retrieve(query, 5, retrievers=["bm25"])["bm25"] for i in (index, rebuilt))
            assert {d.doc_id for d in got} == {d.doc_id for d in want}
    finally:
        index.drop()
        rebuilt.drop()


def test_update_records_a_generation_and_a_stale_manifest_is_refused(tmp_path, corpus, hashing_spec):
    from aqgr.foundation.errors import IndexMismatchError

    tenancy, arbitration = _new_summaries()
    index = MilvusIndex.build(corpus, hashing_spec, uri=str(tmp_path / "m.db"))
    try:
        index.save(tmp_path / "index")
        assert index.manifest["generation"] == 0 and index.manifest["summarizer"] == "test.v1"
        index.update([tenancy])
        manifest = index.manifest
        assert manifest["generation"] == 1 and manifest["updated_at"] >= manifest["created_at"]
        assert manifest["last_update"]["added"] == 1 and "sha256" not in manifest
        with pytest.raises(IndexMismatchError, match="generation 1, the manifest at 0"):
            MilvusIndex.load(tmp_path / "index")  # saved before the update: no longer the collection
        index.update([arbitration])  # another engine wrote this one
        assert "summarizer" not in index.manifest and index.manifest["generation"] == 2
        index.save(tmp_path / "index")
        loaded = MilvusIndex.load(tmp_path / "index", expect=hashing_spec)
        assert loaded.manifest["generation"] == 2 and loaded.doc_ids == index.doc_ids
        loaded.update([], removed=["C2"])
        assert loaded.manifest["summarizer"] == "test.v1"  # every indexed summary is test.v1's again
    finally:
        index.drop()


def test_an_update_failing_half_way_leaves_a_manifest_load_refuses(tmp_path, corpus, hashing_spec, monkeypatch):
    from aqgr.foundation.errors import IndexMismatchError

    tenancy, _ = _new_summaries()
    index = MilvusIndex.build(corpus, hashing_spec, uri=str(tmp_path / "m.db"))
    try:
        index.save(tmp_path / "index")

        def broken(*args, **kwargs):
            raise RuntimeError("Milvus went away")

        monkeypatch.setattr(index._client, "insert", broken)
        with pytest.raises(RuntimeError):
            index.update([tenancy], removed=["C3"])
        with pytest.raises(IndexMismatchError, match="generation 1, the manifest at 0") as info:
            MilvusIndex.load(tmp_path / "index")
        assert "rebuild" in str(info.value)
    finally:
        monkeypatch.undo()
        index.drop()


def test_update_embeds_new_issue_sentences_and_drops_removed_ones(tmp_path, corpus, hashing_spec):
    from retrieval_samples import Counting

    from aqgr.retrieval.dense.embedders import embedders

    tenancy, _ = _new_summaries()
    counting = Counting(embedders.create("hashing.v1"))
    index = MilvusIndex.build(corpus, hashing_spec, uri=str(tmp_path / "m.db"), embedder=counting)
    try:
        index.update([tenancy], removed=["C1"])
        index.save(tmp_path / "index")
        loaded = MilvusIndex.load(tmp_path / "index", embedder=counting)
        calls = len(counting.calls)
        assert loaded.embed_query(tenancy.issues[0]) is not None and len(counting.calls) == calls  # held
        assert loaded.embed_query(corpus[1].issues[0]) is not None and len(counting.calls) == calls
        assert loaded.embed_query(corpus[0].issues[0]) is not None and len(counting.calls) == calls + 1  # C1's: dropped
    finally:
        index.drop()


def test_a_reader_older_than_an_update_returns_only_judgments_it_knows(tmp_path, corpus, hashing_spec):
    tenancy, _ = _new_summaries()
    index = MilvusIndex.build(corpus, hashing_spec, uri=str(tmp_path / "m.db"))
    try:
        index.save(tmp_path / "index")
        older = MilvusIndex.load(tmp_path / "index")
        index.update([tenancy])
        assert index.retrieve("eviction of the tenant for rent", 3)["bm25"][0].doc_id == "C6"
        for run in older.retrieve("eviction of the tenant for rent", 10).values():
            assert {d.doc_id for d in run} <= set(older.doc_ids)
    finally:
        index.drop()


def test_terms_are_cut_on_a_term_boundary():
    from aqgr.retrieval.milvus import _terms_text

    assert _terms_text(["ab", "cd", "ef"], limit=8) == "ab cd ef"
    assert _terms_text(["ab", "cd", "ef"], limit=7) == "ab cd"
    assert _terms_text(["ab", "cd", "ef"], limit=5) == "ab cd"
    assert _terms_text(["ab", "cé", "ef"], limit=5) == "ab"  # é is two bytes: "ab cé" is 6
    assert _terms_text(["abcdef"], limit=3) == ""
