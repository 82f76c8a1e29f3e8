"""One reader of the event log per gateway process, fanned out to every open stream.

Following the runtime's event log once per SSE stream would read the store once per
stream for every event; with a hundred streams that is a hundred reads per answer. The
hub follows the log once (`runtime.events(follow=True)`) and hands each new event to the
streams that want it. A stream first subscribes, then replays what it missed from the
store (`follow=False`), then takes live events from its queue, skipping any it already
replayed: nothing falls in between, nothing is sent twice. A stream that falls too far
behind is dropped from the hub and catches up from the store again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable

from midturn.contract._interactions import Event
from midturn.runtime import Runtime
from midturn.store import Store

__all__ = ["EventHub"]

log = logging.getLogger("midturn.gateway")

_QUEUE_MAX = 2000


class _Subscriber:
    """A stream's place in the hub: a queue of live events, ended by None once the hub
    drops it. (The queue is unbounded so the None always fits; the hub drops a
    subscriber before it holds more than `_QUEUE_MAX` events.)"""

    def __init__(self, session_id: str | None) -> None:
        self.session_id = session_id
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self.dropped = False


class EventHub:
    def __init__(
        self, runtime: Runtime, store: Store, on_event: Callable[[Event], None] | None = None
    ) -> None:
        self._runtime = runtime
        self._store = store
        self._on_event = on_event
        self._subscribers: set[_Subscriber] = set()
        self._task: asyncio.Task[None] | None = None
        self._started = asyncio.Event()

    async def _ensure_running(self) -> None:
        if self._task is None or self._task.done():
            self._started = asyncio.Event()
            self._task = asyncio.create_task(self._pump(), name="midturn-event-hub")
        await self._started.wait()

    async def _pump(self) -> None:
        try:
            newest = await self._store.last_event_id()
            events = self._runtime.events(after=newest, follow=True)
            self._started.set()
            async for event in events:
                if self._on_event is not None:
                    self._on_event(event)
                for subscriber in list(self._subscribers):
                    if subscriber.session_id not in (None, event.session_id):
                        continue
                    if subscriber.queue.qsize() >= _QUEUE_MAX:
                        self._drop(subscriber)
                    else:
                        subscriber.queue.put_nowait(event)
        except Exception:
            log.exception("the event hub stopped; open streams catch up from the store")
        finally:
            self._started.set()
            for subscriber in list(self._subscribers):
                self._drop(subscriber)

    def _drop(self, subscriber: _Subscriber) -> None:
        self._subscribers.discard(subscriber)
        if not subscriber.dropped:
            subscriber.dropped = True
            subscriber.queue.put_nowait(None)

    async def follow(self, after: int, session_id: str | None) -> AsyncIterator[Event]:
        """Events after id `after` (of one session, or all), stored then live, in order."""
        cursor = after
        while True:
            subscriber = _Subscriber(session_id)
            self._subscribers.add(subscriber)
            try:
                await self._ensure_running()
                replay = self._runtime.events(after=cursor, session_id=session_id, follow=False)
                async for event in replay:
                    cursor = event.id
                    yield event
                queue = subscriber.queue
                while True:
                    live = queue.get_nowait() if queue.qsize() else await queue.get()
                    if live is None:
                        break  # too far behind, or the hub stopped: replay from the store
                    if live.id > cursor:
                        cursor = live.id
                        yield live
            finally:
                self._drop(subscriber)

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
