"""The MCP stdio transport of `aqgr mcp`: the SDK's, plus an answer to every request it cannot read.

The SDK parses each line with pydantic's JSON parser, which refuses a JSON escape of a lone
surrogate ("\\ud800"); the SDK then drops the line, and the client waits for an answer that
never comes. Here such a line is read again with Python's parser (which accepts the escape):
when it is a request (it has an id), it gets a JSON-RPC error answer saying which text is not
valid Unicode (code -32602, invalid params) or that the line is not JSON-RPC (-32700); a
notification, which expects no answer, is dropped as before.
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager

INVALID_PARAMS = -32602
PARSE_ERROR = -32700


def refusal(line: str) -> tuple[object, int, str] | None:
    """(request id, JSON-RPC error code, message) for a line the SDK could not read, or None when
    it holds no request to answer (not JSON, no id: a notification)."""
    from aqgr.foundation.inputs import first_invalid, shown

    try:
        found = json.loads(line)
    except ValueError:
        return None
    if (
        not isinstance(found, dict)
        or "id" not in found
        or not isinstance(found["id"], (str, int))
        or isinstance(found["id"], bool)
    ):
        return None
    request_id = shown(found["id"]) if isinstance(found["id"], str) else found["id"]
    bad = first_invalid(found.get("params"))
    if bad is not None:
        position, char = bad
        return (
            request_id,
            INVALID_PARAMS,
            (
                f"an argument contains an invalid character (lone surrogate U+{ord(char):04X}) at position "
                f"{position}: send UTF-8 text"
            ),
        )
    return request_id, PARSE_ERROR, "the message is not a JSON-RPC request this server can read: send UTF-8 JSON"


def _line_of(exc: Exception) -> str | None:
    """The raw line of the SDK's parse error (pydantic keeps the input of a json_invalid error)."""
    errors = getattr(exc, "errors", None)
    try:
        found = errors() if callable(errors) else []
    except Exception:  # noqa: BLE001 - not a pydantic error
        return None
    for error in found:
        if isinstance(error.get("input"), str):
            return error["input"]
    return None


@asynccontextmanager
async def answering_stdio():
    """(read stream, write stream) for the low-level MCP server: the SDK's stdio streams, with the
    lines the SDK could not parse answered as errors (see the module) instead of dropped."""
    import anyio
    import mcp_types as types
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    async with stdio_server() as (sdk_read, write):
        send, receive = anyio.create_memory_object_stream(0)

        async def pump() -> None:
            async with send:
                async for item in sdk_read:
                    if isinstance(item, Exception):
                        line = _line_of(item)
                        answer = refusal(line) if line is not None else None
                        if answer is not None:
                            request_id, code, message = answer
                            error = types.JSONRPCError(
                                jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
                            )
                            await write.send(SessionMessage(error))
                            continue
                    await send.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(pump)
            yield receive, write
            group.cancel_scope.cancel()


async def serve(server) -> None:
    """Run an MCPServer over stdio through `answering_stdio` until the client closes the connection."""
    async with answering_stdio() as (read, write):
        lowlevel = server._lowlevel_server
        await lowlevel.run(read, write, lowlevel.create_initialization_options())
