"""The HTTP/1.1 protocol the gateway runs on: uvicorn's h11 protocol (or its httptools one,
`_protocol_httptools.py`, with midturn[fast]), with its refusals
of requests that are not valid HTTP in the gateway's JSON error shape.

uvicorn refuses such a request (headers that outgrow h11's 16 KiB buffer before they
end, a malformed request line, conflicting framing) before any ASGI app runs, with a
plain-text `400 Invalid HTTP request received.` Here that refusal is `{error, message}`
like every other, with the status h11 suggests for the fault: 431 `headers_too_large`
for oversized headers, else 400 (or 501) `invalid_http`. The connection still closes
after it: its byte stream is no longer trustworthy.

Each request's response is written with its head and body in one write when its length
is declared (`_protocol_writes.py`). A head the gateway built itself (the express lane's,
`OWN_HEAD`) goes to h11 as already checked: h11 matches every other response's headers
against their grammar, a dozen headers and two regular expressions each.

Its keep-alive timeout is one timer per connection, not one per response
(`_keep_alive.py`).

It also hands each request a way to abort its connection (`ABORT_CONNECTION` in the
request's `scope["state"]`): an event stream whose client has read nothing for too long
ends that way (`_sse.py`), at once, instead of closing politely, which would wait for the
client to take the bytes already written; and a future done once the connection is lost
(`_protocol_state.py`), on which a long-poll learns that its client went away.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import h11
from uvicorn.protocols.http.flow_control import CLOSE_HEADER
from uvicorn.protocols.http.h11_impl import STATUS_PHRASES, H11Protocol, RequestResponseCycle

from midturn.errors import UsageError
from midturn.gateway._http_refusal import PHRASES, refusal
from midturn.gateway._keep_alive import KeepAliveClock
from midturn.gateway._protocol_state import OWN_HEAD, connection_lost, connection_state
from midturn.gateway._protocol_writes import HeadWithBody

__all__ = ["JsonErrorsH11Protocol", "http_protocol"]


def _declares_length(cycle: Any, head: bytes) -> bool:
    """Whether the head h11 wrote declares the body's length, so the body's first write
    follows (not for a HEAD request, whose response has no body)."""
    return cycle.scope["method"] != "HEAD" and b"\ncontent-length:" in head.lower()


class _OwnHeadCycle(RequestResponseCycle):
    """uvicorn's h11 response cycle, except for a head whose message says the gateway
    built it (`OWN_HEAD`): h11 gets it as parsed, so it does not match each header's
    name and value against its grammar again (two regular expressions a header, a dozen
    headers a response). Everything else about the head is what uvicorn does: its
    default headers first, `connection: close` added when the request asked for it."""

    async def send(self, message: Any) -> None:
        if (
            message["type"] != "http.response.start"
            or not message.get(OWN_HEAD)
            or self.response_started
            or self.disconnected
            or self.flow.write_paused
            or self.access_log  # uvicorn's own line for the response: its path
        ):
            await super().send(message)
            return
        self.response_started = True
        self.waiting_for_100_continue = False
        status = message["status"]
        headers = [*self.default_headers, *message["headers"]]
        if CLOSE_HEADER in self.scope["headers"] and CLOSE_HEADER not in headers:
            headers.append(CLOSE_HEADER)
        head = h11.Response(
            status_code=status, headers=headers, reason=STATUS_PHRASES[status], _parsed=True
        )
        self.transport.write(self.conn.send(event=head))


class JsonErrorsH11Protocol(KeepAliveClock, H11Protocol):
    """uvicorn's h11 protocol; its refusal of an invalid request is JSON, a response's
    head and body leave in one write, a request can abort its connection, and the
    keep-alive timeout is one timer per connection."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # each request's scope["state"] is a copy of this: its entries are per connection
        self.app_state = connection_state(self.app_state, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.stop_keep_alive()
        connection_lost(self.app_state)

    def on_response_complete(self) -> None:
        # uvicorn's (0.29's and 0.54's are the same), with `keep_alive_idle` where it arms a timer
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self.keep_alive_idle()
        self.flow.resume_reading()
        if self.conn.our_state is h11.DONE and self.conn.their_state is h11.DONE:
            self.conn.start_next_cycle()
            self.handle_events()

    def handle_events(self) -> None:
        cycle = self.cycle
        super().handle_events()
        if self.cycle is not cycle and self.cycle is not None:  # a request began: its
            # cycle's task has not run yet, so it writes through this from the start
            self.cycle.transport = HeadWithBody(self.transport, self.cycle, _declares_length)  # type: ignore[assignment]
            if type(self.cycle) is RequestResponseCycle:  # the same object, one method more
                self.cycle.__class__ = _OwnHeadCycle

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
