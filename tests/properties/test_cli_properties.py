"""Property tests of the command line: any arguments, any file -> exit code 0, 1 or 2 with a message,
never a traceback; the archive unchanged unless the command succeeded."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import assume, event, given
from hypothesis import strategies as st
from typer.testing import CliRunner

from aqgr.interfaces.cli import app
from tests.properties.conftest import snapshot
from tests.properties.strategies import any_text, facts, json_values, nested_json, numbers

runner = CliRunner()


def _run(args: list[str]):
    result = runner.invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        args,
        repr(result.exception),
        result.output[-2000:],
    )
    assert result.exit_code in (0, 1, 2), (args, result.exit_code, result.output[-2000:])
    assert "Traceback" not in result.output
    event(f"{args[0]}: exit {result.exit_code}")
    return result


def _text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)


@pytest.fixture(scope="module")
def home(built_home):
    before = snapshot(built_home)
    yield built_home
    assert snapshot(built_home) == before


@given(
    facts=facts,
    questions=st.lists(any_text, max_size=3),
    k=st.one_of(st.integers(1, 20), st.integers(1, 20), st.integers(1, 20), numbers, any_text),
    flags=st.sets(st.sampled_from(["--json", "--candidates"])),
)
def test_properties_search(home, facts, questions, k, flags):
    args = ["search", facts, "--home", str(home), "-k", _text(k), *sorted(flags)]
    for question in questions:
        args += ["-q", question]
    _run(args)


@given(judgment_id=st.one_of(any_text, st.sampled_from(["SC001", "SC007", "-", "--json"])), as_json=st.booleans())
def test_properties_citations(home, judgment_id, as_json):
    _run(["citations", "--home", str(home), *(["--json"] if as_json else []), "--", judgment_id])


@given(
    fmt=st.one_of(st.sampled_from(["jsonl", "json-dir"]), any_text),
    engine=st.one_of(st.none(), any_text, st.just("extractive.v1")),
    to_file=st.booleans(),
)
def test_properties_export_status_check(home, tmp_path_factory, fmt, engine, to_file):
    out = tmp_path_factory.mktemp("export") / "out"
    args = [
        "export",
        "--home",
        str(home),
        "--format",
        fmt,
        *(["--engine", engine] if engine is not None else []),
        *(["--out", str(out)] if to_file else []),
    ]
    _run(args)
    _run(["status", "--home", str(home)])


lines = st.one_of(json_values.map(lambda v: json.dumps(v, allow_nan=True)), any_text, nested_json)


@given(
    content=st.one_of(
        st.lists(lines, max_size=5).map("\n".join).map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.binary(max_size=300),
    ),
    suffix=st.sampled_from([".jsonl", ".json", ".ndjson"]),
    replace=st.booleans(),
)
def test_properties_import(home_copy, tmp_path_factory, content, suffix, replace):
    path = tmp_path_factory.mktemp("import") / f"in{suffix}"
    path.write_bytes(content)
    before = snapshot(home_copy)
    result = _run(["import", str(path), "--home", str(home_copy), "--json", *(["--replace"] if replace else [])])
    report = json.loads(result.stdout) if result.exit_code in (0, 1) and result.stdout.strip() else {"imported": []}
    if not report["imported"]:
        assert snapshot(home_copy) == before


name_chars = st.characters(codec=None, exclude_categories=(), exclude_characters="/\x00")


@given(
    name=st.text(name_chars, min_size=1, max_size=30),
    content=st.one_of(st.binary(max_size=400), facts.map(lambda t: t.encode("utf-8", "surrogatepass"))),
    suffix=st.sampled_from([".txt", ".pdf", ".html", ".docx", ".TXT", ""]),
    id_from=st.one_of(
        st.just("stem"), st.just("stem"), st.sampled_from(["stem", "relpath", "regex:(\\d+)", "regex:("]), any_text
    ),
)
def test_properties_summarize(home_copy, tmp_path_factory, name, content, suffix, id_from):
    folder = tmp_path_factory.mktemp("judgments")
    try:
        path = Path(os.fsdecode(folder)) / (name + suffix)
        os.fsencode(path)
    except (UnicodeEncodeError, ValueError):
        assume(False)  # not a name a file can have here
    assume(name not in (".", ".."))
    try:
        path.write_bytes(content)
    except OSError:
        assume(False)  # too long for the file system, and the like
    before = {doc["judgment_id"]: doc for doc in _summaries(home_copy)}
    _run(["summarize", str(folder), "--home", str(home_copy), "--id-from", id_from])
    after = {doc["judgment_id"]: doc for doc in _summaries(home_copy)}
    changed = {j for j in before if after.get(j) != before[j]}
    assert len(changed) <= 1  # at most the judgment that file was (its id collides with a stored one)


def _summaries(home: Path) -> list[dict]:
    from aqgr.archive.store import Store

    store = Store(f"sqlite:///{home / 'aqgr.db'}", create=False)
    try:
        return list(store.iter_summaries())
    finally:
        store.close()
