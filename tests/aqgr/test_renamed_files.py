"""A judgment file renamed, copied or changed: one judgment per content, nothing lost."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from aqgr import Archive
from aqgr.foundation.paths import SAMPLE
from aqgr.interfaces.cli import app
from aqgr.retrieval.spec import IndexSpec

SPEC = IndexSpec(embedder="hashing.v1")
JUDGMENTS = sorted((SAMPLE / "judgments").glob("*.txt"))[:5]


@pytest.fixture
def indexed(tmp_path):
    folder = tmp_path / "judgments"
    folder.mkdir()
    for path in JUDGMENTS:
        shutil.copy(path, folder / path.name)
    archive = Archive(tmp_path / "home", index=SPEC)
    archive.summarize([folder])
    archive.build_index()
    return archive, folder


def _hits_of(archive: Archive, judgment_id: str, query: str) -> list[str]:
    return [h.judgment_id for h in archive.search(query, k=10).hits if h.judgment_id == judgment_id]


def test_a_renamed_file_stays_one_judgment_under_its_id(indexed):
    archive, folder = indexed
    old = folder / JUDGMENTS[0].name
    new = folder / f"{old.stem}_final.txt"
    old.rename(new)
    report = archive.summarize([folder])
    assert [(r.judgment_id, r.stored_path, r.path) for r in report.renamed] == [
        (old.stem, str(old.resolve()), str(new.resolve()))
    ]
    assert report.summarised == [] and report.failed == [] and report.processed == len(JUDGMENTS)
    assert archive._store.judgment_ids() == {p.stem for p in JUDGMENTS}
    assert archive._store.judgment(old.stem).source_path == str(new.resolve())
    manifest = archive.build_index()
    assert manifest["n_docs"] == len(JUDGMENTS)
    assert manifest["update"] == {"mode": "update", "added": 0, "replaced": 0, "removed": 0}
    query = archive.text(old.stem)[:1500]
    assert _hits_of(archive, old.stem, query) == [old.stem]
    assert not any(h.judgment_id == new.stem for h in archive.search(query, k=10).hits)
    again = archive.summarize([folder])  # the new path is now the stored one: plainly unchanged
    assert again.renamed == [] and len(again.unchanged) == len(JUDGMENTS)


def test_a_copy_under_a_second_name_is_reported_as_a_duplicate(indexed):
    archive, folder = indexed
    original = folder / JUDGMENTS[1].name
    copy = folder / "copy_of_it.txt"
    shutil.copy(original, copy)
    report = archive.summarize([folder])
    assert [(d.judgment_id, d.path, d.stored_path) for d in report.duplicates] == [
        (original.stem, str(copy.resolve()), str(original.resolve()))
    ]
    assert report.summarised == [] and report.renamed == [] and report.failed == []
    assert archive._store.judgment_ids() == {p.stem for p in JUDGMENTS}
    assert archive.build_index()["n_docs"] == len(JUDGMENTS)


def test_two_new_copies_in_one_batch_are_stored_once(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(JUDGMENTS[0], folder / "a.txt")
    shutil.copy(JUDGMENTS[0], folder / "b.txt")
    report = Archive(tmp_path / "home", index=SPEC).summarize([folder])
    assert report.summarised == ["a"]
    assert [(d.path, d.judgment_id) for d in report.duplicates] == [(str((folder / "b.txt").resolve()), "a")]


def test_a_changed_file_is_summarised_again_as_before(indexed):
    archive, folder = indexed
    edited = folder / JUDGMENTS[2].name
    edited.write_text(
        edited.read_text(encoding="utf-8") + "\nCorrected: the appeal is allowed with costs.\n", encoding="utf-8"
    )
    renamed_and_edited = folder / f"{JUDGMENTS[3].stem}_v2.txt"
    (folder / JUDGMENTS[3].name).rename(renamed_and_edited)
    renamed_and_edited.write_text(
        renamed_and_edited.read_text(encoding="utf-8") + "\nA later note.\n", encoding="utf-8"
    )
    report = archive.summarize([folder])
    assert sorted(report.summarised) == sorted([edited.stem, renamed_and_edited.stem])
    assert report.renamed == [] and report.duplicates == []
    assert archive._store.judgment_ids() == {p.stem for p in JUDGMENTS} | {renamed_and_edited.stem}


def test_a_stored_path_holding_other_bytes_is_no_rename(indexed):
    """C1.txt replaced by another text and its old bytes saved as old.txt: both are kept."""
    archive, folder = indexed
    replaced = folder / JUDGMENTS[0].name
    kept = folder / "old.txt"
    shutil.copy(replaced, kept)
    replaced.write_text(
        JUDGMENTS[4].read_text(encoding="utf-8") + "\nAnother judgment's text, edited.\n", encoding="utf-8"
    )
    report = archive.summarize([kept])  # met first, before its former path
    assert report.summarised == ["old"] and report.renamed == []
    report = archive.summarize([folder])
    assert replaced.stem in report.summarised and report.failed == []
    assert archive._store.judgment_ids() == {p.stem for p in JUDGMENTS} | {"old"}


def test_the_cli_reports_renames_and_duplicates(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    for path in JUDGMENTS[:2]:
        shutil.copy(path, folder / path.name)
    home = tmp_path / "home"
    runner = CliRunner()
    assert runner.invoke(app, ["summarize", str(folder), "--home", str(home)]).exit_code == 0
    (folder / JUDGMENTS[0].name).rename(folder / "moved.txt")
    shutil.copy(folder / JUDGMENTS[1].name, folder / "twin.txt")
    result = runner.invoke(
        app, ["summarize", str(folder), "--home", str(home)], env={"COLUMNS": "1000"}
    )  # one line per file
    assert result.exit_code == 0, result.output
    assert (
        f"renamed: {(folder / JUDGMENTS[0].name).resolve()} -> {(folder / 'moved.txt').resolve()}: judgment {JUDGMENTS[0].stem} kept"
        in result.output
    )
    assert (
        f"duplicate: {(folder / 'twin.txt').resolve()} has the bytes of judgment {JUDGMENTS[1].stem}" in result.output
    )


def test_a_copy_stored_meanwhile_by_another_worker_is_a_duplicate(tmp_path, monkeypatch):
    """Two workers each check for the bytes before the other stored them: the later write is refused."""
    import aqgr.archive.batch as batch

    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(JUDGMENTS[0], folder / "a.txt")
    shutil.copy(JUDGMENTS[0], folder / "b.txt")
    archive = Archive(tmp_path / "home", index=SPEC)
    assert archive.summarize([folder / "a.txt"]).summarised == ["a"]
    monkeypatch.setattr(batch, "stored_as", lambda *args: None)  # b's check ran before a was stored
    report = archive.summarize([folder / "b.txt"])
    assert report.summarised == [] and [(d.judgment_id, d.stored_path) for d in report.duplicates] == [
        ("a", str((folder / "a.txt").resolve()))
    ]
    assert archive._store.judgment_ids() == {"a"}


def test_a_rename_summarised_again_is_counted_once(indexed):
    archive, folder = indexed
    old = folder / JUDGMENTS[0].name
    old.rename(folder / "elsewhere.txt")
    report = archive.summarize([folder], force=True)
    assert old.stem in report.summarised and "elsewhere" not in report.summarised
    assert [(r.judgment_id, r.summarised) for r in report.renamed] == [(old.stem, True)]
    assert report.processed == len(JUDGMENTS)
    assert archive._store.judgment_ids() == {p.stem for p in JUDGMENTS}
