"""2025-06-18 / 2025-11-25 clients (`mode="legacy"`): the server pushes
`elicitation/create` and settles from its result; the inbox can answer meanwhile."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from tests.mcp_server.conftest import ASK, MULTI, Person, accept, requested, settle_events, within

from midturn import Runtime

QUESTION = "ask_user_question"


async def test_an_accepted_form_answers_the_ask(server: Any, runtime: Runtime) -> None:
    person = Person([accept({"db": "SQLite", "name": "billing-api"})])
    async with Client(server, elicitation_callback=person, mode="legacy") as client:
        assert client.session.protocol_version != "2026-07-28"
        result = await within(client.call_tool(QUESTION, ASK))
    assert result.structured_content is not None
    assert [a["answer"] for a in result.structured_content["answers"]] == ["SQLite", "billing-api"]
    (stored,) = await runtime.store.list_interactions(session_id="mcp")
    assert await settle_events(runtime, stored.id) == ["user_question_answered"]


@pytest.mark.parametrize(
    ("action", "settled_by"), [("decline", "mcp"), ("cancel", "mcp:dismissed")]
)
async def test_decline_and_cancel_skip(
    server: Any, runtime: Runtime, action: Any, settled_by: str
) -> None:
    person = Person([types.ElicitResult(action=action)])
    async with Client(server, elicitation_callback=person, mode="legacy") as client:
        result = await within(client.call_tool(QUESTION, ASK))
    assert result.structured_content is not None
    assert result.structured_content["outcome"] == "skipped"
    (stored,) = await runtime.store.list_interactions(session_id="mcp")
    assert (stored.status, stored.settled_by) == ("skipped", settled_by)


async def test_junk_is_asked_again(server: Any, runtime: Runtime) -> None:
    person = Person([accept({"db": 3.5, "bogus": 1}), accept({"db": "SQLite"})])
    async with Client(server, elicitation_callback=person, mode="legacy") as client:
        result = await within(client.call_tool(QUESTION, ASK))
    assert len(person.seen) == 2
    assert person.seen[1].message.startswith("That answer could not be used:")
    assert result.structured_content is not None
    assert result.structured_content["answers"][0]["answer"] == "SQLite"
    (stored,) = await runtime.store.list_interactions(session_id="mcp")
    assert await settle_events(runtime, stored.id) == ["user_question_answered"]


async def test_multi_select(server: Any) -> None:
    person = Person([accept({"langs": ["Go"]})])
    async with Client(server, elicitation_callback=person, mode="legacy") as client:
        result = await within(client.call_tool(QUESTION, MULTI))
    assert result.structured_content is not None
    assert result.structured_content["answers"][0]["selected"] == ["Go"]


async def test_the_inbox_answering_first_settles_and_withdraws_the_form(
    server: Any, runtime: Runtime
) -> None:
    shown = asyncio.Event()
    never = asyncio.Event()
    withdrawn = asyncio.Event()

    async def stays_open(params: types.ElicitRequestParams) -> types.ElicitResult:
        shown.set()
        try:
            await never.wait()  # the person never submits the form
        except asyncio.CancelledError:
            withdrawn.set()  # the server cancelled its elicitation request
            raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def inbox() -> None:
        parked = await requested(runtime)
        await within(shown.wait())
        await runtime.answer(parked.id, {"answers": {"db": "PostgreSQL"}}, by="inbox")

    person = Person([stays_open])
    async with Client(server, elicitation_callback=person, mode="legacy") as client:
        answering = asyncio.ensure_future(inbox())
        result = await within(client.call_tool(QUESTION, ASK))
        await within(answering)
        await within(withdrawn.wait())
    assert result.structured_content is not None
    assert result.structured_content["answers"][0]["answer"] == "PostgreSQL"
    (stored,) = await runtime.store.list_interactions(session_id="mcp")
    assert stored.settled_by == "inbox"


async def test_without_elicitation_a_second_party_answers(server: Any, runtime: Runtime) -> None:
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async def second_party() -> None:
        parked = await requested(runtime)
        await runtime.answer(parked.id, {"answers": {"db": "SQLite"}}, by="inbox")

    async with Client(server, mode="legacy") as client:
        answering = asyncio.ensure_future(second_party())
        result = await within(client.call_tool(QUESTION, ASK, progress_callback=on_progress))
        await within(answering)
    assert result.structured_content is not None
    assert result.structured_content["answers"][0]["answer"] == "SQLite"
    assert progress


async def test_a_client_that_refuses_the_form_falls_back_to_the_inbox(
    server: Any, runtime: Runtime
) -> None:
    refused = asyncio.Event()

    async def refuses(context: Any, params: types.ElicitRequestParams) -> types.ErrorData:
        refused.set()
        return types.ErrorData(code=-32601, message="elicitation is not supported here")

    async def second_party() -> None:
        parked = await requested(runtime)
        await within(refused.wait())
        await asyncio.sleep(0)  # let the refusal reach the server first
        await runtime.answer(parked.id, {"answers": {"db": "SQLite"}}, by="inbox")

    async with Client(server, elicitation_callback=refuses, mode="legacy") as client:
        answering = asyncio.ensure_future(second_party())
        result = await within(client.call_tool(QUESTION, ASK))
        await within(answering)
    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["answers"][0]["answer"] == "SQLite"
