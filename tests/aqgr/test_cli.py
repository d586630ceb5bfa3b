"""The command line: data on stdout, messages on stderr, exit codes a script can rely on."""

import json

from typer.testing import CliRunner

from aqgr.interfaces.cli import app
from tests.aqgr.helpers import CITING_JUDGMENTS, DYING_DECLARATION_FACTS, write_judgments

runner = CliRunner()


def test_summarize_index_search_status(home, tmp_path):
    folder = write_judgments(tmp_path / "in")
    (folder / "broken.txt").write_bytes(b"\x00\x01\x02" * 100)
    result = runner.invoke(app, ["summarize", str(folder), "--home", str(home)])
    assert result.exit_code == 0, result.output
    assert "4 summarised" in result.stderr and "binary" in result.stderr

    result = runner.invoke(app, ["index", "--home", str(home), "--embedder", "hashing.v1"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["n_docs"] == 4

    result = runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--home", str(home), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["hits"] and payload["questions"]

    result = runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--home", str(home)])
    assert result.exit_code == 0 and "Issue:" in result.stdout

    result = runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--home", str(home), "--candidates"])
    assert result.exit_code == 0 and result.stdout.startswith("1. ")

    status = json.loads(runner.invoke(app, ["status", "--home", str(home)]).stdout)
    assert status["judgments"] == 4 and status["failures_by_reason"] == {"binary": 1}


def test_index_finds_citations_and_search_shows_who_cites_a_hit(home, tmp_path):
    runner.invoke(app, ["summarize", str(write_judgments(tmp_path / "in", CITING_JUDGMENTS)), "--home", str(home)])
    result = runner.invoke(app, ["index", "--home", str(home), "--embedder", "hashing.v1"])
    assert result.exit_code == 0 and "2 citations between judgments" in result.stderr
    question = "Whether a dying declaration recorded by a magistrate can form the sole basis of conviction?"
    result = runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "-q", question, "--home", str(home)])
    assert result.exit_code == 0 and "[A1]" in result.stdout and "Cited by similar judgments: A5" in result.stdout
    assert json.loads(runner.invoke(app, ["status", "--home", str(home)]).stdout)["citations"] == 2

    result = runner.invoke(app, ["citations", "A1", "--home", str(home)])
    assert result.exit_code == 0 and "Cited by (1 judgment(s)" in result.stdout and "[A5]" in result.stdout
    assert "Ram Kumar v. State of Punjab" in result.stdout  # the words of A5 that name A1
    listed = json.loads(runner.invoke(app, ["citations", "A5", "--home", str(home), "--json"]).stdout)
    assert sorted(c["judgment_id"] for c in listed["cites"]) == ["A1", "A2"] and listed["cited_by"] == []
    result = runner.invoke(app, ["citations", "A9", "--home", str(home)])
    assert result.exit_code == 2 and "no judgment 'A9' in the archive" in result.stderr


def test_citations_before_indexing_say_what_to_run(home, tmp_path):
    runner.invoke(app, ["summarize", str(write_judgments(tmp_path / "in", CITING_JUDGMENTS)), "--home", str(home)])
    result = runner.invoke(app, ["citations", "A1", "--home", str(home)])
    assert result.exit_code == 2 and "run `aqgr index`" in result.stderr


def test_nothing_processable_exits_non_zero(home, tmp_path):
    (tmp_path / "empty.txt").write_text("")
    result = runner.invoke(app, ["summarize", str(tmp_path / "empty.txt"), "--home", str(home)])
    assert result.exit_code == 1
    assert "empty" in result.stderr


def test_search_errors_are_clear(home, tmp_path):
    runner.invoke(app, ["summarize", str(write_judgments(tmp_path / "in")), "--home", str(home)])
    result = runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--home", str(home)])
    assert result.exit_code == 2 and "aqgr index" in result.stderr
    runner.invoke(app, ["index", "--home", str(home), "--embedder", "hashing.v1"])
    result = runner.invoke(app, ["search", "too short", "--home", str(home)])
    assert result.exit_code == 2 and "content word" in result.stderr
