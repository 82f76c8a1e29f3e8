"""One timer for every deadline in the process: a heap and a single sleeping task; and one
loop timer for every waiting caller's timeout (`WaitTimeouts`).

Parked interactions with a deadline are not given a task or a timer handle each (100,000
parked asks would cost 100,000 of them); their deadlines sit in a heap, and one task
sleeps until the earliest, then hands each due id to `expire`. Deadlines are wall-clock
UTC instants, the same ones persisted on the interaction, so they survive a restart.

An expiry that fails (a transient store error) is retried, with a backoff that doubles
from `RETRY_FIRST_S` up to `RETRY_MAX_S`, until it succeeds or the id is dropped: an
interaction never stays pending past its deadline because one write failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

__all__ = ["RETRY_FIRST_S", "RETRY_MAX_S", "Deadlines", "WaitTimeouts"]

log = logging.getLogger("midturn.runtime")

RETRY_FIRST_S = 0.1
"""The wait before the first retry of a failed expiry; each further failure doubles it."""
RETRY_MAX_S = 30.0
"""The longest wait between two retries of a failed expiry."""


class Deadlines:
    """Call `expire(interaction_id)` once each scheduled deadline has passed, unless the
    id was dropped first. Start with `start()`, stop with `aclose()`."""

    def __init__(
        self,
        expire: Callable[[str], Awaitable[None]],
        *,
        clock: Callable[[], float],
    ) -> None:
        self._expire = expire
        self._clock = clock
        self._heap: list[tuple[float, str]] = []
        self._live: dict[str, float] = {}
        self._failures: dict[str, int] = {}  # failed expiries in a row, by id
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._live)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="midturn-deadlines")

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._heap.clear()
        self._live.clear()
        self._failures.clear()

    def schedule(self, interaction_id: str, deadline: datetime) -> None:
        self._arm(interaction_id, deadline.timestamp())

    def retry(self, interaction_id: str) -> float:
        """Arm `interaction_id` again after its expiry failed, later by the backoff;
        returns the delay in seconds."""
        failures = self._failures.get(interaction_id, 0) + 1
        self._failures[interaction_id] = failures
        delay: float = min(RETRY_FIRST_S * 2.0 ** min(failures - 1, 30), RETRY_MAX_S)
        self._arm(interaction_id, self._clock() + delay)
        return delay

    def _arm(self, interaction_id: str, at: float) -> None:
        if self._live.get(interaction_id) == at:
            return  # already armed (e.g. heard of twice)
        self._live[interaction_id] = at
        heapq.heappush(self._heap, (at, interaction_id))
        if self._heap[0][1] == interaction_id:
            self._wake.set()  # a new earliest deadline: the sleeper re-arms

    def drop(self, interaction_id: str) -> None:
        """Forget a deadline (the interaction settled); its heap entry is skipped later."""
        self._live.pop(interaction_id, None)
        self._failures.pop(interaction_id, None)
        if len(self._heap) > 2 * len(self._live) + 64:  # mostly dropped entries: compact
            self._heap = [(at, key) for key, at in self._live.items()]
            heapq.heapify(self._heap)
            self._wake.set()

    def _due(self) -> list[str]:
        now = self._clock()
        due: list[str] = []
        heap = self._heap
        while heap and heap[0][0] <= now:
            at, interaction_id = heapq.heappop(heap)
            if self._live.get(interaction_id) == at:
                del self._live[interaction_id]
                due.append(interaction_id)
        return due

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            for interaction_id in self._due():
                try:
                    await self._expire(interaction_id)
                except asyncio.CancelledError:
                    raise
                except Exception:  # one failed expiry must not stop the others
                    backoff = self.retry(interaction_id)
                    log.exception(
                        "timing out interaction %s failed; retrying in %.1f s",
                        interaction_id,
                        backoff,
                    )
                else:
                    self._failures.pop(interaction_id, None)
            delay = self._heap[0][0] - self._clock() if self._heap else None
            if delay is not None and delay <= 0:
                continue
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._wake.wait()


class WaitTimeouts:
    """One loop timer for the timeouts of every `Parking.wait`, not one each.

    `asyncio.timeout` arms a timer per wait (a `TimerHandle` made, pushed into the loop's
    heap beside every other long-poll's, cancelled when the settle comes first, dropped
    later), and finds the current task for it to cancel. Here a wait's timeout is an
    entry in this heap, and one loop timer is armed for the earliest: a wait that ends
    first drops its entry, and a later deadline than the armed one arms nothing. When the
    timer falls, each future whose deadline has passed and that is still pending gets
    None (the wait reads the store then), and the timer is armed again for the next live
    deadline, if any. Deadlines are on the loop's clock, as `asyncio.timeout`'s are."""

    __slots__ = ("_heap", "_keys", "_live", "_loop", "_timer", "_timer_at")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int]] = []
        self._live: dict[int, tuple[float, asyncio.Future[Any]]] = {}
        self._keys = itertools.count()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0

    def __len__(self) -> int:
        return len(self._live)

    def add(self, future: asyncio.Future[Any], delay: float) -> int:
        """Resolve `future` with None `delay` seconds from now unless it is done or
        removed first; returns the key to `remove` it by."""
        loop = future.get_loop()
        if loop is not self._loop:  # a runtime waits on one loop; a new one starts afresh
            self.close()
            self._loop = loop
        at = loop.time() + delay
        key = next(self._keys)
        self._live[key] = (at, future)
        heapq.heappush(self._heap, (at, key))
        if self._timer is None or at < self._timer_at:
            self._arm(at)
        return key

    def remove(self, key: int) -> None:
        """Forget a timeout (its wait ended); its heap entry is skipped later. The timer
        stays armed: the next wait's deadline most often comes after it."""
        self._live.pop(key, None)
        if len(self._heap) > 2 * len(self._live) + 64:  # mostly removed entries: compact
            self._heap = sorted((at, live) for live, (at, _) in self._live.items())

    def close(self) -> None:
        """Cancel the timer and forget every timeout (the runtime closed)."""
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        self._heap.clear()
        self._live.clear()
        self._loop = None

    def _arm(self, at: float) -> None:
        assert self._loop is not None
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = at
        self._timer = self._loop.call_at(at, self._due)

    def _due(self) -> None:
        self._timer = None
        assert self._loop is not None
        # the loop runs a timer up to its clock's resolution early: due is what it was for
        now = max(self._loop.time(), self._timer_at)
        heap, live = self._heap, self._live
        while heap and heap[0][0] <= now:
            _, key = heapq.heappop(heap)
            entry = live.pop(key, None)
            if entry is not None and not entry[1].done():
                entry[1].set_result(None)
        while heap and heap[0][1] not in live:
            heapq.heappop(heap)
        if heap:
            self._arm(heap[0][0])
