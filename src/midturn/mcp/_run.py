"""`midturn mcp`: the MCP server over stdio, on the same store as `midturn serve`
(in this process), or on a remote gateway (`--gateway URL` with a token)."""

from __future__ import annotations

import dataclasses
import os
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from mcp.server import Server
from mcp.server.stdio import stdio_server

from midturn.mcp._remote import connect
from midturn.mcp._server import McpOptions, create_server
from midturn.mcp._state import load_state_key
from midturn.runtime import Runtime
from midturn.store import open_store
from midturn.store._paths import DEFAULT_DB_URL, data_dir_for

__all__ = ["run_stdio", "run_stdio_remote"]


async def _serve(server: Server[Any]) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def run_stdio(db_url: str = DEFAULT_DB_URL, options: McpOptions | None = None) -> None:
    """Serve one MCP client on stdin/stdout until it disconnects. Pending asks stay in
    the store (answerable in the inbox, collectable with `wait_for_answer`)."""
    async with open_store(db_url) as store, Runtime(store) as runtime:
        key = load_state_key(data_dir_for(db_url))  # once the store opened: none left behind
        await _serve(create_server(runtime, state_key=key, options=options))


def local_data_dir() -> Path:
    """Where a remote server keeps its state key: `$MIDTURN_HOME`, else `./.midturn`."""
    return Path(os.environ.get("MIDTURN_HOME", ".midturn")).resolve()


async def run_stdio_remote(
    gateway: str,
    token: str,
    *,
    answer_token: str | None = None,
    session: str | None = None,
    options: McpOptions | None = None,
    data_dir: Path | None = None,
) -> None:
    """The same server on a remote gateway: asks, waits and settles go through
    `AsyncClient` (see `midturn.mcp._remote`). The `requestState` key and the remembered
    session names live in the local data folder (default: `$MIDTURN_HOME`, else
    `./.midturn`)."""
    folder = data_dir or local_data_dir()
    key = load_state_key(folder)
    async with AsyncExitStack() as stack:
        remote = await connect(
            stack, gateway, token, answer_token=answer_token, session=session, data_dir=folder
        )
        chosen = dataclasses.replace(
            options or McpOptions(), session_id=remote.session_id, public_url=gateway
        )
        await _serve(create_server(remote.backend, state_key=key, options=chosen))
