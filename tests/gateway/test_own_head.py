"""A response head the gateway built itself (`OWN_HEAD`, the express lane's) goes to h11
as already checked on the h11 protocol, and leaves as the very bytes the same head gets
through uvicorn's own path (`gateway/_protocol.py`)."""

from __future__ import annotations

import json
from typing import Any

import h11._events
import httpx
import pytest
import uvicorn
from tests.gateway.conftest import ADMIN_TOKEN, ASK
from tests.gateway.test_protocol_writes import _request, _settle, _Transport
from uvicorn.server import ServerState

from midturn import Runtime, open_store
from midturn.gateway._app import create_app
from midturn.gateway._protocol import JsonErrorsH11Protocol
from midturn.gateway._protocol_state import OWN_HEAD

BODY = b'{"interaction": {}}'
HEADERS = [
    (b"content-length", b"%d" % len(BODY)),
    (b"content-type", b"application/json"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]


def _app(own: bool) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        start = {"type": "http.response.start", "status": 201, "headers": HEADERS}
        await send({**start, OWN_HEAD: True} if own else start)
        await send({"type": "http.response.body", "body": BODY})

    return app


async def _written(own: bool, extra: str = "") -> list[bytes]:
    config = uvicorn.Config(_app(own), lifespan="off", log_level="warning", access_log=False)
    config.load()
    state = ServerState()
    state.default_headers = [(b"server", b"test"), (b"date", b"Tue, 01 Dec 2026 00:00:00 GMT")]
    protocol = JsonErrorsH11Protocol(config=config, server_state=state, app_state={})
    transport = _Transport()
    protocol.connection_made(transport)
    for _ in range(2):  # and the next request on the same connection
        protocol.data_received(_request("POST", b"{}", extra))
        await _settle()
        if transport.closed:
            break
    return transport.writes


@pytest.mark.parametrize("extra", ["", "Connection: close\r\n"])
async def test_an_own_head_leaves_as_the_same_bytes(extra: str) -> None:
    ours, theirs = await _written(True, extra), await _written(False, extra)
    assert ours == theirs
    assert ours[0].startswith(b"HTTP/1.1 201 Created\r\nserver: test\r\n")
    assert len(ours) == (1 if extra else 2)  # keep-alive serves the second request


async def test_only_an_own_head_skips_h11s_check_of_each_header(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checked: list[bool] = []
    normalize = h11._events.normalize_and_validate

    def recording(headers: Any, _parsed: bool = False) -> Any:
        checked.append(_parsed)
        return normalize(headers, _parsed=_parsed)

    monkeypatch.setattr(h11._events, "normalize_and_validate", recording)
    await _written(True)
    assert checked == [True, True, True, True]  # request, response, request, response
    checked.clear()
    await _written(False)
    assert checked == [True, False, True, False]


async def _starts(app: Any, path: str, body: Any, token: str) -> list[Any]:
    """The `http.response.start` messages the app sends for one JSON POST."""
    raw = json.dumps(body).encode()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"test"),
            (b"content-type", b"application/json"),
            (b"content-length", b"%d" % len(raw)),
            (b"authorization", f"Bearer {token}".encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("test", 80),
        "state": {},
    }
    sent: list[Any] = []

    async def receive() -> Any:
        return {"type": "http.request", "body": raw, "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return [message for message in sent if message["type"] == "http.response.start"]


async def test_the_express_lane_marks_only_the_heads_it_built() -> None:
    async with open_store("memory://") as store, Runtime(store) as runtime:
        app = create_app(runtime, store=store, admin_token=ADMIN_TOKEN)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
            made = (await client.post("/v1/sessions", json={}, headers=admin)).json()
        asks = f"/v1/sessions/{made['session_id']}/asks"
        (created,) = await _starts(app, asks, {"tool_input": ASK}, made["agent_token"])
        (refused,) = await _starts(
            app, asks, {"tool_input": {"questions": []}}, made["agent_token"]
        )
    assert created["status"] == 201 and created[OWN_HEAD] is True
    assert refused["status"] == 422 and not refused.get(OWN_HEAD)
