"""Event streams filtered by type (`?types=`): the replay, the live events, `tail`, and
`Last-Event-ID` resume all keep to the types asked for, with the log's own ids; the
control frames still come; an unknown type is a 422; who may follow what is unchanged."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from midturn.client import AsyncClient, Client
from midturn.errors import GatewayError
from midturn.gateway import _stream_clock

from .conftest import (
    ANSWER,
    SAFETY_S,
    LiveGateway,
    Session,
    StartGateway,
    create_ask,
    next_event,
)
from .test_sse import _frames, _read
from .test_stream_bounds import (
    Stalled,
    _publish,
    _read_response,
    _sentinel,
    _until_metric,
    stalled,
)
from .test_stream_bounds import _frames as _body_frames

__all__ = ["stalled"]  # the fixture, used here as in test_stream_bounds

REQUESTED = "user_question_requested"
ANSWERED = "user_question_answered"


async def _answer(gateway: LiveGateway, session: Session, ask: dict[str, Any]) -> None:
    async with gateway.client(session.answer_token) as answerer:
        response = await answerer.post(f"/v1/asks/{ask['id']}/answer", json=ANSWER)
    assert response.status_code == 200, response.text


async def test_the_replay_and_the_live_events_keep_to_the_types(
    gateway: LiveGateway, session: Session
) -> None:
    first = await create_ask(gateway, session, "call-1")
    second = await create_ask(gateway, session, "call-2")
    await _answer(gateway, session, first)
    path = f"/v1/sessions/{session.session_id}/events"
    async with (
        gateway.client(session.answer_token) as answerer,
        answerer.stream("GET", path, params={"types": ANSWERED}) as response,
    ):
        frames = _frames(response)
        replayed = await asyncio.wait_for(anext(frames), SAFETY_S)
        # live: a new ask (not wanted) comes before the answer (wanted)
        third = await create_ask(gateway, session, "call-3")
        await _answer(gateway, session, second)
        live = await asyncio.wait_for(anext(frames), SAFETY_S)
        await _answer(gateway, session, third)
        after = await asyncio.wait_for(anext(frames), SAFETY_S)
        await frames.aclose()

    assert [replayed["event"], live["event"], after["event"]] == [ANSWERED] * 3
    assert [f["data"]["interaction_id"] for f in (replayed, live, after)] == [
        first["id"],
        second["id"],
        third["id"],
    ]
    # the ids are the log's own: the third ask's request lies between the first two
    ids = [int(f["id"]) for f in (replayed, live, after)]
    assert ids == [f["data"]["id"] for f in (replayed, live, after)]
    assert ids[0] + 1 < ids[1] < ids[2]


async def test_comma_separated_repeated_and_empty_forms(
    gateway: LiveGateway, session: Session
) -> None:
    for index in range(3):
        ask = await create_ask(gateway, session, f"call-{index}")
        await _answer(gateway, session, ask)
    path = f"/v1/sessions/{session.session_id}/events"
    forms: list[Any] = [
        {"types": f"{REQUESTED},{ANSWERED}"},
        [("types", REQUESTED), ("types", ANSWERED)],
        {"types": f" {ANSWERED} , ,{REQUESTED}"},
        {},
        {"types": ""},
        {"types": ","},
    ]
    seen: list[list[tuple[str, str]]] = []
    async with gateway.client(session.answer_token) as answerer:
        for params in forms:
            async with answerer.stream("GET", path, params=params) as response:
                assert response.status_code == 200
                frames = await _read(response, 6)
            seen.append([(frame["id"], frame["event"]) for frame in frames])

    both, repeated, spaced, unfiltered, empty, commas = seen
    assert both == repeated == spaced
    assert [event for _, event in both] == [REQUESTED, ANSWERED] * 3
    assert unfiltered == empty == commas  # no type named: every type
    assert {event for _, event in unfiltered} > {REQUESTED, ANSWERED}


async def test_tail_is_the_newest_events_of_the_types(
    gateway: LiveGateway, session: Session
) -> None:
    # one ask at a time is put to the person: each is requested once the one before
    # it is answered, so the requested events come in the asks' order
    asks = [await create_ask(gateway, session, f"call-{index}") for index in range(4)]
    for ask in asks:
        await _answer(gateway, session, ask)
    path = f"/v1/sessions/{session.session_id}/events"
    async with gateway.client() as admin:
        for stream_path in (path, "/v1/events"):
            params = {"tail": 2, "types": REQUESTED}
            async with admin.stream("GET", stream_path, params=params) as response:
                frames = _frames(response)
                window = [await asyncio.wait_for(anext(frames), SAFETY_S) for _ in range(2)]
                fresh = await create_ask(gateway, session, f"live-{len(asks)}")
                live = await asyncio.wait_for(anext(frames), SAFETY_S)
                await frames.aclose()
            assert [f["event"] for f in window] == [REQUESTED, REQUESTED]
            assert [f["data"]["interaction_id"] for f in window] == [a["id"] for a in asks[-2:]]
            assert live["event"] == REQUESTED and live["data"]["interaction_id"] == fresh["id"]
            await _answer(gateway, session, fresh)
            asks.append(fresh)  # the newest requested now


async def test_last_event_id_resumes_a_filtered_stream(
    gateway: LiveGateway, session: Session
) -> None:
    first = await create_ask(gateway, session, "call-1")
    path = f"/v1/sessions/{session.session_id}/events"
    params = {"types": REQUESTED}
    async with gateway.client(session.answer_token) as answerer:
        async with answerer.stream("GET", path, params=params) as response:
            [seen] = await _read(response, 1)
        # gone; meanwhile an answer (not wanted) and two asks (wanted)
        await _answer(gateway, session, first)
        later = [await create_ask(gateway, session, f"call-{n}") for n in (2, 3)]
        headers = {"Last-Event-ID": seen["id"]}
        async with answerer.stream("GET", path, params=params, headers=headers) as response:
            resumed = await _read(response, 2)

    assert seen["data"]["interaction_id"] == first["id"]
    assert [f["event"] for f in resumed] == [REQUESTED, REQUESTED]
    assert [f["data"]["interaction_id"] for f in resumed] == [ask["id"] for ask in later]
    assert int(resumed[0]["id"]) > int(seen["id"])


@pytest.mark.parametrize("types", ["no_such_type", f"{REQUESTED},nope", "Turn_Waiting"])
async def test_an_unknown_type_is_a_clear_422_on_both_routes(
    gateway: LiveGateway, session: Session, types: str
) -> None:
    async with gateway.client() as admin:
        for path in (f"/v1/sessions/{session.session_id}/events", "/v1/events"):
            response = await admin.get(path, params={"types": types})
            assert response.status_code == 422, response.text
            body = response.json()
            assert body["error"] == "invalid_request"
            unknown = types.split(",")[-1]
            assert f"unknown event type {unknown!r}" in body["message"]
            assert REQUESTED in body["message"]  # it says what the types are
            assert [problem["path"] for problem in body["problems"]] == ["query.types"]


async def test_who_may_follow_what_is_unchanged_by_a_filter(
    gateway: LiveGateway, session: Session, new_session: Any
) -> None:
    other = await new_session()
    own = f"/v1/sessions/{session.session_id}/events"
    cases = [
        (session.agent_token, own, {"types": REQUESTED}, 403),
        (other.answer_token, own, {"types": REQUESTED}, 403),
        (session.answer_token, "/v1/events", {"types": REQUESTED}, 403),
        # the permission is checked before the filter: no 422 to someone refused
        (session.answer_token, "/v1/events", {"types": "nope"}, 403),
        (None, own, {"types": REQUESTED}, 401),
        ("wrong-token", "/v1/events", {"types": REQUESTED}, 401),
    ]
    for token, path, params, status in cases:
        async with gateway.client(token) as caller:
            response = await caller.get(path, params=params)
        assert response.status_code == status, (path, params, response.text)


async def test_a_filtered_quiet_stream_still_gets_keepalives(
    start_gateway: StartGateway, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_stream_clock, "KEEPALIVE_S", 0.3)
    gateway = start_gateway(db_url)
    async with gateway.client() as admin:
        session = Session(**(await admin.post("/v1/sessions", json={})).json())
        params = {"types": ANSWERED}
        async with admin.stream("GET", "/v1/events", params=params) as response:
            lines = response.aiter_lines()
            ask = await create_ask(gateway, session, "not-wanted")  # its events are passed over
            keepalives = 0
            while keepalives < 2:
                line = await asyncio.wait_for(anext(lines), SAFETY_S)
                assert not line.startswith("data: "), line
                keepalives += line == ": keepalive"
            await _answer(gateway, session, ask)
            line = await asyncio.wait_for(anext(lines), SAFETY_S)
            while not line.startswith("data: "):
                line = await asyncio.wait_for(anext(lines), SAFETY_S)
    event = json.loads(line[6:])
    assert (event["type"], event["interaction_id"]) == (ANSWERED, ask["id"])


async def test_a_filtered_stream_that_falls_behind_ends_with_stream_dropped(
    start_gateway: StartGateway, db_url: str, stalled: Stalled
) -> None:
    gateway = start_gateway(db_url, stream_buffer_bytes=64 * 1024)
    sock = stalled(gateway.port, f"/v1/events?types={REQUESTED}")
    async with gateway.client() as admin:
        await _until_metric(admin, "midturn_open_streams", 1)
        await _publish(admin, 40)
        await _until_metric(admin, "midturn_streams_dropped_total", 1)
        sentinel = await _sentinel(admin)
        body = await asyncio.to_thread(_read_response, sock)
        sock.close()
        *events, last = _body_frames(body.decode())
        assert {frame["event"] for frame in events} == {REQUESTED}
        assert last["event"] == "stream_dropped" and "id" not in last
        resume = json.loads(last["data"])["last_event_id"]
        assert resume == int(events[-1]["id"])

        # resumed with the same filter: the rest of the asks, once each, nothing else
        headers = {"Last-Event-ID": str(resume)}
        params = {"types": REQUESTED}
        async with admin.stream("GET", "/v1/events", params=params, headers=headers) as response:
            frames = _frames(response)
            later: list[dict[str, Any]] = []
            while not later or later[-1]["data"]["interaction_id"] != sentinel:
                later.append(await asyncio.wait_for(anext(frames), SAFETY_S))
            await frames.aclose()
    assert {frame["event"] for frame in later} == {REQUESTED}
    assert len(events) + len(later) == 41  # the 40 asks and the sentinel
    ids = [int(frame["id"]) for frame in later]
    assert ids == sorted(ids) and ids[0] > resume


async def test_the_async_client_follows_only_the_types_it_names(
    gateway: LiveGateway, session: Session
) -> None:
    first = await create_ask(gateway, session, "call-1")
    async with AsyncClient(gateway.url, session.answer_token) as answerer:
        stream = answerer.events(session.session_id, types=[ANSWERED])
        await _answer(gateway, session, first)
        answered = await next_event(stream, ANSWERED, REQUESTED, "turn_waiting", "turn_resumed")
        second = await create_ask(gateway, session, "call-2")
        await _answer(gateway, session, second)
        again = await next_event(stream, ANSWERED, REQUESTED, "turn_waiting", "turn_resumed")
        await stream.aclose()

        with pytest.raises(GatewayError) as refused:
            await anext(answerer.events(session.session_id, types=["nope"]))  # type: ignore[list-item]
    assert (answered.type, answered.interaction_id) == (ANSWERED, first["id"])
    assert (again.type, again.interaction_id) == (ANSWERED, second["id"])
    assert refused.value.status_code == 422 and "nope" in str(refused.value)


async def test_the_sync_client_takes_the_same_filter(
    gateway: LiveGateway, session: Session
) -> None:
    asks = [await create_ask(gateway, session, f"call-{index}") for index in range(2)]

    def follow() -> list[tuple[str, str | None]]:
        with Client(gateway.url, session.answer_token) as answerer:
            stream = answerer.events(session.session_id, types=[REQUESTED])
            got = [next(stream), next(stream)]
            stream.close()
        return [(event.type, event.interaction_id) for event in got]

    got = await asyncio.wait_for(asyncio.to_thread(follow), SAFETY_S)
    assert got == [(REQUESTED, ask["id"]) for ask in asks]
