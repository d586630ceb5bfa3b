"""Every option value the command line takes gets a one-line error and exit code 2, never a traceback;
a user's --id-from pattern runs with a time limit."""

from __future__ import annotations

import time

import pytest
from typer.testing import CliRunner

from aqgr import Archive
from aqgr.interfaces.cli import app
from tests.aqgr.helpers import DYING_DECLARATION_FACTS, write_judgments

runner = CliRunner()


def _refused(args: list[str], *expected: str):
    result = runner.invoke(app, args)
    assert result.exit_code == 2, (args, result.exit_code, result.output)
    assert (
        "Traceback" not in result.output
        and "errors.pydantic.dev" not in result.output
        and not isinstance(result.exception, (ValueError, TypeError, OverflowError))
    )
    flat = " ".join(result.stderr.split())
    for text in expected:
        assert text in flat, (args, flat)
    return flat


@pytest.mark.parametrize("url", ["nonsense", "postgresql://user:secret@host:port/db", "nodialect://x/y"])
def test_a_bad_database_url_is_an_error(home, tmp_path, url):
    folder = write_judgments(tmp_path / "in")
    flat = _refused(
        ["summarize", str(folder), "--home", str(home), "--database-url", url], "invalid database URL", "--database-url"
    )
    assert "secret" not in flat
    _refused(["status", "--home", str(home), "--database-url", url], "invalid database URL")


def test_a_bad_structured_output_is_an_error(home):
    _refused(
        ["--structured-output", "bogus", "search", DYING_DECLARATION_FACTS, "--home", str(home)],
        "invalid --structured-output",
        "'bogus'",
        "'json_schema'",
    )
    _refused(
        ["--structured-output", "bogus", "--provider", "fake.v1", "status", "--home", str(home)], "--structured-output"
    )


@pytest.mark.parametrize(
    "pattern, expected",
    [
        ("a{99999999999}", "invalid id pattern"),  # OverflowError in Python's re
        ("(", "invalid id pattern"),
        ("(?P<x", "invalid id pattern"),
        ("(?P=nope)", "invalid id pattern"),
    ],
)
def test_odd_id_patterns_are_errors(home, tmp_path, pattern, expected):
    _refused(
        ["summarize", str(write_judgments(tmp_path / "in")), "--home", str(home), "--id-from", f"regex:{pattern}"],
        expected,
    )


def test_a_pattern_that_matches_an_empty_id_fails_those_files(home, tmp_path):
    result = runner.invoke(
        app, ["summarize", str(write_judgments(tmp_path / "in")), "--home", str(home), "--id-from", "regex:(x*)"]
    )
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "matches an empty id" in " ".join(result.stderr.split())


def test_an_id_pattern_that_backtracks_without_end_is_stopped(home, tmp_path):
    folder = tmp_path / "in"
    deep = folder.joinpath(*["x" * 240] * 4)  # a relative path of ~1,000 characters
    deep.mkdir(parents=True)
    (deep / "x.txt").write_text("Ram Kumar v State\n" + "The appellant was convicted under Section 302. " * 20)
    started = time.monotonic()
    _refused(
        ["summarize", str(folder), "--home", str(home), "--id-from", "regex:(x+/?x+/?)+y"],
        "took over 1 s",
        "simpler pattern",
    )
    assert time.monotonic() - started < 30


def test_workers_have_a_ceiling(home, tmp_path):
    _refused(
        ["summarize", str(write_judgments(tmp_path / "in")), "--home", str(home), "--workers", "100000"],
        "workers must be between 1 and 64",
    )
    with pytest.raises(Exception, match="between 1 and 64"):
        Archive(home).summarize([tmp_path / "in"], workers=65)
