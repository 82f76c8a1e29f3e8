"""Small ASGI wrappers: the body cap, the access log with metrics, and the web inbox's
Content-Security-Policy. Each does one thing."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from midturn.gateway._errors import MAX_BODY_BYTES, PayloadTooLarge
from midturn.gateway._metrics import Metrics

__all__ = ["AccessLogMiddleware", "BodyLimitMiddleware", "SecurityHeadersMiddleware"]

access_log = logging.getLogger("midturn.gateway.access")

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)


class BodyLimitMiddleware:
    """Refuse bodies over the cap: at once from `Content-Length`, or while reading a
    chunked body (the route then fails with `PayloadTooLarge` → 413)."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > self.limit:
                    await _send_json(
                        send,
                        413,
                        {"error": "payload_too_large", "message": str(PayloadTooLarge(self.limit))},
                    )
                    return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise PayloadTooLarge(self.limit)
            return message

        await self.app(scope, limited_receive, send)


async def _send_json(send: Send, status: int, body: dict[str, Any]) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class AccessLogMiddleware:
    """One structured log line per request: method, path (never the query string, which
    may carry a token), route template, status, duration and the caller's role. Never a
    header or a body. Also counts requests for `/metrics`."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def recording_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, recording_send)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            self.metrics.count_request(template, status)
            if access_log.isEnabledFor(logging.INFO):
                self._log(scope, template, status, started)

    @staticmethod
    def _log(scope: Scope, template: str, status: int, started: float) -> None:
        state = scope.get("state") or {}
        access_log.info(
            "%s %s %s",
            scope.get("method"),
            scope.get("path"),
            status,
            extra={
                "midturn": {
                    "method": scope.get("method"),
                    "path": scope.get("path"),
                    "route": template,
                    "status": status,
                    "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                    "role": state.get("role"),
                }
            },
        )


class SecurityHeadersMiddleware:
    """The web inbox's pages get a CSP that forbids inline script; every response gets
    `nosniff` and no referrer (an inbox URL's fragment never leaves, but be sure)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        is_page = path == "/" or path.startswith("/static/")

        async def secured_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"x-content-type-options", b"nosniff"))
                headers.append((b"referrer-policy", b"no-referrer"))
                if is_page:
                    headers.append((b"content-security-policy", CSP.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, secured_send)
