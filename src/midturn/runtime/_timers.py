"""One timer for every deadline in the process: a heap and a single sleeping task.

Parked interactions with a deadline are not given a task or a timer handle each (100,000
parked asks would cost 100,000 of them); their deadlines sit in a heap, and one task
sleeps until the earliest, then hands each due id to `expire`. Deadlines are wall-clock
UTC instants, the same ones persisted on the interaction, so they survive a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

__all__ = ["Deadlines"]

log = logging.getLogger("midturn.runtime")


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

    def schedule(self, interaction_id: str, deadline: datetime) -> None:
        at = deadline.timestamp()
        if self._live.get(interaction_id) == at:
            return  # already armed (e.g. heard of twice)
        self._live[interaction_id] = at
        heapq.heappush(self._heap, (at, interaction_id))
        if self._heap[0][1] == interaction_id:
            self._wake.set()  # a new earliest deadline: the sleeper re-arms

    def drop(self, interaction_id: str) -> None:
        """Forget a deadline (the interaction settled); its heap entry is skipped later."""
        self._live.pop(interaction_id, None)
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
                    log.exception("timing out interaction %s failed", interaction_id)
            delay = self._heap[0][0] - self._clock() if self._heap else None
            if delay is not None and delay <= 0:
                continue
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._wake.wait()
