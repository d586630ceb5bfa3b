"""`aqgr import`: one bad document never stops the import, and a stored summary is never replaced silently."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from aqgr import Archive
from aqgr.interfaces.cli import app
from tests.aqgr.helpers import write_judgments

runner = CliRunner()


@pytest.fixture
def exported(tmp_path):
    """The four test judgments summarised in a source archive, exported as JSON Lines: {id: document}."""
    source = Archive(tmp_path / "source")
    source.summarize([write_judgments(tmp_path / "in")])
    out = tmp_path / "all.jsonl"
    source.export_summaries(out)
    return {d["judgment_id"]: d for d in map(json.loads, out.read_text().splitlines())}


def _line(document: dict) -> str:
    return json.dumps(document)


def test_bad_lines_are_recorded_and_the_import_goes_on(home, tmp_path, exported):
    bad_date = json.loads(_line(exported["A2"]))
    bad_date["provenance"]["created_at"] = "not a date"
    lines = [
        _line(exported["A1"]),
        _line(bad_date),
        _line(exported["A3"]).replace('"input_tokens": null', '"input_tokens": ' + "9" * 5000, 1),  # 5,000 digits
        '{"judgment_id": ' + "[" * 100_000 + "]" * 100_000 + "}",  # nested 100,000 deep
        _line({**exported["A3"], "judgment_id": "A3\ud800"}),  # a lone surrogate (escaped in the file)
        "[1, 2, 3]",
        "{not json",
        _line(exported["A4"]),
    ]
    assert '"input_tokens": 9999' in lines[2]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["import", str(path), "--home", str(home), "--json"])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    report = json.loads(result.stdout)
    assert sorted(report["imported"]) == ["A1", "A4"]
    problems = {item["where"].rsplit(":", 1)[1]: item["problem"] for item in report["invalid"]}
    assert sorted(problems, key=int) == ["2", "3", "4", "5", "6", "7"]
    assert "created_at" in problems["2"] and "date-time" in problems["2"]
    assert "digits" in problems["3"]
    assert "nests too deeply" in problems["4"]
    assert "surrogate" in problems["5"]
    assert "expected a JSON object" in problems["6"] and "not JSON" in problems["7"]
    status = json.loads(runner.invoke(app, ["status", "--home", str(home)]).stdout)
    assert status["judgments"] == 2


def test_a_stored_summary_is_kept_unless_replace(home, tmp_path, exported):
    archive = Archive(home)
    archive.summarize([write_judgments(tmp_path / "mine")])
    before = archive.summary("A1").model_dump(mode="json")
    same = archive.summary("A2").model_dump(mode="json")  # as exported from this very archive
    forged = json.loads(_line(exported["A1"]))
    forged["facts"] = "A forged account of the facts."
    path = tmp_path / "forged.jsonl"
    path.write_text(_line(forged) + "\n" + _line(same) + "\n" + _line(exported["A3"]) + "\n", encoding="utf-8")

    result = runner.invoke(app, ["import", str(path), "--home", str(home), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["imported"] == ["A2"] and report["replaced"] == ["A2"]  # A2: identical to the stored one
    assert [r["where"].rsplit(":", 1)[1] for r in report["refused"]] == ["1", "3"] and "--replace" in report["refused"][
        0
    ]["problem"]
    assert "2 refused" in result.stderr
    assert archive.summary("A1").model_dump(mode="json") == before  # kept
    assert json.loads(runner.invoke(app, ["status", "--home", str(home)]).stdout)["summaries"][0]["imported"] == 0

    result = runner.invoke(app, ["import", str(path), "--home", str(home), "--replace", "--json"])
    assert result.exit_code == 0, result.output
    assert sorted(json.loads(result.stdout)["replaced"]) == ["A1", "A2", "A3"]
    assert archive.summary("A1").facts == "A forged account of the facts."
    entry = json.loads(runner.invoke(app, ["status", "--home", str(home)]).stdout)["summaries"][0]
    assert entry["count"] == 4 and entry["imported"] == 2  # A1 and A3, shown as imported

    archive.summarize([tmp_path / "mine"], force=True)  # summarised here again: no longer an imported one
    assert archive.summary("A1").model_dump(mode="json")["facts"] == before["facts"]
    assert archive.status()["summaries"][0]["imported"] == 0
    only_refused = tmp_path / "refused.jsonl"
    only_refused.write_text(_line(forged) + "\n", encoding="utf-8")
    assert runner.invoke(app, ["import", str(only_refused), "--home", str(home)]).exit_code == 1  # nothing imported


def test_imported_into_an_empty_archive_are_counted(home, tmp_path, exported):
    path = tmp_path / "all.jsonl"
    path.write_text("".join(_line(d) + "\n" for d in exported.values()), encoding="utf-8")
    report = Archive(home).import_summaries([path])
    assert sorted(report.imported) == ["A1", "A2", "A3", "A4"] and not report.replaced and not report.refused
    assert Archive(home).status()["summaries"][0] | {"schema_version": None} == {
        "engine": "extractive.v1",
        "schema_version": None,
        "count": 4,
        "imported": 4,
    }
