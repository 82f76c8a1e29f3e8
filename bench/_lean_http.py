"""A lean HTTP/1.1 client for the benches: one kept-alive connection, each request written
in one write (head and body), each response parsed by `httptools.HttpResponseParser`.

Why not httpx: under `bench/crowd.py` the bench's own httpx clients cost about 1 ms of
CPU per request, as much as the server's share on a 2-core machine, so the crowd's
ratio measured the clients as much as the server (docs/benchmarks.md, stop 26). This
client does what the benches need and nothing else: plain `http://`, no redirects, no
cookies, no proxies, no compression. Status lines, headers and chunked framing are
parsed by httptools (llhttp), never here.

    async with Connection("http://127.0.0.1:8000") as connection:
        response = await connection.request("POST", "/v1/asks/x/answer", json_body={...})
        async with connection.stream("GET", "/v1/events") as events:
            async for line in events.lines():
                ...

Every failure to get a complete response (refused, dropped, timed out, unparsable)
raises `LeanHTTPError`, which the benches count as an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httptools

__all__ = ["Connection", "LeanHTTPError", "Response", "StreamResponse"]

_CHUNK = 1 << 16


class LeanHTTPError(Exception):
    """A request that got no complete response: the connection was refused or dropped,
    the response did not parse, or it took longer than the connection's timeout."""


@dataclass(frozen=True, slots=True)
class Response:
    status_code: int
    headers: dict[str, str]
    """Lowercased names; a repeated header keeps its last value."""
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


class _Reading:
    """The parser's callbacks for one response at a time (httptools calls these from
    `feed_data`): its status and headers, the body pieces not yet taken, whether it is
    complete and whether the connection may be kept (which llhttp answers only until
    the message completes, so it is read then)."""

    __slots__ = ("complete", "headers", "headers_done", "keep_alive", "parser", "pieces", "status")

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.reset()

    def reset(self) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.pieces: list[bytes] = []
        self.headers_done = False
        self.complete = False
        self.keep_alive = False

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.headers_done = True

    def on_body(self, body: bytes) -> None:
        self.pieces.append(body)

    def on_message_complete(self) -> None:
        self.keep_alive = self.parser.should_keep_alive()
        self.complete = True

    def take(self) -> bytes:
        body = b"".join(self.pieces)
        self.pieces.clear()
        return body


