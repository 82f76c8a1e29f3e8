"""2026-07-28 clients (the SDK client's default in memory): the question tool returns
`InputRequiredResult` with one form, and the client's retry settles the ask."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.server import request_state
from mcp.shared.exceptions import MCPError
from tests.mcp_server.conftest import (
    ASK,
    MULTI,
    Person,
    accept,
    requested,
    settle_events,
    within,
)

from midturn import Runtime, open_store
from midturn.mcp import McpOptions, create_server, load_state_key

QUESTION = "ask_user_question"


async def test_an_accepted_form_answers_the_ask(server: Any, runtime: Runtime) -> None:
    person = Person([accept({"db": "SQLite", "name": "billing-api"})])
    async with Client(server, elicitation_callback=person) as client:
        assert client.session.protocol_version == "2026-07-28"
        result = await within(client.call_tool(QUESTION, ASK))
    assert not result.is_error
    assert result.structured_content is not None
    answers = result.structured_content["answers"]
    assert [a["answer"] for a in answers] == ["SQLite", "billing-api"]
    assert "SQLite" in result.content[0].text  # type: ignore[union-attr]
    (stored,) = await runtime.store.list_interactions(session_id="mcp")
    assert (stored.status, stored.settled_by) == ("answered", "mcp")
    assert await settle_events(runtime, stored.id) == ["user_question_answered"]
    assert len(person.seen) == 1
    assert person.seen[0].mode == "form"


async def test_decline_skips(server: Any, runtime: Runtime) -> None:
    person = Person([types.ElicitResult(action="decline")])
    async with Client(server, elicitation_callback=person) as client:
        result = await within(client.call_tool(QUESTION, ASK))
    assert result.structured_content is not None
    assert result.structured_content["outcome"] == "skipped"
    (stored,) = await runtime.store.list_interactions(session_id="mcp")
    assert (stored.status, stored.settled_by) == ("skipped", "mcp")


async def test_cancel_skips_as_dismissed(server: Any, runtime: Runtime) -> None:
    person = Person([types.ElicitResult(action="cancel")])
    async with Client(server, elicitation_callback=person) as client:
        result = await within(client.call_tool(QUESTION, ASK))
    assert result.structured_content is not None
    assert result.structured_content["outcome"] == "skipped"
    (stored,) = await runtime.store.list_interactions(session_id="mcp")
    assert (stored.status, stored.settled_by) == ("skipped", "mcp:dismissed")


@pytest.mark.parametrize("junk", [{"db": True}, {"unknown": "x"}, {"name": ["a", "b"]}])
async def test_junk_asks_again_and_never_settles_on_it(
    server: Any, runtime: Runtime, junk: dict[str, Any]
) -> None:
    person = Person([accept(junk), accept({"db": "PostgreSQL"})])
    async with Client(server, elicitation_callback=person) as client:
        result = await within(client.call_tool(QUESTION, ASK))
    assert len(person.seen) == 2
    assert person.seen[1].message.startswith("That answer could not be used:")
    assert result.structured_content is not None
    assert result.structured_content["answers"][0]["answer"] == "PostgreSQL"
    (stored,) = await runtime.store.list_interactions(session_id="mcp")
    assert await settle_events(runtime, stored.id) == ["user_question_answered"]


async def test_multi_select(server: Any) -> None:
    person = Person([accept({"langs": ["Python", "Rust"], "langs_other": "Zig"})])
    async with Client(server, elicitation_callback=person) as client:
        result = await within(client.call_tool(QUESTION, MULTI))
    schema = person.seen[0].requested_schema  # type: ignore[union-attr]
    assert schema["properties"]["langs"]["type"] == "array"
    assert result.structured_content is not None
    (answer,) = result.structured_content["answers"]
    assert answer["selected"] == ["Python", "Rust"]
    assert answer["text"] == "Zig"


async def test_an_invalid_ask_is_an_error_result_and_parks_nothing(
    server: Any, runtime: Runtime
) -> None:
    async with Client(server, elicitation_callback=Person()) as client:
        result = await within(client.call_tool(QUESTION, {"questions": []}))
    assert result.is_error
    assert await runtime.inbox() == []


async def _first_round(client: Client) -> types.InputRequiredResult:
    first = await within(client.session.call_tool(QUESTION, ASK, allow_input_required=True))
    assert isinstance(first, types.InputRequiredResult)
    assert first.request_state is not None
    assert first.input_requests is not None
    return first


async def test_fifty_concurrent_retries_with_one_state_settle_once(
    server: Any, runtime: Runtime
) -> None:
    async with Client(server, elicitation_callback=Person()) as client:
        first = await _first_round(client)
        (key,) = first.input_requests or {}
        responses: dict[str, Any] = {key: accept({"db": "SQLite", "name": "x"})}

        async def retry() -> Any:
            return await client.session.call_tool(
                QUESTION,
                ASK,
                input_responses=responses,
                request_state=first.request_state,
                allow_input_required=True,
            )

        results = await within(asyncio.gather(*(retry() for _ in range(50))))
        late = await within(
            client.session.call_tool(  # a replay after the settle, with another answer
                QUESTION,
                ASK,
                input_responses={key: accept({"db": "PostgreSQL", "name": "y"})},
                request_state=first.request_state,
                allow_input_required=True,
            )
        )
    assert all(isinstance(r, types.CallToolResult) for r in [*results, late])
    contents = {str(r.structured_content) for r in [*results, late]}
    assert len(contents) == 1
    (stored,) = await runtime.store.list_interactions(session_id="mcp")
    assert stored.result is not None
    assert stored.result.answers[0].answer == "SQLite"
    assert await settle_events(runtime, stored.id) == ["user_question_answered"]


async def test_a_tampered_state_is_refused(server: Any, runtime: Runtime) -> None:
    async with Client(server, elicitation_callback=Person()) as client:
        first = await _first_round(client)
        assert first.request_state is not None
        forged = first.request_state[:-2] + ("AA" if first.request_state[-2:] != "AA" else "BB")
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await client.session.call_tool(
                QUESTION, ASK, request_state=forged, allow_input_required=True
            )
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await client.session.call_tool(  # bound to the arguments it was minted for
                QUESTION,
                {"questions": ASK["questions"][:1]},
                request_state=first.request_state,
                allow_input_required=True,
            )
    assert len(await runtime.inbox()) == 1


async def test_an_expired_state_is_refused(
    runtime: Runtime, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ttl = 60.0
    server = create_server(
        runtime, state_key=load_state_key(data_dir), options=McpOptions(state_ttl_s=ttl)
    )
    async with Client(server, elicitation_callback=Person()) as client:
        first = await _first_round(client)
        later = SimpleNamespace(time=lambda: time.time() + ttl + 1)
        monkeypatch.setattr(request_state, "time", later)  # the SDK's clock, a TTL on
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await client.session.call_tool(
                QUESTION, ASK, request_state=first.request_state, allow_input_required=True
            )


async def test_a_restart_between_input_required_and_retry_settles(
    db_url: str, data_dir: Path
) -> None:
    async with open_store(db_url) as store, Runtime(store) as runtime:
        before = create_server(runtime, state_key=load_state_key(data_dir))
        async with Client(before, elicitation_callback=Person()) as client:
            first = await _first_round(client)
    (key,) = first.input_requests or {}
    async with open_store(db_url) as store, Runtime(store) as runtime:
        after = create_server(runtime, state_key=load_state_key(data_dir))
        async with Client(after, elicitation_callback=Person()) as client:
            result = await within(
                client.call_tool(
                    QUESTION,
                    ASK,
                    input_responses={key: accept({"db": "SQLite", "name": "svc"})},
                    request_state=first.request_state,
                )
            )
        (stored,) = await store.list_interactions(session_id="mcp")
        assert stored.status == "answered"
    assert result.structured_content is not None
    assert result.structured_content["answers"][1]["answer"] == "svc"


async def test_without_elicitation_a_second_party_answers(server: Any, runtime: Runtime) -> None:
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async def second_party() -> None:
        parked = await requested(runtime)
        await runtime.answer(parked.id, {"answers": {"db": "SQLite", "name": "ops"}}, by="inbox")

    async with Client(server) as client:
        answering = asyncio.ensure_future(second_party())
        result = await within(client.call_tool(QUESTION, ASK, progress_callback=on_progress))
        await within(answering)
    assert result.structured_content is not None
    assert result.structured_content["answers"][1]["answer"] == "ops"
    assert progress  # the call reported progress while it waited


async def test_answered_elsewhere_before_the_retry_returns_that_answer(
    server: Any, runtime: Runtime
) -> None:
    async with Client(server, elicitation_callback=Person()) as client:
        first = await _first_round(client)
        (key,) = first.input_requests or {}
        (parked,) = await runtime.inbox()
        await runtime.answer(parked.id, {"answers": {"db": "PostgreSQL"}}, by="inbox")
        retried = await within(
            client.session.call_tool(
                QUESTION,
                ASK,
                input_responses={key: accept({"db": "SQLite", "name": "late"})},
                request_state=first.request_state,
                allow_input_required=True,
            )
        )
    assert isinstance(retried, types.CallToolResult)
    assert retried.structured_content is not None
    assert retried.structured_content["answers"][0]["answer"] == "PostgreSQL"
    assert await settle_events(runtime, parked.id) == ["user_question_answered"]
