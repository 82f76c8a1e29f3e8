"""One tap on the runtime's events per gateway process, fanned out to every open stream.

The hub is fed by `runtime.subscribe()`: an event this process appended reaches the
streams without a store read, and another process's events arrive through the runtime's
one log reader (the store's listener). The hub hands events on in id order, once each:
an event that arrives ahead of a lower id not yet seen (two writers racing, or another
process's event still being read) waits until the gap fills, from the tap or, failing
that, from one read of the log. Two writers in this process often announce out of order
(the later one's result handled first), and the lower id then comes from the tap a
moment later: the hub waits up to `GAP_GRACE_S` for it before reading the log, since a
read is a store round trip during which no stream gets anything (under a crowd on
PostgreSQL, 74–96 reads per 1,100 round trips).

Each event is formatted as an SSE frame once (around the JSON its store already made of
the interaction it carries), encoded, and those bytes are written as they are to every
stream that wants it: a stream of one session's events, or of some event types only, is
not handed (nor woken for) the others. A stream's buffer of frames not yet written is
bounded in bytes (`buffer_bytes`): a stream that falls further behind (its client reads
too slowly, or not at all) is dropped from the hub, its buffer freed; the stream then
ends with a frame saying where to resume (`_sse.py`), and the client reconnects with
`Last-Event-ID`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable

from midturn.contract._interactions import Event
from midturn.runtime import Runtime
from midturn.store import Store
from midturn.store._codec import event_json

__all__ = ["DEFAULT_BUFFER_BYTES", "EventHub", "Subscriber", "format_event"]

log = logging.getLogger("midturn.gateway")

DEFAULT_BUFFER_BYTES = 1024 * 1024
_PAGE = 500
GAP_GRACE_S = 0.05
"""How long a gap may wait for its event from the tap before the hub reads the log."""


def format_event(event: Event) -> bytes:
    """One SSE frame: `id`, `event` (the type) and the whole event as one JSON line (its
    `model_dump_json()`, the interaction it carries not dumped again, `event_json`)."""
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (event.id, event.type.encode(), event_json(event))


class Subscriber:
    """A stream's place in the hub: the frames handed to it and not yet taken, at most
    `bound` bytes of them (one frame always fits). `dropped` once the hub let it go:
    `lagging` tells whether it fell behind (else the hub stopped)."""

    __slots__ = ("bound", "dropped", "frames", "lagging", "session_id", "size", "types", "wake")

    def __init__(self, session_id: str | None, bound: int, types: frozenset[str] | None) -> None:
        self.session_id = session_id
        self.bound = bound
        self.types = types
        """The event types it is handed (None: all)."""
        self.frames: deque[tuple[int, bytes]] = deque()
        self.size = 0
        self.dropped = False
        self.lagging = False
        self.wake = asyncio.Event()

    def offer(self, event_id: int, frame: bytes) -> bool:
        if self.frames and self.size + len(frame) > self.bound:
            return False
        self.frames.append((event_id, frame))
        self.size += len(frame)
        self.wake.set()
        return True

    def take(self) -> list[tuple[int, bytes]]:
        taken = list(self.frames)
        self.frames.clear()
        self.size = 0
        return taken


class EventHub:
    def __init__(
        self,
        runtime: Runtime,
        store: Store,
        on_event: Callable[[Event], None] | None = None,
        *,
        buffer_bytes: int = DEFAULT_BUFFER_BYTES,
    ) -> None:
        self._runtime = runtime
        self._store = store
        self._on_event = on_event
        self.buffer_bytes = buffer_bytes
        self._streams: dict[str | None, set[Subscriber]] = {}
        self._cursor = 0
        self._live = False
        self._held: dict[int, Event] = {}
        self._gap = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self.dropped = 0
        """Streams dropped for falling behind, since start."""
        self.log_reads = 0
        """Reads of the event log the hub made to fill a gap, since start."""

    # -- streams ---------------------------------------------------------------------

    async def subscribe(
        self, session_id: str | None, types: frozenset[str] | None = None
    ) -> Subscriber:
        """A new subscriber, handed every event (of `session_id`, or all; of `types`,
        or any) fanned out from now on."""
        if self._task is None or self._task.done():
            self._ready = asyncio.Event()
            self._task = asyncio.create_task(self._run(), name="midturn-event-hub")
        await self._ready.wait()
        subscriber = Subscriber(session_id, self.buffer_bytes, types)
        if self._task.done():
            subscriber.dropped = True  # the hub failed to start: the caller reads the log
        else:
            self._streams.setdefault(session_id, set()).add(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber, *, lagging: bool = False) -> None:
        group = self._streams.get(subscriber.session_id)
        if group is not None:
            group.discard(subscriber)
            if not group:
                del self._streams[subscriber.session_id]
        if not subscriber.dropped:
            subscriber.dropped = True
            subscriber.lagging = lagging
            subscriber.take()  # free its frames at once
            subscriber.wake.set()
            if lagging:
                self.dropped += 1

    @property
    def buffered_bytes(self) -> int:
        """Bytes of frames held for streams, counted once per stream."""
        return sum(sub.size for group in self._streams.values() for sub in group)

    # -- the tap ---------------------------------------------------------------------

    def _heard(self, event: Event) -> None:
        if self._live:
            if event.id <= self._cursor:
                return
            if event.id == self._cursor + 1 and not self._held:
                self._fan_out(event)
                return
        self._held[event.id] = event
        self._gap.set()

    def _fan_out(self, event: Event) -> None:
        self._cursor = event.id
        if self._on_event is not None:
            self._on_event(event)
        frame: bytes | None = None
        for key in (None, event.session_id):
            group = self._streams.get(key)
            if not group:
                continue
            for subscriber in list(group):
                if subscriber.types is not None and event.type not in subscriber.types:
                    continue  # not woken for an event it does not want
                if frame is None:
                    frame = format_event(event)
                if not subscriber.offer(event.id, frame):
                    self.unsubscribe(subscriber, lagging=True)

    async def _run(self) -> None:
        subscription = self._runtime.subscribe(self._heard)
        try:
            self._cursor = await self._store.last_event_id()
            self._held = {key: held for key, held in self._held.items() if key > self._cursor}
            self._live = True
            self._ready.set()
            while True:
                self._gap.clear()
                while self._cursor + 1 in self._held:
                    self._fan_out(self._held.pop(self._cursor + 1))
                if self._held:
                    if not await self._filled_from_the_tap():
                        await self._fill()
                    continue
                await self._gap.wait()
        except Exception:
            log.exception("the event hub stopped; open streams end and clients resume")
        finally:
            subscription.close()
            self._live = False
            self._held.clear()
            self._ready.set()
            for group in list(self._streams.values()):
                for subscriber in list(group):
                    self.unsubscribe(subscriber)

    async def _filled_from_the_tap(self) -> bool:
        """Wait up to `GAP_GRACE_S` for the event after the cursor to be heard."""
        try:
            async with asyncio.timeout(GAP_GRACE_S):
                while self._cursor + 1 not in self._held:
                    self._gap.clear()
                    await self._gap.wait()
        except TimeoutError:
            return False
        return True

    async def _fill(self) -> None:
        """Read the log after the cursor: what it holds is exactly what to hand on next
        (a missing id there was never committed, so it is passed over)."""
        self.log_reads += 1
        page = await self._store.read_events(self._cursor, limit=_PAGE)
        for event in page:
            if event.id > self._cursor:
                self._fan_out(self._held.pop(event.id, event))
        if not page:  # nothing readable after the cursor: hand on what was heard, in order
            for key in sorted(self._held):
                if key > self._cursor:
                    self._fan_out(self._held[key])
        self._held = {key: held for key, held in self._held.items() if key > self._cursor}

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
