"""One timer for every deadline in the process: a heap and a single sleeping task.

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
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

__all__ = ["RETRY_FIRST_S", "RETRY_MAX_S", "Deadlines"]

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
