"""The gateway's ASGI wrapper: the body cap, security headers (the web inbox's
Content-Security-Policy) and the access log with request metrics, in one layer so each
request and each streamed chunk passes through one wrapper, not three."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from midturn.gateway._accounting import CSP, EVERY_RESPONSE, account
from midturn.gateway._body_check import body_problem
from midturn.gateway._errors import MAX_BODY_BYTES, PayloadTooLarge
from midturn.gateway._metrics import Metrics

if TYPE_CHECKING:
    from midturn.gateway._express import ExpressLane

__all__ = ["GatewayMiddleware"]


async def _send_json(send: Send, status: int, body: dict[str, Any], *, close: bool = True) -> None:
    """A JSON error sent before the app runs; `close` when the body was not read whole
    (the connection cannot carry another request)."""
    payload = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
    ]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


_WITH_BODY = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_PAGE_RESPONSE = (*EVERY_RESPONSE, (b"content-security-policy", CSP.encode()))


class GatewayMiddleware:
    """The gateway's one ASGI wrapper (one layer, one wrapped `send` per request):

    - the body: a declared `Content-Length` over the cap is refused at once with 413; a
      body is read whole here (counted while read, 413 past the cap) and checked
      (`_body_check.py`: UTF-8, nesting, lone surrogates: 422 `invalid_request`) before
      any route sees it;
    - security headers: every response gets `nosniff` and no referrer (an inbox URL's
      fragment never leaves, but be sure); the web inbox's pages also get a CSP that
      forbids inline script;
    - the access log: one structured line per request with method, path (never the
      query string, which may carry a token), route template, status, duration and the
      caller's role; never a header or a body. It also counts requests for `/metrics`;
    - the express lane (`_express.py`), when given: the round trip's plain requests are
      served there once their body passed the checks, the rest go on to the app. (Most
      of them never get here: the lane serves them in front of the whole stack, doing
      this layer's work itself, `GatewayApp`; here it serves those with no declared
      length, and all of them while FastAPI's telemetry is on.)"""

    def __init__(
        self,
        app: ASGIApp,
        metrics: Metrics,
        limit: int = MAX_BODY_BYTES,
        express: ExpressLane | None = None,
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.limit = limit
        self.express = express

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        path: str = scope.get("path", "")
        extra = _PAGE_RESPONSE if path == "/" or path.startswith("/static/") else EVERY_RESPONSE
        status = 500

        async def wrapped_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message["headers"] = [*message.get("headers", ()), *extra]
            await send(message)

        try:
            declared = _content_length(scope)
            if declared is not None and declared > self.limit:
                await _drain(receive, declared <= DRAIN_BYTES)
                await _send_json(
                    wrapped_send,
                    413,
                    {"error": "payload_too_large", "message": str(PayloadTooLarge(self.limit))},
                )
                return
            if scope.get("method") in _WITH_BODY:
                body = await self._read_body(receive, wrapped_send)
                if body is None:
                    return
                problem = body_problem(body)
                if problem is not None:
                    await _send_json(wrapped_send, 422, _invalid(*problem), close=False)
                    return
                receive = _replay(body, receive)
                if self.express is not None and await self.express.handle(
                    scope, body, receive, wrapped_send
                ):
                    return
            await self.app(scope, receive, wrapped_send)
        finally:
            account(self.metrics, scope, status, started)

    async def _read_body(self, receive: Receive, send: Send) -> bytes | None:
        """The whole request body (at most the cap: h11 holds a declared length to its
        word, a chunked one is counted here), or None once a 413 has been sent."""
        chunks: list[bytes] = []
        received = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None  # the client went away
            chunk = message.get("body", b"")
            received += len(chunk)
            if received > self.limit:
                refusal = {
                    "error": "payload_too_large",
                    "message": str(PayloadTooLarge(self.limit)),
                }
                if message.get("more_body", False):
                    await _drain(receive, True, received)
                await _send_json(send, 413, refusal)
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


DRAIN_BYTES = 1024 * 1024
"""How much of a refused body is read and dropped before the 413 is sent: closing a
socket with unread data in it resets the connection, and the client would then see a
reset, not the 413 (seen with a 70 KB body on loopback). Past this, the reply goes at
once and the reset is the client's to bear."""


async def _drain(receive: Receive, wanted: bool, received: int = 0) -> None:
    """Read and drop the rest of a refused body, at most `DRAIN_BYTES` in all."""
    if not wanted:
        return
    while received <= DRAIN_BYTES:
        message = await receive()
        if message["type"] != "http.request":
            return
        received += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands the app the body already read, then the client's own
    messages (the disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _invalid(path: str, message: str) -> dict[str, Any]:
    return {
        "error": "invalid_request",
        "message": f"the request is malformed: {path} {message}",
        "problems": [{"path": path, "message": message}],
    }


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
