"""Server-sent events: the frame format, `Last-Event-ID` replay after a dropped
connection, and the client's automatic resume across a gateway restart."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from midturn.client import AsyncClient
from midturn.gateway import _stream_clock

from .conftest import (
    ADMIN_TOKEN,
    ANSWER,
    ASK,
    SAFETY_S,
    LiveGateway,
    NewSession,
    Session,
    StartGateway,
    create_ask,
    next_event,
)


async def _frames(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """Parsed frames `{id, event, data}` of a raw SSE response."""
    frame: dict[str, Any] = {}
    async for line in response.aiter_lines():
        if not line:
            if "data" in frame:
                yield frame
            frame = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(": ")
            frame[name] = json.loads(value) if name == "data" else value


async def _read(response: httpx.Response, count: int) -> list[dict[str, Any]]:
    frames = _frames(response)
    got = [await asyncio.wait_for(anext(frames), SAFETY_S) for _ in range(count)]
    await frames.aclose()
    return got


async def test_a_frame_carries_id_type_and_the_whole_event(
    gateway: LiveGateway, session: Session
) -> None:
    ask = await create_ask(gateway, session)
    async with (
        gateway.client(session.answer_token) as answerer,
        answerer.stream("GET", f"/v1/sessions/{session.session_id}/events") as response,
    ):
        assert response.headers["content-type"].startswith("text/event-stream")
        frames = _frames(response)
        frame = await asyncio.wait_for(anext(frames), SAFETY_S)
        while frame["event"] != "user_question_requested":
            frame = await asyncio.wait_for(anext(frames), SAFETY_S)
        await frames.aclose()

    event = frame["data"]
    assert int(frame["id"]) == event["id"]
    assert frame["event"] == event["type"]
    assert set(event) == {"id", "type", "session_id", "turn_id", "interaction_id", "at", "data"}
    assert (event["session_id"], event["turn_id"]) == (session.session_id, "turn-1")
    assert event["interaction_id"] == ask["id"]


async def test_reconnecting_with_last_event_id_replays_exactly_what_was_missed(
    gateway: LiveGateway, session: Session
) -> None:
    path = f"/v1/sessions/{session.session_id}/events"
    await create_ask(gateway, session, "call-1")
    async with gateway.client(session.answer_token) as answerer:
        async with answerer.stream("GET", path) as response:
            [first] = await _read(response, 1)
        # the connection is gone; meanwhile more happens
        await create_ask(gateway, session, "call-2")
        await create_ask(gateway, session, "call-3")
        async with answerer.stream("GET", path) as response:
            everything = await _read(response, 1)
        async with answerer.stream("GET", path, headers={"Last-Event-ID": first["id"]}) as response:
            every_after = await _collect_until_tool_call(response, "call-3")

    assert everything[0]["id"] == first["id"]
    ids = [int(frame["id"]) for frame in every_after]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert ids[0] > int(first["id"])
    requested = [f["data"] for f in every_after if f["event"] == "user_question_requested"]
    assert len(requested) == 2


async def _collect_until_tool_call(
    response: httpx.Response, tool_call_id: str
) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = []

    async def collect() -> None:
        async for frame in _frames(response):
            got.append(frame)
            if frame["event"] == "user_question_requested" and tool_call_id in json.dumps(
                frame["data"]
            ):
                return

    await asyncio.wait_for(collect(), SAFETY_S)
    return got


async def test_the_after_parameter_and_the_access_token_parameter_work_for_eventsource(
    gateway: LiveGateway, session: Session
) -> None:
    await create_ask(gateway, session, "call-1")
    async with (
        gateway.client(None) as browser,
        browser.stream(
            "GET",
            f"/v1/sessions/{session.session_id}/events",
            params={"access_token": session.answer_token, "after": 0},
        ) as response,
    ):
        assert response.status_code == 200
        [frame] = await _read(response, 1)
    assert frame["data"]["session_id"] == session.session_id


async def test_a_last_event_id_that_is_not_an_id_is_a_clear_422(
    gateway: LiveGateway, session: Session
) -> None:
    async with gateway.client(session.answer_token) as answerer:
        response = await answerer.get(
            f"/v1/sessions/{session.session_id}/events", headers={"Last-Event-ID": "abc"}
        )
    assert response.status_code == 422
    assert response.json()["error"] == "invalid_request"
    assert "Last-Event-ID" in response.json()["message"]


async def test_the_client_resumes_after_the_gateway_restarts_without_loss_or_repeat(
    start_gateway: StartGateway, db_url: str
) -> None:
    first = start_gateway(db_url)
    async with first.client() as admin:
        session = Session(**(await admin.post("/v1/sessions", json={})).json())
    asked = await create_ask(first, session, "call-1")

    async with AsyncClient(first.url, session.answer_token) as answerer:
        stream = answerer.events(session.session_id)
        before = await next_event(stream, "user_question_requested")
        assert before.interaction_id == asked["id"]

        await asyncio.to_thread(first.stop)  # the connection drops; the client retries
        second = start_gateway(db_url, port=first.port)
        again = await create_ask(second, session, "call-2")
        async with second.client(session.answer_token) as http:
            await http.post(f"/v1/asks/{asked['id']}/answer", json=ANSWER)

        after = await next_event(stream, "user_question_requested")
        answered = await next_event(stream, "user_question_answered")
        await stream.aclose()

    assert after.interaction_id == again["id"]
    assert answered.interaction_id == asked["id"]
    assert before.id < after.id < answered.id


async def test_a_stream_ends_when_the_server_stops(
    start_gateway: StartGateway, db_url: str
) -> None:
    server = start_gateway(db_url)
    async with server.client() as admin:
        session = Session(**(await admin.post("/v1/sessions", json={})).json())
        await create_ask(server, session, "c1", ASK)
        async with admin.stream("GET", "/v1/events") as response:
            frames = _frames(response)
            await asyncio.wait_for(anext(frames), SAFETY_S)
            await asyncio.to_thread(server.stop)

            async def drain() -> None:
                async for _ in frames:
                    pass

            await asyncio.wait_for(drain(), SAFETY_S)


async def test_many_streams_each_get_their_own_sessions_events_in_order_once(
    gateway: LiveGateway, new_session: NewSession
) -> None:
    sessions = [await new_session() for _ in range(8)]
    await create_ask(gateway, sessions[0], "before-any-stream")
    clients = [AsyncClient(gateway.url, s.answer_token) for s in sessions]
    streams = [c.events(s.session_id) for c, s in zip(clients, sessions, strict=True)]
    async with AsyncClient(gateway.url, ADMIN_TOKEN) as admin:
        everything = admin.events()
        # every stream is open and caught up before the asks below
        first = await next_event(streams[0], "user_question_requested")
        for index, session in enumerate(sessions):
            for n in range(3):
                await create_ask(gateway, session, f"call-{index}-{n}")
        seen = [
            [await next_event(stream, "user_question_requested") for _ in range(3)]
            for stream in streams
        ]
        all_requested = [
            await next_event(everything, "user_question_requested") for _ in range(1 + 8 * 3)
        ]
        for stream in (*streams, everything):
            await stream.aclose()
    for client in clients:
        await client.aclose()

    assert first.session_id == sessions[0].session_id
    for session, events in zip(sessions, seen, strict=True):
        assert {event.session_id for event in events} == {session.session_id}
        ids = [event.id for event in events]
        assert ids == sorted(set(ids))
    admin_ids = [event.id for event in all_requested]
    assert admin_ids == sorted(set(admin_ids))
    assert {event.id for events in seen for event in events} < set(admin_ids)


async def _until_open_streams(gateway: LiveGateway, count: int) -> None:
    async with httpx.AsyncClient(base_url=gateway.url) as client:
        for _ in range(5000):
            lines = (await client.get("/metrics")).text.splitlines()
            if f"midturn_open_streams {count}" in lines:
                return
    now = [line for line in lines if line.startswith("midturn_open_streams")]
    raise AssertionError(f"the gateway never reported {count} open stream(s): {now}")


async def test_a_stream_the_client_drops_is_released_on_the_server(
    gateway: LiveGateway, session: Session
) -> None:
    await create_ask(gateway, session)
    async with gateway.client(session.answer_token) as answerer:
        for _ in range(3):
            async with answerer.stream(
                "GET", f"/v1/sessions/{session.session_id}/events"
            ) as response:
                lines = response.aiter_lines()
                while not (await asyncio.wait_for(anext(lines), SAFETY_S)).startswith("data:"):
                    pass
                await _until_open_streams(gateway, 1)
            # the client hung up: the server notices at once, not at its next write
            await _until_open_streams(gateway, 0)


async def test_a_quiet_stream_gets_keepalives_and_stays_open(
    start_gateway: StartGateway, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The gateway's one stream clock wakes a stream that has written nothing for the
    # keepalive interval (15 s; shortened here); it writes a comment and goes on.
    monkeypatch.setattr(_stream_clock, "KEEPALIVE_S", 0.3)
    gateway = start_gateway(db_url)
    async with gateway.client() as admin:
        session = (await admin.post("/v1/sessions", json={})).json()
        path = f"/v1/sessions/{session['session_id']}/events"
        async with admin.stream("GET", path) as response:
            lines = response.aiter_lines()
            keepalives = 0
            while keepalives < 2:
                if await asyncio.wait_for(anext(lines), SAFETY_S) == ": keepalive":
                    keepalives += 1
            async with gateway.client(session["agent_token"]) as agent:
                created = await agent.post(
                    f"/v1/sessions/{session['session_id']}/asks",
                    json={"tool_input": ASK, "tool_call_id": "after-keepalives"},
                )
            line = await asyncio.wait_for(anext(lines), SAFETY_S)
            while not line.startswith("data: "):
                line = await asyncio.wait_for(anext(lines), SAFETY_S)
    assert json.loads(line[6:])["interaction_id"] == created.json()["interaction"]["id"]
