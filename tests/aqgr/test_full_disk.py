"""A disk that fills during `aqgr index`, `aqgr remove` and `aqgr statutes`: a clear message that says
what is true, and nothing lost. Every judgment, summary, citation link and treatment is counted
afterwards; a command that says "unchanged" changed nothing; the next run completes what one that
stopped left.

The full disk is fault-injected (`SmallDisk`: works without root or a small mount): after a budget
of writes under the archive's home, every further write fails as on a full disk. The disk is swept:
it fills at the first write, at the last, and at points between (tests/aqgr/test_bad_storage.py fills
a real small tmpfs where the test may mount one)."""

from __future__ import annotations

import builtins
import errno
import io
import json
import os
import shutil
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aqgr import Archive, IndexSpec, Settings
from aqgr.interfaces.cli import app
from tests.aqgr.helpers import CITING_JUDGMENTS, DYING_DECLARATION_FACTS, OVERRULING_JUDGMENTS, write_judgments
from tests.aqgr.test_statutes import STATUTES, _quoting

runner = CliRunner()
FAST = IndexSpec(embedder="hashing.v1")
_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER")


class SmallDisk:
    """The disk holding `home`, full after `room` writes (None: never full; `writes` counts them).

    A write is a `write` to a Python file opened for writing under `home` (open, io.open,
    os.fdopen: aqgr.foundation.files), a file copied there, an SQLite statement that changes a file
    there (INSERT ... ALTER) or switches it to write-ahead logging (the -wal and -shm files it makes),
    and a tantivy commit (its files are written in Rust, out of reach: its error is raised as tantivy
    raises it). Once full, each fails as on a full disk: OSError ENOSPC; sqlite3.OperationalError
    SQLITE_FULL, 'database or disk is full'."""

    def __init__(self, home: Path, room: int | None = None, *, spare: str | None = None, only: str | None = None):
        """`spare`: writes to files whose path holds it are always made, and not counted; `only`: only
        writes to files whose path holds it are counted (and refused when full)."""
        self.home, self.room, self.spare, self.only, self.writes = str(home), room, spare, only, 0

    def spend(self, where: str) -> bool:
        """Take one write to `where`; False when the disk is full."""
        if (self.spare is not None and self.spare in where) or (self.only is not None and self.only not in where):
            return True
        self.writes += 1
        return self.room is None or self.writes <= self.room

    def _under(self, path) -> bool:
        try:
            return self.home in os.fsdecode(os.fspath(path))
        except TypeError:
            return False

    def _file_write(self, handle, where: str):
        write = handle.write

        def limited(data):
            if not self.spend(where):
                raise OSError(errno.ENOSPC, "No space left on device", where)
            return write(data)

        handle.write = limited
        return handle

    def statement(self, sql: str, where: str) -> None:
        words = sql.lstrip().upper()
        if words.startswith(_WRITES) or words.startswith("PRAGMA JOURNAL_MODE=WAL") or words.startswith("VACUUM"):
            if not self.spend(where):
                full = sqlite3.OperationalError("database or disk is full")
                full.sqlite_errorcode, full.sqlite_errorname = 13, "SQLITE_FULL"
                raise full

    def install(self, monkeypatch) -> "SmallDisk":
        disk = self

        class Cursor(sqlite3.Cursor):
            def execute(self, sql, *args):
                disk.statement(sql, self.connection.where)
                return super().execute(sql, *args)

            def executemany(self, sql, *args):
                disk.statement(sql, self.connection.where)
                return super().executemany(sql, *args)

            def executescript(self, script):
                disk.statement(script, self.connection.where)
                return super().executescript(script)

        class Connection(sqlite3.Connection):
            where = ""

            def cursor(self, factory=None):
                return super().cursor(factory or Cursor)

            def execute(self, sql, *args):
                disk.statement(sql, self.where)
                return super().execute(sql, *args)

            def executemany(self, sql, *args):
                disk.statement(sql, self.where)
                return super().executemany(sql, *args)

            def executescript(self, script):
                disk.statement(script, self.where)
                return super().executescript(script)

        real_connect, real_open, real_fdopen = sqlite3.connect, builtins.open, os.fdopen
        real_copyfile = shutil.copyfile

        def connect(database, *args, **kwargs):
            if not (self._under(database) and "factory" not in kwargs):
                return real_connect(database, *args, **kwargs)
            connection = real_connect(database, *args, factory=Connection, **kwargs)
            connection.where = os.fsdecode(os.fspath(database))
            return connection

        def opener(file, mode="r", *args, **kwargs):
            handle = real_open(file, mode, *args, **kwargs)
            if any(c in mode for c in "wax+") and self._under(file):
                return self._file_write(handle, os.fsdecode(os.fspath(file)))
            return handle

        def fdopen(fd, mode="r", *args, **kwargs):
            handle = real_fdopen(fd, mode, *args, **kwargs)
            try:
                where = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                where = self.home
            if any(c in mode for c in "wax+") and self._under(where):
                return self._file_write(handle, where)
            return handle

        def copyfile(src, dst, *args, **kwargs):
            if self._under(dst) and not self.spend(str(dst)):
                raise OSError(errno.ENOSPC, "No space left on device", str(dst))
            return real_copyfile(src, dst, *args, **kwargs)

        from aqgr.retrieval.lexical.tantivy import TantivyEngine

        real_commit = TantivyEngine.commit

        def commit(engine):
            if engine._writer is not None and self._under(engine.directory) and not self.spend(str(engine.directory)):
                engine._writer = None  # tantivy gives up its writer with the error
                raise ValueError(
                    f"An IO error occurred: 'No space left on device (os error 28) at path \"{engine.directory}/x\"'"
                )
            return real_commit(engine)

        monkeypatch.setattr(sqlite3, "connect", connect)
        monkeypatch.setattr(builtins, "open", opener)
        monkeypatch.setattr(io, "open", opener)
        monkeypatch.setattr(os, "fdopen", fdopen)
        monkeypatch.setattr(shutil, "copyfile", copyfile)
        monkeypatch.setattr(TantivyEngine, "commit", commit)
        return self


