"""The health lane: a plain `GET /healthz` answered in front of the ASGI stack.

A load balancer's or a monitor's probe asks `/healthz` often, and its answer never
changes. Through the whole stack (Starlette's error middleware, FastAPI's telemetry,
routing and serialization layers, `GatewayMiddleware`'s wrapped `send`) each one cost
about 1 ms of server CPU under the crowd of docs/benchmarks.md, a quarter of the
server's CPU there. The lane sends the very response the stack sends (the same status,
body and headers, the security headers included) and accounts for it as the middleware
does: the request's count for `/metrics` and its access-log line, under the route's
template.

It takes only what it knows the stack answers so: a GET of exactly `/healthz`, with no
query, no root path and no body framing (`Content-Length`, `Transfer-Encoding`). Any
other request (a HEAD, a POST, `/healthz/`, a query) goes to the stack untouched, as
does every request while FastAPI's own telemetry is on, so each one is traced there.
A test holds the lane's answer to the stack's (tests/gateway/test_health.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from fastapi.routing import APIRoute
from starlette.types import Scope, Send

from midturn.gateway._accounting import EVERY_RESPONSE, account
from midturn.gateway._metrics import Metrics
from midturn.gateway._protocol_state import OWN_HEAD

__all__ = ["HEALTH_PATH", "HealthLane"]

HEALTH_PATH = "/healthz"
BODY = b'{"status":"ok"}'  # the route's `{"status": "ok"}` as FastAPI serializes it
HEADERS = (
    (b"content-length", b"%d" % len(BODY)),
    (b"content-type", b"application/json"),
    *EVERY_RESPONSE,
)
_FRAMING = (b"content-length", b"transfer-encoding")


class HealthLane:
    """Answers the plain `GET /healthz` (`takes`) in front of the app's stack (`answer`)
    for `route`, the app's own `/healthz` route (its template labels the metrics and the
    access log); `telemetry_on` says when FastAPI's telemetry wants every request."""

    def __init__(self, route: APIRoute, metrics: Metrics, telemetry_on: Callable[[], bool]) -> None:
        self.route = route
        self.metrics = metrics
        self.telemetry_on = telemetry_on

    def takes(self, scope: Scope) -> bool:
        """Whether the lane answers this request to `HEALTH_PATH` (the caller compared
        the path)."""
        if scope["method"] != "GET" or scope["query_string"] or scope.get("root_path"):
            return False
        for name, _ in scope["headers"]:
            if name in _FRAMING:
                return False
        return not self.telemetry_on()

    async def answer(self, scope: Scope, send: Send) -> None:
        """Send the stack's response, then count and log the request as the middleware
        does (with the 200 it began, if sending failed)."""
        started = time.perf_counter()
        scope["route"] = self.route  # the template, as FastAPI's router sets it
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": HEADERS,
                    OWN_HEAD: True,  # every header a constant
                }
            )
            await send({"type": "http.response.body", "body": BODY})
        finally:
            account(self.metrics, scope, 200, started)
