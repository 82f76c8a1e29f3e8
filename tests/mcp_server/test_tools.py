"""The permission tool, the long-wait pair, the bounded wait and the server's listing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import mcp_types as types
import pytest
from mcp import Client
from tests._slow_first import SlowFirstAsk
from tests.mcp_server.conftest import ASK, Person, accept, requested, settle_events, within

from midturn import SYSTEM_PROMPT, Runtime, tool_spec
from midturn.mcp import Backend, McpOptions, create_server, load_state_key

PERMISSION = {"summary": "Delete the build cache", "risk": "high", "details": "rm -rf .cache"}


async def test_listing_and_instructions(server: Any) -> None:
    async with Client(server, mode="legacy") as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        instructions = client.session.initialize_result.instructions  # type: ignore[union-attr]
    spec = tool_spec(dialect="midturn", format="mcp")
    question = listed[spec["name"]]
    assert (question.description, question.input_schema) == (
        spec["description"],
        spec["inputSchema"],
    )
    assert set(listed) == {spec["name"], "request_permission", "start_question", "wait_for_answer"}
    assert instructions == SYSTEM_PROMPT


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize(
    ("content", "text", "status"),
    [
        ({"decision": "allow"}, "Allowed: go ahead.", "allowed"),
        ({"decision": "deny", "message": "not today"}, "The user says: not today", "denied"),
        ({"decision": "allow_for_turn"}, "Allowed for the rest of this turn", "allowed"),
    ],
)
async def test_permission_through_a_form(
    server: Any, runtime: Runtime, mode: str, content: dict[str, Any], text: str, status: str
) -> None:
    person = Person([accept({"decision": "maybe"}), accept(content)])
    async with Client(server, elicitation_callback=person, mode=mode) as client:
        result = await within(client.call_tool("request_permission", PERMISSION))
    assert text in result.content[0].text  # type: ignore[union-attr]
    assert len(person.seen) == 2  # "maybe" is no decision: asked again
    assert "rm -rf .cache" in person.seen[0].message
    (stored,) = await runtime.store.list_interactions(session_id="mcp", kind="permission")
    assert stored.status == status
    assert await settle_events(runtime, stored.id) == ["permission_decided"]


async def test_allow_for_turn_covers_the_next_request(server: Any, runtime: Runtime) -> None:
    person = Person([accept({"decision": "allow_for_turn"})])
    async with Client(server, elicitation_callback=person) as client:
        await within(client.call_tool("request_permission", PERMISSION))
        again = await within(client.call_tool("request_permission", PERMISSION))
    assert len(person.seen) == 1
    assert "Allowed for the rest of this turn" in again.content[0].text  # type: ignore[union-attr]


async def test_permission_cancel_never_allows(server: Any, runtime: Runtime) -> None:
    person = Person([types.ElicitResult(action="cancel")])
    async with Client(server, elicitation_callback=person) as client:
        result = await within(client.call_tool("request_permission", PERMISSION))
    assert "do not run it" in result.content[0].text  # type: ignore[union-attr]
    (stored,) = await runtime.store.list_interactions(session_id="mcp", kind="permission")
    assert stored.status == "cancelled"


async def test_a_bad_permission_call_is_an_error(server: Any, runtime: Runtime) -> None:
    async with Client(server) as client:
        for arguments in ({}, {"summary": "x", "risk": "extreme"}, {"summary": "x", "y": 1}):
            result = await within(client.call_tool("request_permission", arguments))
            assert result.is_error, arguments
    assert await runtime.inbox() == []


async def test_start_then_wait(server: Any, runtime: Runtime) -> None:
    async with Client(server) as client:
        started = await within(client.call_tool("start_question", ASK))
        assert started.structured_content is not None
        interaction_id = started.structured_content["interaction_id"]
        open_now = await within(
            client.call_tool("wait_for_answer", {"interaction_id": interaction_id, "seconds": 0})
        )
        pending = {"interaction_id": interaction_id, "status": "pending"}
        assert open_now.structured_content == pending
        await runtime.answer(interaction_id, {"answers": {"db": "SQLite"}}, by="inbox")
        done = await within(client.call_tool("wait_for_answer", {"interaction_id": interaction_id}))
        unknown = await within(client.call_tool("wait_for_answer", {"interaction_id": "ia_x"}))
    assert done.structured_content is not None
    assert done.structured_content["answers"][0]["answer"] == "SQLite"
    assert unknown.is_error


async def test_past_the_bound_the_question_is_still_open(runtime: Runtime, data_dir: Path) -> None:
    options = McpOptions(wait_bound_s=0.05, progress_every_s=0.01)
    server = create_server(runtime, state_key=load_state_key(data_dir), options=options)
    async with Client(server) as client:
        result = await within(client.call_tool("ask_user_question", ASK))
        assert result.structured_content is not None
        interaction_id = result.structured_content["interaction_id"]
        assert "wait_for_answer" in result.content[0].text  # type: ignore[union-attr]
        parked = await runtime.get(interaction_id)
        assert parked.pending

        async def answer_later() -> None:
            await runtime.answer(interaction_id, {"answers": {"name": "svc"}}, by="inbox")

        answering = asyncio.ensure_future(answer_later())
        collected = await within(
            client.call_tool("wait_for_answer", {"interaction_id": interaction_id})
        )
        await within(answering)
    assert collected.structured_content is not None
    assert collected.structured_content["answers"][1]["answer"] == "svc"
    assert len(await runtime.store.list_interactions(session_id="mcp")) == 1


async def test_every_mcp_ask_is_in_the_inbox(server: Any, runtime: Runtime) -> None:
    async with Client(server) as client:
        started = await within(client.call_tool("start_question", ASK))
    parked = await requested(runtime)
    assert started.structured_content is not None
    assert parked.id == started.structured_content["interaction_id"]
    assert [item.id for item in await runtime.inbox()] == [parked.id]


async def test_a_permission_without_elicitation_is_decided_elsewhere(
    server: Any, runtime: Runtime
) -> None:
    async def decide() -> None:
        parked = await requested(runtime)
        await runtime.decide(parked.id, "deny", message="use the staging cache", by="inbox")

    async with Client(server) as client:
        deciding = asyncio.ensure_future(decide())
        result = await within(client.call_tool("request_permission", PERMISSION))
        await within(deciding)
    assert result.content[0].text == (  # type: ignore[union-attr]
        "Denied: do not run it. The user says: use the staging cache"
    )
    assert result.structured_content is not None
    assert result.structured_content["outcome"] == "denied"


async def test_parallel_calls_park_in_the_order_they_came(runtime: Runtime, data_dir: Path) -> None:
    """A client's parallel tool calls (one model step) are parked in the order it sent
    them, however long each ask takes: one FIFO, the model's order."""
    backend = Backend(cast(Any, SlowFirstAsk(runtime)), runtime)
    server = create_server(backend, state_key=load_state_key(data_dir))
    first = {"questions": [{**ASK["questions"][0], "id": "first"}]}
    second = {"questions": [{**ASK["questions"][0], "id": "second"}]}
    async with Client(server, mode="legacy") as client:
        started = await within(
            asyncio.gather(
                client.call_tool("start_question", first),
                client.call_tool("start_question", second),
            )
        )
    assert all(not result.is_error for result in started)
    queued = await runtime.queue("mcp")
    assert [i.ask.questions[0].id for i in queued if i.ask] == ["first", "second"]