# -- the archive and what it holds ---------------------------------------------------------------
BASE = {k: v for k, v in _quoting(OVERRULING_JUDGMENTS).items()}  # A6 overrules A1, distinguishes A2
NEW = {"A5": CITING_JUDGMENTS["A5"]}  # cites A1 and A2


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """Five judgments (one overruling another), indexed, with two statutes; checkpointed: copy it."""
    root = tmp_path_factory.mktemp("full-disk")
    archive = Archive(settings=Settings.resolve(root / "home", index=FAST))
    archive.summarize([write_judgments(root / "in", BASE)])
    archive.build_index()
    statutes = root / "statutes"
    statutes.mkdir()
    for name in ("S_EVID", "S_SERVICE"):
        (statutes / f"{name}.txt").write_text(STATUTES[name], encoding="utf-8")
    archive.add_statutes([statutes])
    archive.close()
    more = root / "more-statutes"
    more.mkdir()
    (more / "S_MURDER.txt").write_text(STATUTES["S_MURDER"], encoding="utf-8")
    write_judgments(root / "new", NEW)
    for name in ("aqgr.db", "citations.sqlite", "index/docs.sqlite", "cache/embeddings.sqlite"):
        with sqlite3.connect(root / "home" / name) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return root


@pytest.fixture
def home(built, tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("AQGR_DATABASE_URL", raising=False)
    shutil.copytree(built / "home", tmp_path / "home")
    return tmp_path / "home"


def holdings(home: Path) -> dict:
    """Every judgment, summary, citation link (with its treatment) and statute the archive holds, and
    what the index and the statute links hold: read as a search reads them (read-only)."""
    with sqlite3.connect(f"file:{home / 'aqgr.db'}?mode=ro", uri=True) as db:
        judgments = sorted(r[0] for r in db.execute("SELECT id FROM judgments"))
        summaries = sorted(r[0] for r in db.execute("SELECT judgment_id FROM summaries"))
    archive = Archive(settings=Settings.resolve(home, index=FAST))
    try:
        store = archive._citation_store()
        try:
            graph = store.graph()
            links = {pair: graph.mentions[pair] for pair in graph.mentions}
        finally:
            store.close()
        statutes = json.loads((home / "statutes" / "statutes.json").read_text(encoding="utf-8"))
        from aqgr.pipeline.statutes import StatuteCollection

        collection = StatuteCollection(archive.settings)
        from aqgr.retrieval.embedded.index import SummaryIndex

        statute_index = SummaryIndex.load(collection.index_dir)
        statute_ids = sorted(statute_index.doc_ids)
        statute_index.close()
        return {
            "judgments": judgments,
            "summaries": summaries,
            "links": sorted(f"{a}->{b}" for a, b in links),
            "treatments": sorted(
                f"{a}->{b}:{m.treatment.label}" for (a, b), m in links.items() if m.treatment is not None
            ),
            "indexed": sorted(archive._indexed_ids() or []),
            "statutes": sorted(statutes),
            "statutes_indexed": statute_ids,
            "statute_links": collection.links(),
        }
    finally:
        archive.close()


def test_the_archive_holds_what_the_counts_need(built, home):
    found = holdings(home)
    assert found["judgments"] == found["summaries"] == found["indexed"] == sorted(BASE)
    assert "A6->A1:overruled" in found["treatments"] and "A6->A2:distinguished" in found["treatments"]
    assert found["statutes"] == found["statutes_indexed"] == ["S_EVID", "S_SERVICE"]
    assert found["statute_links"]


def _fail_cleanly(result) -> str:
    text = " ".join(result.stderr.split())
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output, result.output
    assert "disk_full" in text and "free space" in text, text
    assert "built differently" not in text and "damaged" not in text, text
    return text


# -- the commands, each with the disk filling at points swept over it ----------------------------
def _index(built, home):
    assert runner.invoke(app, ["summarize", str(built / "new"), "--home", str(home)]).exit_code == 0
    return ["index", "--embedder", "hashing.v1", "--home", str(home)]


def _rebuild(built, home):
    return ["index", "--rebuild", "--embedder", "hashing.v1", "--home", str(home)]


def _remove(built, home):
    return ["remove", "A6", "--home", str(home)]


def _statutes(built, home):
    return ["statutes", str(built / "more-statutes"), "--home", str(home)]


COMMANDS = {"index": _index, "rebuild": _rebuild, "remove": _remove, "statutes": _statutes}


def _reference(built, tmp_path, name: str, monkeypatch) -> tuple[dict, int]:
    """What the command leaves on a disk with room (its holdings afterwards), and how many writes it made."""
    home = tmp_path / f"reference-{name}"
    shutil.copytree(built / "home", home)
    args = COMMANDS[name](built, home)
    with monkeypatch.context() as patch:
        disk = SmallDisk(home).install(patch)
        result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return holdings(home), disk.writes


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_disk_that_fills_during_a_command_loses_nothing(built, tmp_path, monkeypatch, name):
    expected, writes = _reference(built, tmp_path, name, monkeypatch)
    assert writes > 3, writes
    for room in sorted({0, 1, 2, writes // 3, writes // 2, (2 * writes) // 3, writes - 1}):
        home = tmp_path / f"home-{room}"
        shutil.copytree(built / "home", home)
        args = COMMANDS[name](built, home)
        before = holdings(home)
        with monkeypatch.context() as patch:
            SmallDisk(home, room).install(patch)
            result = runner.invoke(app, args)
        text = _fail_cleanly(result)
        after = holdings(home)  # every store still opens and reads
        where = f"{name}, the disk full after {room} of {writes} writes: {text}"
        # the database changes only by the command's own transaction (remove's)
        assert after["judgments"] in (before["judgments"], expected["judgments"]), where
        assert after["summaries"] == after["judgments"], where
        # nothing found is lost: links and treatments are those before, or those the command makes
        for part in ("links", "treatments", "indexed", "statutes", "statutes_indexed"):
            assert after[part] in (before[part], expected[part]), (part, where)
        assert after["statutes"] == after["statutes_indexed"], where  # the statutes and their index together
        if "unchanged" in text and "updated" not in text and "removed from the database" not in text:
            assert after == before, where
        if after["judgments"] != before["judgments"]:
            assert "removed from the database" in text, where
        if after["links"] != before["links"] and after["indexed"] == before["indexed"]:
            assert "citation links were updated" in text, where
        # the next run, with room, completes it
        again = runner.invoke(app, args)
        assert again.exit_code == 0, (where, again.output)
        if name != "remove":
            assert holdings(home) == expected, where
        else:
            assert runner.invoke(app, ["index", "--embedder", "hashing.v1", "--home", str(home)]).exit_code == 0
            assert holdings(home) == expected, where
        searched = runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--json", "--home", str(home)])
        assert searched.exit_code == 0, (where, searched.output)
        assert not any("precedents referred were not used" in note for note in json.loads(searched.stdout)["notes"])


# -- item 2: the citation store on a full disk ---------------------------------------------------
def _store_files(home: Path) -> dict[str, bytes]:
    """The citation store and its snapshot, byte for byte (the -wal and -shm a reader may make aside)."""
    return {
        p.name: p.read_bytes() for p in sorted(home.glob("*citations.sqlite*")) if not p.name.endswith(("-wal", "-shm"))
    }


def test_a_full_disk_at_the_citation_store_keeps_it_byte_for_byte(built, home, monkeypatch):
    """What the issue found: the store shrank from 106,496 to 4,096 bytes, said to be 'built differently',
    and searches lost the citation lift and every treatment warning."""
    assert runner.invoke(app, ["summarize", str(built / "new"), "--home", str(home)]).exit_code == 0
    before, links = _store_files(home), holdings(home)["treatments"]
    with monkeypatch.context() as patch:
        SmallDisk(home, 0, only="citations.sqlite").install(patch)  # it fails opening the store, as in the issue
        text = _fail_cleanly(runner.invoke(app, ["index", "--embedder", "hashing.v1", "--home", str(home)]))
    assert "citations.sqlite" in text and "unchanged" in text, text
    assert _store_files(home) == before  # not truncated, not made anew
    assert holdings(home)["treatments"] == links
    searched = runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--json", "--home", str(home)])
    result = json.loads(searched.stdout)
    assert not any("precedents referred were not used" in note for note in result["notes"]), result["notes"]
    warned = {hit["judgment_id"]: hit["treatment_warnings"] for hit in result["hits"]}
    assert warned.get("A1") and warned["A1"][0]["treatment"] == "overruled", warned


def test_a_store_made_anew_is_made_beside_the_old_one_which_serves_until_then(built, home, monkeypatch):
    """A store of another treatment engine is rebuilt beside it and moved over it when complete: a full
    disk part way leaves the old one in place, searched with its treatments (a model's paid-for ones)."""
    path = home / "citations.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = 'llm.v1 (paid for)' WHERE key = 'treatment'")
    before = _store_files(home)
    with monkeypatch.context() as patch:
        disk = SmallDisk(home, 30, only=".rebuild").install(patch)  # the new store is made, then fills
        text = _fail_cleanly(runner.invoke(app, ["index", "--embedder", "hashing.v1", "--home", str(home)]))
    assert disk.writes > 30
    assert f"the citation store in use ({path}) is unchanged" in text, text
    assert _store_files(home) == {**before, **{k: v for k, v in _store_files(home).items() if k.startswith(".")}}
    searched = runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--json", "--home", str(home)])
    assert not any("precedents referred were not used" in n for n in json.loads(searched.stdout)["notes"])
    checked = runner.invoke(app, ["check", "--home", str(home)])
    assert checked.exit_code == 0 and "citation store being made anew" in " ".join(checked.stderr.split())
    assert runner.invoke(app, ["index", "--embedder", "hashing.v1", "--home", str(home)]).exit_code == 0
    assert not list(home.glob(".citations.sqlite.rebuild*"))  # moved over the old one
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'treatment'").fetchone() == ("phrases.v1",)
    assert "A6->A1:overruled" in holdings(home)["treatments"]


# -- item 3: remove on a full disk -----------------------------------------------------------------
def test_remove_on_a_full_disk_says_what_it_did_and_a_rerun_completes_it(built, home, monkeypatch):
    """What the issue found: "what was there before is unchanged", but the judgment was already deleted
    from the database, and the index left stale."""
    before = holdings(home)
    with monkeypatch.context() as patch:  # the database's transaction is made; every other write fails
        SmallDisk(home, 0, spare="aqgr.db").install(patch)
        text = _fail_cleanly(runner.invoke(app, ["remove", "A6", "--home", str(home)]))
    after = holdings(home)
    assert "A6" not in after["judgments"] and "A6" in after["indexed"]
    assert "what was there before is unchanged" not in text
    assert "A6" in text and "removed from the database" in text and "still in the index" in text, text
    assert after["links"] == before["links"]  # the citation store and the index as they were
    searched = runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--json", "--home", str(home)])
    assert "A6" not in {hit["judgment_id"] for hit in json.loads(searched.stdout)["hits"]}
    again = runner.invoke(app, ["remove", "A6", "--home", str(home)])  # the same command completes it
    assert again.exit_code == 0, again.output
    done = holdings(home)
    assert "A6" not in done["indexed"] and not [link for link in done["links"] if "A6" in link]
    assert Counter(done["treatments"]) == Counter(t for t in before["treatments"] if not t.startswith("A6->"))
