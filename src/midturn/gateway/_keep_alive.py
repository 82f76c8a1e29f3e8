"""The keep-alive timeout of both HTTP protocols (`_protocol.py`, `_protocol_httptools.py`)
kept by one timer per connection instead of one per response.

uvicorn arms a timer (`loop.call_later`) each time a response completes and cancels it
when the next request's bytes arrive: on a kept connection, a timer made, pushed into
the loop's heap, cancelled and later dropped from it for every response: about 31,000
instructions each under callgrind with 130 other timers in the heap (a busy gateway's
long-polls hold one each), two per round trip (docs/benchmarks.md). Here a response's
end only notes when the connection went idle, and arms the timer if none is armed. When
the timer fires it closes the connection if it has been idle for the whole timeout
since; if a request came meanwhile it is armed again for the timeout after the
connection's last idle moment, or, while a request is still in progress, left for that
request's end to arm. So an idle connection is closed when uvicorn would close it:
`timeout_keep_alive` after its last response, never while a request is in progress.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["KeepAliveClock"]


class KeepAliveClock:
    """Mixed into a uvicorn protocol (its `loop`, `timeout_keep_alive` and
    `timeout_keep_alive_handler`): `keep_alive_idle` where uvicorn arms its timer, and
    uvicorn's own `_unset_keepalive_if_required` (new bytes, a lost connection) marks
    the connection busy instead of cancelling a timer."""

    loop: asyncio.AbstractEventLoop
    timeout_keep_alive: int  # seconds, as uvicorn's Config types it
    timeout_keep_alive_handler: Callable[[], None]  # uvicorn's: closes the connection
    _idle_since: float | None = None
    _keep_alive_timer: asyncio.TimerHandle | None = None
    _keep_alive_at = 0.0

    def keep_alive_idle(self) -> None:
        """A response completed and nothing else runs on the connection: it is idle from
        now, and closed `timeout_keep_alive` from now unless a request comes."""
        self._idle_since = now = self.loop.time()
        if self._keep_alive_timer is None:
            self._arm(now + self.timeout_keep_alive)

    def _unset_keepalive_if_required(self) -> None:
        self._idle_since = None

    def stop_keep_alive(self) -> None:
        """The connection is lost: no timer left to hold it."""
        self._idle_since = None
        timer, self._keep_alive_timer = self._keep_alive_timer, None
        if timer is not None:
            timer.cancel()

    def _arm(self, when: float) -> None:
        self._keep_alive_at = when
        self._keep_alive_timer = self.loop.call_at(when, self._due)

    def _due(self) -> None:
        self._keep_alive_timer = None
        since = self._idle_since
        if since is None:
            return  # a request is in progress: its response's end arms the timer again
        due = since + self.timeout_keep_alive
        if due > self._keep_alive_at:
            self._arm(due)  # it was busy since the timer was armed, and idle again
            return
        self.timeout_keep_alive_handler()
