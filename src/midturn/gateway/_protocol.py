"""The HTTP/1.1 protocol the gateway runs on: uvicorn's h11 protocol (or its httptools one,
`_protocol_httptools.py`, with midturn[fast]), with its refusals
of requests that are not valid HTTP in the gateway's JSON error shape.

uvicorn refuses such a request (headers that outgrow h11's 16 KiB buffer before they
end, a malformed request line, conflicting framing) before any ASGI app runs, with a
plain-text `400 Invalid HTTP request received.` Here that refusal is `{error, message}`
like every other, with the status h11 suggests for the fault: 431 `headers_too_large`
for oversized headers, else 400 (or 501) `invalid_http`. The connection still closes
after it: its byte stream is no longer trustworthy.

It also hands each request a way to abort its connection (`ABORT_CONNECTION` in the
request's `scope["state"]`): an event stream whose client has read nothing for too long
ends that way (`_sse.py`), at once, instead of closing politely, which would wait for the
client to take the bytes already written.
"""

from __future__ import annotations

import asyncio
import json
import sys

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from midturn.errors import UsageError

__all__ = [
    "ABORT_CONNECTION",
    "HEAD_LIMIT_BYTES",
    "PHRASES",
    "JsonErrorsH11Protocol",
    "http_protocol",
    "refusal",
]

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


class JsonErrorsH11Protocol(H11Protocol):
    """uvicorn's h11 protocol; its refusal of an invalid request is JSON, and a request
    can abort its connection."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # each request's scope["state"] is a copy of this: one entry per connection
        self.app_state = {**self.app_state, ABORT_CONNECTION: transport.abort}

    def send_400_response(self, msg: str) -> None:
        # called by uvicorn while it handles h11's RemoteProtocolError: that is the
        # exception in flight here, and it carries h11's status hint
        status, body = refusal(400, sys.exc_info()[1])
        payload = json.dumps(body).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(payload)).encode()),
            (b"connection", b"close"),
        ]
        self.transport.write(
            self.conn.send(
                h11.Response(status_code=status, headers=headers, reason=PHRASES[status])
            )
            or b""
        )
        self.transport.write(self.conn.send(h11.Data(data=payload)) or b"")
        self.transport.write(self.conn.send(h11.EndOfMessage()) or b"")
        self.transport.close()


def http_protocol(name: str = "auto") -> type[asyncio.Protocol]:
    """The protocol class for uvicorn's `http`: "h11", "httptools" (midturn[fast]), or
    "auto": httptools when it is installed, else h11. Both refuse invalid HTTP alike."""
    if name not in ("auto", "h11", "httptools"):
        raise UsageError(f"http must be 'auto', 'h11' or 'httptools', not {name!r}")
    if name != "h11":
        try:
            from midturn.gateway._protocol_httptools import JsonErrorsHttpToolsProtocol
        except ImportError:
            if name == "httptools":
                raise UsageError(
                    "http 'httptools' needs httptools: pip install 'midturn[fast]'"
                ) from None
        else:
            return JsonErrorsHttpToolsProtocol
    return JsonErrorsH11Protocol
