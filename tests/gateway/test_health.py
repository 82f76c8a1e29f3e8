"""The health lane (`gateway/_health.py`) answers `/healthz` exactly as the stack does.

The same requests (the plain probe, and the odd ones the lane must leave to the stack:
a query, HEAD, POST, `/healthz/`, a body) go to a gateway with the lane and to one
without; every status, header, body byte, route-labelled metric and access-log line
must match, durations aside. A spy checks the lane did answer the plain probes, and
stepped aside while FastAPI's telemetry was on. On a real server, on both HTTP
protocols, the bytes on the wire match too, the `date` header aside."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import pytest
from tests.gateway.conftest import ADMIN_TOKEN, StartGateway

from midturn import Runtime, open_store
from midturn.gateway._app import create_app
from midturn.gateway._express import ExpressLane
from midturn.gateway._health import HealthLane

_REQUESTS: list[tuple[str, str, dict[str, Any]]] = [
    ("GET", "/healthz", {}),
    ("GET", "/healthz", {"headers": {"Authorization": "Bearer nope"}}),
    ("GET", "/healthz?x=1", {}),
    ("GET", "/healthz", {"content": b"{}"}),
    ("HEAD", "/healthz", {}),
    ("POST", "/healthz", {"json": {}}),
    ("GET", "/healthz/", {}),
    ("GET", "/healthz", {}),
]


async def _script(client: httpx.AsyncClient) -> list[Any]:
    seen: list[Any] = []
    for method, path, options in _REQUESTS:
        response = await client.request(method, path, **options)
        seen.append((method, path, response.status_code, response.headers.multi_items()))
        seen.append(response.content)
    metrics = (await client.get("/metrics")).text
    seen.append(sorted(line for line in metrics.splitlines() if "route=" in line))
    return seen


async def _run(caplog: pytest.LogCaptureFixture, lane: bool) -> tuple[list[Any], list[Any]]:
    caplog.clear()
    async with open_store("memory://") as store, Runtime(store) as runtime:
        app = create_app(runtime, store=store, admin_token=ADMIN_TOKEN)
        if not lane:
            app.health = None  # type: ignore[attr-defined]
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            seen = await _script(client)
    lines = []
    for record in caplog.records:
        if record.name == "midturn.gateway.access":
            line = dict(getattr(record, "midturn", {}))
            assert line.pop("duration_ms") >= 0
            lines.append(line)
    return seen, lines


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths with queries of the requests the lane answered."""
    answered: list[str] = []
    answer = HealthLane.answer

    async def spy(self: HealthLane, scope: Any, send: Any) -> None:
        answered.append(scope["path"] + scope["query_string"].decode())
        await answer(self, scope, send)

    monkeypatch.setattr(HealthLane, "answer", spy)
    return answered


async def test_the_lane_answers_healthz_as_the_stack_does(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="midturn.gateway.access")
    answered = _spy(monkeypatch)
    with_lane, log_with_lane = await _run(caplog, lane=True)
    assert answered == ["/healthz"] * 3  # the plain probes, a token or not; no odd one
    answered.clear()
    without, log_without = await _run(caplog, lane=False)
    assert answered == []

    assert with_lane == without
    assert log_with_lane == log_without
    assert len(log_without) == len(_REQUESTS) + 1  # and /metrics
    plain = with_lane[0]
    assert plain[2] == 200 and with_lane[1] == b'{"status":"ok"}'
    assert ("x-content-type-options", "nosniff") in plain[3]
    assert 'midturn_http_requests_total{route="/healthz",status="200"} 5' in with_lane[-1]


async def test_the_lane_steps_aside_while_telemetry_is_on(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="midturn.gateway.access")
    answered = _spy(monkeypatch)
    monkeypatch.setattr(ExpressLane, "telemetry_on", lambda self: True)
    on, log_on = await _run(caplog, lane=True)
    assert answered == []
    monkeypatch.undo()
    off, log_off = await _run(caplog, lane=False)
    assert on == off
    assert log_on == log_off


async def _exchange(host: str, port: int, request: bytes, count: int) -> list[bytes]:
    """`count` responses to `request`, sent one after another on one connection."""
    reader, writer = await asyncio.open_connection(host, port)
    responses = []
    try:
        for _ in range(count):
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            body = await reader.readexactly(length)
            lines = [line for line in head.split(b"\r\n") if not line.startswith(b"date:")]
            responses.append(b"\r\n".join(lines) + body)
    finally:
        writer.close()
        await writer.wait_closed()
    return responses


@pytest.mark.parametrize("http", ["h11", "httptools"])
async def test_the_same_bytes_leave_on_the_wire(
    start_gateway: StartGateway, db_url: str, http: str
) -> None:
    pytest.importorskip(http)
    gateway = start_gateway(db_url, http=http)
    app = gateway._server.config.app
    assert isinstance(app.health, HealthLane)
    host, port = gateway.url.removeprefix("http://").split(":")
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    ours = await _exchange(host, int(port), request, 2)
    lane, app.health = app.health, None
    try:
        theirs = await _exchange(host, int(port), request, 2)
    finally:
        app.health = lane
    assert ours == theirs
    assert ours[0].startswith(b"HTTP/1.1 200 OK\r\n")
    assert ours[0].endswith(b'\r\n\r\n{"status":"ok"}')


async def test_responses_name_no_server_and_carry_a_date(
    start_gateway: StartGateway, db_url: str
) -> None:
    gateway = start_gateway(db_url)
    host, port = gateway.url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        head = (await reader.readuntil(b"\r\n\r\n")).lower()
    finally:
        writer.close()
        await writer.wait_closed()
    assert head.startswith(b"http/1.1 200 ok\r\n")
    assert b"\r\nserver:" not in head
    assert b"\r\ndate: " in head
