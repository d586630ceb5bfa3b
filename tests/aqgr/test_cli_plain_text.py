"""The command line prints judgment, user and file-name strings as plain text, never as rich markup."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from aqgr.interfaces.cli import app
from tests.aqgr.helpers import DYING_DECLARATION_FACTS, JUDGMENTS, write_judgments

runner = CliRunner()

MARKUP_PARTIES = {
    "A1": "Mohan [/x] Lal v State of Punjab",
    "A3": "Suresh Kumar [since deceased] through LRs v State of Rajasthan",
}


def _judgments() -> dict[str, str]:
    out = dict(JUDGMENTS)
    for key, parties in MARKUP_PARTIES.items():
        out[key] = parties + "\n" + out[key].split("\n", 1)[1]
    return out


def _archive(home, tmp_path):
    folder = write_judgments(tmp_path / "in[/x] [bold]", _judgments())
    (folder / "broken [").mkdir()
    (folder / "broken [/red].txt").write_bytes(b"\x00\x01\x02" * 100)  # "[/" inside the path
    result = runner.invoke(app, ["summarize", str(folder), "--home", str(home)])
    assert result.exit_code == 0, result.output
    return folder, result


def test_summarize_report_over_a_path_with_brackets(home, tmp_path):
    folder, result = _archive(home, tmp_path)
    assert "Traceback" not in result.output and "MarkupError" not in result.output
    assert "4 summarised" in result.stderr
    assert f"failed {folder / 'broken [/red].txt'}: binary" in " ".join(result.stderr.split())
    assert str(home) in " ".join(result.stderr.split())


def test_search_and_citations_print_party_names_verbatim(home, tmp_path):
    _archive(home, tmp_path)
    assert runner.invoke(app, ["index", "--home", str(home), "--embedder", "hashing.v1"]).exit_code == 0
    parties = {
        s["judgment_id"]: s["parties"]
        for s in json.loads(
            runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "--home", str(home), "--json"]).stdout
        )["hits"]
    }
    assert "Mohan [/x] Lal" in parties["A1"] and "[since deceased]" in parties["A3"]  # what the summary holds

    result = runner.invoke(
        app,
        [
            "search",
            DYING_DECLARATION_FACTS,
            "--home",
            str(home),
            "-q",
            "Whether [/x] a dying declaration [b]alone[/b] suffices?",
        ],
    )
    assert result.exit_code == 0, result.output
    flat = " ".join(result.stdout.split())
    assert parties["A1"] in flat and parties["A3"] in flat  # no word lost, no crash
    assert "Whether [/x] a dying declaration [b]alone[/b] suffices?" in flat

    result = runner.invoke(app, ["citations", "A1", "--home", str(home)])
    assert result.exit_code == 0, result.output
    assert parties["A1"] in " ".join(result.stdout.split())


def test_errors_quote_the_user_verbatim(home, tmp_path):
    _archive(home, tmp_path)
    runner.invoke(app, ["index", "--home", str(home), "--embedder", "hashing.v1"])
    result = runner.invoke(app, ["citations", "C[/x]", "--home", str(home)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "no judgment 'C[/x]' in the archive" in result.stderr
    result = runner.invoke(app, ["search", "[bold]short[/bold] :smile: facts", "--home", str(home)])
    assert result.exit_code == 2 and "content word" in result.stderr


def test_text_that_cannot_be_encoded_is_an_error_not_a_traceback(home, tmp_path):
    _archive(home, tmp_path)
    runner.invoke(app, ["index", "--home", str(home), "--embedder", "hashing.v1"])
    result = runner.invoke(app, ["search", DYING_DECLARATION_FACTS + " \udcff", "--home", str(home)])
    assert result.exit_code == 2 and "lone surrogate" in result.stderr, result.output
    result = runner.invoke(app, ["citations", "C\udcff1", "--home", str(home)])
    assert result.exit_code == 2 and "Traceback" not in result.output and "no judgment" in result.stderr, result.output


def test_console_helper():
    from aqgr.foundation.console import console, shown, styled

    assert shown("C\udcff") == "C\\xff" and shown("a\ud800") == "a\\ud800" and shown("plain [/x]") == "plain [/x]"
    assert styled(("error:", "red"), " [/x] :smile:").plain == "error: [/x] :smile:"
    out = console()
    with out.capture() as captured:
        out.print("Suresh Kumar [since deceased] through LRs :smile:", "[/x]")
    assert captured.get() == "Suresh Kumar [since deceased] through LRs :smile: [/x]\n"


def test_a_file_name_that_is_not_utf8_is_one_failure_and_the_batch_goes_on(home, tmp_path):
    import os

    folder = write_judgments(tmp_path / "in", {"A1": JUDGMENTS["A1"]})
    (Path(os.fsdecode(os.path.join(os.fsencode(folder), b"bad\xff[name.txt")))).write_text(
        JUDGMENTS["A2"], encoding="utf-8"
    )
    result = runner.invoke(app, ["summarize", str(folder), "--home", str(home), "--json"])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    report = json.loads(result.stdout)
    assert report["summarised"] == ["A1"]
    [failure] = report["failed"]
    assert (
        failure["reason"] == "bad_name"
        and failure["path"].endswith("bad\\xff[name.txt")
        and "rename" in failure["message"]
    )
    assert "bad\\xff[name.txt: bad_name" in " ".join(result.stderr.split())
    status = json.loads(runner.invoke(app, ["status", "--home", str(home)]).stdout)
    assert status["failures_by_reason"] == {"bad_name": 1}
