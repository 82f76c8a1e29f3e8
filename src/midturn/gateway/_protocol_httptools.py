"""uvicorn's httptools protocol (midturn[fast]) with the guarantees of the h11 one
(`_protocol.py`): a request that is not valid HTTP is refused in the JSON error shape,
a response's head and body leave in one write when its length is declared
(`_protocol_writes.py`), a request can abort its connection and learn when it is
lost (`_protocol_state.py`), and the keep-alive timeout is one timer per connection
(`_keep_alive.py`).

httptools (llhttp) sets no bound on a request's head: it would buffer an endless header
for as long as a client sends one. Here a head still incomplete past 16 KiB, h11's
bound, is refused with 431 `headers_too_large`, as it is on h11. The count is of the
bytes of each read after which a request's head is still incomplete: exact, except that
a read holding the end of one pipelined request and the start of the next one's head
counts whole.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from midturn.gateway._http_refusal import HEAD_LIMIT_BYTES, PHRASES, refusal
from midturn.gateway._keep_alive import KeepAliveClock
from midturn.gateway._protocol_state import connection_lost, connection_state
from midturn.gateway._protocol_writes import HeadWithBody

__all__ = ["JsonErrorsHttpToolsProtocol"]


def _declares_length(cycle: Any, head: bytes) -> bool:
    """Whether the head the cycle wrote declares the body's length, so the body's first
    write follows (a HEAD request's response has no body write)."""
    return cycle.chunked_encoding is False and cycle.scope["method"] != "HEAD"


class JsonErrorsHttpToolsProtocol(KeepAliveClock, HttpToolsProtocol):
    """uvicorn's httptools protocol; its refusals are JSON, a head is bounded, a
    response's head and body leave in one write, a request can abort its connection,
    and the keep-alive timeout is one timer per connection."""

    _head_pending = False  # a request has begun and its head has not ended yet
    _head_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # each request's scope["state"] is a copy of this: its entries are per connection
        self.app_state = connection_state(self.app_state, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.stop_keep_alive()
        connection_lost(self.app_state)

    def on_response_complete(self) -> None:
        if self.pipeline or self.transport.is_closing():
            super().on_response_complete()  # the next pipelined request, no timer armed
            return
        # uvicorn's, with `keep_alive_idle` where it arms a timer of its own
        self.server_state.total_requests += 1
        self._unset_keepalive_if_required()
        self.flow.resume_reading()
        self.keep_alive_idle()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._head_pending and not self.transport.is_closing():
            self._head_bytes += len(data)
            if self._head_bytes > HEAD_LIMIT_BYTES:
                self._refuse(431, None)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_pending, self._head_bytes = True, 0

    def on_headers_complete(self) -> None:
        self._head_pending = False
        cycle = self.cycle
        super().on_headers_complete()
        if self.cycle is not cycle:  # a request began (its cycle's task has not run yet)
            self.cycle.transport = HeadWithBody(self.transport, self.cycle, _declares_length)  # type: ignore[assignment]

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._head_pending, self._head_bytes = False, 0  # until the next one begins

    def send_400_response(self, msg: str) -> None:
        # called by uvicorn while it handles httptools' HttpParserError
        self._refuse(400, sys.exc_info()[1])

    def _refuse(self, status: int, error: BaseException | None) -> None:
        status, body = refusal(status, error)
        payload = json.dumps(body).encode()
        head = (
            f"HTTP/1.1 {status} ".encode()
            + PHRASES[status]
            + b"\r\ncontent-type: application/json\r\ncontent-length: "
            + str(len(payload)).encode()
            + b"\r\nconnection: close\r\n\r\n"
        )
        self.transport.write(head + payload)
        self.transport.close()
