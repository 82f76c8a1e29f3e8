"""`Runtime.subscribe()`: an in-process tap on the events the runtime publishes.

The tap sees every event this process appends the moment its store write commits (no
store read), and every event another process appends as the runtime's one log reader
finds it (through the store's listener: PostgreSQL LISTEN/NOTIFY, SQLite polling).

Two ways to take them:
- a callback, `runtime.subscribe(on_event)`: called synchronously with each event, on
  the runtime's loop; it must be cheap and must not block (an exception it raises is
  logged and dropped). Nothing is buffered.
- an async iterator, `async with runtime.subscribe() as events: async for event in
  events`: events wait in a queue of at most `buffer`; a consumer that falls further
  behind gets `SubscriptionLagged` (carrying the id of the last event it was handed) and
  catches up from the log with `runtime.events(after=...)`.

Order: events reach a subscriber in the order this process learns of them. Ids increase
for one writer, but two concurrent writers (or another process's events, which arrive
after a read) can hand them over out of id order, and rarely twice: who needs the log's
exact order keeps the highest id seen and reads any gap from `runtime.events`, as the
gateway's event hub does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import TracebackType
from typing import Self

from midturn.contract._interactions import Event
from midturn.errors import MidturnError, UsageError

__all__ = ["Subscription", "SubscriptionLagged"]

_DONE = None


class SubscriptionLagged(MidturnError):
    """The subscriber fell more than `buffer` events behind and was unsubscribed.
    `last_event_id` is the id of the last event it was handed (0 for none): resume with
    `runtime.events(after=last_event_id)`."""

    def __init__(self, last_event_id: int, buffer: int) -> None:
        super().__init__(
            f"this subscription fell more than {buffer} events behind and was ended; read "
            f"the rest with runtime.events(after={last_event_id})"
        )
        self.last_event_id = last_event_id


class Subscription:
    """A registration on the runtime's tap. `close()` (or leaving `async with`) ends it;
    closing twice is harmless."""

    def __init__(
        self,
        watch: Callable[[Callable[[Event], None]], Callable[[], None]],
        *,
        on_event: Callable[[Event], None] | None,
        session_id: str | None,
        buffer: int,
    ) -> None:
        if buffer < 1:
            raise UsageError(f"buffer must be at least 1 event (got {buffer})")
        self.session_id = session_id
        self._on_event = on_event
        self._buffer = buffer
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._last = 0
        self._lagged = False
        self._closed = False
        self._stop = watch(self._heard)

    def _heard(self, event: Event) -> None:
        if self.session_id is not None and event.session_id != self.session_id:
            return
        if self._on_event is not None:
            self._on_event(event)
            return
        if self._queue.qsize() >= self._buffer:
            self._lagged = True
            self._end()
            return
        self._queue.put_nowait(event)

    def _end(self) -> None:
        if not self._closed:
            self._closed = True
            self._stop()
            self._queue.put_nowait(_DONE)

    def close(self) -> None:
        """Stop receiving events; an iterator waiting on this subscription ends."""
        self._end()

    def __aiter__(self) -> Self:
        if self._on_event is not None:
            raise UsageError("this subscription calls its callback; it cannot be iterated")
        return self

    async def __anext__(self) -> Event:
        item = await self._queue.get()
        if item is None:
            if self._lagged:
                raise SubscriptionLagged(self._last, self._buffer)
            raise StopAsyncIteration
        self._last = item.id
        return item

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
