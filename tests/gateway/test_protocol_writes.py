"""A response's head and body leave in one write (`gateway/_protocol_writes.py`), on both
HTTP protocols, and nothing else changes: a stream's head goes out at once, a HEAD
response's head alone, a 100-continue before the body is read, and the head of a
response whose app failed halfway before the connection closes.

Each protocol runs on a transport that records its writes, fed the bytes of a request."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import uvicorn
from uvicorn.server import ServerState

from midturn.gateway._protocol import JsonErrorsH11Protocol
from midturn.gateway._protocol_httptools import JsonErrorsHttpToolsProtocol
from midturn.gateway._protocol_writes import HeadWithBody

App = Callable[[Any, Any, Any], Awaitable[None]]


class _Transport(asyncio.Transport):
    """Records every write (the empty ones asyncio drops are dropped here too)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if data:
            self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 8765)}.get(
            name, default
        )


PROTOCOLS = {"h11": JsonErrorsH11Protocol, "httptools": JsonErrorsHttpToolsProtocol}


@pytest.fixture(params=sorted(PROTOCOLS))
def connect(request: pytest.FixtureRequest) -> Callable[[App], tuple[Any, _Transport]]:
    def connect(app: App) -> tuple[Any, _Transport]:
        config = uvicorn.Config(app, lifespan="off", log_level="warning")
        config.load()
        protocol = PROTOCOLS[request.param](config=config, server_state=ServerState(), app_state={})
        transport = _Transport()
        protocol.connection_made(transport)
        return protocol, transport

    return connect


async def _settle() -> None:
    for _ in range(20):  # the request's task runs, then the protocol's callbacks
        await asyncio.sleep(0)


def _request(method: str = "GET", body: bytes = b"", extra: str = "") -> bytes:
    head = f"{method} / HTTP/1.1\r\nHost: test\r\n{extra}"
    if body or method == "POST":
        head += f"Content-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body


async def _plain(scope: Any, receive: Any, send: Any) -> None:
    await receive()
    body = b'{"ok": true}'
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def test_a_response_of_known_length_is_one_write(connect: Any) -> None:
    protocol, transport = connect(_plain)
    for _ in range(2):  # and the next request on the same connection too
        transport.writes.clear()
        protocol.data_received(_request("POST", b"{}"))
        await _settle()
        assert len(transport.writes) == 1, transport.writes
        head, _, body = transport.writes[0].partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 OK") and b"content-length: 12" in head.lower()
        assert body == b'{"ok": true}'
    assert not transport.closed


async def test_a_stream_s_head_is_written_before_its_first_chunk(connect: Any) -> None:
    go_on = asyncio.Event()

    async def stream(scope: Any, receive: Any, send: Any) -> None:
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await go_on.wait()
        await send({"type": "http.response.body", "body": b"data: 1\n\n", "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    protocol, transport = connect(stream)
    protocol.data_received(_request())
    await _settle()
    assert len(transport.writes) == 1 and transport.writes[0].startswith(b"HTTP/1.1 200 OK")
    assert transport.writes[0].endswith(b"\r\n\r\n")  # the head alone
    go_on.set()
    await _settle()
    assert b"data: 1" in b"".join(transport.writes[1:])


async def test_the_head_of_a_head_request_is_written(connect: Any) -> None:
    protocol, transport = connect(_plain)
    protocol.data_received(_request("HEAD"))
    await _settle()
    assert b"".join(transport.writes).startswith(b"HTTP/1.1 200 OK")
    assert b"".join(transport.writes).endswith(b"\r\n\r\n")  # no body
    assert not transport.closed


async def test_a_100_continue_goes_out_before_the_body_is_read(connect: Any) -> None:
    protocol, transport = connect(_plain)
    request = _request("POST", b"{}", "Expect: 100-continue\r\n")
    head, _, body = request.partition(b"\r\n\r\n")
    protocol.data_received(head + b"\r\n\r\n")
    await _settle()
    assert transport.writes == [b"HTTP/1.1 100 Continue\r\n\r\n"]
    protocol.data_received(body)
    await _settle()
    assert len(transport.writes) == 2 and transport.writes[1].endswith(b'{"ok": true}')


async def test_a_held_head_is_written_before_a_failed_response_closes(connect: Any) -> None:
    async def fails(scope: Any, receive: Any, send: Any) -> None:
        headers = [(b"content-length", b"10")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        raise RuntimeError("the app failed after the head")

    protocol, transport = connect(fails)
    protocol.data_received(_request())
    await _settle()
    assert transport.closed
    assert b"".join(transport.writes).startswith(b"HTTP/1.1 200 OK")


async def test_the_uvicorn_internals_it_writes_through_are_there(
    connect: Any, request: pytest.FixtureRequest
) -> None:
    """`HeadWithBody` leans on uvicorn's protocol internals (pyproject.toml pins uvicorn
    below the next minor for this): the protocol makes a `RequestResponseCycle` per
    request in `handle_events` (h11) / `on_headers_complete` (httptools), the cycle writes
    through its `transport` attribute and sets `response_started`, and the httptools one
    has `chunked_encoding`. A uvicorn where one of them is gone or renamed must fail here,
    by name, not leave the gateway silently taking two writes per response."""
    protocol, transport = connect(_plain)
    protocol.data_received(_request("POST", b"{}"))
    await _settle()
    version = uvicorn.__version__
    cycle = getattr(protocol, "cycle", None)
    assert cycle is not None, f"uvicorn {version}: the protocol keeps no `cycle` per request"
    assert isinstance(cycle.__dict__.get("transport"), HeadWithBody), (
        f"uvicorn {version}: the request's cycle does not write through the HeadWithBody "
        "installed as its `transport` (the protocol's hook or the attribute changed)"
    )
    assert cycle.__dict__.get("response_started") is True, (
        f"uvicorn {version}: the cycle has no `response_started` set once the head is out"
    )
    if request.node.callspec.params["connect"] == "httptools":
        assert cycle.__dict__.get("chunked_encoding") is False, (
            f"uvicorn {version}: the httptools cycle has no `chunked_encoding`"
        )
    assert len(transport.writes) == 1, transport.writes  # and it did its job
