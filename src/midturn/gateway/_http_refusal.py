"""What both HTTP protocols of the gateway (`_protocol.py`'s h11 one and
`_protocol_httptools.py`'s) share: the JSON refusal of a request that is not valid HTTP,
the bound on a request's head, and the `scope["state"]` key of the function that aborts
a request's connection."""

from __future__ import annotations

__all__ = ["ABORT_CONNECTION", "HEAD_LIMIT_BYTES", "PHRASES", "refusal"]

ABORT_CONNECTION = "midturn.abort_connection"
"""The key, in a request's `scope["state"]`, of the function that aborts its connection."""

PHRASES = {400: b"Bad Request", 431: b"Request Header Fields Too Large", 501: b"Not Implemented"}

HEAD_LIMIT_BYTES = 16 * 1024
"""How long a request's head may grow before it ends (h11's own bound)."""


def refusal(status: int, error: BaseException | None) -> tuple[int, dict[str, str]]:
    """The status and JSON body refusing a request that is not valid HTTP: `status`
    unless `error` carries h11's status hint."""
    hint = getattr(error, "error_status_hint", status)
    status = hint if hint in PHRASES else 400
    if status == 431:
        return status, {
            "error": "headers_too_large",
            "message": "the request's headers are too large for the gateway; send smaller "
            "headers (the token alone goes in Authorization)",
        }
    detail = str(error) if error is not None and str(error) else "malformed"
    return status, {
        "error": "invalid_http",
        "message": f"the request is not valid HTTP/1.1 ({detail}); fix the client's request",
    }
