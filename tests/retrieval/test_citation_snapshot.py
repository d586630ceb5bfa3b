"""The citation graph's snapshot: a search opens the graph from it only while it holds the store's
last commit, and a stale, damaged or missing one is never read as the graph."""

from __future__ import annotations

import pytest

from aqgr.retrieval.citations import CitationGraph
from aqgr.retrieval.citations.store import CitationStore
from tests.retrieval.test_citation_store import TEXTS, _add

FIRST = ["OLD", "MID", "QUIET"]


def _same(graph: CitationGraph, ids: set[str], texts: dict[str, str]) -> None:
    """The graph and ids a search opens are those of the judgments `texts`, pair by pair and mention by mention."""
    full = CitationGraph.from_texts(texts.items())
    assert ids == set(texts)
    assert graph.pairs() == full.pairs()
    for doc_id in [*texts, "ABSENT"]:
        assert graph.cites.get(doc_id) == full.cites.get(doc_id)
        assert graph.cited_by.get(doc_id) == full.cited_by.get(doc_id)
    for pair, mention in full.mentions.items():
        assert graph.mentions.get(pair) == mention
    ranking = list(texts)
    assert graph.referred(ranking, depth=3, exclude=frozenset(), norm="mean") == full.referred(
        ranking, depth=3, exclude=frozenset(), norm="mean"
    )


@pytest.fixture
def store(tmp_path):
    made = CitationStore(tmp_path / "citations.sqlite")
    yield made
    made.close()


def _reads_the_store(store: CitationStore, monkeypatch) -> list[int]:
    """Count the reads of the links from the SQLite file (the path without the snapshot)."""
    calls: list[int] = []
    rows = store._rows

    def counted():
        calls.append(1)
        return rows()

    monkeypatch.setattr(store, "_rows", counted)
    return calls


def test_a_search_opens_the_graph_from_the_snapshot_of_the_last_update(store, monkeypatch):
    _add(store, FIRST)
    assert not store.snapshot_path.exists()
    _same(store.keep_snapshot(), store.ids(), {k: TEXTS[k] for k in FIRST})
    assert store.snapshot_path.exists()
    reads = _reads_the_store(store, monkeypatch)
    graph, ids = store.graph_and_ids()
    assert reads == []  # from the snapshot
    _same(graph, ids, {k: TEXTS[k] for k in FIRST})
    _same(store.keep_snapshot(), ids, {k: TEXTS[k] for k in FIRST})
    assert reads == []  # it already held this commit: not written again


def test_an_update_after_the_snapshot_makes_it_stale_and_the_store_is_read(store, monkeypatch):
    _add(store, FIRST)
    store.keep_snapshot()
    _add(store, ["NEW", "LATER"])  # NEW cites OLD and MID; LATER cites NEW
    store.remove(["QUIET"], text_of=TEXTS.__getitem__)
    reads = _reads_the_store(store, monkeypatch)
    graph, ids = store.graph_and_ids()
    assert reads == [1]
    expected = {k: TEXTS[k] for k in ("OLD", "MID", "NEW", "LATER")}
    _same(graph, ids, expected)
    store.keep_snapshot()  # `aqgr index` after its update: the snapshot holds it now
    graph, ids = store.graph_and_ids()
    assert reads == [1, 1]
    _same(graph, ids, expected)


def test_an_update_that_fails_leaves_the_snapshot_of_the_state_it_leaves(store, monkeypatch):
    _add(store, FIRST)
    store.keep_snapshot()

    def broken(doc_id):
        raise OSError("disk gone")

    with pytest.raises(OSError):
        store.add([("NEW", TEXTS["NEW"])], text_of=broken)  # rolled back, its new generation too
    reads = _reads_the_store(store, monkeypatch)
    graph, ids = store.graph_and_ids()
    assert reads == []
    _same(graph, ids, {k: TEXTS[k] for k in FIRST})


@pytest.mark.parametrize("damage", [b"", b"not a zip file", None])
def test_a_damaged_or_foreign_snapshot_is_not_read_as_the_graph(store, damage, monkeypatch):
    _add(store, FIRST + ["NEW"])
    store.keep_snapshot()
    path = store.snapshot_path
    if damage is None:  # another store's snapshot, whole, of another generation
        other = CitationStore(path.parent / "other.sqlite")
        _add(other, ["LATER"])
        other.keep_snapshot()
        other.close()
        path.write_bytes(other.snapshot_path.read_bytes())
    else:
        path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2] + damage)
    reads = _reads_the_store(store, monkeypatch)
    graph, ids = store.graph_and_ids()
    assert reads == [1]
    _same(graph, ids, {k: TEXTS[k] for k in FIRST + ["NEW"]})


def test_ids_that_cannot_be_kept_in_a_snapshot_are_read_from_the_store(store, monkeypatch):
    texts = {**{k: TEXTS[k] for k in FIRST}, "TWO\nLINES": TEXTS["NEW"]}
    _add(store, texts, texts)
    store.keep_snapshot()
    assert not store.snapshot_path.exists()
    graph, ids = store.graph_and_ids()
    _same(graph, ids, texts)


def test_a_store_without_links_or_judgments_opens_from_its_snapshot_or_without(store):
    store.keep_snapshot()
    graph, ids = store.graph_and_ids()
    assert ids == set() and graph.pairs() == []
    _add(store, ["QUIET"])
    store.keep_snapshot()
    graph, ids = store.graph_and_ids()
    assert ids == {"QUIET"} and graph.pairs() == [] and graph.cites.get("QUIET") is None
