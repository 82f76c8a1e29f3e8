"""The benches' lean HTTP/1.1 client (`bench/_lean_http.py`) against real servers: a
small ASGI app on uvicorn (JSON, a chunked body, an SSE stream, `Connection: close`),
and a bare asyncio server that drops a kept connection under a request."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httptools
import pytest
import uvicorn
from bench._lean_http import Connection, LeanHTTPError
from tests._servers import SAFETY_S

Message = dict[str, Any]


def _app(release: asyncio.Event) -> Callable[..., Awaitable[None]]:
    async def app(
        scope: Message,
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        assert scope["type"] == "http"
        path, port = scope["path"], scope["client"][1]
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if path == "/events":
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")],
                }
            )
            await send(
                {
                    "type": "http.response.body",
                    "body": b'id: 1\nevent: a\ndata: {"n": 1}\n\n',
                    "more_body": True,
                }
            )
            await release.wait()  # the client has read the first frame before the rest is sent
            for piece in (b"id: 2\r\nevent: b\r\nda", b'ta: {"n": 2}\r\n\r\n'):
                await send({"type": "http.response.body", "body": piece, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
            return
        if path == "/chunked":  # no length given: uvicorn sends it chunked
            await send({"type": "http.response.start", "status": 200, "headers": []})
            for piece in (b"first,", b"second,", b"third"):
                await send({"type": "http.response.body", "body": piece, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
            return
        headers = dict(scope["headers"])
        payload = json.dumps(
            {
                "method": scope["method"],
                "path": path,
                "query": scope["query_string"].decode(),
                "port": port,
                "auth": headers.get(b"authorization", b"").decode(),
                "got": json.loads(body) if body else None,
            }
        ).encode()
        extra = [(b"connection", b"close")] if path == "/close" else []
        status = 404 if path == "/missing" else 200
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    *extra,
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})

    return app


@pytest.fixture
async def served() -> AsyncIterator[tuple[str, asyncio.Event]]:
    """The app on uvicorn, on a socket that listens before the server starts (so the
    first request waits in the backlog, not in a sleep)."""
    release = asyncio.Event()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    config = uvicorn.Config(
        _app(release), lifespan="off", ws="none", log_level="warning", access_log=False
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", release
    finally:
        release.set()
        server.should_exit = True
        await task
        sock.close()


async def test_a_json_request_and_a_second_on_the_kept_connection(
    served: tuple[str, asyncio.Event],
) -> None:
    url, _ = served
    async with Connection(url, headers={"Authorization": "Bearer t"}) as connection:
        first = await connection.request("POST", "/echo?wait=60", json_body={"a": [1, "é"]})
        second = await connection.request("GET", "/again")
    assert first.status_code == 200
    assert first.headers["content-type"] == "application/json"
    echoed = first.json()
    assert echoed["method"] == "POST"
    assert echoed["query"] == "wait=60"
    assert echoed["auth"] == "Bearer t"
    assert echoed["got"] == {"a": [1, "é"]}
    assert second.json()["path"] == "/again"
    assert second.json()["got"] is None
    assert second.json()["port"] == echoed["port"]  # the same connection, kept alive


async def test_a_chunked_body_is_read_whole(served: tuple[str, asyncio.Event]) -> None:
    url, _ = served
    async with Connection(url) as connection:
        response = await connection.request("GET", "/chunked")
        after = await connection.request("GET", "/after")
    assert response.headers.get("transfer-encoding") == "chunked"
    assert "content-length" not in response.headers
    assert response.body == b"first,second,third"
    assert after.status_code == 200  # the framing ended where the next response begins


async def test_an_error_status_is_a_response_not_an_exception(
    served: tuple[str, asyncio.Event],
) -> None:
    url, _ = served
    async with Connection(url) as connection:
        response = await connection.request("GET", "/missing")
    assert response.status_code == 404
    assert response.json()["path"] == "/missing"


async def test_connection_close_opens_a_new_connection(served: tuple[str, asyncio.Event]) -> None:
    url, _ = served
    async with Connection(url) as connection:
        closing = (await connection.request("GET", "/close")).json()
        after = (await connection.request("GET", "/echo")).json()
    assert after["path"] == "/echo"
    assert after["port"] != closing["port"]


async def test_an_sse_stream_is_delivered_as_it_arrives(served: tuple[str, asyncio.Event]) -> None:
    url, release = served
    connection = Connection(url)
    lines: list[str] = []
    async with (
        asyncio.timeout(SAFETY_S),  # a client that waited for the end would wait forever
        connection.stream("GET", "/events", headers={"Last-Event-ID": "0"}) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        async for line in response.lines():
            lines.append(line)
            if line == "" and len(lines) == 4:
                # the first frame, whole, while the server still holds the rest back
                assert lines == ["id: 1", "event: a", 'data: {"n": 1}', ""]
                release.set()
    assert lines[4:] == ["id: 2", "event: b", 'data: {"n": 2}', ""]


async def test_refused_is_a_lean_http_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    async with Connection(f"http://127.0.0.1:{port}") as connection:
        with pytest.raises(LeanHTTPError, match="cannot connect"):
            await connection.request("GET", "/healthz")


class _Requests:
    """httptools' request callbacks: counts the requests that arrived whole."""

    def __init__(self) -> None:
        self.complete = 0

    def on_message_complete(self) -> None:
        self.complete += 1


async def test_a_kept_connection_dropped_under_a_request_is_retried_once() -> None:
    """The first connection answers one request, then closes under the second without a
    byte of response (as a server's keep-alive timeout can); the client sends the second
    again on a new connection."""
    served_per_connection: list[int] = []
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    answer_on_first = 1

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = not served_per_connection
        requests = _Requests()
        parser = httptools.HttpRequestParser(requests)
        served_per_connection.append(0)
        while chunk := await reader.read(65536):
            parser.feed_data(chunk)
            while requests.complete > served_per_connection[-1]:
                if first and served_per_connection[-1] == answer_on_first:
                    writer.close()
                    return
                served_per_connection[-1] += 1
                writer.write(answer)
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server, Connection(f"http://127.0.0.1:{port}") as connection:
        assert (await connection.request("GET", "/one")).body == b"ok"
        assert (await connection.request("GET", "/two")).body == b"ok"
    assert served_per_connection == [1, 1]


async def test_a_new_connection_dropped_under_a_request_is_an_error() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server, Connection(f"http://127.0.0.1:{port}") as connection:
        with pytest.raises(LeanHTTPError, match="closed the connection"):
            await connection.request("POST", "/answer", json_body={})
