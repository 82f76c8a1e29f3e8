"""One clock for every event stream of a gateway: keepalives and the write timeout.

A stream that has written nothing for `KEEPALIVE_S` writes a keepalive comment, and a
write that has waited longer than the write timeout for its client to read ends the
stream (`_sse.py`). Both were a timer per stream and per wait: an `asyncio.timeout`
around each wait for the next event and another around each write, which under a crowd
made up about a quarter of what handing one frame to one stream cost. Here one task looks
at every open stream once per `tick_s` (a second, or a quarter of the write timeout when
that is shorter) and acts on the ones due: a keepalive follows the last write after
`KEEPALIVE_S` plus at most a tick, and a stalled write is ended at most a tick past its
timeout. A write records when it began and that it ended: two attribute stores, no timer.

Keepalives are spread out: streams opened together (every inbox reconnecting after a
restart, a crowd arriving) fall due together, and one tick writing all of them at once
held the loop, and every round trip waiting on it, for the whole burst (under
`bench/crowd.py`, 900 keepalives within 30 ms, every 15 s). A tick writes at most twice
its even share (`len(streams) * tick_s / keepalive_s`, and at least `KEEPALIVE_BURST`);
the rest stay due and go at the next ticks, a few seconds late at most.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from typing import Protocol

__all__ = ["KEEPALIVE_BURST", "KEEPALIVE_S", "Clocked", "StreamClock"]

KEEPALIVE_S = 15.0
KEEPALIVE_BURST = 32
"""Keepalives one tick may always write, however few streams share the clock."""


class Clocked(Protocol):
    """What the clock needs of a stream."""

    writing_since: float | None
    """The loop time the write in progress began, None between writes."""
    last_write: float
    """The loop time the last write began (or the stream opened)."""

    def stall(self) -> None:
        """End the stream: its write has waited past the timeout."""

    def keepalive(self) -> None:
        """Write a keepalive, if the stream is following live events."""


class StreamClock:
    def __init__(self, write_timeout_s: float, keepalive_s: float | None = None) -> None:
        self.write_timeout_s = write_timeout_s
        self.keepalive_s = KEEPALIVE_S if keepalive_s is None else keepalive_s
        self.tick_s = min(1.0, write_timeout_s / 4, self.keepalive_s / 4)
        self._streams: set[Clocked] = set()
        self._task: asyncio.Task[None] | None = None

    def add(self, stream: Clocked) -> None:
        """Watch `stream` until `discard`; the clock runs while it watches any."""
        self._streams.add(stream)
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="midturn-stream-clock")

    def discard(self, stream: Clocked) -> None:
        self._streams.discard(stream)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._streams:
                await asyncio.sleep(self.tick_s)
                now = loop.time()
                share = 2 * len(self._streams) * self.tick_s / self.keepalive_s
                keepalives = max(KEEPALIVE_BURST, math.ceil(share))
                for stream in list(self._streams):
                    since = stream.writing_since
                    if since is not None:
                        if now - since >= self.write_timeout_s:
                            stream.stall()
                    elif keepalives and now - stream.last_write >= self.keepalive_s:
                        keepalives -= 1
                        stream.keepalive()
        finally:
            self._task = None

    async def aclose(self) -> None:
        task = self._task
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
