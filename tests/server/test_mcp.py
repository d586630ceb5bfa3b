"""`aqgr mcp` over stdio, driven by the SDK's own client: list the tools, call each one."""

from __future__ import annotations

import os
import sys

import anyio
from mcp import Client, StdioServerParameters

from tests.server.conftest import REPO

EXPECTED_TOOLS = {
    "search_precedents",
    "candidate_questions",
    "get_judgment_summary",
    "get_judgment_text",
    "get_judgment_citations",
    "get_judgment_pinpoints",
    "search_statutes",
}


def _server(home) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR", "VIRTUAL_ENV")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", DO_NOT_TRACK="1", PYTHONPATH=str(REPO))
    return StdioServerParameters(
        command=sys.executable, args=["-m", "aqgr.interfaces.cli", "mcp", "--home", str(home)], env=env, cwd=str(REPO)
    )


def test_mcp_tools_over_stdio(sample_archive, scenarios):
    facts = scenarios[0]["facts"]
    archive_ids = {s.judgment_id for s in sample_archive.summaries()}

    async def session() -> None:
        async with Client(_server(sample_archive.home), read_timeout_seconds=60) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == EXPECTED_TOOLS
            assert "exists in the archive" in tools["search_precedents"].description
            assert "Returns" in tools["get_judgment_summary"].description

            candidates = await client.call_tool("candidate_questions", {"facts": facts, "n": 5})
            assert not candidates.is_error
            listed = candidates.structured_content["result"]
            assert len(listed) == 5 and "dying declaration" in listed[0]["text"].lower()
            assert {c["source_judgment_id"] for c in listed} <= archive_ids

            chosen = [listed[0]["text"], listed[1]["text"]]
            found = await client.call_tool("search_precedents", {"facts": facts, "questions": chosen, "k": 4})
            assert not found.is_error
            result = found.structured_content
            assert result["questions"] == chosen and result["questions_chosen_by_user"]
            hits = result["hits"]
            assert 1 <= len(hits) <= 4 and {h["judgment_id"] for h in hits} <= archive_ids  # grounded
            assert {"SC001", "SC007"} <= {h["judgment_id"] for h in hits}
            assert all(1 <= h["score"] <= 10 and h["legal_issue"] and h["reason"] for h in hits)
            assert result["dropped_not_in_archive"] == 0

            summary = await client.call_tool("get_judgment_summary", {"judgment_id": hits[0]["judgment_id"]})
            assert not summary.is_error and summary.structured_content["judgment_id"] == hits[0]["judgment_id"]
            assert summary.structured_content["issues"] and summary.structured_content["parties"]["appellants"]

            text = await client.call_tool("get_judgment_text", {"judgment_id": "SC001", "max_chars": 200})
            assert not text.is_error
            assert (
                text.structured_content["text"].startswith("Harbans Lal")
                and text.structured_content["truncated"] is True
            )

            pinned = await client.call_tool("get_judgment_pinpoints", {"judgment_id": "SC001"})
            assert not pinned.is_error and pinned.structured_content["paragraphs_numbered"] is True
            assert all(p["located"] and p["paragraph"] for p in pinned.structured_content["passages"])
            assert all(e["located"] and e["start"] < e["end"] for h in hits for e in h["evidence"])

            cited = await client.call_tool("get_judgment_citations", {"judgment_id": "SC001"})
            assert not cited.is_error
            assert [c["judgment_id"] for c in cited.structured_content["cited_by"]] == ["SC007"]
            assert "Harbans Lal" in cited.structured_content["cited_by"][0]["mention"]
            unknown = await client.call_tool("get_judgment_citations", {"judgment_id": "C99999"})
            assert unknown.is_error and "no judgment 'C99999' in the archive" in unknown.content[0].text

            statutes = await client.call_tool("search_statutes", {"facts": facts, "k": 2})
            assert not statutes.is_error and {h["statute_id"] for h in statutes.structured_content["hits"]} == {
                "S1",
                "S3",
            }

            missing = await client.call_tool("get_judgment_summary", {"judgment_id": "C99999"})
            assert missing.is_error and "no judgment 'C99999' in the archive" in missing.content[0].text
            short = await client.call_tool("search_precedents", {"facts": "my neighbour hit me"})
            assert short.is_error and "content word" in short.content[0].text
            assert "Traceback" not in short.content[0].text

    anyio.run(session)
