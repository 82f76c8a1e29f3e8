"""The whole trip through a live gateway: an agent asks and waits, an answerer sees the
request on its event stream and answers, the agent's wait returns the result; the same
for permissions, secrets and repeated tool calls."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from midturn import AlreadySettled
from midturn.client import AsyncClient, Client

from .conftest import ANSWER, ASK, SAFETY_S, LiveGateway, Session, next_event, until_waiting


async def test_agent_asks_answerer_answers_from_the_stream_agent_continues(
    gateway: LiveGateway, session: Session
) -> None:
    async with (
        AsyncClient(gateway.url, session.agent_token) as agent,
        AsyncClient(gateway.url, session.answer_token) as answerer,
    ):
        stream = answerer.events(session.session_id)
        waiting = asyncio.create_task(
            agent.ask_and_wait(session.session_id, ASK, tool_call_id="call-1", turn_id="t1")
        )
        requested = await next_event(stream, "user_question_requested")
        assert requested.session_id == session.session_id

        pending = await answerer.queue(session.session_id)
        assert [item.id for item in pending] == [requested.interaction_id]
        assert pending[0].ask is not None
        assert [q.id for q in pending[0].ask.questions] == ["db", "name"]

        settled = await answerer.answer(requested.interaction_id, ANSWER)
        assert settled.duplicate is False
        assert settled.interaction.status == "answered"

        done = (await asyncio.wait_for(waiting, SAFETY_S)).interaction
        answered = await next_event(stream, "user_question_answered")
        await stream.aclose()

    assert done.id == requested.interaction_id
    assert done.status == "answered"
    assert done.result is not None
    assert done.result.answer_for("db") is not None
    assert done.result.answer_for("db").selected == ("PostgreSQL",)  # type: ignore[union-attr]
    assert done.result.answer_for("name").text == "billing-api"  # type: ignore[union-attr]
    assert (answered.type, answered.interaction_id) == ("user_question_answered", done.id)
    assert answered.id > requested.id


async def test_the_agent_reads_the_tool_output_for_the_model_once_settled(
    gateway: LiveGateway, session: Session
) -> None:
    async with (
        gateway.client(session.agent_token) as agent,
        gateway.client(session.answer_token) as answerer,
    ):
        created = await agent.post(
            f"/v1/sessions/{session.session_id}/asks",
            json={"tool_input": ASK, "tool_call_id": "c1", "dialect": "midturn"},
        )
        ask_id = created.json()["interaction"]["id"]
        assert created.json()["output"] is None
        await answerer.post(f"/v1/asks/{ask_id}/answer", json=ANSWER)
        read = (await agent.get(f"/v1/asks/{ask_id}")).json()

    assert read["output"]["is_error"] is False
    assert "PostgreSQL" in read["output"]["text"]
    assert '"billing-api"' in read["output"]["text"]


async def test_a_repeated_tool_call_id_returns_the_existing_ask_with_200(
    gateway: LiveGateway, session: Session
) -> None:
    body = {"tool_input": ASK, "tool_call_id": "call-7", "turn_id": "t1"}
    async with gateway.client(session.agent_token) as agent:
        first = await agent.post(f"/v1/sessions/{session.session_id}/asks", json=body)
        again = await agent.post(f"/v1/sessions/{session.session_id}/asks", json=body)
        queue = await agent.get(f"/v1/sessions/{session.session_id}/interactions")

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["interaction"]["id"] == first.json()["interaction"]["id"]
    assert len(queue.json()["interactions"]) == 1


async def test_a_repeated_answer_is_a_duplicate_and_a_different_one_is_refused_with_the_result(
    gateway: LiveGateway, session: Session
) -> None:
    async with (
        AsyncClient(gateway.url, session.agent_token) as agent,
        AsyncClient(gateway.url, session.answer_token) as answerer,
    ):
        ask, _ = await agent.ask(session.session_id, ASK, tool_call_id="c1")
        first = await answerer.answer(ask.id, ANSWER)
        again = await answerer.answer(ask.id, ANSWER)
        with pytest.raises(AlreadySettled) as refused:
            await answerer.answer(ask.id, {"answers": {"db": "SQLite", "name": "x"}})

    assert (first.duplicate, again.duplicate) == (False, True)
    assert again.interaction.result == first.interaction.result
    assert refused.value.interaction.result == first.interaction.result


async def test_permission_requested_decided_and_read_back(
    gateway: LiveGateway, session: Session
) -> None:
    async with (
        AsyncClient(gateway.url, session.agent_token) as agent,
        AsyncClient(gateway.url, session.answer_token) as answerer,
    ):
        parked, _ = await agent.request_permission(
            session.session_id,
            tool="bash",
            summary="rm -rf build/",
            risk="high",
            details="cwd: /srv/app",
            tool_call_id="call-p",
            turn_id="t1",
        )
        waiting = asyncio.create_task(agent.wait(parked.id))
        [head] = await answerer.queue(session.session_id)
        assert head.id == parked.id and head.permission is not None
        assert head.permission.risk == "high"
        settled = await answerer.decide(parked.id, "deny", message="use make clean")
        waited = await asyncio.wait_for(waiting, SAFETY_S)
        done = waited.interaction

    assert settled.interaction.status == "denied"
    assert (waited.output, waited.allowed, waited.decision) == (None, False, done.decision)
    assert done.status == "denied"
    assert done.decision is not None
    assert (done.decision.decision, done.decision.message) == ("deny", "use make clean")


async def test_stopping_a_turn_cancels_what_it_parked_and_wakes_the_agent(
    gateway: LiveGateway, session: Session
) -> None:
    async with (
        AsyncClient(gateway.url, session.agent_token) as agent,
        AsyncClient(gateway.url, session.answer_token) as answerer,
    ):
        ask, _ = await agent.ask(session.session_id, ASK, tool_call_id="c1", turn_id="t9")
        other, _ = await agent.ask(session.session_id, ASK, tool_call_id="c2", turn_id="t10")
        waiting = asyncio.create_task(agent.wait(ask.id))
        await until_waiting(gateway, 1)
        cancelled = await answerer.stop_turn(session.session_id, "t9")
        done = (await asyncio.wait_for(waiting, SAFETY_S)).interaction
        remaining = await answerer.queue(session.session_id)

    assert [item.id for item in cancelled] == [ask.id]
    assert done.status == "cancelled"
    assert [item.id for item in remaining] == [other.id]


async def test_a_secret_reaches_the_asking_agent_and_nothing_else(
    gateway: LiveGateway, session: Session
) -> None:
    question = {"id": "key", "question": "API key?", "kind": "text", "secret": True}
    value = "sk-live-7f3a9c1d2e"
    async with (
        AsyncClient(gateway.url, session.agent_token) as agent,
        AsyncClient(gateway.url, session.answer_token) as answerer,
        gateway.client(session.answer_token) as answer_http,
    ):
        ask, _ = await agent.ask(session.session_id, {"questions": [question]}, tool_call_id="c-s")
        waiting = asyncio.create_task(agent.wait(ask.id))
        await until_waiting(gateway, 1)
        settled = await answerer.answer(ask.id, {"answers": {"key": value}})
        done = (await asyncio.wait_for(waiting, SAFETY_S)).interaction
        as_answerer = await answer_http.get(f"/v1/asks/{ask.id}")
        stream = answerer.events(session.session_id)
        events = [
            await next_event(stream, "user_question_requested"),
            await next_event(stream, "user_question_answered"),
        ]
        await stream.aclose()

    assert done.result is not None
    key = done.result.answer_for("key")
    assert key is not None and key.secret_value is not None
    assert key.secret_value.get_secret_value() == value
    assert key.answer == "[secret provided]"
    assert value not in settled.interaction.model_dump_json()
    assert value not in as_answerer.text
    assert as_answerer.json()["secrets"] == {}
    assert all(value not in event.model_dump_json() for event in events)
    stored = await asyncio.to_thread(_stored_bytes, gateway.db_url)
    assert value.encode() not in stored


def _stored_bytes(db_url: str) -> bytes:
    path = Path(db_url.removeprefix("sqlite:///"))
    return b"".join(
        candidate.read_bytes()
        for candidate in (path, path.with_name(path.name + "-wal"))
        if candidate.exists()
    )


def test_the_blocking_client_does_the_same_round_trip(
    gateway: LiveGateway, session: Session
) -> None:
    with (
        Client(gateway.url, session.agent_token) as agent,
        Client(gateway.url, session.answer_token) as answerer,
    ):
        ask, _ = agent.ask(session.session_id, ASK, tool_call_id="c-sync")
        events = answerer.events(session.session_id)
        requested = next(e for e in events if e.type == "user_question_requested")
        assert requested.interaction_id == ask.id
        answerer.answer(ask.id, ANSWER)
        answered = next(e for e in events if e.type == "user_question_answered")
        events.close()
        done = agent.wait(ask.id, timeout=SAFETY_S).interaction

    assert answered.type == "user_question_answered"
    assert done.status == "answered"
