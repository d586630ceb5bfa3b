"""A damaged archive: clear message naming what is damaged and how to recover, a non-zero exit code,
no traceback, and nothing that was committed lost.

Cases: SQLite pages overwritten after the header, a header that is not SQLite's, a truncated
database, a damaged or empty index manifest, index files missing, a damaged citation graph,
a read-only home, a full disk (a fault-injected writer). Entry points: summarize, index,
search, citations, export, import, status, check, and the server."""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aqgr import Archive, IndexSpec, Settings
from aqgr.interfaces.cli import app
from tests.aqgr.helpers import DYING_DECLARATION_FACTS, write_judgments

runner = CliRunner()
FAST = IndexSpec(embedder="hashing.v1")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A summarised and indexed archive (four judgments), checkpointed: copy it before damaging it."""
    root = tmp_path_factory.mktemp("built")
    archive = Archive(settings=Settings.resolve(root / "home", index=FAST))
    archive.summarize([write_judgments(root / "in")])
    archive.build_index()
    archive.export_summaries(root / "all.jsonl")
    archive.close()
    with sqlite3.connect(root / "home" / "aqgr.db") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return root


@pytest.fixture
def archive_home(built, tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("AQGR_DATABASE_URL", raising=False)
    home = tmp_path / "home"
    shutil.copytree(built / "home", home)
    shutil.copytree(built / "in", tmp_path / "in")
    shutil.copy(built / "all.jsonl", tmp_path / "all.jsonl")
    return home


def overwrite_pages(db: Path, fill: int = 0x5A) -> None:
    """Every page after the first (the header and schema) overwritten with garbage."""
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    data[page:] = bytes([fill]) * (len(data) - page)
    db.write_bytes(bytes(data))


def overwrite_header(db: Path) -> None:
    data = bytearray(db.read_bytes())
    data[:100] = b"\x00garbage" * 12 + b"\x00" * 4
    db.write_bytes(bytes(data))


def truncate(db: Path) -> None:
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])


DAMAGES = {"pages": overwrite_pages, "header": overwrite_header, "truncated": truncate}


def _clean_failure(result, *words: str) -> str:
    text = " ".join(result.stderr.split())
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output and "sqlalche.me" not in result.output, result.output
    for word in words:
        assert word in text, text
    return text


# -- the database --------------------------------------------------------------------------------
@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_damaged_database_every_command_says_so(archive_home, tmp_path, damage):
    db = archive_home / "aqgr.db"
    DAMAGES[damage](db)
    home = ["--home", str(archive_home)]
    commands = {
        "status": ["status"],
        "search": ["search", DYING_DECLARATION_FACTS],
        "export": ["export", "--out", str(tmp_path / "out.jsonl")],
        "summarize": ["summarize", str(tmp_path / "in")],
        "citations": ["citations", "A1"],
        "index": ["index", "--embedder", "hashing.v1"],
        "import": ["import", str(tmp_path / "all.jsonl"), "--replace"],
    }
    for name, args in commands.items():
        result = runner.invoke(app, args + home)
        text = _clean_failure(result, str(db), "damaged", "aqgr check", "aqgr export")
        assert "aqgr import" in text, (name, text)
    assert not (tmp_path / "out.jsonl").exists()  # no half export
    result = runner.invoke(app, ["check", *home])
    assert result.exit_code == 1 and "Traceback" not in result.output
    report = json.loads(result.stdout)
    assert report["ok"] is False and report["database"]["ok"] is False and report["database"]["where"] == str(db)
    assert report["database"]["problems"]
    assert "restore a backup" in result.stderr


def test_check_passes_on_a_healthy_archive(archive_home):
    result = runner.invoke(app, ["check", "--home", str(archive_home)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] and report["database"]["problems"] == [] and report["index"]["detail"] == "4 judgments indexed"


def test_recovery_from_an_export_after_damage(archive_home, tmp_path):
    saved = tmp_path / "backup.jsonl"
    assert runner.invoke(app, ["export", "--out", str(saved), "--home", str(archive_home)]).exit_code == 0
    overwrite_pages(archive_home / "aqgr.db")
    (archive_home / "aqgr.db").rename(tmp_path / "damaged.db")  # move it aside, as the message says
    assert runner.invoke(app, ["import", str(saved), "--home", str(archive_home)]).exit_code == 0
    assert runner.invoke(app, ["index", "--embedder", "hashing.v1", "--home", str(archive_home)]).exit_code == 0
    result = runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--json", "--home", str(archive_home)])
    assert result.exit_code == 0 and json.loads(result.stdout)["hits"]


def test_damaged_database_the_server_answers_503_with_the_error_shape(archive_home):
    from aqgr.interfaces.server import create_app
    from tests.server.conftest import TestClient

    overwrite_pages(archive_home / "aqgr.db")
    app_ = create_app(archive=Archive(settings=Settings.resolve(archive_home, index=FAST)))
    with TestClient(app_, raise_server_exceptions=False) as client:
        for method, path, body in (
            ("POST", "/api/search", {"facts": DYING_DECLARATION_FACTS}),
            ("POST", "/api/questions", {"facts": DYING_DECLARATION_FACTS}),
            ("GET", "/api/judgments/A1", None),
            ("GET", "/api/judgments/A1/text", None),
        ):
            response = client.request(method, path, json=body)
            assert response.status_code == 503, (path, response.text)
            found = response.json()
            assert found["error"] == "database_damaged" and str(archive_home / "aqgr.db") in found["detail"]
        health = client.get("/api/health").json()
        assert health["status"] == "database_error" and "damaged" in health["detail"]


def test_a_server_started_before_the_damage_keeps_searching_its_snapshot(archive_home):
    from aqgr.interfaces.server import create_app
    from tests.server.conftest import TestClient

    app_ = create_app(archive=Archive(settings=Settings.resolve(archive_home, index=FAST)))
    with TestClient(app_, raise_server_exceptions=False) as client:
        assert client.post("/api/search", json={"facts": DYING_DECLARATION_FACTS}).status_code == 200
        app_.state.service.archive.close()
        overwrite_pages(archive_home / "aqgr.db")
        searched = client.post(
            "/api/search", json={"facts": DYING_DECLARATION_FACTS}
        )  # the index and summaries it holds
        assert searched.status_code == 200 and searched.json()["hits"]
        assert any(
            "not pinned" in note for note in searched.json()["notes"]
        )  # the texts cannot be read: said, not a 503
        text = client.get("/api/judgments/A1/text")
        assert text.status_code == 503 and text.json()["error"] == "database_damaged"


# -- the index -------------------------------------------------------------------------------------
@pytest.mark.parametrize("content", [b"", b'{"format', b"[1, 2]", b"\xff\xfe\x00"])
def test_damaged_or_empty_manifest(archive_home, content):
    (archive_home / "index" / "manifest.json").write_bytes(content)
    home = ["--home", str(archive_home)]
    _clean_failure(
        runner.invoke(app, ["search", DYING_DECLARATION_FACTS, *home]), "aqgr index", str(archive_home / "index")
    )
    _clean_failure(runner.invoke(app, ["citations", "A1", *home]), "aqgr index")
    status = runner.invoke(app, ["status", *home])  # the rest of the status is still reported
    assert status.exit_code == 0 and "aqgr index" in json.loads(status.stdout)["index"]["error"]
    checked = runner.invoke(app, ["check", *home])
    assert checked.exit_code == 1 and json.loads(checked.stdout)["index"]["ok"] is False
    summaries = runner.invoke(app, ["export", *home])
    assert summaries.exit_code == 0 and len(summaries.stdout.splitlines()) == 4  # nothing committed is lost
    assert runner.invoke(app, ["index", "--embedder", "hashing.v1", *home]).exit_code == 0  # the fix it names
    assert runner.invoke(app, ["search", DYING_DECLARATION_FACTS, *home]).exit_code == 0


@pytest.mark.parametrize("missing", ["docs.sqlite", "bm25/lexical.json", "dense"])
def test_missing_index_files(archive_home, missing):
    gone = archive_home / "index" / missing
    shutil.rmtree(gone) if gone.is_dir() else gone.unlink()
    _clean_failure(runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--home", str(archive_home)]), "aqgr index")
    assert runner.invoke(app, ["check", "--home", str(archive_home)]).exit_code == 1


def test_damaged_citation_graph_is_rebuilt_not_fatal(archive_home):
    (archive_home / "citations.sqlite").write_bytes(b"{bad")
    result = runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--home", str(archive_home)])
    assert result.exit_code == 0 and "Traceback" not in result.output
    _clean_failure(runner.invoke(app, ["citations", "A1", "--home", str(archive_home)]), "aqgr index")
    assert runner.invoke(app, ["index", "--embedder", "hashing.v1", "--home", str(archive_home)]).exit_code == 0
    assert runner.invoke(app, ["citations", "A1", "--home", str(archive_home)]).exit_code == 0


def test_index_on_a_damaged_database_keeps_the_old_index(archive_home):
    before = (archive_home / "index" / "manifest.json").read_bytes()
    overwrite_pages(archive_home / "aqgr.db")
    _clean_failure(runner.invoke(app, ["index", "--embedder", "hashing.v1", "--home", str(archive_home)]), "damaged")
    assert (archive_home / "index" / "manifest.json").read_bytes() == before


def test_the_server_with_a_damaged_manifest_answers_503(archive_home):
    from aqgr.interfaces.server import create_app
    from tests.server.conftest import TestClient

    (archive_home / "index" / "manifest.json").write_bytes(b"")
    with TestClient(
        create_app(archive=Archive(settings=Settings.resolve(archive_home, index=FAST))), raise_server_exceptions=False
    ) as client:
        response = client.post("/api/search", json={"facts": DYING_DECLARATION_FACTS})
        assert (
            response.status_code == 503
            and response.json()["error"] == "index_mismatch"
            and "aqgr index" in response.json()["detail"]
        )
        assert client.get("/api/health").json()["status"] == "no_index"
        assert client.get("/api/judgments/A1").status_code == 200  # summaries still served from the database


# -- a full disk and a read-only home (fault-injected: works without root or a small mount) ----------
class FullDisk:
    """A writer that fails with ENOSPC after `room` bytes, like a file on a full disk."""

    def __init__(self, real, room: int = 100):
        self.real, self.room = real, room

    def __call__(self, *args, **kwargs):
        handle = self.real(*args, **kwargs)
        room = [self.room]
        write = handle.write

        def limited(data):
            if len(data) > room[0]:
                raise OSError(errno.ENOSPC, "No space left on device")
            room[0] -= len(data)
            return write(data)

        handle.write = limited
        return handle


def test_export_on_a_full_disk_keeps_the_previous_export(archive_home, tmp_path, monkeypatch):
    out = tmp_path / "exports" / "all.jsonl"
    assert runner.invoke(app, ["export", "--out", str(out), "--home", str(archive_home)]).exit_code == 0
    before = out.read_bytes()
    monkeypatch.setattr(os, "fdopen", FullDisk(os.fdopen))  # the temporary file aqgr.foundation.files writes
    _clean_failure(
        runner.invoke(app, ["export", "--out", str(out), "--home", str(archive_home)]),
        "disk_full",
        "free space",
        str(out),
    )
    assert out.read_bytes() == before and sorted(p.name for p in out.parent.iterdir()) == ["all.jsonl"]  # no half file


def _tree(path: Path) -> dict[str, bytes]:
    """Every file and its bytes (SQLite's -wal and -shm files, which a reader may create, aside)."""
    return {
        str(p.relative_to(path)): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and not p.name.endswith(("-wal", "-shm"))
    }


@pytest.mark.parametrize("how", ["rebuild", "update"])
def test_index_on_a_full_disk_keeps_the_old_index(archive_home, tmp_path, monkeypatch, how):
    from aqgr.retrieval.dense.store import DenseStore

    home = ["--home", str(archive_home)]
    if how == "update":  # a new judgment to add
        more = write_judgments(tmp_path / "more", {"B1": _texts()[0]})
        assert runner.invoke(app, ["summarize", str(more), *home]).exit_code == 0
    before = _tree(archive_home / "index")

    def full(self, vectors, window_n):
        raise OSError(errno.ENOSPC, "No space left on device", str(self.directory / "dense-000009.vectors"))

    monkeypatch.setattr(DenseStore, "add_segment", full)
    args = ["index", "--embedder", "hashing.v1", *home] + (["--rebuild"] if how == "rebuild" else [])
    _clean_failure(runner.invoke(app, args), "disk_full", "free space", "unchanged")
    if how == "rebuild":
        assert _tree(archive_home / "index") == before  # the old index untouched, byte for byte
    assert not [p for p in archive_home.iterdir() if p.name.startswith(".index")]  # no temporary folder left
    monkeypatch.undo()
    assert runner.invoke(app, ["search", DYING_DECLARATION_FACTS, *home]).exit_code == 0  # the previous generation
    assert (
        runner.invoke(app, ["index", "--embedder", "hashing.v1", *home]).exit_code == 0
    )  # and the next run completes it
    assert runner.invoke(app, ["status", *home]).exit_code == 0


def test_summarize_on_a_full_disk_stops_clearly_and_keeps_what_was_stored(archive_home, tmp_path, monkeypatch):
    from sqlalchemy.exc import OperationalError

    from aqgr.archive.store import Store

    more = write_judgments(
        tmp_path / "more", {f"B{i}": text for i, text in enumerate(json.loads(json.dumps(_texts())))}
    )
    real = Store._upsert
    judgments: list[str] = []

    def fills_up(self, session, row):  # the second new judgment finds the disk full
        judgment_id = getattr(row, "id", None)  # a JudgmentRow (its summary row follows in the same transaction)
        if judgment_id is not None and judgment_id not in judgments:
            judgments.append(judgment_id)
        if len(judgments) > 1:
            raise OperationalError("INSERT", {}, sqlite3.OperationalError("database or disk is full"))
        return real(self, session, row)

    monkeypatch.setattr(Store, "_upsert", fills_up)
    result = runner.invoke(app, ["summarize", str(more), "--home", str(archive_home)])
    _clean_failure(result, "disk_full", "free space")
    monkeypatch.undo()
    ids = {
        d["judgment_id"]
        for d in map(json.loads, runner.invoke(app, ["export", "--home", str(archive_home)]).stdout.splitlines())
    }
    assert {"A1", "A2", "A3", "A4"} <= ids and len(
        ids
    ) == 5  # the four before, and the one stored before the disk filled


def _texts() -> list[str]:
    from tests.aqgr.helpers import JUDGMENTS

    return [text.replace("Supreme Court", f"Supreme Court (copy {n})") for n, text in enumerate(JUDGMENTS.values())]


def _read_only(home: Path, monkeypatch) -> None:
    """The home as a read-only medium shows it: SQLite opened read-only, and file writes under it refused."""
    from aqgr.archive.store import Store

    real_init = Store.__init__

    def read_only_init(self, url, *, create=True):
        if url.startswith("sqlite:///") and "mode=ro" not in url:
            url = f"sqlite:///file:{url[len('sqlite:///') :]}?mode=ro&uri=true"
        real_init(self, url, create=create)

    monkeypatch.setattr(Store, "__init__", read_only_init)
    real_mkdir, real_open = os.mkdir, os.open

    def no_mkdir(path, *args, **kwargs):
        if str(path).startswith(str(home)):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_mkdir(path, *args, **kwargs)

    def no_write(path, flags, *args, **kwargs):
        if str(path).startswith(str(home)) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", no_mkdir)
    monkeypatch.setattr(os, "open", no_write)


def test_read_only_home_reads_work_and_writes_say_so(archive_home, tmp_path, monkeypatch):
    before = runner.invoke(app, ["export", "--home", str(archive_home)]).stdout
    _read_only(archive_home, monkeypatch)
    home = ["--home", str(archive_home)]
    assert runner.invoke(app, ["search", DYING_DECLARATION_FACTS, *home]).exit_code == 0
    assert runner.invoke(app, ["export", *home]).stdout == before
    assert runner.invoke(app, ["status", *home]).exit_code == 0
    _clean_failure(runner.invoke(app, ["index", "--embedder", "hashing.v1", *home]), "read_only")
    _clean_failure(
        runner.invoke(app, ["summarize", str(write_judgments(tmp_path / "new", {"Z1": _texts()[0]})), *home]), "read"
    )
    _clean_failure(
        runner.invoke(app, ["export", "--out", str(archive_home / "out.jsonl"), *home]), "read_only", "writable"
    )
    monkeypatch.undo()
    assert runner.invoke(app, ["export", "--home", str(archive_home)]).stdout == before  # nothing lost


# -- an index that cannot be opened for a reason outside it: said as such, not "built differently" ----
def _refuse_to_open(monkeypatch, name: str, message: str, code: int) -> None:
    """Every SQLite file named `name` fails as SQLite fails it (`message`, result `code`): at its first
    statement, as SQLite opens a file lazily (connecting to it succeeds)."""
    real = sqlite3.connect

    def refuse(*args, **kwargs):
        error = sqlite3.OperationalError(message)
        error.sqlite_errorcode = code
        raise error

    class Refusing(sqlite3.Connection):
        execute = executemany = executescript = cursor = refuse

    def connect(database, *args, **kwargs):
        if name in str(database):
            kwargs["factory"] = Refusing
        return real(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)


@pytest.mark.parametrize(
    "reason, message, code, advice",
    [
        ("disk_full", "database or disk is full", 13, "free space"),
        ("disk_full", "disk I/O error", 10, "free space"),  # what SQLite says when the full disk refuses its -shm
        ("unreadable", "unable to open database file", 14, "permissions"),
    ],
)
def test_an_index_that_cannot_be_opened_says_why_not_built_differently(
    archive_home, monkeypatch, reason, message, code, advice
):
    """Issue 50, item 7: any SQLite error at index load was 'the index was built differently: rebuild it'."""
    from aqgr.interfaces.server import create_app
    from tests.server.conftest import TestClient

    if message == "disk I/O error":  # the disk is full: no space left on it
        monkeypatch.setattr(shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(1 << 30, 1 << 30, 0))
    _refuse_to_open(monkeypatch, "docs.sqlite", message, code)
    home = ["--home", str(archive_home)]
    text = _clean_failure(runner.invoke(app, ["search", DYING_DECLARATION_FACTS, *home]), "cannot be opened", reason)
    assert advice in text and "built differently" not in text and "rebuild" not in text, text
    checked = runner.invoke(app, ["check", *home])
    report = json.loads(checked.stdout)
    assert checked.exit_code == 0 and report["index"]["state"] == "unavailable", report["index"]
    assert "damaged:" not in checked.stderr and "--rebuild" not in checked.stderr, checked.stderr
    with TestClient(
        create_app(archive=Archive(settings=Settings.resolve(archive_home, index=FAST))), raise_server_exceptions=False
    ) as client:
        response = client.post("/api/search", json={"facts": DYING_DECLARATION_FACTS})
        assert response.status_code == 503 and response.json()["error"] == "index_unavailable", response.text
    monkeypatch.undo()
    assert runner.invoke(app, ["search", DYING_DECLARATION_FACTS, *home]).exit_code == 0  # nothing to rebuild


def test_a_citation_store_that_cannot_be_opened_is_left_as_it_is(archive_home, monkeypatch):
    """Issue 50, item 2: a full disk at the citation store's opening made `aqgr index` delete it and make
    an empty one ('was built differently')."""
    store = archive_home / "citations.sqlite"
    before = store.read_bytes()
    _refuse_to_open(monkeypatch, "citations.sqlite", "database or disk is full", 13)
    text = _clean_failure(
        runner.invoke(app, ["index", "--embedder", "hashing.v1", "--home", str(archive_home)]),
        "disk_full",
        "free space",
        "citations.sqlite",
    )
    assert "built differently" not in text
    monkeypatch.undo()
    assert store.read_bytes() == before


# -- a search while the first `aqgr index` is running ----------------------------------------------
@pytest.mark.parametrize("stage", ["read", "index"])  # finding the citations (no index yet); the empty index
def test_a_search_during_the_first_index_says_an_index_is_being_built(tmp_path, monkeypatch, stage):
    """Issue 50, item 9: it said 'the archive has no summaries to search: run `aqgr summarize` first'
    (over HTTP a 503 empty_archive) while the summaries were there."""
    import threading

    from aqgr.interfaces.server import create_app
    from tests.server.conftest import TestClient

    monkeypatch.delenv("AQGR_DATABASE_URL", raising=False)
    home = tmp_path / "home"
    writer = Archive(settings=Settings.resolve(home, index=FAST))
    writer.summarize([write_judgments(tmp_path / "in")])
    reached, go_on = threading.Event(), threading.Event()

    def progress(at: str, done: int, total) -> None:
        if at == stage:
            reached.set()
            go_on.wait(60)

    building = threading.Thread(target=writer.build_index, kwargs={"progress": progress})
    building.start()
    try:
        assert reached.wait(60)
        result = runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--home", str(home)])
        text = _clean_failure(result, "an index is being built", "try again when it finishes")
        assert "no summaries" not in text and "summarize" not in text
        with TestClient(
            create_app(archive=Archive(settings=Settings.resolve(home, index=FAST))), raise_server_exceptions=False
        ) as client:
            response = client.post("/api/search", json={"facts": DYING_DECLARATION_FACTS})
            assert response.status_code == 503 and response.json()["error"] == "index_building", response.text
            assert response.headers.get("Retry-After")
            assert "being built" in client.get("/api/health").json()["detail"]
    finally:
        go_on.set()
        building.join(60)
    writer.close()
    assert runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--home", str(home)]).exit_code == 0
