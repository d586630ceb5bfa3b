"""The `Index` contract (retrieval/protocol.py), one suite run against every backend.

Each backend is built through retrieval/backends.py `build_index` (the registry, as the
archive does) over the tiny corpus of retrieval_samples.py with the hashing embedder:
`embedded` (SummaryIndex), `embedded+fulltext` (SummaryIndex with the optional full-text
retriever) and `milvus` (MilvusIndex on milvus-lite, skipped when it is not installed).
What differs between backends by design (raw scores, the full-text retriever) is not
asserted here; tests/retrieval/test_retrieval_milvus.py compares their rankings.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from retrieval_samples import CORPUS

from aqgr.errors import EmptyArchiveError, IndexMismatchError, NoIndexError, UnknownNameError
from aqgr.retrieval.backends import backend_class, build_index, canonical, load_index
from aqgr.retrieval.index import IndexSpec
from aqgr.retrieval.protocol import Index
from aqgr.retrieval.types import ranked

SPEC = IndexSpec(embedder="hashing.v1")
IDS = [s.judgment_id for s in CORPUS]
FULL_TEXTS = {s.judgment_id: f"{s.facts} {' '.join(s.issues)} {s.reasoning}" for s in CORPUS}
QUERIES = ("dowry death of the wife by burns", "market value compensation for acquired land",
           "section 304B IPC cruelty soon before death", "zzzz qqqq")

# (backend name, build with the judgments' full texts)
BACKENDS = {
    "embedded": ("embedded", False),
    "embedded+fulltext": ("embedded", True),
    "milvus": ("milvus", False),
}


def _needs(backend: str) -> None:
    if backend == "milvus":
        pytest.importorskip("pymilvus", reason="pymilvus not installed: pip install 'aqgr[milvus]'")
        pytest.importorskip("milvus_lite", reason="milvus-lite not installed: pip install 'aqgr[milvus]'")


def _build(backend: str, full: bool, where, summaries=CORPUS, spec=SPEC):
    cls = backend_class(backend)
    return build_index(summaries, spec, backend=backend, uri=str(where / "milvus.db") if cls.needs_uri else None,
                       full_texts=(lambda: FULL_TEXTS) if full else None)


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


def test_build_save_load_round_trip(built):
    _, index, directory, loaded = built
    assert loaded.doc_ids == index.doc_ids == tuple(IDS) and len(loaded) == len(index) == len(IDS)
    assert loaded.retrievers == index.retrievers and "bm25" in index.retrievers and "dense" in index.retrievers
    assert loaded.spec == index.spec == SPEC
    assert loaded.manifest["doc_ids"] == IDS and json.loads((directory / "manifest.json").read_text())["doc_ids"] == IDS
    for doc_id in IDS:
        assert doc_id in loaded and loaded.texts(doc_id) == index.texts(doc_id)
        assert loaded.document_text(doc_id) == "\n\n".join(t for t in index.texts(doc_id).values() if t)
    assert "nobody" not in loaded
    with pytest.raises(KeyError):
        loaded.texts("nobody")
    assert loaded.idf() == index.idf() and all(v > 0 for v in loaded.idf().values())
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
    assert index.retrieve(QUERIES[0], 5, retrievers=["dense"], vector=vector) == index.retrieve(QUERIES[1], 5, retrievers=["dense"])
    assert index.retrieve(QUERIES[0], 5, retrievers=["bm25"], vector=vector) == index.retrieve(QUERIES[0], 5, retrievers=["bm25"])
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
    index = build_index(CORPUS[:2], SPEC, backend="embedded", full_texts=lambda: FULL_TEXTS)
    assert index.retrievers == ("bm25", "dense", "fulltext")
    assert build_index(CORPUS[:2], SPEC).retrievers == ("bm25", "dense")
