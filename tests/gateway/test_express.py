"""The express lane (`gateway/_express.py`) answers exactly as the FastAPI routes do.

The same script of requests (plain round trips, repeats, refusals of every kind, bodies
and queries the lane must leave to FastAPI) runs against a gateway with the lane and one
without; every status, JSON body, route-labelled metric and access-log line must match,
ids and times aside. A spy checks the lane did serve the plain requests."""

from __future__ import annotations

import logging
import re
from typing import Any

import httpx
import pytest
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
        seen.append((method, _IDS.sub("*", path), response.status_code, _normal(body)))
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
    await call("POST", asks, json=plain)  # no token
    await call("POST", asks, json=plain, headers={"Authorization": "Bearer nope"})
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


async def test_the_lane_answers_every_request_as_the_routes_do(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="midturn.gateway.access")
    served: list[str] = []
    handle = ExpressLane.handle

    async def spy(self: ExpressLane, scope: Any, *args: Any) -> bool:
        done = await handle(self, scope, *args)
        if done:
            served.append(scope["path"])
        return done

    monkeypatch.setattr(ExpressLane, "handle", spy)
    with_lane, log_with = await _run(caplog)

    async def never(self: ExpressLane, *args: Any) -> bool:
        return False

    monkeypatch.setattr(ExpressLane, "handle", never)
    without, log_without = await _run(caplog)

    assert len(with_lane) == len(without)
    for ours, theirs in zip(with_lane, without, strict=True):
        assert ours == theirs
    assert log_with == log_without and len(log_with) >= len(with_lane) - 1
    # the plain creates and answers, and their refusals by the runtime or the token
    assert len(served) >= 14, served
