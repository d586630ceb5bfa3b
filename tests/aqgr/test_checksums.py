"""Every stored summary has a checksum written with it: a changed byte that still parses and validates
(one letter of the facts) is found by `aqgr check`, named with its recovery, and skipped with a note by a
search, an export and the server. A database made before checksums is read as "no checksum yet",
migrated in place on the next write, and `aqgr index` gives its summaries their checksums."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aqgr import Archive, Settings
from aqgr.archive.store import CHECKSUM_MISMATCH, Store, summary_checksum
from aqgr.interfaces.cli import app
from tests.aqgr.helpers import DYING_DECLARATION_FACTS
from tests.aqgr.test_check import _check
from tests.aqgr.test_corruption import FAST, _read_only, archive_home, built  # noqa: F401 (fixtures)
from tests.aqgr.test_store_bulk import _item

runner = CliRunner()


def _flip_in_sql(home: Path, judgment_id: str) -> None:
    """One letter of the facts changed through SQL: the JSON still parses and is still a valid summary."""
    with sqlite3.connect(home / "aqgr.db") as conn:
        (data,) = conn.execute("SELECT data FROM summaries WHERE judgment_id = ?", (judgment_id,)).fetchone()
        facts = json.loads(data)["facts"]
        at = data.index(json.dumps(facts)[1:40]) + 5
        changed = data[:at] + ("x" if data[at] != "x" else "y") + data[at + 1 :]
        conn.execute("UPDATE summaries SET data = ? WHERE judgment_id = ?", (changed, judgment_id))


def _flip_in_file(home: Path, judgment_id: str) -> None:
    """One byte of the database file changed, inside the facts string of the summary (a bad sector): SQLite's
    own integrity check passes, the JSON parses and validates."""
    db = home / "aqgr.db"
    with sqlite3.connect(db) as conn:
        (data,) = conn.execute("SELECT data FROM summaries WHERE judgment_id = ?", (judgment_id,)).fetchone()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    start = data.index('"facts"')
    needle = data[start : start + 60].encode(
        "utf-8"
    )  # the key with the start of its value: the summary's, not the text's
    raw = bytearray(db.read_bytes())
    assert raw.count(needle) == 1, "the summary's facts are stored once in the file"
    at = raw.index(needle) + 30
    raw[at] = ord("x") if raw[at] != ord("x") else ord("y")
    db.write_bytes(bytes(raw))
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        json.loads(conn.execute("SELECT data FROM summaries WHERE judgment_id = ?", (judgment_id,)).fetchone()[0])


@pytest.mark.parametrize("flip", [_flip_in_sql, _flip_in_file])
def test_a_changed_letter_that_still_parses_is_found_by_check_and_skipped(archive_home, flip):
    assert _check(archive_home)[0] == 0
    flip(archive_home, "A1")
    code, report, err = _check(archive_home)
    assert code == 1 and report["ok"] is False, report
    assert report["database"]["damaged_summaries"] == [
        {"judgment_id": "A1", "engine": "extractive.v1", "problem": CHECKSUM_MISMATCH}
    ]
    assert "'A1'" in err and "aqgr summarize --force" in err and "aqgr import --replace" in err
    home = ["--home", str(archive_home)]
    found = runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--json", *home])
    assert found.exit_code == 0, found.output
    result = json.loads(found.stdout)
    assert result["hits"] and "A1" not in {h["judgment_id"] for h in result["hits"]}
    assert any("damaged" in note and "A1" in note for note in result["notes"]), result["notes"]
    exported = runner.invoke(app, ["export", *home])
    assert exported.exit_code == 0 and sorted(
        json.loads(line)["judgment_id"] for line in exported.stdout.splitlines()
    ) == ["A2", "A3", "A4"]
    assert "A1" in exported.stderr and "damaged" in exported.stderr

    from aqgr.interfaces.server import create_app
    from tests.server.conftest import TestClient

    with TestClient(
        create_app(archive=Archive(settings=Settings.resolve(archive_home, index=FAST))), raise_server_exceptions=False
    ) as client:
        assert client.get("/api/health").json()["status"] == "ok"
        response = client.post("/api/search", json={"facts": DYING_DECLARATION_FACTS})
        assert response.status_code == 200 and response.json()["hits"], response.text
        assert "A1" not in {h["judgment_id"] for h in response.json()["hits"]}
        assert any("A1" in note for note in response.json()["notes"])
        assert client.get("/api/judgments/A1").status_code == 404  # not served as if sound
        assert client.get("/api/judgments/A2").status_code == 200


def test_the_recovery_check_names_clears_the_damage(archive_home, tmp_path):
    _flip_in_sql(archive_home, "A1")
    home = ["--home", str(archive_home)]
    assert runner.invoke(app, ["summarize", "--force", str(tmp_path / "in" / "A1.txt"), *home]).exit_code == 0
    assert runner.invoke(app, ["index", "--embedder", "hashing.v1", *home]).exit_code == 0
    code, report, _ = _check(archive_home)
    assert code == 0 and report["database"]["damaged_summaries"] == [], report


def _drop_checksums(home: Path) -> None:
    """The database as a version before checksums made it: no checksum column (nor the index on it)."""
    with sqlite3.connect(home / "aqgr.db") as conn:
        conn.execute("DROP INDEX ix_summaries_unchecked")
        conn.execute("ALTER TABLE summaries DROP COLUMN checksum")


def test_a_database_made_before_checksums_is_read_migrated_and_given_checksums(archive_home, tmp_path):
    _drop_checksums(archive_home)
    home = ["--home", str(archive_home)]
    code, report, err = _check(archive_home)  # check writes nothing: the column is still missing after it
    assert (
        code == 0 and report["database"]["without_checksum"] == 4 and "no checksum yet" in err and "aqgr index" in err
    ), report
    with sqlite3.connect(archive_home / "aqgr.db") as conn:
        assert "checksum" not in {row[1] for row in conn.execute("PRAGMA table_info(summaries)")}
    found = runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--json", *home])
    assert found.exit_code == 0 and json.loads(found.stdout)["hits"], found.output
    assert (
        runner.invoke(app, ["summarize", "--force", str(tmp_path / "in" / "A2.txt"), *home]).exit_code == 0
    )  # the next write
    assert _check(archive_home)[1]["database"]["without_checksum"] == 3
    assert runner.invoke(app, ["index", "--embedder", "hashing.v1", *home]).exit_code == 0  # the repair
    code, report, err = _check(archive_home)
    assert code == 0 and report["database"]["without_checksum"] == 0 and "no checksum" not in err
    _flip_in_sql(archive_home, "A3")  # and from now on a changed letter is found
    assert [d["judgment_id"] for d in _check(archive_home)[1]["database"]["damaged_summaries"]] == ["A3"]


def test_a_read_only_database_made_before_checksums_is_searched_not_refused(archive_home, monkeypatch):
    _drop_checksums(archive_home)
    _read_only(archive_home, monkeypatch)
    found = runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--json", "--home", str(archive_home)])
    assert found.exit_code == 0 and json.loads(found.stdout)["hits"], found.output
    exported = runner.invoke(app, ["export", "--home", str(archive_home)])
    assert exported.exit_code == 0 and len(exported.stdout.splitlines()) == 4
    code, report, _ = _check(archive_home)
    assert code == 0 and report["database"]["without_checksum"] == 4


def test_export_then_import_keeps_every_checksum(archive_home, tmp_path):
    saved = tmp_path / "all.jsonl"
    assert runner.invoke(app, ["export", "--out", str(saved), "--home", str(archive_home)]).exit_code == 0
    fresh = tmp_path / "fresh"
    assert runner.invoke(app, ["import", str(saved), "--home", str(fresh)]).exit_code == 0

    def sums(home: Path) -> dict:
        with sqlite3.connect(home / "aqgr.db") as conn:
            return dict(conn.execute("SELECT judgment_id, checksum FROM summaries"))

    assert sums(fresh) == sums(archive_home) and len(sums(fresh)) == 4 and None not in sums(fresh).values()
    assert _check(fresh)[1]["database"]["damaged_summaries"] == []


# -- the store itself, on SQLite and PostgreSQL ------------------------------------------------------
def _flip_through_sql(store: Store, judgment_id: str) -> None:
    from sqlalchemy import text

    changed = (
        "REPLACE(data, 'The facts', 'The facte')"
        if store.dialect == "sqlite"
        else "CAST(REPLACE(CAST(data AS TEXT), 'The facts', 'The facte') AS JSON)"
    )
    with store.engine.begin() as conn:
        conn.execute(text(f"UPDATE summaries SET data = {changed} WHERE judgment_id = :j"), {"j": judgment_id})


def test_the_store_writes_checks_and_skips_by_checksum(database_url, home):
    home.mkdir(parents=True, exist_ok=True)
    store = Store(database_url)
    store.save_many([_item("J1", "one"), _item("J2", "two")])
    store.save(*_item("J3", "three"))
    row = store.summary_row("J1", "extractive.v1")
    assert row.checksum == summary_checksum(row.data)
    assert store.check_summaries() == [] and store.without_checksum() == 0
    _flip_through_sql(store, "J2")
    assert store.check_summaries() == [("J2", "extractive.v1", CHECKSUM_MISMATCH)]
    assert [s.judgment_id for s in store.summaries("extractive.v1")] == ["J1", "J3"]
    assert store.damaged == {("J2", "extractive.v1"): CHECKSUM_MISMATCH}
    assert [d["judgment_id"] for d in store.iter_summaries("extractive.v1")] == ["J1", "J3"]
    store.save(*_item("J2", "two"))  # stored again: sound
    assert store.check_summaries() == [] and len(store.summaries("extractive.v1")) == 3
    store.close()


def test_a_summary_is_stored_in_the_form_its_checksum_is_taken_of_and_an_older_form_reads_alike(database_url, home):
    """Summaries are stored as `canonical_json` (the engine's serialiser), so a read checks the stored bytes'
    sha256 against the checksum, without a canonical copy; one stored in another form (spaced, as before)
    reads the same summary by the long way, and a changed letter is caught in either form."""
    from sqlalchemy import Text, cast, select, text

    from aqgr.archive.store import SummaryRow, canonical_json

    home.mkdir(parents=True, exist_ok=True)
    store = Store(database_url)
    store.save_many([_item("J1", "one"), _item("J2", "two"), _item("J3", "three")])

    def stored() -> dict[str, str]:
        with store.engine.connect() as conn:
            return dict(conn.execute(select(SummaryRow.judgment_id, cast(SummaryRow.data, Text))).all())

    canonical = {
        j: s.model_dump(mode="json") for j, s in ((s.judgment_id, s) for s in store.summaries("extractive.v1"))
    }
    assert stored() == {j: canonical_json(d) for j, d in canonical.items()}
    assert {j: summary_checksum(json.loads(raw)) for j, raw in stored().items()} == {
        j: hashlib.sha256(raw.encode()).hexdigest() for j, raw in stored().items()
    }
    first = store.summaries("extractive.v1")
    documents = list(
        store.iter_summaries("extractive.v1")
    )  # what an export writes: the stored document, in the model's order
    assert documents == list(canonical.values()) and [list(d) for d in documents] == [
        list(d) for d in canonical.values()
    ]
    assert list(store.iter_summary_models("extractive.v1")) == first
    spaced = {j: json.dumps(d, indent=1) for j, d in canonical.items()}  # as a serialiser that spaces it writes it
    with store.engine.begin() as conn:
        for j in ("J1", "J2"):
            conn.execute(text("UPDATE summaries SET data = :d WHERE judgment_id = :j"), {"d": spaced[j], "j": j})
    assert stored()["J1"] != canonical_json(canonical["J1"])
    assert store.summaries("extractive.v1") == first and store.damaged == {}
    assert list(store.iter_summaries("extractive.v1")) == list(canonical.values()) and store.check_summaries() == []
    _flip_through_sql(store, "J2")  # the spaced form
    _flip_through_sql(store, "J3")  # the canonical form
    assert [s.judgment_id for s in store.summaries("extractive.v1")] == ["J1"]
    assert store.damaged == {("J2", "extractive.v1"): CHECKSUM_MISMATCH, ("J3", "extractive.v1"): CHECKSUM_MISMATCH}
    assert store.check_summaries() == [
        ("J2", "extractive.v1", CHECKSUM_MISMATCH),
        ("J3", "extractive.v1", CHECKSUM_MISMATCH),
    ]
    store.close()


def test_the_store_migrates_a_database_without_the_column_in_place(database_url, home):
    from sqlalchemy import text

    home.mkdir(parents=True, exist_ok=True)
    store = Store(database_url)
    store.save_many([_item("J1", "one"), _item("J2", "two")])
    with store.engine.begin() as conn:
        conn.execute(text("DROP INDEX ix_summaries_unchecked"))
        conn.execute(text("DROP INDEX ix_summaries_fingerprint"))
        conn.execute(text("ALTER TABLE summaries DROP COLUMN checksum"))
    store.close()
    reader = Store(database_url, create=False)  # a worker, or `aqgr check`: nothing written
    assert not reader.has_checksums and reader.without_checksum() == 2 and reader.check_summaries() == []
    assert [s.judgment_id for s in reader.summaries("extractive.v1")] == ["J1", "J2"]
    reader.close()
    store = Store(database_url)  # opened for writing: the column is added, the rows have no checksum yet
    assert store.has_checksums and store.without_checksum() == 2
    from sqlalchemy import inspect

    assert {"ix_summaries_unchecked", "ix_summaries_fingerprint"} <= {
        i["name"] for i in inspect(store.engine).get_indexes("summaries")
    }
    _flip_through_sql(store, "J2")  # changed before it had a checksum: nothing can tell
    assert store.add_checksums() == 2 and store.without_checksum() == 0 and store.add_checksums() == 0
    _flip_through_sql(store, "J1")
    assert [j for j, _, _ in store.check_summaries()] == ["J1"]
    store.close()


def test_a_column_another_process_added_meanwhile_is_no_failure(tmp_path, monkeypatch):
    """Two processes open an older database at once: both look, see no checksum column, and add it; the
    second finds it there ('duplicate column name'), which is no failure. Played in one process: the look
    made to miss the column that is there."""
    import aqgr.archive.store as store_module

    url = f"sqlite:///{tmp_path / 'a.db'}"
    Store(url).save_many([_item("J1", "one")])
    real = store_module.inspect

    class Missed:
        def __init__(self, conn):
            self._inspector = real(conn)

        def get_columns(self, table):
            return [c for c in self._inspector.get_columns(table) if c["name"] != "checksum"]

        def get_indexes(self, table):
            return [i for i in self._inspector.get_indexes(table) if i["name"] != "ix_summaries_unchecked"]

    monkeypatch.setattr(store_module, "inspect", Missed)
    store = Store(url)  # its ALTER TABLE meets the column
    monkeypatch.undo()
    assert [s.judgment_id for s in store.summaries("extractive.v1")] == ["J1"] and store.without_checksum() == 0


def test_an_index_update_reads_the_summaries_columns_it_needs_without_reading_the_summaries(tmp_path):
    """SQLite keeps the columns after a row's large `data` in its overflow pages: the fingerprints every
    `aqgr index` reads, and the search for summaries without a checksum, come from indexes of their own."""
    url = f"sqlite:///{tmp_path / 'a.db'}"
    store = Store(url)
    store.save_many([_item("J1", "one"), _item("J2", "two")])
    with sqlite3.connect(tmp_path / "a.db") as conn:
        plans = {
            "fingerprints": conn.execute(
                "EXPLAIN QUERY PLAN SELECT judgment_id, engine_version, source_sha256, created_at "
                "FROM summaries WHERE engine = ?",
                ("extractive.v1",),
            ).fetchall(),
            "unchecked": conn.execute(
                "EXPLAIN QUERY PLAN SELECT judgment_id, engine FROM summaries WHERE checksum IS NULL "
                "ORDER BY judgment_id, engine"
            ).fetchall(),
        }
    assert "COVERING INDEX ix_summaries_fingerprint" in str(plans["fingerprints"]), plans
    assert "ix_summaries_unchecked" in str(plans["unchecked"]), plans
    assert sorted(store.summary_fingerprints("extractive.v1")) == ["J1", "J2"] and store.add_checksums() == 0
    store.close()
