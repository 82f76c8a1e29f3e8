"""midturn answering another MCP server's elicitation: the real `mcp` Client, a real
`MCPServer` tool that elicits (pushed, legacy mode), its callback from
`midturn.mcp.elicitation_callback`, and a scripted person answering through a
`Runtime` on SQLite."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Literal, cast

import mcp_types as types
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field
from tests._eliciting import CASES, SESSION, eliciting_server, sides
from tests._slow_first import SlowFirstAsk

from midturn import Asker, Runtime, open_store
from midturn.mcp import elicitation_callback
from midturn.testing import ScriptedResponder, answer

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
        # the person's answer is recorded once its own response is in, which over HTTP
        # may come after the agent's (the gateway answers a woken long-poll first)
        await asyncio.wait_for(person.finished(), SAFETY_S)
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


class _Region(BaseModel):
    region: Literal["eu", "us"] = Field(title="Region", description="Which region?")


class _Size(BaseModel):
    size: Literal["small", "large"] = Field(title="Size", description="How large?")


def _two_forms_server() -> MCPServer:
    """A tool that sends its two elicitations at once, as a server gathering them would."""
    server = MCPServer("sizer")

    @server.tool()
    async def provision(ctx: Context) -> str:
        """Provision, asking the region and the size together."""
        region, size = await asyncio.gather(
            ctx.elicit("Provision: which region?", _Region),
            ctx.elicit("Provision: how large?", _Size),
        )
        return json.dumps([region.action, size.action])

    return server


async def test_forms_sent_together_park_in_the_order_they_came(tmp_path: Path) -> None:
    """The client runs each `elicitation/create` as a task of its own; with the first
    ask slow (a gateway request), the second form must still wait its turn."""
    async with (
        open_store(f"sqlite:///{tmp_path}/m.db") as store,
        Runtime(store) as runtime,
    ):
        slow = SlowFirstAsk(runtime)

        def pick(interaction: Any) -> dict[str, Any]:
            asked = interaction.ask.questions[0].id
            return {"answers": {asked: "eu" if asked == "region" else "small"}}

        steps = [answer(pick), answer(pick)]
        async with ScriptedResponder(runtime, steps, session_id=SESSION) as person:
            callback = elicitation_callback(cast(Asker, slow), SESSION)
            async with Client(
                _two_forms_server(), mode="legacy", elicitation_callback=callback
            ) as client:
                result = await asyncio.wait_for(client.call_tool("provision", {}), SAFETY_S)
        asked = [r.interaction.ask.questions[0].id for r in person.responses]  # type: ignore[union-attr]
        assert asked == ["region", "size"]
        assert json.loads(result.content[0].text) == ["accept", "accept"]  # type: ignore[union-attr]
