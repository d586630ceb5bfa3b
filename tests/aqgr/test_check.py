"""`aqgr check` finds what breaks a search, names it with its recovery, and `aqgr index` repairs
what it can: a flipped byte in a stored summary (skipped by search, export and the server), index
documents moved to other ids, a deleted manifest, leftovers of a killed index run, a database file
gone, empty or missing a table, a garbled embeddings cache, a read-only home, a stale index."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aqgr import Archive, Settings
from aqgr.interfaces.cli import app
from tests.aqgr.helpers import DYING_DECLARATION_FACTS
from tests.aqgr.test_corruption import FAST, _read_only, archive_home, built  # noqa: F401 (fixtures)

runner = CliRunner()


def _check(home: Path) -> tuple[int, dict, str]:
    result = runner.invoke(app, ["check", "--home", str(home)])
    assert "Traceback" not in result.output, result.output
    return result.exit_code, json.loads(result.stdout), " ".join(result.stderr.split())


def _flip_a_byte(home: Path, judgment_id: str) -> None:
    """One byte of the summary's stored JSON changed (a ':' made ';'), as a bad disk sector or a stray write does."""
    with sqlite3.connect(home / "aqgr.db") as conn:
        (data,) = conn.execute("SELECT data FROM summaries WHERE judgment_id = ?", (judgment_id,)).fetchone()
        at = data.index(":")
        conn.execute(
            "UPDATE summaries SET data = ? WHERE judgment_id = ?", (data[:at] + ";" + data[at + 1 :], judgment_id)
        )


def test_a_flipped_byte_in_a_stored_summary_is_found_and_skipped_not_fatal(archive_home):
    _flip_a_byte(archive_home, "A1")
    code, report, err = _check(archive_home)
    assert code == 1 and report["ok"] is False
    assert [d["judgment_id"] for d in report["database"]["damaged_summaries"]] == ["A1"]
    assert "'A1'" in err and "aqgr summarize --force" in err
    home = ["--home", str(archive_home)]
    found = runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--json", *home])
    assert found.exit_code == 0, found.output
    result = json.loads(found.stdout)
    assert result["hits"] and "A1" not in {h["judgment_id"] for h in result["hits"]}
    assert any("damaged" in note and "A1" in note for note in result["notes"])
    exported = runner.invoke(app, ["export", *home])
    assert exported.exit_code == 0 and len(exported.stdout.splitlines()) == 3  # the other three, whole
    assert "damaged" in exported.stderr and "A1" in exported.stderr  # and it says which it left out

    from aqgr.interfaces.server import create_app
    from tests.server.conftest import TestClient

    with TestClient(
        create_app(archive=Archive(settings=Settings.resolve(archive_home, index=FAST))), raise_server_exceptions=False
    ) as client:
        assert client.get("/api/health").json()["status"] == "ok"
        response = client.post("/api/search", json={"facts": DYING_DECLARATION_FACTS})
        assert response.status_code == 200 and response.json()["hits"], response.text
        assert client.get("/api/judgments/A1").status_code == 404  # not served as if sound


def _swap_ids(home: Path) -> None:
    """Two documents of the index under each other's judgment id (the ids reordered, the documents not)."""
    with sqlite3.connect(home / "index" / "docs.sqlite") as conn:
        (a, x), (b, y) = conn.execute("SELECT n, judgment_id FROM docs ORDER BY n LIMIT 2").fetchall()
        conn.execute("UPDATE docs SET judgment_id = ? WHERE n = ?", (y, a))
        conn.execute("UPDATE docs SET judgment_id = ? WHERE n = ?", (x, b))


def _swap_numbers(home: Path) -> None:
    """Two whole rows of the documents file under each other's number: the lexical and dense parts then
    hold each one's document under the other's number."""
    with sqlite3.connect(home / "index" / "docs.sqlite") as conn:
        (a,), (b,) = conn.execute("SELECT n FROM docs ORDER BY n LIMIT 2").fetchall()
        conn.execute("UPDATE docs SET n = -1 WHERE n = ?", (a,))
        conn.execute("UPDATE docs SET n = ? WHERE n = ?", (a, b))
        conn.execute("UPDATE docs SET n = ? WHERE n = -1", (b,))


@pytest.mark.parametrize("damage", [_swap_ids, _swap_numbers])
def test_index_documents_under_other_ids_are_found_and_rebuilt(archive_home, damage):
    damage(archive_home)
    code, report, err = _check(archive_home)
    assert code == 1 and report["index"]["ok"] is False and "aqgr index --rebuild" in err, report["index"]
    assert (
        runner.invoke(app, ["index", "--rebuild", "--embedder", "hashing.v1", "--home", str(archive_home)]).exit_code
        == 0
    )
    code, report, _ = _check(archive_home)
    assert code == 0 and report["index"]["state"] == "ok", report


