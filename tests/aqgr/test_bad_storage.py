"""A read-only home and a full disk: a clear message, and nothing already stored is lost.

Simulated with a small tmpfs (mount needs root: skipped with the reason otherwise; a
non-root run makes the home read-only with chmod instead). SQLite only: the database
file is what lives in the home."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aqgr import Archive
from aqgr.foundation.errors import StoreError
from aqgr.interfaces.cli import app
from tests.aqgr.helpers import JUDGMENTS, write_judgments

runner = CliRunner()


def _mount(where: Path, size: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")


def _umount(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


@pytest.fixture
def small_disk(tmp_path, monkeypatch):
    where = tmp_path / "small-disk"
    _mount(where, "1m")
    monkeypatch.delenv("AQGR_DATABASE_URL", raising=False)
    yield where
    _umount(where)


def _make_read_only(folder: Path) -> None:
    if os.geteuid() == 0:
        done = subprocess.run(["mount", "-o", "remount,ro", str(folder)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    else:
        for path in [folder, *folder.rglob("*")]:
            path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def test_full_disk_stops_the_batch_clearly_and_keeps_what_was_stored(small_disk, tmp_path):
    home = small_disk / "home"
    archive = Archive(home)
    first = archive.summarize([write_judgments(tmp_path / "in")])
    assert len(first.summarised) == 4
    big = tmp_path / "big"
    filler = "\n".join(
        f"{n}. The witness deposed about the events of that night and the conduct of the accused in the village."
        for n in range(6, 6000)
    )
    # three different judgments (files of the same bytes would be one judgment, stored once)
    write_judgments(
        big, {f"huge{i}": (JUDGMENTS["A1"] + f"5. Judgment {i} of the batch.\n" + filler)[:600_000] for i in range(3)}
    )
    report = archive.summarize([big])
    assert report.aborted and "disk_full" in report.aborted and "free space" in report.aborted
    assert len(report.summarised) < 3  # 600,000 characters each: the 1 MB disk fills up
    reopened = Archive(home)
    assert sorted(s.judgment_id for s in reopened.summaries()) == sorted(["A1", "A2", "A3", "A4", *report.summarised])
    assert reopened.text("A2") == JUDGMENTS["A2"].strip("\n")
    # the CLI says so and exits 2
    result = runner.invoke(app, ["summarize", str(big), "--home", str(home)])
    assert result.exit_code == 2 and "disk_full" in result.stderr and "free space" in result.stderr


def test_read_only_home_is_a_clear_error_and_loses_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("AQGR_DATABASE_URL", raising=False)
    home = tmp_path / "ro"
    if os.geteuid() == 0:
        _mount(home, "16m")
    try:
        archive = Archive(home)
        archive.summarize([write_judgments(tmp_path / "in", {"A1": JUDGMENTS["A1"]})])
        archive.close()
        _make_read_only(home)
        more = write_judgments(tmp_path / "more", {"A2": JUDGMENTS["A2"]})
        result = runner.invoke(app, ["summarize", str(more), "--home", str(home)])
        assert result.exit_code == 2, result.output
        assert "read_only" in result.stderr or "read-only" in result.stderr
        assert "--home" in result.stderr
        # a home that cannot even be created
        result = runner.invoke(app, ["summarize", str(more), "--home", str(home / "sub" / "archive")])
        assert result.exit_code == 2 and "cannot create the archive home" in result.stderr
        if os.geteuid() == 0:
            subprocess.run(["mount", "-o", "remount,rw", str(home)], capture_output=True)
        else:
            for path in [home, *home.rglob("*")]:
                path.chmod(path.stat().st_mode | stat.S_IWUSR)
        reopened = Archive(home)
        assert [s.judgment_id for s in reopened.summaries()] == ["A1"]
    finally:
        if os.geteuid() == 0:
            _umount(home)


def test_store_error_names_the_problem():
    from aqgr.archive.store import classify

    class Full(Exception):
        pass

    assert classify(Full("database or disk is full")).reason == "disk_full"
    assert classify(Full("attempt to write a readonly database")).reason == "read_only"
    assert isinstance(classify(Full("connection refused")), StoreError)


# -- issue 50: a real small disk filling during `aqgr index` and `aqgr remove`; a real read-only home ----
def _built(home: Path, folder: Path) -> None:
    from aqgr import IndexSpec, Settings
    from tests.aqgr.helpers import CITING_JUDGMENTS, OVERRULING_JUDGMENTS

    with Archive(settings=Settings.resolve(home, index=IndexSpec(embedder="hashing.v1"))) as archive:
        # A5 cites A1 and A2, A6 overrules A1 and distinguishes A2
        archive.summarize([write_judgments(folder, {**OVERRULING_JUDGMENTS, "A5": CITING_JUDGMENTS["A5"]})])
        archive.build_index()


def _counts(home: Path) -> dict:
    """Judgments and summaries in the database; citation links and treatments in the citation store."""
    import sqlite3

    with sqlite3.connect(f"file:{home / 'aqgr.db'}?mode=ro", uri=True) as db:
        judgments = db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
        summaries = db.execute("SELECT COUNT(*) FROM summaries").fetchone()[0]
    with sqlite3.connect(f"file:{home / 'citations.sqlite'}?mode=ro", uri=True) as db:
        links = db.execute("SELECT COUNT(*) FROM links").fetchone()[0]
        treated = sorted(db.execute("SELECT treatment, COUNT(*) FROM links GROUP BY treatment").fetchall())
    return {"judgments": judgments, "summaries": summaries, "links": links, "treatments": treated}


@pytest.mark.parametrize("command", [["index", "--rebuild", "--embedder", "hashing.v1"], ["remove", "A6"]])
def test_a_small_disk_filling_during_a_command_keeps_every_store(tmp_path, monkeypatch, command):
    """Issue 50, items 2 and 3, as found: on a full tmpfs `citations.sqlite` shrank to 4,096 bytes ('built
    differently'), and `remove` said 'unchanged' after deleting the judgment. Swept over the room left."""
    monkeypatch.delenv("AQGR_DATABASE_URL", raising=False)
    source = tmp_path / "source"
    _built(source, tmp_path / "in")
    before = _counts(source)
    disk = tmp_path / "small-disk"
    _mount(disk, "6m")
    try:
        for free_kb in (16, 48, 64, 96, 128, 256, 512, 1024):
            home = disk / "home"
            shutil.rmtree(home, ignore_errors=True)
            (disk / "filler").unlink(missing_ok=True)
            shutil.copytree(source, home)
            store = (home / "citations.sqlite").read_bytes()
            room = shutil.disk_usage(disk).free // 1024 - free_kb
            with open(disk / "filler", "wb") as filler:
                filler.write(b"\0" * max(room, 0) * 1024)
            result = runner.invoke(app, [*command, "--home", str(home)])
            text = " ".join(result.stderr.split())
            where = f"{command[0]} with {free_kb} KB free: {text}"
            assert "Traceback" not in result.output and "built differently" not in text, where
            (disk / "filler").unlink()
            if result.exit_code != 0:
                assert "disk_full" in text and "free space" in text, where
                if "citation links were updated" not in text:
                    assert (home / "citations.sqlite").read_bytes() == store, where  # never truncated in place
                if command[0] == "remove" and _counts(home)["judgments"] < before["judgments"]:
                    assert "removed from the database" in text and "unchanged" not in text.split("removed")[0], where
                again = runner.invoke(app, [*command, "--home", str(home)])
                assert again.exit_code == 0, (where, again.output)
            after = _counts(home)
            if command[0] == "index":
                assert after == before, where
            else:
                assert after["judgments"] == after["summaries"] == before["judgments"] - 1, where
                assert 0 < after["links"] < before["links"], where  # A6's links went with it, the others stayed
    finally:
        _umount(disk)


def test_a_read_only_home_serves_what_it_can_and_check_says_what_works(tmp_path, monkeypatch):
    """Issue 50, item 7: on a read-only home every command that opened SQLite failed ('built differently',
    'cannot be written'), while `aqgr check` said searches, exports and check work."""
    import gc
    import json

    monkeypatch.delenv("AQGR_DATABASE_URL", raising=False)
    home = tmp_path / "ro"
    if os.geteuid() == 0:
        _mount(home, "16m")
    try:
        _built(home, tmp_path / "in")
        args = ["--home", str(home)]
        exported = runner.invoke(app, ["export", *args]).stdout
        shown = runner.invoke(app, ["show", "A1", *args]).stdout
        cited = runner.invoke(app, ["citations", "A1", *args]).stdout
        gc.collect()  # the archives those commands opened, and their connections, closed: a mount with a file
        _make_read_only(home)  # open for writing cannot be made read-only
        for name, wanted in (("export", exported), ("show A1", shown), ("citations A1", cited), ("status", None)):
            result = runner.invoke(app, [*name.split(), *args])
            assert result.exit_code == 0 and "Traceback" not in result.output, (name, result.output)
            assert wanted is None or result.stdout == wanted, name
        searched = runner.invoke(app, ["search", "The deceased made a dying declaration naming the accused", *args])
        text = " ".join(searched.stderr.split())
        assert "Traceback" not in searched.output and "built differently" not in text and "rebuild" not in text, text
        if searched.exit_code != 0:  # tantivy takes a lock file to open an index
            assert "read_only" in text and "writable" in text, text
        checked = runner.invoke(app, ["check", *args])
        note = " ".join(checked.stderr.split())
        assert checked.exit_code == 0 and json.loads(checked.stdout)["home"]["writable"] is False, checked.output
        assert "damaged:" not in note, note
        assert ("searches work" in note) == (searched.exit_code == 0), note
        result = runner.invoke(app, ["index", "--embedder", "hashing.v1", *args])
        assert result.exit_code != 0 and "read" in result.stderr and "Traceback" not in result.output
    finally:
        if os.geteuid() == 0:
            _umount(home)
