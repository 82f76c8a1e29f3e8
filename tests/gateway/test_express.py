"""The express lane (`gateway/_express.py`) answers exactly as the FastAPI routes do.

The same script of requests (plain round trips, repeats, refusals of every kind, bodies
and queries the lane must leave to FastAPI) runs against a gateway with the lane and one
without; every status, JSON body, route-labelled metric and access-log line must match,
ids and times aside. A spy checks the lane did serve the plain requests."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.responses import Response
from tests.gateway.conftest import ADMIN_TOKEN, ANSWER, ASK

from midturn import Runtime, open_store
from midturn.gateway._app import create_app
from midturn.gateway._express import ExpressLane

_VOLATILE = {
    "id",
    "interaction_id",
    "session_id",
    "turn_id",
    "created_at",
    "settled_at",
    "agent_token",
    "answer_token",
    "answer_url",
    "duration_ms",
    "deadline",
}
_IDS = re.compile(r"(ia|s)_[A-Za-z0-9_-]{8,}|~ia_[A-Za-z0-9_-]+")


def _normal(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "*" if k in _VOLATILE else _normal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, str):
        return _IDS.sub("*", value)
    return value


async def _script(client: httpx.AsyncClient) -> list[Any]:
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    seen: list[Any] = []

    async def call(method: str, path: str, **options: Any) -> httpx.Response:
        response = await client.request(method, path, **options)
        body = response.json() if response.content else None
        headers = [
            (name, _IDS.sub("*", value))
            for name, value in response.headers.multi_items()
            if name != "content-length"
        ]
        seen.append((method, _IDS.sub("*", path), response.status_code, headers, _normal(body)))
        return response

    made = (await call("POST", "/v1/sessions", json={}, headers=admin)).json()
    other = (await call("POST", "/v1/sessions", json={}, headers=admin)).json()
    sid = made["session_id"]
    agent = {"Authorization": f"Bearer {made['agent_token']}"}
    answerer = {"Authorization": f"Bearer {made['answer_token']}"}
    asks = f"/v1/sessions/{sid}/asks"
    plain = {"tool_input": ASK, "turn_id": "t1", "tool_call_id": "c1"}

    first = (await call("POST", asks, json=plain, headers=agent)).json()
    await call("POST", asks, json=plain, headers=agent)  # the same tool call: 200
    await call(
        "POST", asks, json={**plain, "tool_call_id": "c2"}, params={"wait": "0.05"}, headers=agent
    )
    for query in ("wait=abc", "wait=61", "wait=-1", "wait=0&x=1", "wait=1&wait=2", "x=1"):
        await call("POST", f"{asks}?{query}", json={**plain, "tool_call_id": None}, headers=agent)
    await call(
        "POST", asks, content=b'{"tool_input": {}}', headers={**agent, "content-type": "text/plain"}
    )
    await call(
        "POST",
        asks,
        content=b'{"tool_input": 1',
        headers={**agent, "content-type": "application/json"},
    )
    await call("POST", asks, content=b"", headers={**agent, "content-type": "application/json"})
    await call("POST", asks, json={"turn_id": "t1"}, headers=agent)  # no tool_input
    await call("POST", asks, json={**plain, "extra": 1}, headers=agent)
    await call("POST", asks, json={**plain, "turn_id": "bad turn"}, headers=agent)
    await call("POST", asks, json={**plain, "tool_call_id": "", "turn_id": 0}, headers=agent)
    await call("POST", asks, json={"tool_input": {"questions": []}}, headers=agent)  # invalid ask
    await call("POST", asks, json=[plain], headers=agent)
    as_json = {**agent, "content-type": "application/json"}
    # bodies the middleware refuses before any route: not UTF-8, too deep, too large
    await call("POST", asks, content=b'{"tool_input": "\xff"}', headers=as_json)
    await call("POST", asks, content=b"[" * 70 + b"]" * 70, headers=as_json)
    await call("POST", asks, content=b'{"tool_input": "' + b"x" * 70_000 + b'"}', headers=as_json)

    async def chunked() -> AsyncIterator[bytes]:  # no declared length: past the front
        yield json.dumps({**plain, "tool_call_id": "c3"}).encode()

    await call("POST", asks, content=chunked(), headers=as_json)
    await call("POST", asks, json=plain)  # no token
    await call("POST", asks, json=plain, headers={"Authorization": "Bearer nope"})
    for authorization in ("Basic abc", "Bearer   ", "bearer " + made["agent_token"], ""):
        await call("POST", asks, json=plain, headers={"Authorization": authorization})
    twice = [("authorization", f"Bearer {made['agent_token']}"), ("authorization", "Bearer x")]
    await call("POST", asks, json={**plain, "tool_call_id": "c4"}, headers=twice)
    await call("POST", asks, json=plain, headers=twice[::-1])
    await call("POST", asks, json=plain, headers=answerer)
    await call("POST", f"/v1/sessions/{other['session_id']}/asks", json=plain, headers=agent)
    await call("POST", "/v1/sessions/s_missing/asks", json=plain, headers=admin)
    await call("POST", f"/v1/sessions/{'x' * 201}/asks", json=plain, headers=admin)
    await call("POST", f"/v1/sessions/{sid}/asks/", json=plain, headers=agent)

    answer = f"/v1/asks/{first['interaction']['id']}/answer"
    await call("POST", answer, json=ANSWER, headers=agent)  # the agent cannot answer
    await call(
        "POST", answer, content=b"", headers={**answerer, "content-type": "application/json"}
    )
    await call(
        "POST", answer, content=b"{", headers={**answerer, "content-type": "application/json"}
    )
    await call("POST", answer, json={"answers": {"db": 7}}, headers=answerer)
    await call("POST", answer, json=ANSWER, headers=answerer)
    await call("POST", answer, json=ANSWER, headers=answerer)  # the same again: duplicate
    await call("POST", answer, json={"answers": {"db": "SQLite"}}, headers=answerer)  # 409
    await call("POST", f"{answer}?x=1", json=ANSWER, headers=answerer)
    await call("POST", "/v1/asks/ia_missing/answer", json=ANSWER, headers=answerer)
    await call("POST", f"/v1/asks/{'y' * 201}/answer", json=ANSWER, headers=admin)
    permission = (
        await call(
            "POST",
            f"/v1/sessions/{sid}/permissions",
            json={"tool": "bash", "summary": "ls", "turn_id": "t1"},
            headers=agent,
        )
    ).json()
    await call(
        "POST", f"/v1/asks/{permission['interaction']['id']}/answer", json=ANSWER, headers=admin
    )
    metrics = (await client.get("/metrics")).text
    seen.append(
        sorted(line for line in metrics.splitlines() if "route=" in line and "duration" not in line)
    )
    return seen


async def _run(caplog: pytest.LogCaptureFixture) -> tuple[list[Any], list[Any]]:
    caplog.clear()
    async with open_store("memory://") as store, Runtime(store) as runtime:
        app = create_app(runtime, store=store, admin_token=ADMIN_TOKEN)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            seen = await _script(client)
    lines = [
        _normal(getattr(r, "midturn", None))
        for r in caplog.records
        if r.name == "midturn.gateway.access"
    ]
    return seen, lines


def _spy_on_the_lane(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """Where the lane served each request it served: (path, in front of the stack)."""
    served: list[tuple[str, bool]] = []
    respond, front = ExpressLane.respond, ExpressLane.front
    in_front: list[bool] = []

    async def front_spy(self: ExpressLane, *args: Any) -> None:
        in_front.append(True)
        try:
            await front(self, *args)
        finally:
            in_front.pop()

    async def respond_spy(self: ExpressLane, scope: Any, *args: Any) -> Response | None:
        response = await respond(self, scope, *args)
        if response is not None:
            served.append((_IDS.sub("*", scope["path"]), bool(in_front)))
        return response

    monkeypatch.setattr(ExpressLane, "respond", respond_spy)
    monkeypatch.setattr(ExpressLane, "front", front_spy)
    return served


async def test_the_lane_answers_every_request_as_the_routes_do(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="midturn.gateway.access")
    served = _spy_on_the_lane(monkeypatch)
    in_front, log_in_front = await _run(caplog)
    # the plain creates and answers, and their refusals by the runtime or the token
    assert len(served) >= 14, served
    # all in front of the stack but the one with no declared length
    assert [path for path, up_front in served if not up_front] == ["/v1/sessions/*/asks"]

    # FastAPI's telemetry on: the lane steps aside, to serve inside the middleware stack
    monkeypatch.setattr(ExpressLane, "telemetry_on", lambda self: True)
    served_in_front, served[:] = served[:], []
    inside, log_inside = await _run(caplog)
    assert [path for path, _ in served] == [path for path, _ in served_in_front]
    assert not any(up_front for _, up_front in served)

    async def never(self: ExpressLane, *args: Any) -> None:
        return None

    monkeypatch.setattr(ExpressLane, "respond", never)
    without, log_without = await _run(caplog)

    assert len(in_front) == len(inside) == len(without)
    for front, within, theirs in zip(in_front, inside, without, strict=True):
        assert front == theirs
        assert within == theirs
    assert log_in_front == log_inside == log_without
    assert len(log_without) >= len(without) - 1


async def _crash(caplog: pytest.LogCaptureFixture) -> tuple[list[Any], list[Any]]:
    """An answer whose runtime call fails in a way no handler knows: what the client
    gets, what the server is told, and what is logged."""
    caplog.clear()
    async with open_store("memory://") as store, Runtime(store) as runtime:
        app = create_app(runtime, store=store, admin_token=ADMIN_TOKEN)
        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        seen: list[Any] = []
        for raising in (False, True):
            transport = httpx.ASGITransport(app=app, raise_app_exceptions=raising)
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
                made = (await client.post("/v1/sessions", json={}, headers=admin)).json()
                agent = {"Authorization": f"Bearer {made['agent_token']}"}
                asked = await client.post(
                    f"/v1/sessions/{made['session_id']}/asks",
                    json={"tool_input": ASK},
                    headers=agent,
                )
                answer = f"/v1/asks/{asked.json()['interaction']['id']}/answer"
                try:
                    response = await client.post(answer, json=ANSWER, headers=admin)
                except RuntimeError as error:
                    seen.append(("raised", str(error)))
                else:
                    headers = sorted(response.headers.multi_items())
                    seen.append((response.status_code, headers, response.json()))
                if raising:
                    metrics = (await client.get("/metrics")).text
        seen.append(sorted(line for line in metrics.splitlines() if 'status="500"' in line))
    lines = [
        (r.name, r.levelname, _normal(getattr(r, "midturn", None) or r.getMessage()))
        for r in caplog.records
        if r.name.startswith("midturn.gateway")
    ]
    return seen, lines


async def test_an_error_no_handler_knows_is_answered_and_raised_as_the_stack_does(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="midturn.gateway")

    async def fails(self: Runtime, *args: Any, **options: Any) -> Any:
        raise RuntimeError("the store fell over")

    monkeypatch.setattr(Runtime, "answer", fails)
    served = _spy_on_the_lane(monkeypatch)
    crash, crashed = ExpressLane._crash, []

    async def crash_spy(self: ExpressLane, scope: Any, *args: Any) -> None:
        crashed.append(scope["path"])
        await crash(self, scope, *args)

    monkeypatch.setattr(ExpressLane, "_crash", crash_spy)
    in_front, log_in_front = await _crash(caplog)
    assert len(crashed) == 2  # the two answers, in front of the stack
    assert served == [("/v1/sessions/*/asks", True)] * 2  # the answers raised
    assert in_front[1] == ("raised", "the store fell over")
    assert in_front[0][0] == 500 and in_front[0][2]["error"] == "internal_error"
    assert any("internal error on POST" in str(line) for line in log_in_front)

    async def never(self: ExpressLane, *args: Any) -> None:
        return None

    monkeypatch.setattr(ExpressLane, "respond", never)
    without, log_without = await _crash(caplog)
    assert in_front == without
    assert log_in_front == log_without
