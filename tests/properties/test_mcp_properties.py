"""Property tests of the MCP tools (the SDK's in-process client): any arguments -> a result or a
tool error carrying a message, never a crash of the session or a stack trace."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from aqgr import Archive, Settings
from tests.properties.conftest import snapshot
from tests.properties.strategies import any_text, facts, json_values, numbers
from tests.server.conftest import FAST

pytest.importorskip("mcp")

TOOLS = {
    "search_precedents": st.fixed_dictionaries(
        {"facts": facts},
        optional={
            "questions": st.one_of(st.lists(any_text, max_size=3), json_values),
            "k": st.one_of(numbers, json_values),
        },
    ),
    "candidate_questions": st.fixed_dictionaries({"facts": facts}, optional={"n": st.one_of(numbers, json_values)}),
    "get_judgment_summary": st.fixed_dictionaries(
        {"judgment_id": st.one_of(any_text, json_values, st.sampled_from(["SC001", "SC007"]))}
    ),
    "get_judgment_text": st.fixed_dictionaries(
        {"judgment_id": st.one_of(any_text, st.just("SC001"))}, optional={"max_chars": numbers}
    ),
    "get_judgment_citations": st.fixed_dictionaries(
        {"judgment_id": st.one_of(any_text, st.just("SC001"), json_values)}
    ),
    "search_statutes": st.fixed_dictionaries(
        {"facts": facts}, optional={"questions": st.lists(any_text, max_size=3), "k": numbers}
    ),
}


@pytest.fixture(scope="module")
def server(built_home):
    from aqgr.interfaces.mcp_server import build_server

    before = snapshot(built_home)
    archive = Archive(settings=Settings.resolve(built_home, index=FAST))
    yield build_server(archive=archive)
    archive.close()
    assert snapshot(built_home) == before


@pytest.mark.parametrize("tool", sorted(TOOLS))
@given(data=st.data())
def test_properties_mcp_tools_any_arguments(server, tool, data):
    """Straight to the server (a JSON client cannot even encode some of these arguments, e.g. a lone
    surrogate, yet a JSON escape such as "\\ud800" delivers one): a result that encodes, or ToolError
    with a message; never an unexpected exception (the SDK's generic 'Error executing tool')."""
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

    arguments = (
        data.draw(TOOLS[tool])
        if data.draw(st.booleans())
        else data.draw(st.dictionaries(any_text, json_values, max_size=4))
    )
    try:
        result = anyio.run(server.call_tool, tool, arguments)
    except UnexpectedToolError as exc:
        raise AssertionError(f"{tool} crashed on {arguments!r}: {exc.__cause__!r}") from exc
    except ToolError as exc:
        assert str(exc).strip() and "Traceback" not in str(exc)
        str(exc).encode("utf-8", "backslashreplace")
        return
    result.model_dump_json()  # what goes back over stdio: must encode


def test_mcp_tool_errors_carry_aqgrs_message(server):
    from mcp.server.mcpserver.exceptions import ToolError

    for arguments in ({"facts": "my neighbour hit me \ud800"}, {"facts": "x" * 30_000}):
        with pytest.raises(ToolError) as caught:
            anyio.run(server.call_tool, "search_precedents", arguments)
        assert "lone surrogate U+D800" in str(caught.value) or "at most 20,000" in str(caught.value), str(caught.value)


@given(
    tool=st.sampled_from(sorted(TOOLS)),
    arguments=st.dictionaries(any_text, json_values, min_size=1, max_size=4),
    request_id=st.one_of(st.integers(min_value=-(2**53), max_value=2**53), any_text),
)
def test_properties_mcp_transport_answers_every_request_the_sdk_cannot_parse(tool, arguments, request_id):
    """A tools/call line as a client's JSON encoder writes it (lone surrogates as \\uXXXX escapes): either the
    SDK's parser reads it, or aqgr's transport answers it with a JSON-RPC error for that id that encodes;
    never silence (the client would wait forever)."""
    import json

    import mcp_types as types

    from aqgr.interfaces.mcp_stdio import INVALID_PARAMS, refusal

    line = json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    )
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception:  # noqa: BLE001 - what the SDK drops
        answer = refusal(line)
        assert answer is not None, line
        answered_id, code, message = answer
        assert code == INVALID_PARAMS or "JSON-RPC" in message
        error = types.JSONRPCError(jsonrpc="2.0", id=answered_id, error=types.ErrorData(code=code, message=message))
        error.model_dump_json().encode("utf-8")