def test_a_deleted_manifest_is_reported_and_aqgr_index_builds_it_again(archive_home):
    (archive_home / "index" / "manifest.json").unlink()
    code, report, err = _check(archive_home)
    assert code == 1 and report["index"]["ok"] is False and "manifest" in err and "aqgr index" in err
    result = runner.invoke(app, ["index", "--embedder", "hashing.v1", "--home", str(archive_home)])
    assert result.exit_code == 0, result.output
    assert _check(archive_home)[0] == 0
    assert runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--home", str(archive_home)]).exit_code == 0


def test_leftovers_of_a_killed_index_run_are_reported_and_removed(archive_home):
    for leftover in (
        archive_home / ".index.tmp-0123456789ab",
        archive_home / ".index.rebuild-ba9876543210",
        archive_home / "statutes" / ".index.tmp-feedfeedfeed",
    ):
        leftover.mkdir(parents=True)
        (leftover / "docs.sqlite").write_bytes(b"x" * 100)
    code, report, err = _check(archive_home)
    assert code == 0 and len(report["leftovers"]) == 3 and "aqgr index" in err
    assert runner.invoke(app, ["index", "--embedder", "hashing.v1", "--home", str(archive_home)]).exit_code == 0
    assert _check(archive_home)[1]["leftovers"] == []


@pytest.mark.parametrize("how", ["gone", "empty", "table"])
def test_a_database_gone_empty_or_missing_a_table_is_not_ok(archive_home, how):
    db = archive_home / "aqgr.db"
    for extra in ("-wal", "-shm"):
        db.with_name(db.name + extra).unlink(missing_ok=True)
    if how == "gone":
        db.unlink()
    elif how == "empty":
        db.write_bytes(b"")
    else:
        with sqlite3.connect(db) as conn:
            conn.execute("DROP TABLE imports")
    code, report, err = _check(archive_home)
    assert code == 1 and report["database"]["ok"] is False and "aqgr import" in err, report["database"]
    if how == "gone":
        assert not db.exists()  # the check made nothing
    if how == "table":
        assert report["database"]["missing_tables"] == ["imports"]


@pytest.mark.parametrize("garble", ["all", "pages"])
def test_a_garbled_embeddings_cache_is_reported_and_aqgr_index_makes_it_anew(archive_home, garble):
    from tests.aqgr.test_corruption import overwrite_pages

    cache = archive_home / "cache" / "embeddings.sqlite"
    with sqlite3.connect(cache) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    overwrite_pages(cache) if garble == "pages" else cache.write_bytes(bytes(range(256)) * 64)
    code, report, err = _check(archive_home)
    assert code == 1 and [c["name"] for c in report["caches"] if not c["ok"]] == ["embeddings"] and "aqgr index" in err
    result = runner.invoke(app, ["index", "--rebuild", "--embedder", "hashing.v1", "--home", str(archive_home)])
    assert result.exit_code == 0, result.output
    assert _check(archive_home)[0] == 0


def test_a_read_only_home_is_read_only_and_readable_not_damaged(archive_home, monkeypatch):
    _read_only(archive_home, monkeypatch)
    code, report, err = _check(archive_home)
    assert code == 0 and report["ok"] and report["home"]["writable"] is False, report
    assert "read-only" in err and "damaged" not in err and "restore a backup" not in err


def test_an_index_older_than_the_summaries_is_said_to_be_stale(archive_home, tmp_path):
    home = ["--home", str(archive_home)]
    assert runner.invoke(app, ["summarize", "--force", str(tmp_path / "in" / "A2.txt"), *home]).exit_code == 0
    code, report, err = _check(archive_home)
    assert code == 0 and report["index"]["state"] == "stale" and report["index"]["stale"]["changed"] == 1, report[
        "index"
    ]
    assert "aqgr index" in err
    status = json.loads(runner.invoke(app, ["status", *home]).stdout)
    assert status["index_stale"] == {"new": 0, "changed": 1, "removed": 0}
    assert runner.invoke(app, ["index", "--embedder", "hashing.v1", *home]).exit_code == 0
    assert _check(archive_home)[1]["index"]["state"] == "ok"
    assert json.loads(runner.invoke(app, ["status", *home]).stdout)["index_stale"] == {
        "new": 0,
        "changed": 0,
        "removed": 0,
    }
