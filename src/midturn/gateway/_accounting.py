"""What every response of the gateway carries and what each request leaves behind: the
security headers, and the request's count for `/metrics` with its access-log line. The
middleware and the two lanes in front of it (`_express.py`, `_health.py`) all use them,
so a request served any of those ways is accounted alike."""

from __future__ import annotations

import logging
import time

from starlette.types import Scope

from midturn.gateway._metrics import Metrics

__all__ = ["CSP", "EVERY_RESPONSE", "access_log", "account"]

access_log = logging.getLogger("midturn.gateway.access")

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)

EVERY_RESPONSE = ((b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"))


def account(metrics: Metrics, scope: Scope, status: int, started: float) -> None:
    """A request's count for `/metrics` and its access-log line, once it is done."""
    route = scope.get("route")
    template = getattr(route, "path", None) or "unmatched"
    metrics.count_request(template, status)
    if access_log.isEnabledFor(logging.INFO):
        _log(scope, template, status, started)


def _log(scope: Scope, template: str, status: int, started: float) -> None:
    state = scope.get("state") or {}
    method, path = scope.get("method"), scope.get("path")
    access_log.info(
        "%s %s %s",
        method,
        path,
        status,
        extra={
            "midturn": {
                "method": method,
                "path": path,
                "route": template,
                "status": status,
                "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                "role": state.get("role"),
            }
        },
    )
