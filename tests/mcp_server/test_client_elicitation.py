"""midturn answering another MCP server's elicitation: the real `mcp` Client, a real
`MCPServer` tool that elicits (pushed, legacy mode), its callback from
`midturn.mcp.elicitation_callback`, and a scripted person answering through a
`Runtime` on SQLite."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from tests._eliciting import CASES, SESSION, eliciting_server, sides

from midturn import Runtime, open_store
from midturn.mcp import elicitation_callback
from midturn.testing import ScriptedResponder

SAFETY_S = 20.0


def text_of(result: types.CallToolResult) -> dict[str, Any]:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    decoded: dict[str, Any] = json.loads(block.text)
    return decoded


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("where", ["runtime", "gateway"])
@pytest.mark.parametrize("case", sorted(CASES))
async def test_the_person_answers_the_servers_form_through_midturn(
    tmp_path: Path, case: str, where: str, mode: Any
) -> None:
    step, expected = CASES[case]
    async with (
        sides(where, tmp_path) as (session_id, asker, answerer),
        ScriptedResponder(answerer, [step], session_id=session_id) as person,
    ):
        callback = elicitation_callback(asker, session_id, turn_id="t1")
        async with Client(eliciting_server(), mode=mode, elicitation_callback=callback) as client:
            result = await asyncio.wait_for(
                client.call_tool("deploy", {"service": "billing"}), SAFETY_S
            )
        assert text_of(result) == expected
        [response] = person.responses
        asked = response.interaction
        assert asked.dialect == "mcp-elicitation"
        assert asked.turn_id == "t1"
        assert asked.ask is not None
        assert [q.id for q in asked.ask.questions] == ["target", "regions"]
        assert asked.ask.questions[1].multi
        assert asked.ask.questions[0].question.startswith("Deploy billing: where to?")


async def test_a_rebuilt_callback_with_the_same_key_never_asks_twice(tmp_path: Path) -> None:
    step, expected = CASES["accept"]
    async with (
        open_store(f"sqlite:///{tmp_path}/m.db") as store,
        Runtime(store) as runtime,
        ScriptedResponder(runtime, [step], session_id=SESSION) as person,
    ):
        for _ in range(2):  # the agent's run, then the same run resumed
            callback = elicitation_callback(runtime, SESSION, key="call-7")
            async with Client(
                eliciting_server(), mode="legacy", elicitation_callback=callback
            ) as client:
                result = await asyncio.wait_for(
                    client.call_tool("deploy", {"service": "billing"}), SAFETY_S
                )
            assert text_of(result) == expected
        assert len(person.responses) == 1
        assert person.unscripted == []
        assert len(await store.list_interactions(session_id=SESSION)) == 1


async def test_a_url_elicitation_is_declined_unseen(tmp_path: Path) -> None:
    server = MCPServer("linker")

    @server.tool()
    async def connect(ctx: Context) -> str:
        result = await ctx.elicit_url("Sign in", "https://example.invalid/auth", "e1")
        return result.action

    async with open_store(f"sqlite:///{tmp_path}/m.db") as store, Runtime(store) as runtime:
        callback = elicitation_callback(runtime, SESSION)
        async with Client(server, mode="legacy", elicitation_callback=callback) as client:
            result = await asyncio.wait_for(client.call_tool("connect", {}), SAFETY_S)
        block = result.content[0]
        assert isinstance(block, types.TextContent) and block.text == "decline"
        assert await runtime.queue(SESSION) == []


async def test_a_wait_bound_cancels_the_ask_and_the_server_gets_cancel(tmp_path: Path) -> None:
    async with open_store(f"sqlite:///{tmp_path}/m.db") as store, Runtime(store) as runtime:
        callback = elicitation_callback(runtime, SESSION, timeout=0)
        async with Client(
            eliciting_server(), mode="legacy", elicitation_callback=callback
        ) as client:
            result = await asyncio.wait_for(
                client.call_tool("deploy", {"service": "billing"}), SAFETY_S
            )
        assert text_of(result) == {"action": "cancel"}
        [asked] = await store.list_interactions(session_id=SESSION)
        assert asked.status == "cancelled"


async def test_a_form_midturn_cannot_ask_is_an_error_to_the_server(tmp_path: Path) -> None:
    async with open_store(f"sqlite:///{tmp_path}/m.db") as store, Runtime(store) as runtime:
        callback = elicitation_callback(runtime, SESSION)
        params = types.ElicitRequestFormParams(
            message="Nested",
            requested_schema={"type": "object", "properties": {"a": {"type": "object"}}},
        )
        reply = await callback(None, params)  # type: ignore[arg-type]
        assert isinstance(reply, types.ErrorData)
        assert reply.code == types.INVALID_PARAMS and "requestedSchema" in reply.message
        assert await runtime.queue(SESSION) == []
