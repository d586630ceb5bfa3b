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
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aqgr import Archive, IndexSpec, Settings
from aqgr.cli import app
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
    archive.store.close()
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
    from tests.server.conftest import TestClient

    from aqgr.server import create_app

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
    from tests.server.conftest import TestClient

    from aqgr.server import create_app

    app_ = create_app(archive=Archive(settings=Settings.resolve(archive_home, index=FAST)))
    with TestClient(app_, raise_server_exceptions=False) as client:
        assert client.post("/api/search", json={"facts": DYING_DECLARATION_FACTS}).status_code == 200
        app_.state.service.archive.store.close()
        overwrite_pages(archive_home / "aqgr.db")
        assert client.post("/api/search", json={"facts": DYING_DECLARATION_FACTS}).status_code == 200  # in memory
        text = client.get("/api/judgments/A1/text")
        assert text.status_code == 503 and text.json()["error"] == "database_damaged"
