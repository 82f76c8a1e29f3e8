"""Parking: the one turn-scoped primitive behind every ask and permission (docs/runtime.md#states).

- `park` persists the interaction and its `*_requested` event in one store transaction,
  so an answer sent the instant the event appears always finds the interaction.
- `settle` is the store's compare-and-set; the settle event (and `turn_resumed` when it
  was the turn's last pending interaction) is appended in the same transaction, only by
  the winner.
- `wait` parks a caller until the interaction settles: settles made here resolve the
  waiters at once; settles made by another process reach them through the store's
  listener and the event log (one reader task, no polling).
- Deadlines live in one heap with one sleeping task (`_timers.py`), persisted on the
  interaction, recovered on `open`.
- Secret values never enter the store: the live result (with `SecretStr` values) of an
  ask settled in this process is kept on the side, in memory, and only `wait` hands it out.

Queue positions and turn state are computed under a per-session lock, so they are exact
for everything this process does; processes sharing a store rely on the compare-and-set
for correctness, and positions are then a best effort.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict, deque
from collections.abc import Callable
from datetime import datetime, timedelta

from midturn.contract._answers import timeout_result
from midturn.contract._interactions import (
    Event,
    Interaction,
    InteractionStatus,
    NewEvent,
    PermissionDecision,
    utcnow,
)
from midturn.contract._models import AskResult
from midturn.errors import NotFound, UsageError
from midturn.runtime._events import (
    REQUESTED_EVENT_TYPES,
    SETTLE_EVENT_TYPES,
    interaction_from,
    requested_data,
    requested_event,
    settled_event,
    turn_event,
)
from midturn.runtime._timers import Deadlines, WaitTimeouts
from midturn.store._base import Settle, Store
from midturn.store._codec import copy_interaction

__all__ = ["SECRETS_KEPT", "EventWatcher", "Parking", "deadline_after"]

log = logging.getLogger("midturn.runtime")

SECRETS_KEPT = 10_000
"""How many live results with secret values one process keeps (newest first)."""
RECOVERY_PAGE = 500
"""Pending deadlines read per store call on start."""
RECENT_KEPT = 256
"""How many pending interactions parked here are kept to skip a store read (as many as
a store keeps made: more would keep models alive, and the garbage collector busy)."""
SETTLED_KEPT = 32
"""How many interactions settled here are kept, for the `wait` or the repeated answer
that comes right after a settle. Few: each keeps its ask and result as models, which the
collector would otherwise walk at every young collection for 256 more cycles."""

EventWatcher = Callable[[Event], None]


class _SessionLocks:
    """One lock per session for this process's changes to its queue. A session is in
    `held` only while its lock is held (with its waiters, first come first served), so
    an idle session costs nothing, and taking a free lock allocates no lock object."""

    __slots__ = ("held",)

    def __init__(self) -> None:
        self.held: dict[str, deque[asyncio.Future[None]]] = {}

    def take(self, session_id: str) -> bool:
        """Take the lock if it is free; False when someone holds it (then `wait`)."""
        if session_id in self.held:
            return False
        self.held[session_id] = deque()
        return True

    async def wait(self, session_id: str) -> None:
        """Take the lock once whoever holds it (and those before us) releases it."""
        if self.take(session_id):
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.held[session_id].append(future)
        try:
            await future
        except BaseException:
            if future.done() and not future.cancelled():
                self.release(session_id)  # handed to us as we were cancelled: pass it on
            raise

    def release(self, session_id: str) -> None:
        """Hand the lock to the first waiter still waiting, else free it."""
        waiters = self.held[session_id]
        while waiters:
            future = waiters.popleft()
            if not future.done():
                future.set_result(None)
                return
        del self.held[session_id]


class Parking:
    """Park, settle and wait on interactions in one store. Owned by a `Runtime`."""

    def __init__(self, store: Store, *, clock: Callable[[], float]) -> None:
        self.store = store
        self.deadlines = Deadlines(self._expire, clock=clock)
        self._locks = _SessionLocks()
        self._waiters: dict[str, list[asyncio.Future[Interaction | None]]] = {}
        self._timeouts = WaitTimeouts()
        self._watchers: list[EventWatcher] = []
        self._live: OrderedDict[str, AskResult] = OrderedDict()
        self._recent: OrderedDict[str, Interaction] = OrderedDict()  # pending
        self._settled: OrderedDict[str, Interaction] = OrderedDict()
        self._cursor = 0
        self._newest = 0
        self._own: set[int] = set()  # ids of events appended here, not yet passed
        self._writing = 0  # parks and settles of ours under way
        self._reading = False  # the reader is in the middle of reading the log
        self._wake = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None
        self._recovery: asyncio.Task[None] | None = None

    # -- lifecycle -------------------------------------------------------------------

    async def open(self, *, recover_in_background: bool = False) -> None:
        self._cursor = self._newest = await self.store.last_event_id()
        self.store.add_listener(self._heard)
        self._reader = asyncio.create_task(self._read(), name="midturn-runtime-reader")
        self.deadlines.start()
        if recover_in_background:
            self._recovery = asyncio.create_task(self._recover_logged(), name="midturn-recover")
        else:
            await self._recover()

    async def _recover_logged(self) -> None:
        try:
            await self._recover()
        except asyncio.CancelledError:
            raise
        except Exception:  # deadlines not armed stay pending until the next start
            log.exception("arming the deadlines of pending interactions failed")

    async def aclose(self) -> None:
        self.store.remove_listener(self._heard)
        recovery, self._recovery = self._recovery, None
        if recovery is not None:
            recovery.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await recovery
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
        await self.deadlines.aclose()
        self._timeouts.close()
        for interaction_id, futures in self._waiters.items():
            for future in futures:
                if not future.done():
                    future.set_exception(
                        UsageError(
                            f"the runtime closed while waiting for {interaction_id}; it is "
                            "still pending: wait for it again from a new runtime"
                        )
                    )
        self._waiters.clear()

    async def _recover(self) -> None:
        """Settle what passed its deadline while no runtime ran; schedule the rest. Only
        ids and deadlines are read (`Store.pending_deadlines`), a page at a time with the
        event loop free between pages: 100,000 pending interactions cost a narrow query
        per page and a heap, not 100,000 models; an overdue one is read whole when it is
        settled."""
        now = utcnow()
        after: str | None = None
        while page := await self.store.pending_deadlines(after=after, limit=RECOVERY_PAGE):
            for interaction_id, deadline in page:
                if deadline <= now:
                    try:
                        await self._expire(interaction_id)
                    except Exception:  # a transient store error: the timer retries it
                        delay = self.deadlines.retry(interaction_id)
                        log.exception(
                            "timing out interaction %s failed; retrying in %.1f s",
                            interaction_id,
                            delay,
                        )
                else:
                    self.deadlines.schedule(interaction_id, deadline)
            after = page[-1][0]
            await asyncio.sleep(0)  # let requests in between pages

    # -- parking ---------------------------------------------------------------------

    async def park(
        self, interaction: Interaction, *, announce: bool = True
    ) -> tuple[Interaction, bool]:
        """Persist `interaction` with its requested event (and `turn_waiting` when it is
        the turn's first pending one). A repeated `(session_id, tool_call_id)` returns the
        existing interaction and writes nothing. `announce=False` parks silently (for an
        interaction settled at once, which nobody needs to see)."""
        parked = await self._park(interaction, announce=announce, unless_ended=False)
        assert parked is not None
        return parked

    async def park_unless_ended(
        self, interaction: Interaction, *, fresh: bool = False
    ) -> tuple[Interaction, bool] | None:
        """`park`, unless the interaction's turn has ended: then nothing is written and
        None is returned. The store reads the turn's end in its park (one transaction on
        SQLite and in memory: `Store.park_sees_turn_end`).

        `fresh=True` says the caller stamped `created_at` (and the deadline from it) with
        nothing awaited since: when the session's lock is free that stamp is already in
        queue order (every park before it stamped and released the lock earlier), so it
        stands; otherwise the interaction is stamped again under the lock, as always."""
        return await self._park(interaction, announce=True, unless_ended=True, fresh=fresh)

    async def _park(
        self, interaction: Interaction, *, announce: bool, unless_ended: bool, fresh: bool = False
    ) -> tuple[Interaction, bool] | None:
        self._writing += 1  # its events are ours: `_heard` leaves them to `_wrote`
        try:
            session_id = interaction.session_id
            if not self._locks.take(session_id):  # this process's changes to a session queue up
                await self._locks.wait(session_id)
                fresh = False  # others may have parked since the caller's stamp
            try:
                # The store is idempotent by (session_id, tool_call_id): a repeat writes nothing.
                # Stamped under the lock, so creation order is queue order
                # (docs/runtime.md#one-queue-per-session).
                if not fresh:
                    now = utcnow()
                    stamp: dict[str, datetime] = {"created_at": now}
                    if interaction.deadline is not None:
                        stamp["deadline"] = now + (interaction.deadline - interaction.created_at)
                    interaction = copy_interaction(interaction, stamp)
                if unless_ended:
                    made = await self.store.create_unless_ended(
                        interaction, _RequestedEvents(interaction)
                    )
                    if made is None:
                        return None
                    stored, created, appended = made
                elif announce:
                    # The queue position and the turn's state are read in the store's own
                    # write transaction (one trip on SQLite), not before it.
                    stored, created, appended = await self.store.create_queued(
                        interaction, _RequestedEvents(interaction)
                    )
                else:
                    stored, created, appended = await self.store.create_interaction(interaction)
            finally:
                self._locks.release(session_id)
            self._keep(stored)
            for event in appended:
                self._own.add(event.id)
            if created:
                log.debug(
                    "parked %s %s (session %s, turn %s)",
                    stored.kind,
                    stored.id,
                    stored.session_id,
                    stored.turn_id,
                )
                if stored.deadline is not None and announce:
                    self.deadlines.schedule(stored.id, stored.deadline)
                self._deliver(appended)
            return stored, created
        finally:
            self._wrote()

    # -- settling --------------------------------------------------------------------

    async def settle(
        self,
        current: Interaction,
        status: InteractionStatus,
        *,
        result: AskResult | None = None,
        decision: PermissionDecision | None = None,
        by: str | None = None,
        announce: bool = True,
        resumes: bool = True,
    ) -> Settle:
        """Compare-and-set `current` (as read, pending) into `status`. Only the winner's
        events are appended; a loser gets the interaction as the winner left it.

        `announce=False` appends no settle event; `resumes=False` never appends
        `turn_resumed` (for an interaction that never made the turn wait)."""
        self._writing += 1  # its events are ours: `_heard` leaves them to `_wrote`
        try:
            stored_result = result.without_secrets() if result is not None else None
            session_id = current.session_id
            if not self._locks.take(session_id):
                await self._locks.wait(session_id)
            try:
                settled_at = utcnow()
                update: dict[str, object] = {
                    "status": status,
                    "settled_at": settled_at,
                    "settled_by": by,
                }
                if stored_result is not None:
                    update["result"] = stored_result
                if decision is not None:
                    update["decision"] = decision
                preview = copy_interaction(current, update)
                events: list[NewEvent] = []
                if announce:
                    announced = settled_event(preview)
                    if announced is not None:
                        events.append(announced)
                resumed = (
                    (turn_event("turn_resumed", current.session_id, current.turn_id, settled_at),)
                    if resumes
                    else ()
                )
                # Whether it was the turn's last pending interaction is decided in the
                # store's settle transaction (one trip on SQLite).
                outcome = await self.store.settle_in_turn(
                    current.id,
                    session_id=current.session_id,
                    turn_id=current.turn_id,
                    status=status,
                    result=stored_result,
                    decision=decision,
                    settled_by=by,
                    settled_at=settled_at,
                    events=events,
                    turn_done=resumed,
                )
            finally:
                self._locks.release(session_id)
            self._keep(outcome.interaction)
            for event in outcome.events:
                self._own.add(event.id)
            if outcome.won:
                log.debug("settled %s %s as %s by %s", current.kind, current.id, status, by)
                self.deadlines.drop(current.id)
                if result is not None and result is not stored_result:
                    self._remember(current.id, result)
                self._resolve(outcome.interaction)
                self._deliver(outcome.events)
            return outcome
        finally:
            self._wrote()

    async def _expire(self, interaction_id: str) -> None:
        current = await self.store.get_interaction(interaction_id)
        if current is not None and current.pending:
            await self._expire_now(current)

    async def _expire_now(self, current: Interaction) -> None:
        if current.kind == "ask" and current.ask is not None:
            await self.settle(current, "timed_out", result=timeout_result(current.ask), by="system")
        else:
            decision = PermissionDecision(outcome="timed_out")
            await self.settle(current, "timed_out", decision=decision, by="system")

    # -- what this process knows ----------------------------------------------------

    def _keep(self, interaction: Interaction) -> None:
        key = interaction.id
        if interaction.pending:
            kept, most = self._recent, RECENT_KEPT
        else:
            self._recent.pop(key, None)
            kept, most = self._settled, SETTLED_KEPT
        if key in kept:
            kept.move_to_end(key)
        kept[key] = interaction
        if len(kept) > most:
            kept.popitem(last=False)

    async def read(self, interaction_id: str) -> Interaction:
        """The interaction, from what this process parked or settled when it can be
        trusted without the store: a settled one is final; a pending copy may be stale,
        which is safe for a settle (the compare-and-set decides). Raises `NotFound`."""
        known = self._settled.get(interaction_id)
        if known is None:
            known = self._recent.get(interaction_id)
        if known is not None:
            return known
        found = await self.store.get_interaction(interaction_id)
        if found is None:
            raise NotFound(f"no interaction with id {interaction_id!r}; check the id")
        return found

    # -- secrets ---------------------------------------------------------------------

    def _remember(self, interaction_id: str, live: AskResult) -> None:
        self._live[interaction_id] = live
        while len(self._live) > SECRETS_KEPT:
            self._live.popitem(last=False)

    def with_secrets(self, interaction: Interaction) -> Interaction:
        """The interaction with its live result, when this process holds one."""
        live = self._live.get(interaction.id)
        if live is None or interaction.result is None:
            return interaction
        return copy_interaction(interaction, {"result": live})

    def live_result(self, interaction_id: str) -> AskResult | None:
        return self._live.get(interaction_id)

    # -- waiting ---------------------------------------------------------------------

    async def wait(self, interaction_id: str, timeout: float | None = None) -> Interaction:
        """The interaction once settled (with its live secrets, if held here), or as it
        stands after `timeout` seconds."""
        if timeout is not None and timeout < 0:
            raise UsageError(f"timeout must be 0 or more seconds (got {timeout}), or None")
        known = self._settled.get(interaction_id)
        if known is not None:  # settled is final: no store read
            return self.with_secrets(known)
        future: asyncio.Future[Interaction | None] = asyncio.get_running_loop().create_future()
        futures = self._waiters.setdefault(interaction_id, [])
        futures.append(future)
        try:
            # One parked here and still pending needs no read to start waiting (the
            # gateway waits right after the park): a settle elsewhere reaches the future
            # through the log, like one that comes after a read. A look (timeout 0)
            # reads the store, which may know of a settle not yet announced.
            current = self._recent.get(interaction_id) if timeout != 0 else None
            if current is None:
                current = await self.store.get_interaction(interaction_id)
            if current is None:
                raise NotFound(f"no interaction with id {interaction_id!r}; check the id")
            if not current.pending or timeout == 0:
                return self.with_secrets(current)
            if timeout is None:  # no timeout, so no fallback to it: held by nobody
                del current  # while waiting (a store may have made it just for this read)
                settled = await future
                assert settled is not None, "only a timeout resolves a wait with None"
                return self.with_secrets(settled)
            # not asyncio.timeout (a loop timer and a task lookup per wait) nor wait_for
            # (on Python 3.11 its own waiter costs the woken request a loop turn more):
            # the timeout resolves the future with None, from one timer for all waits
            key = self._timeouts.add(future, timeout)
            try:
                settled = await future
            finally:
                self._timeouts.remove(key)
            if settled is None:  # timed out
                found = await self.store.get_interaction(interaction_id)
                return self.with_secrets(found or current)
            return self.with_secrets(settled)
        finally:
            if future in futures:
                futures.remove(future)
            if not futures and self._waiters.get(interaction_id) is futures:
                del self._waiters[interaction_id]

    def _resolve(self, settled: Interaction) -> None:
        for future in self._waiters.pop(settled.id, ()):
            if not future.done():
                future.set_result(settled)

    # -- events from the log ---------------------------------------------------------

    def watch(self, watcher: EventWatcher) -> Callable[[], None]:
        """Call `watcher` with every event this process learns of (its own at once,
        others' as the store announces them; possibly twice: dedupe by id). Returns a
        function that stops watching."""
        self._watchers.append(watcher)

        def stop() -> None:
            if watcher in self._watchers:
                self._watchers.remove(watcher)

        return stop

    def _deliver(self, events: tuple[Event, ...] | list[Event]) -> None:
        if not self._watchers:
            return
        for event in events:
            for watcher in list(self._watchers):
                try:
                    watcher(event)
                except Exception:  # a watcher's bug must not break a settle
                    log.exception("an event watcher failed on event %s", event.id)

    def _heard(self, newest: int) -> None:
        self._newest = max(self._newest, newest)
        if not self._writing:
            self._wake.set()
        # else the store tells of a write of ours before we know its events' ids: the
        # write's end (`_wrote`) wakes the reader only if something else is new

    def _wrote(self) -> None:
        """A park or settle of ours ended, its events (if any) in `_own`: wake the reader
        if the log holds more than what this process appended (a reader not in the
        middle of a read skips ours here; one reading is woken to look again)."""
        self._writing -= 1
        if self._newest > self._cursor and not self._reading:
            self._skip_own()
        if self._newest > self._cursor:
            self._wake.set()

    def _skip_own(self) -> None:
        """Move the cursor over events this process appended (handled when appended)."""
        own = self._own
        while self._cursor + 1 in own:
            self._cursor += 1
            own.discard(self._cursor)
        if own and min(own) <= self._cursor:
            self._own = {event_id for event_id in own if event_id > self._cursor}

    async def _read(self) -> None:
        """Follow the log for what other processes (or other runtimes on this store)
        append: their settles wake waiters here and reach watchers; their requested
        interactions' deadlines are armed here too, so a deadline holds while any runtime
        on the store runs. Events this process appended are skipped without a read."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            self._skip_own()
            if self._cursor >= self._newest:
                continue
            self._reading = True
            try:
                while True:
                    page = await self.store.read_events(self._cursor)
                    for event in page:
                        self._cursor = event.id
                        if event.id in self._own:
                            self._own.discard(event.id)
                        else:
                            self._foreign(event)
                    self._skip_own()
                    if len(page) < 1000:
                        break
            except asyncio.CancelledError:
                raise
            except Exception:  # the store failed this time; the next append retries
                log.exception("reading the event log after id %s failed", self._cursor)
            finally:
                self._reading = False

    def _foreign(self, event: Event) -> None:
        if event.type in SETTLE_EVENT_TYPES:
            settled = interaction_from(event)
            if settled is not None:
                if settled.id in self._recent or settled.id in self._settled:
                    self._keep(settled)
                self.deadlines.drop(settled.id)
                self._resolve(settled)
        elif event.type in REQUESTED_EVENT_TYPES:
            parked = interaction_from(event)
            if parked is not None and parked.deadline is not None:
                self.deadlines.schedule(parked.id, parked.deadline)
        self._deliver([event])


class _RequestedEvents:
    """The events that park an interaction, given its queue (`Store.create_queued`): its
    requested event at `position`, and `turn_waiting` when it is its turn's first pending
    one. The interaction is serialized once, up front, not inside the store's
    transaction."""

    __slots__ = ("data", "interaction")

    def __init__(self, interaction: Interaction) -> None:
        self.interaction = interaction
        self.data = requested_data(interaction)

    def __call__(self, position: int, turn_waiting: bool) -> list[NewEvent]:
        item = self.interaction
        events = [requested_event(item, position, data=self.data)]
        if not turn_waiting:
            events.append(
                turn_event("turn_waiting", item.session_id, item.turn_id, item.created_at)
            )
        return events


def deadline_after(seconds: float | None, start: datetime) -> datetime | None:
    return None if seconds is None else start + timedelta(seconds=seconds)
