"""Search filters through every door on the sample archive: the HTTP API, the MCP tools and the
command line take the same names and give the same narrowing; bad filters are refused clearly."""

from __future__ import annotations

import json
import os
import sys

import anyio
import pytest
from typer.testing import CliRunner

from aqgr.interfaces.cli import app as cli
from aqgr.interfaces.server import create_app
from aqgr.retrieval.embedded.facets import normalise_court, parse_decided
from tests.server.conftest import REPO, TestClient

# The sample archive: 14 Supreme Court judgments, SC009 of the Delhi High Court, SC014 of the
# Punjab and Haryana High Court.
HIGH_COURTS = {"SC009", "SC014"}


@pytest.fixture(scope="module")
def client(sample_archive):
    with TestClient(create_app(archive=sample_archive), raise_server_exceptions=False) as client:
        yield client


def _search(client, facts, **body):
    return client.post("/api/search", json={"facts": facts, "k": 17, "options": {"min_score": 1}, **body})


def test_http_search_narrows_by_filters_and_reports_facets(client, scenarios, sample_archive):
    facts = scenarios[0]["facts"]
    whole = _search(client, facts).json()
    assert whole["filters"] is None and whole["facets"]["candidates"] >= len(whole["hits"])
    courts = {c["value"]: c["count"] for c in whole["facets"]["court"]}
    assert set(courts) <= {"Supreme Court of India", "Delhi High Court", "Punjab and Haryana High Court"}

    high = _search(client, facts, filters={"court_level": "high"}).json()
    assert {h["judgment_id"] for h in high["hits"]} == HIGH_COURTS  # both, though neither is about the facts
    assert high["filters"]["court_level"] == "high"

    dated = _search(
        client, facts, filters={"court": "Hon'ble Supreme Court", "decided_from": "2000", "decided_to": "2006-12-31"}
    ).json()
    assert dated["hits"]
    for hit in dated["hits"]:
        assert normalise_court(hit["court"])[0] == "Supreme Court of India"
        assert 2000 <= parse_decided(hit["date"]).year <= 2006
    in_range = {
        s.judgment_id
        for s in sample_archive.summaries()
        if s.court == "Supreme Court of India" and 2000 <= parse_decided(s.date).year <= 2006
    }
    assert {h["judgment_id"] for h in dated["hits"]} <= in_range


def test_http_refuses_a_reversed_or_unreadable_date_and_notes_an_unknown_court(client, scenarios):
    facts = scenarios[0]["facts"]
    reversed_range = _search(client, facts, filters={"decided_from": "2010", "decided_to": "2001"})
    assert reversed_range.status_code == 422 and "before it starts" in reversed_range.text
    assert _search(client, facts, filters={"decided_from": "yesterday"}).status_code == 422
    assert _search(client, facts, filters={"bench": "x"}).status_code == 422  # unknown field
    unknown = _search(client, facts, filters={"court": "Madras High Court"})
    assert unknown.status_code == 200
    body = unknown.json()
    assert body["hits"] == [] and any("Madras High Court" in n and "closest known" in n for n in body["notes"])


def test_http_questions_and_statutes_take_the_filters(client, scenarios):
    facts = scenarios[0]["facts"]
    questions = client.post("/api/questions", json={"facts": facts, "filters": {"court": "Delhi High Court"}}).json()
    assert {c["source_judgment_id"] for c in questions["candidates"]} <= {"SC009"}
    statutes = client.post("/api/statutes/search", json={"facts": facts, "k": 3, "filters": {"court_level": "high"}})
    assert statutes.status_code == 200
    for hit in statutes.json()["hits"]:
        assert set(hit["quoted_by"]) <= HIGH_COURTS  # only the filtered judgments vote


def test_cli_takes_the_filters_and_exits_2_on_a_bad_range(sample_archive, scenarios):
    runner = CliRunner()
    home = str(sample_archive.home)
    args = ["search", scenarios[0]["facts"], "--home", home, "--json", "-k", "17"]
    found = runner.invoke(cli, [*args, "--court", "Delhi HC"])
    assert found.exit_code == 0, found.output
    payload = json.loads(found.stdout)
    assert {h["judgment_id"] for h in payload["hits"]} <= {"SC009"} and payload["filters"]["court"] == "Delhi HC"
    assert payload["facets"]["candidates"] == 1 and payload["facets"]["court"] == [
        {"value": "Delhi High Court", "count": 1}
    ]
    shown = runner.invoke(cli, ["search", scenarios[0]["facts"], "--home", home, "--from", "2005"])
    assert (
        shown.exit_code == 0
        and "filters: decided_from=2005-01-01" in shown.stdout
        and "court: Supreme Court of India" in shown.stdout
    )
    bad = runner.invoke(cli, [*args, "--from", "2010", "--to", "2001"])
    assert bad.exit_code == 2 and "before it starts" in bad.stderr
    bad = runner.invoke(cli, [*args, "--disposal", "won"])
    assert bad.exit_code == 2 and "disposal" in bad.stderr


def test_mcp_search_precedents_takes_the_filters(sample_archive, scenarios):
    from mcp import Client, StdioServerParameters

    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR", "VIRTUAL_ENV")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", DO_NOT_TRACK="1", PYTHONPATH=str(REPO))
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "aqgr.interfaces.cli", "mcp", "--home", str(sample_archive.home)],
        env=env,
        cwd=str(REPO),
    )

    async def session() -> None:
        async with Client(server, read_timeout_seconds=60) as client:
            found = await client.call_tool(
                "search_precedents", {"facts": scenarios[0]["facts"], "k": 10, "filters": {"court_level": "high"}}
            )
            assert not found.is_error
            result = found.structured_content
            assert {h["judgment_id"] for h in result["hits"]} <= HIGH_COURTS and result["facets"]["candidates"] <= 2
            questions = await client.call_tool(
                "candidate_questions", {"facts": scenarios[0]["facts"], "filters": {"court": "Delhi HC"}}
            )
            assert not questions.is_error
            assert {c["source_judgment_id"] for c in questions.structured_content["result"]} <= {"SC009"}
            bad = await client.call_tool(
                "search_precedents",
                {"facts": scenarios[0]["facts"], "filters": {"decided_from": "2010", "decided_to": "2001"}},
            )
            assert bad.is_error

    anyio.run(session)
