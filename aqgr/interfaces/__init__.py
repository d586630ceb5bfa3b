"""The interfaces: the doors people and programs come in by.

Holds the `aqgr` command (`cli`, with `serve_cli` and `show_cli`, and `invocation`: the state and
options every command shares), the HTTP API and web page (`server`, with its `static/` files), and
the MCP server over stdio (`mcp_server`, `mcp_stdio`).

The top room: it may import every room and stage below it (`aqgr.eval`, `aqgr.archive`,
`aqgr.pipeline`, ..., `aqgr.foundation`) and the `aqgr` facade; nothing imports it. Nothing is
imported here, so `aqgr --help` loads only the command line.
"""
