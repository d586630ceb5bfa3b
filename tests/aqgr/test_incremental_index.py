"""`aqgr index` after new, re-made and removed judgments: only the change is indexed; one writer."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from aqgr import Archive, IndexBusyError
from aqgr.archive.indexer import IndexLock
from aqgr.foundation.errors import IndexMismatchError
from aqgr.foundation.paths import SAMPLE
from aqgr.interfaces.cli import app
from aqgr.retrieval.spec import IndexSpec

SPEC = IndexSpec(embedder="hashing.v1")
JUDGMENTS = sorted((SAMPLE / "judgments").glob("*.txt"))


@pytest.fixture
def archive(tmp_path):
    folder = tmp_path / "judgments"
    folder.mkdir()
    for path in JUDGMENTS[:10]:
        shutil.copy(path, folder / path.name)
    archive = Archive(tmp_path / "home", index=SPEC)
    archive.summarize([folder])
    archive.build_index()
    return archive, folder


def test_only_the_new_judgments_are_indexed(archive, monkeypatch):
    archive, folder = archive
    for path in JUDGMENTS[10:]:
        shutil.copy(path, folder / path.name)
    archive.summarize([folder])
    staged = []
    import aqgr.retrieval.embedded.index as index_module

    real = index_module.DocStore.stage

    def counting(self, generation, added, removed, *rest):
        staged.extend(row[1] for row in added)
        return real(self, generation, added, removed, *rest)

    monkeypatch.setattr(index_module.DocStore, "stage", counting)
    manifest = archive.build_index()
    assert manifest["update"] == {"mode": "update", "added": len(JUDGMENTS) - 10, "replaced": 0, "removed": 0}
    assert sorted(staged) == sorted(p.stem for p in JUDGMENTS[10:])
    assert manifest["n_docs"] == len(JUDGMENTS)
    new = JUDGMENTS[-1].stem
    text = archive.text(new)
    assert any(h.judgment_id == new for h in archive.search(text[:1500]).hits)
    # nothing changed: nothing is indexed
    staged.clear()
    assert archive.build_index()["update"] == {"mode": "update", "added": 0, "replaced": 0, "removed": 0} and not staged


def test_a_re_made_summary_replaces_its_entry_and_a_removed_judgment_leaves(archive):
    archive, folder = archive
    first, second = JUDGMENTS[0].stem, JUDGMENTS[1].stem
    archive.summarize([folder / JUDGMENTS[0].name], force=True)  # made again: a new fingerprint
    manifest = archive.build_index()
    assert manifest["update"]["replaced"] == 1 and manifest["update"]["added"] == 0
    assert archive.remove([second]) == [second]
    assert archive.summary(second) is None and archive.text(second) is None
    result = archive.search(archive.text(first)[:1500])
    assert second not in {h.judgment_id for h in result.hits} and first in {h.judgment_id for h in result.hits}
    assert archive.status()["index"]["n_docs"] == 9
    with pytest.raises(TypeError, match="not one string"):
        archive.remove(second)


def test_a_rebuild_and_a_changed_spec_build_anew(archive):
    archive, _ = archive
    assert archive.build_index(rebuild=True)["update"]["mode"] == "rebuild"
    other = archive.build_index(spec=SPEC.model_copy(update={"slots": ("facts", "issues")}))
    assert other["update"]["mode"] == "rebuild" and other["slots"] == ["facts", "issues"]
    home = archive.home
    assert not [p for p in home.iterdir() if p.name.startswith(".index.")]  # no leftovers


def test_an_index_of_the_older_default_tokenizer_is_refused_and_rebuilt_by_aqgr_index(tmp_path):
    """An archive indexed with words.v1 (the default before words.v2) and a spec that names no
    tokenizer: a search is refused, and adding judgments rebuilds the index with words.v2."""
    folder = tmp_path / "judgments"
    folder.mkdir()
    for path in JUDGMENTS[:5]:
        shutil.copy(path, folder / path.name)
    home = tmp_path / "home"
    first = Archive(home, index=SPEC.model_copy(update={"tokenizer": "words.v1"}))
    first.summarize([folder])
    assert first.build_index()["tokenizer"] == "words.v1"
    shutil.copy(JUDGMENTS[5], folder / JUDGMENTS[5].name)
    archive = Archive(home, index=SPEC)
    archive.summarize([folder])
    with pytest.raises(IndexMismatchError, match="tokenizer 'words.v1', expected 'words.v2'"):
        archive.search(archive.text(JUDGMENTS[5].stem)[:1500])
    rebuilt = archive.build_index()
    assert rebuilt["update"]["mode"] == "rebuild" and rebuilt["tokenizer"] == "words.v2" and rebuilt["n_docs"] == 6
    assert any(h.judgment_id == JUDGMENTS[5].stem for h in archive.search(archive.text(JUDGMENTS[5].stem)[:1500]).hits)


def test_a_second_writer_is_refused_with_a_clear_message(archive):
    archive, _ = archive
    with IndexLock(archive.home):
        with pytest.raises(IndexBusyError, match="another `aqgr index`"):
            archive.build_index()
        result = CliRunner().invoke(app, ["index", "--home", str(archive.home), "--embedder", "hashing.v1"])
        assert result.exit_code == 2 and "another `aqgr index`" in result.output
    assert archive.build_index()["update"]["mode"] == "update"  # released


def test_the_cli_says_what_changed(archive):
    archive, folder = archive
    shutil.copy(JUDGMENTS[10], folder / JUDGMENTS[10].name)
    runner = CliRunner()
    assert runner.invoke(app, ["summarize", str(folder), "--home", str(archive.home)]).exit_code == 0
    result = runner.invoke(app, ["index", "--home", str(archive.home), "--embedder", "hashing.v1"])
    assert result.exit_code == 0, result.output
    assert "added 1, replaced 0, removed 0" in result.output
    removed = runner.invoke(app, ["remove", JUDGMENTS[10].stem, "nope", "--home", str(archive.home)])
    assert removed.exit_code == 0 and json.loads(removed.stdout.strip().splitlines()[-1]) == {
        "removed": [JUDGMENTS[10].stem],
        "unknown": ["nope"],
    }


def test_removing_a_judgment_takes_its_text_index_entries_and_citation_links(home, tmp_path):
    """A5 cites A1 and A6 overrules it (tests/aqgr/helpers.py): once A1 is removed, neither lists it, the
    citation graph holds no link to it, and no search or read finds it."""
    from aqgr.foundation.errors import UnknownJudgmentError
    from tests.aqgr.helpers import CITING_JUDGMENTS, OVERRULING_JUDGMENTS, indexed_archive

    both = {**CITING_JUDGMENTS, **OVERRULING_JUDGMENTS}
    archive = indexed_archive(home, tmp_path / "in", both)
    assert "A1" in {c.judgment_id for c in archive.citations_of("A6").cites}
    assert "A1" in {c.judgment_id for c in archive.citations_of("A5").cites}
    own_words = archive.text("A1")[:1500]
    assert "A1" in {h.judgment_id for h in archive.search(own_words).hits}
    assert archive.remove(["A1"]) == ["A1"]
    for citing in ("A5", "A6"):
        assert "A1" not in {c.judgment_id for c in archive.citations_of(citing).cites}
    graph = archive.citations()
    assert graph is not None and graph.pairs() and not [pair for pair in graph.pairs() if "A1" in pair]
    with pytest.raises(UnknownJudgmentError):
        archive.citations_of("A1")
    assert archive.summary("A1") is None and archive.text("A1") is None
    assert "A1" not in {h.judgment_id for h in archive.search(own_words).hits}
    assert archive.status()["judgments"] == len(both) - 1


def test_a_search_opens_the_citation_graph_from_the_snapshot_the_last_update_made(home, tmp_path, monkeypatch):
    """`aqgr index` leaves the graph's snapshot beside the store (retrieval/citations/snapshot.py): the
    search process reads the graph from it, not from SQLite, before and after a removal."""
    from aqgr.retrieval.citations.store import CitationStore
    from tests.aqgr.helpers import CITING_JUDGMENTS, OVERRULING_JUDGMENTS, indexed_archive

    archive = indexed_archive(home, tmp_path / "in", {**CITING_JUDGMENTS, **OVERRULING_JUDGMENTS})
    rows = CitationStore._rows

    def from_sqlite_refused(self):
        raise AssertionError("the graph was read from the store's rows, not its snapshot")

    monkeypatch.setattr(CitationStore, "_rows", from_sqlite_refused)
    assert ("A5", "A1") in archive.citations().pairs()
    monkeypatch.setattr(CitationStore, "_rows", rows)
    archive.remove(["A1"])
    monkeypatch.setattr(CitationStore, "_rows", from_sqlite_refused)
    graph = archive.open_searcher().citations
    assert graph is not None and graph.pairs() and not [pair for pair in graph.pairs() if "A1" in pair]


def test_an_index_build_killed_while_linking_citations_is_completed_by_the_next(tmp_path, monkeypatch):
    from aqgr.archive.store import Store
    from aqgr.retrieval.citations import CitationGraph, passes
    from aqgr.retrieval.citations import store as citation_store

    monkeypatch.setattr(citation_store, "LARGE", 4)  # the sample's 17 judgments make a large update: commits every 3
    monkeypatch.setattr(citation_store, "PAGE", 3)
    monkeypatch.setattr(passes, "CHUNK", 1)
    archive = Archive(tmp_path / "home", index=SPEC)
    archive.summarize([SAMPLE / "judgments"])
    real, reads = Store.text, []

    def dying(self, judgment_id):
        reads.append(judgment_id)
        if len(reads) == len(JUDGMENTS) + 9:  # in the reporter pass, pages of it committed
            raise OSError("killed")
        return real(self, judgment_id)

    monkeypatch.setattr(Store, "text", dying)
    with pytest.raises(Exception, match="killed"):
        archive.build_index()
    monkeypatch.setattr(Store, "text", real)
    with citation_store.CitationStore(archive.home / "citations.sqlite") as left:
        assert left.pending == "citations" and len(left) == len(JUDGMENTS)
    manifest = archive.build_index()
    assert manifest["n_docs"] == len(JUDGMENTS)
    graph = archive.citations()
    full = CitationGraph.from_texts(archive.texts())
    assert graph is not None and graph.pairs() == full.pairs() and len(full) > 0
    assert dict(graph.mentions) == dict(full.mentions)
