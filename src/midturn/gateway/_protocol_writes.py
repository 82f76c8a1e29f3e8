"""One write for a response's head and body, on both HTTP protocols of the gateway.

uvicorn writes a response's status line and headers as soon as the app sends
`http.response.start`, and its body at `http.response.body`: two writes, so two system
calls and (with `TCP_NODELAY`, asyncio's default) two TCP segments for the client to
read, for every response. An ASGI app cannot send both in one message. Here each
request's response cycle writes through `HeadWithBody`, which holds the head of a
response that declares its length until the first write of its body and sends both in
one. A response of unknown length (a stream) has its head written at once, as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

__all__ = ["HeadWithBody"]


class HeadWithBody:
    """The transport as one response cycle sees it. The first write made once the
    response has started is its head: held when `holds(head)` says the body follows at
    once (a declared length), and written with the next write. Everything else passes
    straight to `transport`; closing writes a held head first (what the client would
    have got), aborting drops it."""

    __slots__ = ("_cycle", "_head", "_holds", "_past_head", "_transport")

    def __init__(
        self, transport: asyncio.Transport, cycle: Any, holds: Callable[[Any, bytes], bool]
    ) -> None:
        self._transport = transport
        self._cycle = cycle  # uvicorn's RequestResponseCycle (h11 or httptools)
        self._holds = holds
        self._head: bytes | None = None
        self._past_head = False

    def write(self, data: bytes) -> None:
        head = self._head
        if head is not None:
            self._head = None
            self._transport.write(head + data)
            return
        if not self._past_head and self._cycle.response_started:
            self._past_head = True
            if self._holds(self._cycle, data):
                self._head = data
                return
        self._transport.write(data)

    def close(self) -> None:
        head, self._head = self._head, None
        if head is not None:
            self._transport.write(head)
        self._transport.close()

    def abort(self) -> None:
        self._head = None
        self._transport.abort()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
