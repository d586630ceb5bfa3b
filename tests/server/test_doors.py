"""Every door applies the same rules: a lone surrogate in an MCP tool argument gets an error answer
(over the real stdio transport), MCP has the HTTP API's caps (one definition, aqgr/foundation/caps.py), and
`summarize` and `import` refuse the ids the HTTP API refuses (one rule, aqgr.foundation.inputs.id_problem)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys

import anyio
import pytest
from typer.testing import CliRunner

from aqgr import Archive, Settings
from aqgr.interfaces.cli import app
from tests.aqgr.helpers import JUDGMENTS
from tests.server.conftest import FAST, REPO, TestClient

FACTS = (
    "The deceased was set on fire in the kitchen by her husband and, before she died in hospital, "
    "made a dying declaration to the magistrate naming him as the one who poured kerosene on her"
)


def _read_line(process, seconds: float) -> str | None:
    # poll, not select: a long test session may hold more than 1,024 descriptors, past select()'s range
    waiter = select.poll()
    waiter.register(process.stdout, select.POLLIN)
    ready = waiter.poll(seconds * 1000)
    return process.stdout.readline().decode("utf-8") if ready else None


def test_mcp_answers_a_tool_call_whose_argument_holds_a_lone_surrogate(sample_archive):
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR", "VIRTUAL_ENV")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONPATH=str(REPO))
    process = subprocess.Popen(
        [sys.executable, "-m", "aqgr.interfaces.cli", "mcp", "--home", str(sample_archive.home)],
        cwd=str(REPO),
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:

        def send(line: str) -> None:
            process.stdin.write(line.encode("utf-8") + b"\n")
            process.stdin.flush()

        send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                }
            )
        )
        assert json.loads(_read_line(process, 120))["id"] == 1
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        for number, (tool, arguments) in enumerate(
            (
                ("get_judgment_summary", '{"judgment_id": "SC\\ud800"}'),
                ("search_precedents", '{"facts": "dying declaration \\udcff ' + FACTS + '"}'),
            ),
            2,
        ):
            send(
                '{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "%s", "arguments": %s}}'  # noqa: UP031
                % (number, tool, arguments)
            )
            line = _read_line(process, 60)
            assert line is not None, f"no answer to {tool}"
            answer = json.loads(line)
            assert answer["id"] == number and "lone surrogate" in answer["error"]["message"], answer
        send(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}))  # the session goes on
        assert json.loads(_read_line(process, 60))["id"] == 9
    finally:
        process.kill()
        process.wait()


def test_mcp_caps_are_the_http_caps(sample_archive):
    from mcp.server.mcpserver.exceptions import ToolError

    from aqgr.interfaces.mcp_server import build_server
    from aqgr.interfaces.server import create_app

    server = build_server(archive=sample_archive)
    with TestClient(create_app(archive=sample_archive)) as client:
        for arguments in (
            {"facts": FACTS, "questions": [f"question {i} about a dying declaration" for i in range(11)]},
            {"facts": FACTS, "questions": ["is a dying declaration enough " + "x" * 1_000]},
            {"facts": FACTS + " x" * 10_000},
        ):
            http = client.post("/api/search", json=arguments)
            assert http.status_code in (413, 422), http.text
            with pytest.raises(ToolError) as caught:
                anyio.run(server.call_tool, "search_precedents", arguments)
            assert str(caught.value).endswith(": " + http.json()["detail"]), (
                str(caught.value),
                http.json(),
            )  # the SDK names the tool first
        ten = {"facts": FACTS, "questions": [f"question {i} about a dying declaration" for i in range(10)], "k": 3}
        assert client.post("/api/search", json=ten).status_code == 200
        anyio.run(server.call_tool, "search_precedents", ten)  # within the caps on both doors


@pytest.mark.parametrize("name", ["C1/text", "C1/citations"])
def test_summarize_refuses_ids_the_api_refuses_and_no_id_answers_for_another_route(tmp_path, monkeypatch, name):
    monkeypatch.delenv("AQGR_DATABASE_URL", raising=False)
    folder = tmp_path / "in"
    (folder / name).parent.mkdir(parents=True)
    (folder / "C1.txt").write_text(JUDGMENTS["A1"], encoding="utf-8")
    (folder / f"{name}.txt").write_text(JUDGMENTS["A2"], encoding="utf-8")
    home = tmp_path / "home"
    result = CliRunner().invoke(app, ["summarize", str(folder), "--id-from", "relpath", "--home", str(home)])
    assert "Traceback" not in result.output
    archive = Archive(settings=Settings.resolve(home, index=FAST))
    assert {s.judgment_id for s in archive.summaries()} == {"C1"}  # the route-like id is refused, C1 kept
    assert any(f.reason == "invalid_id" for f in archive._store.failures())
    archive.build_index()
    from aqgr.interfaces.server import create_app

    with TestClient(create_app(archive=archive)) as client:
        text = client.get(f"/api/judgments/{name}")  # C1's text or citations, never another judgment's summary
        assert text.status_code in (200, 503) and text.json().get("judgment_id", "C1") == "C1"


def test_import_refuses_ids_the_api_refuses(tmp_path, monkeypatch):
    monkeypatch.delenv("AQGR_DATABASE_URL", raising=False)
    source = Archive(settings=Settings.resolve(tmp_path / "a", index=FAST))
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "C1.txt").write_text(JUDGMENTS["A1"], encoding="utf-8")
    source.summarize([folder])
    (document,) = [json.loads(line) for line in _export(source, tmp_path)]
    bad = ["C1/text", "a//b", "x/../y", "tab\there", "esc\x1b[2J", "C1/citations"]
    lines = [json.dumps({**document, "judgment_id": i}) for i in bad] + [json.dumps(document)]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = Archive(settings=Settings.resolve(tmp_path / "b", index=FAST)).import_summaries([tmp_path / "in.jsonl"])
    assert report.imported == ["C1"] and len(report.invalid) == len(bad)
    from aqgr.foundation.inputs import id_problem

    assert all(id_problem(i) for i in bad)  # the HTTP API's rule


def _export(archive, tmp_path) -> list[str]:
    out = tmp_path / "all.jsonl"
    archive.export_summaries(out)
    return out.read_text(encoding="utf-8").splitlines()
