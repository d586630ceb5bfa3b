"""The `Index` contract (retrieval/protocol.py), one suite run against every backend.

Each backend is built through retrieval/backends.py `build_index` (the registry, as the
archive does) over the tiny corpus of retrieval_samples.py with the hashing embedder:
`embedded` (SummaryIndex), `embedded+fulltext` (SummaryIndex with the optional full-text
retriever) and `milvus` (MilvusIndex on milvus-lite, skipped when it is not installed).
What differs between backends by design (raw scores, the full-text retriever) is not
asserted here; tests/retrieval/test_retrieval_milvus.py compares their rankings.

The update tests (`update(added, removed)`, `fingerprints()`) build a fresh index each, since
an update changes it (on Milvus, its collection) in place.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime

import numpy as np
import pytest
from retrieval_samples import CORPUS, summary

from aqgr.foundation.errors import EmptyArchiveError, IndexMismatchError, NoIndexError, UnknownNameError
from aqgr.retrieval.backends import backend_class, build_index, canonical, load_index
from aqgr.retrieval.documents import slot_texts, summary_fingerprint
from aqgr.retrieval.protocol import Filterable, Index, Rescoring
from aqgr.retrieval.spec import IndexSpec
from aqgr.retrieval.types import ranked
from aqgr.schemas.summary import Provenance

SPEC = IndexSpec(embedder="hashing.v1")
IDS = [s.judgment_id for s in CORPUS]


def full_text(s) -> str:
    return f"{s.facts} {' '.join(s.issues)} {s.reasoning}"


FULL_TEXTS = {s.judgment_id: full_text(s) for s in CORPUS}
QUERIES = (
    "dowry death of the wife by burns",
    "market value compensation for acquired land",
    "section 304B IPC cruelty soon before death",
    "zzzz qqqq",
)

# (backend name, build with the judgments' full texts)
BACKENDS = {
    "embedded": ("embedded", False),
    "embedded+fulltext": ("embedded", True),
    "milvus": ("milvus", False),
}


BACKENDS_KIND = {name: kind for name, (kind, _) in BACKENDS.items()}


def _needs(backend: str) -> None:
    if backend == "milvus":
        pytest.importorskip("pymilvus", reason="pymilvus not installed: pip install 'aqgr[milvus]'")
        pytest.importorskip("milvus_lite", reason="milvus-lite not installed: pip install 'aqgr[milvus]'")


def _build(backend: str, full: bool, where, summaries=CORPUS, spec=SPEC):
    cls = backend_class(backend)
    return build_index(
        summaries,
        spec,
        backend=backend,
        uri=str(where / "milvus.db") if cls.needs_uri else None,
        full_texts=FULL_TEXTS.get if full else None,
    )


@pytest.fixture(scope="module", params=list(BACKENDS))
def built(request, tmp_path_factory):
    """(backend, the index as built, its directory after save, the index loaded back); the
    optional full-text retriever is there when the build was given full texts and the backend takes them."""
    backend, full = BACKENDS[request.param]
    _needs(backend)
    where = tmp_path_factory.mktemp(request.param.replace("+", "-"))
    index = _build(backend, full, where)
    directory = index.save(where / "index")
    loaded = load_index(directory, expect=SPEC)
    assert ("fulltext" in loaded.retrievers) == (full and backend_class(backend).takes_full_texts)
    yield backend, index, directory, loaded
    if hasattr(index, "drop"):  # a server backend: the collection outlives the process otherwise
        index.drop()


def test_both_are_an_index(built):
    backend, index, _, loaded = built
    assert isinstance(index, Index) and isinstance(loaded, Index)
    assert type(loaded) is type(index) is backend_class(backend)
    assert index.backend == canonical(backend)
    assert set(loaded.retrievers) <= set(type(index).serves)  # what the evaluation plans with


# What each backend claims of the optional protocols (retrieval/protocol.py); the search checks them
# by type, so a backend that claims one must keep it, and one that does not is searched without it.
OPTIONAL = {"embedded": {Filterable, Rescoring}, "milvus": set()}


def test_the_optional_protocols_each_backend_claims_hold(built):
    backend, index, directory, loaded = built
    claimed = OPTIONAL[BACKENDS_KIND[backend]]
    for protocol in (Filterable, Rescoring):
        assert isinstance(loaded, protocol) == (protocol in claimed), (backend, protocol.__name__)
    assert isinstance(loaded.location, str) and loaded.location
    if Filterable in claimed:
        everything = loaded.ns_of(IDS)
        assert loaded.ids_of(everything) == IDS and loaded.facets is not None
        assert set(loaded.admitted(everything)) == set(IDS)
        assert {
            d.doc_id for d in loaded.retrieve(QUERIES[0], 10, restrict=loaded.admitted(everything[:2]))["bm25"]
        } <= set(IDS[:2])
    if Rescoring in claimed:
        facts, question = QUERIES[0], "section 304B IPC " + QUERIES[0]
        base = loaded.retrieve(facts, 100, retrievers=["bm25"], max_df={"bm25": 1.0})
        again = loaded.rescore(question, facts, base)
        assert {d.doc_id for d in again["bm25"]} == {d.doc_id for d in base["bm25"]}  # a re-ranking, not a search


def test_build_save_load_round_trip(built):
    _, index, directory, loaded = built
    assert loaded.doc_ids == index.doc_ids == tuple(IDS) and len(loaded) == len(index) == len(IDS)
    assert loaded.retrievers == index.retrievers and "bm25" in index.retrievers and "dense" in index.retrievers
    assert loaded.spec == index.spec == SPEC
    assert list(loaded.doc_ids) == IDS and json.loads((directory / "manifest.json").read_text())["n_docs"] == len(IDS)
    for doc_id in IDS:
        assert doc_id in loaded and loaded.texts(doc_id) == index.texts(doc_id)
        assert loaded.document_text(doc_id) == "\n\n".join(t for t in index.texts(doc_id).values() if t)
    assert "nobody" not in loaded
    with pytest.raises(KeyError):
        loaded.texts("nobody")
    assert _idf(loaded) == _idf(index) and _idf(index) and all(v > 0 for v in _idf(loaded).values())
    assert loaded.tokenizer("Dowry deaths") == index.tokenizer("Dowry deaths")
    for query in QUERIES:
        assert loaded.retrieve(query, 5) == index.retrieve(query, 5), query


def test_runs_hold_only_indexed_ids_in_the_documented_order(built):
    _, index, _, loaded = built
    for query in QUERIES:
        runs = loaded.retrieve(query, 100)
        assert list(runs) == list(loaded.retrievers)  # None: every retriever, in `retrievers` order
        for name, run in runs.items():
            ids = [d.doc_id for d in run]
            assert set(ids) <= set(IDS) and len(set(ids)) == len(ids), (name, ids)
            assert run == ranked(run), (name, run)  # -score, then the id hash
        assert runs["dense"] and {d.doc_id for d in runs["dense"]} == set(IDS)  # every document has windows
        assert loaded.retrieve(query, 100) == runs  # the same inputs, the same runs
    assert loaded.retrieve("zzzz qqqq", 5, retrievers=["bm25"]) == {"bm25": []}  # no shared term, no hit


def test_depth_restrict_and_exclude(built):
    _, _, _, index = built
    query = QUERIES[0]
    for k in (0, 1, 2, len(IDS) + 5):
        for name, run in index.retrieve(query, k).items():
            assert len(run) <= k, (name, k)
            assert run == index.retrieve(query, len(IDS), retrievers=[name])[name][:k]  # a prefix of a deeper run
    assert all(run == [] for run in index.retrieve(query, 0).values())
    with pytest.raises(ValueError):
        index.retrieve(query, -1)
    keep, drop = {IDS[0], IDS[1]}, {IDS[1]}
    for run in index.retrieve(query, 10, restrict=keep, exclude=drop).values():
        assert {d.doc_id for d in run} <= keep - drop
    assert all(run == [] for run in index.retrieve(query, 10, restrict=set()).values())
    assert all(IDS[0] not in {d.doc_id for d in run} for run in index.retrieve(query, 10, exclude={IDS[0]}).values())


def test_retriever_choice_and_the_dense_query_vector(built):
    _, _, _, index = built
    assert list(index.retrieve(QUERIES[0], 3, retrievers=["dense", "bm25"])) == ["dense", "bm25"]
    with pytest.raises(UnknownNameError, match="bm25"):
        index.retrieve(QUERIES[0], 3, retrievers=["nope"])
    if "fulltext" not in index.retrievers:
        with pytest.raises((UnknownNameError, ValueError)):
            index.retrieve(QUERIES[0], 3, retrievers=["fulltext"])
    # `vector` replaces the query's own for the dense retriever only
    vector = index.embed_query(QUERIES[1])
    assert vector is not None and np.isclose(np.linalg.norm(vector), 1.0, atol=1e-5)
    assert index.retrieve(QUERIES[0], 5, retrievers=["dense"], vector=vector) == index.retrieve(
        QUERIES[1], 5, retrievers=["dense"]
    )
    assert index.retrieve(QUERIES[0], 5, retrievers=["bm25"], vector=vector) == index.retrieve(
        QUERIES[0], 5, retrievers=["bm25"]
    )
    many = index.embed_queries([QUERIES[0], QUERIES[1]])
    assert np.allclose(many[1], vector) and np.allclose(many[0], index.embed_query(QUERIES[0]))
    base, extra = many
    mixed = index.combined_vector(base, extra, 0.5)
    assert np.isclose(np.linalg.norm(mixed), 1.0, atol=1e-5) and index.combined_vector(base, None, 0.5) is base


def test_empty_archive_refused(built, tmp_path):
    backend, *_ = built
    with pytest.raises(EmptyArchiveError):
        _build(backend, False, tmp_path, summaries=[])


def test_no_index_and_mismatch_refused(built, tmp_path):
    backend, _, directory, _ = built
    cls = backend_class(backend)
    with pytest.raises(NoIndexError):
        cls.load(tmp_path / "nothing")
    with pytest.raises(NoIndexError):
        load_index(tmp_path / "nothing")
    other = IndexSpec(embedder="hashing.v1", slots=("facts",))
    with pytest.raises(IndexMismatchError, match="rebuild") as info:
        cls.load(directory, expect=other)
    assert any(d.startswith("slots") for d in info.value.differences)
    copy = tmp_path / "copy"
    shutil.copytree(directory, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    (copy / "manifest.json").write_text(json.dumps(manifest | {"format_version": 0}))
    with pytest.raises(IndexMismatchError, match="format version"):
        cls.load(copy)
    older = {k: v for k, v in manifest.items() if k != "fulltext_bm25"} | {"format_version": 3}  # as format 3 wrote
    (copy / "manifest.json").write_text(json.dumps(older))
    with pytest.raises(IndexMismatchError, match="index format version 3, this aqgr reads 4"):
        cls.load(copy)
    (copy / "manifest.json").write_text("{not json")
    with pytest.raises(IndexMismatchError, match="unreadable"):
        cls.load(copy)


def test_build_index_checks_where_before_reading_full_texts(tmp_path):
    """A backend keeping its index in the directory refuses a URI, a server backend needs one;
    the full texts are read only for a backend that takes them, after those checks."""

    def unread():
        raise AssertionError("full texts read")

    with pytest.raises(ValueError, match="drop --uri"):
        build_index(CORPUS, SPEC, backend="embedded", uri=str(tmp_path / "m.db"), full_texts=unread)
    with pytest.raises(ValueError, match="needs a URI"):
        build_index(CORPUS, SPEC, backend="milvus", full_texts=unread)
    index = build_index(CORPUS[:2], SPEC, backend="embedded", full_texts=FULL_TEXTS.get)
    assert index.retrievers == ("bm25", "dense", "fulltext")
    assert build_index(CORPUS[:2], SPEC).retrievers == ("bm25", "dense")


# --- updates ----------------------------------------------------------------------------

LATER = Provenance(
    engine="test.v1",
    engine_version="1",
    source_sha256="1" * 64,
    created_at=datetime(2026, 1, 2, 9, 30, tzinfo=UTC),
)
# Two new judgments, on words no judgment of CORPUS uses, and a new summary of C2 (another
# source, another time): the old one was on land acquisition, the new one is on arbitration.
TENANCY = summary(
    "C6",
    facts="The landlord sought eviction of the tenant for arrears of rent.",
    issues=["Whether the tenant can be evicted for default in paying rent under the Rent Control Act."],
    reasoning="Wilful default in paying rent justifies the eviction of the tenant.",
)
DETENTION = summary(
    "C7",
    facts="The detenu was held in preventive detention without being told the grounds.",
    issues=["Whether a writ of habeas corpus lies when the grounds of detention were not supplied."],
    reasoning="Grounds not supplied in time vitiate the detention; habeas corpus granted.",
)
ARBITRATION = summary(
    "C2",
    facts="An arbitral award was challenged as patently illegal.",
    issues=["Whether the arbitral award can be set aside under Section 34 of the Arbitration Act."],
    reasoning="The arbitral award was set aside for patent illegality.",
).model_copy(update={"provenance": LATER})
NEW_QUERIES = {
    "C6": "eviction of the tenant by the landlord for arrears of rent",
    "C7": "habeas corpus for preventive detention without grounds",
    "C2": "arbitral award set aside for patent illegality",
}
OLD_C2_QUERY = QUERIES[1]  # market value compensation for acquired land
for s in (TENANCY, DETENTION, ARBITRATION):
    FULL_TEXTS.setdefault(s.judgment_id, full_text(s))
NEW_FULL_TEXTS = dict(FULL_TEXTS, C2=full_text(ARBITRATION))

UPDATING = list(BACKENDS)


@pytest.fixture(scope="module")
def milvus_home(tmp_path_factory):
    return tmp_path_factory.mktemp("milvus-updates")  # one milvus-lite database, a collection per build


@pytest.fixture(params=UPDATING)
def fresh(request, tmp_path, milvus_home):
    """(backend name, whether it has full texts, an index just built over CORPUS, where to save it)."""
    backend, full = BACKENDS[request.param]
    _needs(backend)
    index = _build(backend, full, milvus_home if backend_class(backend).needs_uri else tmp_path)
    yield request.param, full, index, tmp_path / "index"
    if hasattr(index, "drop"):
        index.drop()


def _update(index, full: bool, added=(), removed=()):
    added = list(added)  # as the archive's indexer calls it: with the count, for progress
    return index.update(added, removed, full_texts=NEW_FULL_TEXTS.get if full else None, total=len(added))


def _ids(runs) -> dict[str, list[str]]:
    return {name: [d.doc_id for d in run] for name, run in runs.items()}


def _idf(index) -> dict[str, float]:
    """The index's idf over every term of the test's texts and queries (an index's idf is looked
    up term by term: at a million judgments it is not listed whole)."""
    texts = [t for s in (*CORPUS, TENANCY, DETENTION, ARBITRATION) for t in slot_texts(s, SPEC.slots).values()]
    terms = {t for text in (*texts, *QUERIES, *NEW_QUERIES.values()) for t in index.tokenizer(text)}
    idf = index.idf()
    return {t: v for t in sorted(terms) if (v := idf.get(t)) is not None}


def _df_exact(backend: str) -> bool:
    """Whether a backend's document frequencies forget a removed document at once. The embedded
    engine's (tantivy, as Lucene) count it until its segment is merged: it is gone from every
    run at once, its statistics follow at the next merge."""
    return BACKENDS[backend][0] != "embedded"


def _term(index, word: str) -> str:
    return index.tokenizer(word)[0]


def test_fingerprints_name_the_indexed_summaries(fresh):
    _, _, index, _ = fresh
    assert index.fingerprints() == {s.judgment_id: summary_fingerprint(s) for s in CORPUS}
    assert summary_fingerprint(ARBITRATION) != summary_fingerprint(CORPUS[1])


def test_update_adds_new_judgments(fresh):
    _, full, index, _ = fresh
    before = _idf(index)
    assert _update(index, full, [TENANCY, DETENTION]) == {"added": 2, "replaced": 0, "removed": 0}
    assert len(index) == len(IDS) + 2 and index.manifest["n_docs"] == len(IDS) + 2
    assert set(index.doc_ids) == {*IDS, "C6", "C7"} and len(set(index.doc_ids)) == len(index.doc_ids)
    assert (
        "C6" in index and "C7" in index and list(index.doc_ids) == sorted(index.doc_ids, key=list(index.doc_ids).index)
    )
    assert index.texts("C6") == slot_texts(TENANCY, SPEC.slots)
    for doc_id in ("C6", "C7"):
        runs = _ids(index.retrieve(NEW_QUERIES[doc_id], 3))
        assert all(run[:1] == [doc_id] for run in runs.values()), (doc_id, runs)  # every retriever finds it first
        assert all(
            set(run) <= {doc_id} for run in _ids(index.retrieve(NEW_QUERIES[doc_id], 5, restrict={doc_id})).values()
        )
        assert all(
            doc_id not in run for run in _ids(index.retrieve(NEW_QUERIES[doc_id], 10, exclude={doc_id})).values()
        )
    after = _idf(index)
    assert _term(index, "eviction") in after and _term(index, "eviction") not in before
    assert after[_term(index, "dowry")] != before[_term(index, "dowry")]  # N changed
    assert set(before) < set(after)
    fingerprints = index.fingerprints()
    assert fingerprints["C6"] == summary_fingerprint(TENANCY) and fingerprints["C1"] == summary_fingerprint(CORPUS[0])


def test_update_replaces_a_judgment_whose_summary_changed(fresh):
    _, full, index, _ = fresh
    old_dense = {d.doc_id: d.score for d in index.retrieve(OLD_C2_QUERY, len(IDS), retrievers=["dense"])["dense"]}
    assert _update(index, full, [ARBITRATION]) == {"added": 0, "replaced": 1, "removed": 0}
    assert len(index) == len(IDS) and set(index.doc_ids) == set(IDS) and "C2" in index
    assert index.texts("C2") == slot_texts(ARBITRATION, SPEC.slots)
    assert index.fingerprints()["C2"] == summary_fingerprint(ARBITRATION) != summary_fingerprint(CORPUS[1])
    runs = _ids(index.retrieve(NEW_QUERIES["C2"], 3))
    assert all(run[:1] == ["C2"] for run in runs.values()), runs
    old = index.retrieve(OLD_C2_QUERY, len(IDS))
    for name, run in _ids(old).items():
        if name != "dense":  # a lexical retriever no longer matches the old text
            assert "C2" not in run, (name, run)
    new_dense = {d.doc_id: d.score for d in old["dense"]}
    assert new_dense["C2"] < old_dense["C2"]
    assert _term(index, "arbitral") in index.idf()
    assert not _df_exact(fresh[0]) or _term(index, "acquired") not in index.idf()


def test_update_removes_judgments_from_every_retriever(fresh):
    _, full, index, _ = fresh
    assert _update(index, full, removed=["C3", "nobody"]) == {"added": 0, "replaced": 0, "removed": 1}
    assert len(index) == len(IDS) - 1 and "C3" not in index and "C3" not in index.doc_ids
    assert index.manifest["n_docs"] == len(IDS) - 1 and "C3" not in index.doc_ids
    with pytest.raises(KeyError):
        index.texts("C3")
    assert "C3" not in index.fingerprints()
    for query in (*QUERIES, "sudden quarrel, the accused stabbed the deceased"):
        for name, run in _ids(index.retrieve(query, 100)).items():
            assert "C3" not in run, (query, name)
    assert set(_ids(index.retrieve(QUERIES[0], 100))["dense"]) == set(IDS) - {"C3"}
    assert not _df_exact(fresh[0]) or _term(index, "quarrel") not in index.idf()


def test_update_then_save_then_load_is_the_updated_index(fresh):
    backend, full, index, directory = fresh
    counts = _update(index, full, [TENANCY, ARBITRATION], removed=["C3"])
    assert counts == {"added": 1, "replaced": 1, "removed": 1}
    index.save(directory)
    loaded = load_index(directory, expect=SPEC)
    assert loaded.doc_ids == index.doc_ids and len(loaded) == len(index) == len(IDS)
    assert loaded.doc_ids == index.doc_ids and loaded.manifest["n_docs"] == len(IDS)
    assert loaded.retrievers == index.retrievers and _idf(loaded) == _idf(index)
    assert loaded.fingerprints() == index.fingerprints()
    for doc_id in index.doc_ids:
        assert loaded.texts(doc_id) == index.texts(doc_id)
    for query in (*QUERIES, *NEW_QUERIES.values()):
        assert loaded.retrieve(query, 5) == index.retrieve(query, 5), query


def test_update_with_nothing_changes_nothing(fresh):
    _, full, index, directory = fresh
    index.save(directory)
    before = (index.doc_ids, _idf(index), index.fingerprints(), [index.retrieve(q, 5) for q in QUERIES])
    assert _update(index, full) == {"added": 0, "replaced": 0, "removed": 0}
    assert _update(index, full, removed=["nobody"]) == {"added": 0, "replaced": 0, "removed": 0}
    assert (index.doc_ids, _idf(index), index.fingerprints(), [index.retrieve(q, 5) for q in QUERIES]) == before
    assert load_index(directory, expect=SPEC).doc_ids == before[0]  # the saved index still describes it


def test_update_refuses_a_judgment_twice_or_both_added_and_removed(fresh):
    _, full, index, _ = fresh
    before = (index.doc_ids, index.fingerprints())
    with pytest.raises(ValueError, match="C6"):
        _update(index, full, [TENANCY, TENANCY])
    with pytest.raises(ValueError, match="C6"):
        _update(index, full, [TENANCY], removed=["C6"])
    assert (index.doc_ids, index.fingerprints()) == before


def test_update_may_empty_the_index_and_search_then_refuses_it(fresh):
    """Removing every judgment leaves an empty index (saved and loaded as such); searching it
    raises EmptyArchiveError, as for an archive with nothing indexed; adding fills it again."""
    from aqgr.pipeline.explain import explainers
    from aqgr.pipeline.questions import question_generators
    from aqgr.pipeline.search import Searcher, SearchOptions

    _, full, index, directory = fresh
    assert _update(index, full, removed=IDS) == {"added": 0, "replaced": 0, "removed": len(IDS)}
    assert len(index) == 0 and index.doc_ids == () and index.fingerprints() == {} and _idf(index) == {}
    assert index.manifest["n_docs"] == 0 and all(i not in index for i in IDS)
    assert index.retrieve(QUERIES[0], 5) == {name: [] for name in index.retrievers}
    index.save(directory)
    loaded = load_index(directory, expect=SPEC)
    assert len(loaded) == 0 and loaded.retrieve(QUERIES[0], 5) == {name: [] for name in loaded.retrievers}
    with pytest.raises(EmptyArchiveError):
        Searcher(
            loaded,
            {},
            question_generators.create("harvest.v1"),
            explainers.create("evidence.v1"),
            SearchOptions(),
            "test.v1",
        )
    assert _update(index, full, [TENANCY]) == {"added": 1, "replaced": 0, "removed": 0}
    assert _ids(index.retrieve(NEW_QUERIES["C6"], 3)) == {name: ["C6"] for name in index.retrievers}
