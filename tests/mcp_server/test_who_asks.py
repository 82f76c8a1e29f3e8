"""The MCP client's name (its `initialize` clientInfo) is who is asking: the person sees
it beside an MCP question, in the legacy and the modern protocol."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from tests.mcp_server.conftest import ASK, Person, accept, within

from midturn import Runtime


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_clients_title_names_the_agent(server: Any, runtime: Runtime, mode: Any) -> None:
    person = Person([accept({"db": "SQLite", "name": "billing-api"})])
    info = types.Implementation(name="claude-code", title="Claude\x1b[2J Code", version="1.0")
    async with Client(server, elicitation_callback=person, mode=mode, client_info=info) as client:
        await within(client.call_tool("ask_user_question", ASK))
    (stored,) = await runtime.store.list_interactions(session_id="mcp")
    assert stored.context is not None
    assert stored.context.agent == "Claude Code"  # the title, escape sequence removed