class Connection:
    """One HTTP/1.1 connection to `url`'s host and port, kept alive between requests and
    opened again when the server has closed it. One request at a time: a caller that
    needs requests in parallel uses a connection for each. `headers` go with every
    request; `timeout` bounds each request, from the write to the end of the response
    (a stream's is only until its headers)."""

    def __init__(self, url: str, *, headers: dict[str, str] | None = None, timeout: float = 30):
        parts = urlsplit(url)
        if parts.scheme != "http" or parts.hostname is None:
            raise ValueError(f"a plain http://host:port URL is needed, not {url!r}")
        self.host = parts.hostname
        self.port = parts.port or 80
        self.timeout = timeout
        fixed = {"Host": f"{self.host}:{self.port}", **(headers or {})}
        self._fixed = "".join(f"{name}: {value}\r\n" for name, value in fixed.items())
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._reading = _Reading()

    async def __aenter__(self) -> Connection:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def request(
        self,
        method: str,
        target: str,
        *,
        json_body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        """Send one request and read its whole response. A request on a kept connection
        that the server closed before answering any byte of it is sent once more on a
        new connection (the server's keep-alive timeout can close an idle connection
        just as a request goes out)."""
        data = self._encode(method, target, json_body, headers)
        try:
            async with asyncio.timeout(self.timeout):
                for attempt in (1, 2):
                    reused = await self._send(data)
                    try:
                        await self._read_until(lambda: self._reading.complete)
                    except _ClosedBeforeResponse:
                        self._close_soon()
                        if reused and attempt == 1:
                            continue
                        raise LeanHTTPError(
                            f"{method} {target}: the server closed the connection"
                        ) from None
                    break
        except TimeoutError:
            self._close_soon()
            raise LeanHTTPError(f"{method} {target}: no response in {self.timeout} s") from None
        except BaseException:  # an error or a cancellation within a response: never reused
            self._close_soon()
            raise
        return self._finish()

    @contextlib.asynccontextmanager
    async def stream(
        self, method: str, target: str, *, headers: dict[str, str] | None = None
    ) -> AsyncIterator[StreamResponse]:
        """Send one request and yield its response once its headers are in; its body is
        read as it arrives (`StreamResponse.lines`). A stream takes a new connection,
        closed when the block ends, since a stream is rarely read to its end."""
        data = self._encode(method, target, None, headers)
        await self.aclose()
        try:
            try:
                async with asyncio.timeout(self.timeout):
                    await self._send(data)
                    await self._read_until(lambda: self._reading.headers_done)
            except TimeoutError:
                raise LeanHTTPError(
                    f"{method} {target}: no response head in {self.timeout} s"
                ) from None
            except _ClosedBeforeResponse:
                raise LeanHTTPError(
                    f"{method} {target}: the server closed the connection"
                ) from None
            yield StreamResponse(self, self._reading.status, self._reading.headers)
        finally:
            await self.aclose()

    def _encode(
        self, method: str, target: str, json_body: Any, headers: dict[str, str] | None
    ) -> bytes:
        extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
        if json_body is None:
            return f"{method} {target} HTTP/1.1\r\n{self._fixed}{extra}\r\n".encode()
        body = json.dumps(json_body, separators=(",", ":")).encode()
        head = (
            f"{method} {target} HTTP/1.1\r\n{self._fixed}{extra}"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        return head.encode() + body

    async def _send(self, data: bytes) -> bool:
        """Write `data` on the kept connection, or on a new one if there is none or the
        server has closed it; whether the kept one was used."""
        reused = True
        if self._writer is None or self._writer.is_closing() or self._reader_at_eof():
            reused = False
            await self.aclose()
            try:
                self._reader, self._writer = await asyncio.open_connection(
                    self.host, self.port, limit=_CHUNK
                )
            except OSError as error:
                raise LeanHTTPError(f"cannot connect to {self.host}:{self.port}: {error}") from None
            self._reading = _Reading()  # a new parser for a new connection
        self._reading.reset()
        assert self._writer is not None
        self._writer.write(data)  # head and body in one write
        return reused

    def _reader_at_eof(self) -> bool:
        return self._reader is None or self._reader.at_eof()

    async def _read_until(self, done: Callable[[], bool]) -> None:
        """Feed what arrives to the parser until `done()`; `_ClosedBeforeResponse` if the
        connection ends before any byte of the response, `LeanHTTPError` if it ends
        within it or the bytes do not parse."""
        assert self._reader is not None
        got_any = False
        while not done():
            try:
                chunk = await self._reader.read(_CHUNK)
            except OSError as error:
                if not got_any:
                    raise _ClosedBeforeResponse from None
                raise LeanHTTPError(f"the connection broke: {error}") from None
            if not chunk:
                if not got_any:
                    raise _ClosedBeforeResponse
                raise LeanHTTPError("the connection closed within a response")
            got_any = True
            self._feed(chunk)

    def _feed(self, chunk: bytes) -> None:
        try:
            self._reading.parser.feed_data(chunk)
        except httptools.HttpParserError as error:
            raise LeanHTTPError(f"the response did not parse: {error}") from None

    def _finish(self) -> Response:
        reading = self._reading
        response = Response(reading.status, reading.headers, reading.take())
        if not reading.keep_alive:
            self._close_soon()
        return response

    def _close_soon(self) -> None:
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()


class _ClosedBeforeResponse(Exception):
    """The connection ended before the first byte of a response (internal)."""


class StreamResponse:
    """A response whose body is read as it arrives, from `Connection.stream`."""

    def __init__(self, connection: Connection, status_code: int, headers: dict[str, str]):
        self._connection = connection
        self.status_code = status_code
        self.headers = headers

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive (chunked framing removed by the parser),
        until the response ends; `LeanHTTPError` if the connection drops within it."""
        connection = self._connection
        reading = connection._reading
        if reading.pieces:
            yield reading.take()
        reader = connection._reader
        while not reading.complete:
            if reader is None:
                raise LeanHTTPError("the stream's connection is closed")
            try:
                chunk = await reader.read(_CHUNK)
            except OSError as error:
                raise LeanHTTPError(f"the stream broke: {error}") from None
            if not chunk:
                raise LeanHTTPError("the server closed the stream")
            connection._feed(chunk)
            if reading.pieces:
                yield reading.take()

    async def lines(self) -> AsyncIterator[str]:
        """The body's lines as they arrive, without their line ends (an SSE stream's
        `id:`, `event:`, `data:` lines and the blank line that ends each frame)."""
        rest = b""
        async for chunk in self.chunks():
            *whole, rest = (rest + chunk).split(b"\n")
            for line in whole:
                yield line.removesuffix(b"\r").decode()
        if rest:
            yield rest.removesuffix(b"\r").decode()
