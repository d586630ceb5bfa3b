"""What a judgment, a file name or a user puts in a string never drives the terminal: `aqgr search`,
`citations` and `summarize` show control characters and escape sequences escaped (ESC[2J as \\x1b[2J)."""

from __future__ import annotations

from typer.testing import CliRunner

from aqgr.foundation.console import printable, styled
from aqgr.interfaces.cli import app
from tests.aqgr.helpers import CITING_JUDGMENTS, DYING_DECLARATION_FACTS, write_judgments

runner = CliRunner()
CLEAR = "\x1b[2J"


def _hostile_archive(home, tmp_path):
    items = dict(CITING_JUDGMENTS)
    items["A1"] = "Ram Kumar" + CLEAR + " v State of Punjab\x07\n" + items["A1"].split("\n", 1)[1]
    items["A5"] = "Kamla Bai" + CLEAR + " v State of Madhya Pradesh\n" + items["A5"].split("\n", 1)[1]
    folder = write_judgments(tmp_path / "in", items)
    (folder / f"bad{CLEAR}name.txt").write_bytes(b"\x00\x01\x02" * 100)  # fails: its name is in the report
    result = runner.invoke(app, ["summarize", str(folder), "--home", str(home)])
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["index", "--home", str(home), "--embedder", "hashing.v1"]).exit_code == 0
    return result


def test_printable_escapes_controls_and_keeps_plain_text():
    assert printable("Ram \x1b[2JKumar\r\x9b\u202e") == "Ram \\x1b[2JKumar\\x0d\\x9b\\u202e"
    assert printable("Mohan Lal v State\n\tof Punjab, é ß 漢") == "Mohan Lal v State\n\tof Punjab, é ß 漢"
    assert "\x1b" not in styled(("x\x1b[31m", "bold"), "y\x1b]0;title\x07").plain


def test_summarize_search_and_citations_never_print_an_escape(home, tmp_path):
    summarized = _hostile_archive(home, tmp_path)
    assert "\x1b" not in summarized.output and "bad\\x1b[2Jname.txt" in summarized.stderr

    result = runner.invoke(
        app,
        ["search", DYING_DECLARATION_FACTS, "--home", str(home), "-q", "Whether a dying declaration \x1b[2J suffices?"],
    )
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "Kamla Bai\\x1b[2J v. State of Madhya Pradesh" in result.stdout, result.stdout
    assert "dying declaration \\x1b[2J suffices?" in result.stdout

    result = runner.invoke(app, ["search", DYING_DECLARATION_FACTS + " \x1b[2J", "--home", str(home), "--candidates"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output

    for judgment, parties in (("A1", "Ram Kumar\\x1b[2J"), ("A5", "Kamla Bai\\x1b[2J")):
        result = runner.invoke(app, ["citations", judgment, "--home", str(home)])
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output and parties in result.stdout


def test_an_error_quoting_the_user_is_escaped(home, tmp_path):
    _hostile_archive(home, tmp_path)
    result = runner.invoke(app, ["citations", "C" + CLEAR, "--home", str(home)])
    assert result.exit_code == 2 and "\x1b" not in result.output and "C\\x1b[2J" in result.stderr


def test_no_command_prints_a_data_string_past_the_console():
    """The CLI modules print people-readable strings only through aqgr/foundation/console.py: `typer.echo` only of JSON."""
    import ast
    from pathlib import Path

    import aqgr

    root = Path(aqgr.__file__).parent / "interfaces"
    offenders = []
    for module in ("cli.py", "serve_cli.py", "invocation.py"):
        for node in ast.walk(ast.parse((root / module).read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("echo", "print")
                and not isinstance(node.func, ast.Attribute)
                or (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "echo")
            ):
                argument = ast.unparse(node.args[0]) if node.args else ""
                if not any(safe in argument for safe in ("json.dumps", "model_dump_json")):
                    offenders.append(f"{module}:{node.lineno}: {argument[:60]}")
    assert offenders == []
