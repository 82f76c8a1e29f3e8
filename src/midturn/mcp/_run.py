"""`midturn mcp`: the MCP server over stdio, on the same store as `midturn serve`."""

from __future__ import annotations

from mcp.server.stdio import stdio_server

from midturn.mcp._server import McpOptions, create_server
from midturn.mcp._state import load_state_key
from midturn.runtime import Runtime
from midturn.store import open_store
from midturn.store._paths import DEFAULT_DB_URL, data_dir_for

__all__ = ["run_stdio"]


async def run_stdio(db_url: str = DEFAULT_DB_URL, options: McpOptions | None = None) -> None:
    """Serve one MCP client on stdin/stdout until it disconnects. Pending asks stay in
    the store (answerable in the inbox, collectable with `wait_for_answer`)."""
    key = load_state_key(data_dir_for(db_url))
    async with open_store(db_url) as store, Runtime(store) as runtime:
        server = create_server(runtime, state_key=key, options=options)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
