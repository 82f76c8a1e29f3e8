"""The `Store` interface every backend implements (docs/storage.md).

A store keeps three things: interactions (asks and permissions, pending or settled),
sessions (with hashed tokens, for the gateway) and an append-only event log. Every
change that publishes events writes the change and its events in one transaction, so an
event is never visible before the state it announces ("persist, then publish").

Settling is a compare-and-set on `status = 'pending'`: of any number of concurrent
settles of one interaction, in one process or many, exactly one wins.

Listeners: `add_listener(callback)` registers a plain callable that the store calls with
the newest event id whenever it learns that events were appended — by this store object,
or (PostgreSQL) by another process. Callbacks must be cheap and must not raise; they
typically set an asyncio event that wakes readers, which then read the log by id.
"""

from __future__ import annotations

import abc
from collections import deque
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field

from midturn.contract._context import bounded
from midturn.contract._interactions import (
    Event,
    Interaction,
    InteractionKind,
    InteractionStatus,
    NewEvent,
    PermissionDecision,
    utcnow,
)
from midturn.contract._models import AskResult
from midturn.errors import UsageError
from midturn.store._outbox import Delivery, WebhookDestination

__all__ = ["EventListener", "Pruned", "QueuedEvents", "SessionRecord", "Settle", "Store"]

EventListener = Callable[[int], None]
QueuedEvents = Callable[[int, bool], Sequence[NewEvent]]
"""`events(position, turn_waiting)`: the events to append with a new interaction, given
how many interactions of its session are pending before it and whether one of them
belongs to its turn (see `Store.create_queued`)."""


MAX_TITLE = 200
"""The longest session title shown; a longer one is cut and ends with `…`."""


class SessionRecord(BaseModel):
    """A gateway session. Tokens are stored only as hashes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    agent_token_hash: str
    answer_token_hash: str
    created_at: datetime = Field(default_factory=utcnow)
    meta: dict[str, Any] = Field(default_factory=dict)

    @property
    def title(self) -> str | None:
        """The session's name for a person: `meta.title` as one line of plain text
        (control characters and escape sequences removed, whitespace folded, at most
        `MAX_TITLE` characters), or None. The inbox, `midturn answer` and notifications
        all show this."""
        title = self.meta.get("title")
        return bounded(title, MAX_TITLE, multiline=False) if isinstance(title, str) else None


class Settle(BaseModel):
    """The outcome of a compare-and-set settle: the interaction as it now stands, whether
    this call was the one that settled it, and the events it appended (empty when it lost).
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    interaction: Interaction
    won: bool
    events: tuple[Event, ...] = ()


class Pruned(BaseModel):
    """What one `Store.prune` deleted: how many interactions, how many events."""

    model_config = ConfigDict(frozen=True)

    interactions: int = 0
    events: int = 0


class Store(abc.ABC):
    """Persistence for interactions, sessions and events. Use as an async context manager
    (or call `open()` and `aclose()`)."""

    url: str
    park_sees_turn_end: ClassVar[bool] = False
    """Whether `create_unless_ended` reads the turn's end and inserts as one step, so
    that a turn ending after it (`end_turn`) finds the interaction it created pending.
    When False the runtime reads the turn's end once more after parking."""

    def __init__(self) -> None:
        self._listeners: list[EventListener] = []

    # -- lifecycle -------------------------------------------------------------------

    @abc.abstractmethod
    async def open(self) -> None:
        """Connect and apply pending migrations. Idempotent."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Release connections. Idempotent."""

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    @abc.abstractmethod
    async def schema_version(self) -> int:
        """The number of the newest migration applied."""

    # -- listeners -------------------------------------------------------------------

    def add_listener(self, listener: EventListener) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: EventListener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def notify_listeners(self, last_event_id: int) -> None:
        """Call every listener with the newest event id. A backend calls this after it
        appended events, and whenever it learns that another process did."""
        for listener in list(self._listeners):
            listener(last_event_id)

    # -- sessions --------------------------------------------------------------------

    @abc.abstractmethod
    async def create_session(self, session: SessionRecord) -> None:
        """Store a new session. Raises `UsageError` if the id exists."""

    @abc.abstractmethod
    async def get_session(self, session_id: str) -> SessionRecord | None: ...

    @abc.abstractmethod
    async def list_sessions(self) -> list[SessionRecord]: ...

    # -- interactions ----------------------------------------------------------------

    @abc.abstractmethod
    async def create_interaction(
        self, interaction: Interaction, events: Sequence[NewEvent] = ()
    ) -> tuple[Interaction, bool, tuple[Event, ...]]:
        """Insert a new interaction and append its events in one transaction.

        Idempotent by `(session_id, tool_call_id)` when `tool_call_id` is set: if one
        exists, nothing is written and `(existing, False, ())` is returned. Otherwise
        `(interaction, True, appended_events)`.
        """

    async def create_queued(
        self, interaction: Interaction, events: QueuedEvents
    ) -> tuple[Interaction, bool, tuple[Event, ...]]:
        """`create_interaction`, with its events chosen from the session's queue: they
        are `events(position, turn_waiting)`, where `position` is the number of pending
        interactions of `interaction.session_id` and `turn_waiting` whether one of them
        has `interaction.turn_id`. `events` must be cheap and must not block; a backend
        may call it inside its write transaction, on another thread, more than once (for
        the queue it expected, then for the one it found: the last call's events are
        written; PostgreSQL does), or not at all when the `tool_call_id` repeats
        (nothing is written then).

        This version reads the queue, then creates: two steps, which a backend overrides
        to make the position exact across processes (every shipped backend does: memory
        and SQLite in one transaction, PostgreSQL under a per-session lock)."""
        queue = await self.list_interactions(session_id=interaction.session_id, status="pending")
        waiting = any(other.turn_id == interaction.turn_id for other in queue)
        return await self.create_interaction(interaction, events(len(queue), waiting))

    async def create_unless_ended(
        self, interaction: Interaction, events: QueuedEvents
    ) -> tuple[Interaction, bool, tuple[Event, ...]] | None:
        """`create_queued`, unless the interaction's turn has ended (`end_turn`): then
        nothing is written (a repeated `tool_call_id` included) and None is returned.

        This version reads the turn, then creates: two steps. A backend that does both
        in one transaction (memory and SQLite) says so with `park_sees_turn_end`."""
        if await self.turn_ended(interaction.session_id, interaction.turn_id):
            return None
        return await self.create_queued(interaction, events)

    @abc.abstractmethod
    async def get_interaction(self, interaction_id: str) -> Interaction | None: ...

    @abc.abstractmethod
    async def find_by_tool_call(self, session_id: str, tool_call_id: str) -> Interaction | None: ...

    @abc.abstractmethod
    async def settle(
        self,
        interaction_id: str,
        *,
        status: InteractionStatus,
        result: AskResult | None = None,
        decision: PermissionDecision | None = None,
        settled_by: str | None = None,
        settled_at: datetime | None = None,
        events: Sequence[NewEvent] = (),
    ) -> Settle:
        """Compare-and-set from `pending` to `status`, appending `events` in the same
        transaction when (and only when) this call wins. `result` must hold no secret
        value. Raises `NotFound` for an unknown id."""

    async def settle_in_turn(
        self,
        interaction_id: str,
        *,
        session_id: str,
        turn_id: str,
        status: InteractionStatus,
        result: AskResult | None = None,
        decision: PermissionDecision | None = None,
        settled_by: str | None = None,
        settled_at: datetime | None = None,
        events: Sequence[NewEvent] = (),
        turn_done: Sequence[NewEvent] = (),
    ) -> Settle:
        """`settle`, also appending `turn_done` after `events` when this call wins and no
        other interaction of the turn (`session_id`, `turn_id`: the interaction's own)
        is still pending.

        This version reads the turn, then settles: two steps, which a backend overrides
        (every shipped backend does, as for `create_queued`)."""
        if turn_done:
            others = await self.list_interactions(
                session_id=session_id, turn_id=turn_id, status="pending"
            )
            if not any(other.id != interaction_id for other in others):
                events = [*events, *turn_done]
        return await self.settle(
            interaction_id,
            status=status,
            result=result,
            decision=decision,
            settled_by=settled_by,
            settled_at=settled_at,
            events=events,
        )

    @abc.abstractmethod
    async def list_interactions(
        self,
        *,
        session_id: str | None = None,
        turn_id: str | None = None,
        status: InteractionStatus | None = None,
        kind: InteractionKind | None = None,
        limit: int | None = None,
        after: str | None = None,
    ) -> list[Interaction]:
        """Interactions matching every filter given, oldest first (creation order; ties
        broken by insertion order), at most `limit` of them. With `after` (an
        interaction id, of any status), only those that come after it in that order: a
        keyset page, stable while others are inserted or settled. An `after` that names
        no interaction raises `UsageError`."""

    async def count_pending(self) -> int:
        """How many interactions are pending, in every session. A backend answers it
        from an index or a counter, without loading interactions (the gateway's
        `/metrics` calls it on every scrape); this version counts a listing."""
        return len(await self.list_interactions(status="pending"))

    # -- turns -----------------------------------------------------------------------

    @abc.abstractmethod
    async def end_turn(
        self, session_id: str, turn_id: str, *, how: str, at: datetime | None = None
    ) -> bool:
        """Record that the turn ended (`how`: `stopped` or `finished`). Idempotent: the
        first record stays. Returns whether this call made it. An ended turn never
        parks again and its `allow_for_turn` grants are over, in every process."""

    @abc.abstractmethod
    async def turn_ended(self, session_id: str, turn_id: str) -> bool:
        """Whether `end_turn` was recorded for the turn."""

    async def pending_deadlines(
        self, *, after: str | None = None, limit: int = 5000
    ) -> list[tuple[str, datetime]]:
        """`(id, deadline)` of up to `limit` pending interactions that have a deadline,
        soonest first (ties by id), starting after the pending interaction `after` (the
        last id of the previous page), for a runtime to arm its timers on start, a page
        at a time, the most urgent first.

        This version reads every pending interaction whole; the SQL backends override it
        with an indexed query that returns only the two values, so a start with 100,000
        pending builds no model (docs/storage.md). The SQL backends order by the
        deadline's ISO text, which may misorder two deadlines within one second."""
        pending = await self.list_interactions(status="pending")
        timed = sorted((item.deadline, item.id) for item in pending if item.deadline is not None)
        ids = [key for _, key in timed]
        start = ids.index(after) + 1 if after in ids else 0
        return [(key, deadline) for deadline, key in timed[start : start + max(limit, 1)]]

    # -- events ----------------------------------------------------------------------

    @abc.abstractmethod
    async def append_events(self, events: Sequence[NewEvent]) -> tuple[Event, ...]:
        """Append events that change no interaction (e.g. `turn_waiting`)."""

    @abc.abstractmethod
    async def read_events(
        self, after_id: int = 0, *, session_id: str | None = None, limit: int = 1000
    ) -> list[Event]:
        """Events with id > `after_id`, oldest first, optionally of one session."""

    @abc.abstractmethod
    async def last_event_id(self) -> int: ...

    async def tail_start(self, count: int, *, session_id: str | None = None) -> int:
        """The event id after which the newest `count` events (of one session, or all)
        follow: `read_events(tail_start(n))` gives a recent window, not the whole log.
        0 when there are no more than `count`.

        This version counts back from the newest id (a window of the newest `count` ids
        of the log, of which a session may own fewer); the backends give the exact
        window, by index."""
        if count < 0:
            raise UsageError(f"count must be 0 or more (got {count})")
        return max(0, await self.last_event_id() - count)

    async def read_events_of_types(
        self,
        types: Collection[str],
        after_id: int = 0,
        *,
        session_id: str | None = None,
        limit: int = 1000,
    ) -> list[Event]:
        """Like `read_events`, but only the events whose type is one of `types` (all of
        them when `types` is empty): up to `limit` of those, oldest first. The ids are
        the log's own, so a reader resumes after the last one it got.

        This version reads `read_events` pages and keeps the matching events; the
        backends override it with one query."""
        if not types:
            return await self.read_events(after_id, session_id=session_id, limit=limit)
        wanted = frozenset(types)
        found: list[Event] = []
        while len(found) < limit:
            page = await self.read_events(after_id, session_id=session_id, limit=limit)
            found += [event for event in page if event.type in wanted]
            if len(page) < limit:
                break
            after_id = page[-1].id
        return found[:limit]

    async def tail_start_of_types(
        self, types: Collection[str], count: int, *, session_id: str | None = None
    ) -> int:
        """The event id after which the newest `count` events whose type is one of
        `types` follow (`tail_start` when `types` is empty):
        `read_events_of_types(types, tail_start_of_types(types, n))` gives them.

        This version reads the whole log (of the session) once; the backends override it
        with a query that counts back from the newest event."""
        if count < 0:
            raise UsageError(f"count must be 0 or more (got {count})")
        if not types:
            return await self.tail_start(count, session_id=session_id)
        wanted = frozenset(types)
        newest: deque[int] = deque(maxlen=count + 1)
        after_id = 0
        while True:
            page = await self.read_events(after_id, session_id=session_id, limit=1000)
            newest.extend(event.id for event in page if event.type in wanted)
            if len(page) < 1000:
                break
            after_id = page[-1].id
        return newest[0] if len(newest) > count else 0

    # -- retention -------------------------------------------------------------------

    @abc.abstractmethod
    async def prunable(self, settled_before: datetime, *, limit: int = 1000) -> list[Interaction]:
        """Up to `limit` settled interactions whose `settled_at` is before
        `settled_before`, oldest first (creation order). Never a pending one."""

    @abc.abstractmethod
    async def count_prunable(self, settled_before: datetime) -> int:
        """How many interactions `prunable(settled_before)` would give without a limit."""

    @abc.abstractmethod
    async def prune(self, interaction_ids: Sequence[str]) -> Pruned:
        """Delete these interactions, in one transaction, with their events, when they are
        settled (a pending interaction or an unknown id is left as it is). Also deleted:
        the turn events (`turn_waiting`, `turn_resumed`) of their turns that are older
        than every event left of the turn's interactions — all of them when none is left.

        The newest event of the log is never deleted, so `last_event_id()` never goes
        back; ids are never reused. A reader resuming after an id gets the events kept
        after it (docs/storage.md, "Retention")."""

    # -- the notification outbox (docs/notifications.md) ------------------------------
    # A backend without an outbox leaves these as they are: notifications then refuse
    # to start on it, with this message. Every shipped backend implements them.

    def _no_outbox(self) -> UsageError:
        return UsageError(
            f"the {type(self).__name__} store keeps no notification outbox; use memory://, "
            "sqlite:// or postgresql:// for notifications"
        )

    async def create_webhook(self, destination: WebhookDestination) -> None:
        """Store a new destination. Raises `UsageError` if the id exists."""
        raise self._no_outbox()

    async def get_webhook(self, webhook_id: str) -> WebhookDestination | None:
        raise self._no_outbox()

    async def list_webhooks(self) -> list[WebhookDestination]:
        """Every destination, oldest first."""
        raise self._no_outbox()

    async def update_webhook(self, destination: WebhookDestination) -> bool:
        """Replace the stored destination of `destination.id`; False if there is none."""
        raise self._no_outbox()

    async def delete_webhook(self, webhook_id: str) -> bool:
        """Delete a destination and all its deliveries; False if there is none."""
        raise self._no_outbox()

    async def outbox_cursor(self) -> int:
        """The id of the last event fanned out into deliveries (0 at first)."""
        raise self._no_outbox()

    async def enqueue_deliveries(
        self, deliveries: Sequence[Delivery], *, cursor: tuple[int, int] | None = None
    ) -> int | None:
        """Insert deliveries in one transaction, skipping any whose
        `(destination_id, key)` is stored already (so a fan-out done twice writes each
        once). With `cursor=(seen, new)` the same transaction first moves the outbox
        cursor from `seen` to `new`, a compare-and-set: when the cursor is not at `seen`
        (another process moved it) nothing is written and None is returned. Otherwise
        the number of deliveries inserted. A delivery given with a `lease_owner` and
        `lease_until` is stored leased to that owner (the fan-out hands a delivery due now
        straight to its own sender, without a claim)."""
        raise self._no_outbox()

    async def claim_deliveries(
        self, owner: str, *, now: datetime, lease_until: datetime, limit: int = 100
    ) -> list[Delivery]:
        """Atomically lease up to `limit` pending deliveries due at `now` (whose
        `next_attempt_at` has come and whose lease, if any, has run out) to `owner`
        until `lease_until`, soonest due first. Of any number of concurrent claims, in
        any number of processes, each delivery goes to one."""
        raise self._no_outbox()

    async def finish_delivery(self, delivery: Delivery, owner: str) -> bool:
        """Record an attempt's outcome (`status`, `attempts`, `next_attempt_at`,
        `last_error`, `delivered_at` of `delivery`) and release the lease, only while
        `owner` holds it; False when the lease was lost (nothing written)."""
        raise self._no_outbox()

    async def cancel_deliveries(self, interaction_id: str, types: Sequence[str]) -> int:
        """Mark the pending deliveries of `interaction_id` whose type is one of `types`
        `cancelled`; returns how many."""
        raise self._no_outbox()

    async def get_delivery(self, delivery_id: str) -> Delivery | None:
        raise self._no_outbox()

    async def list_deliveries(
        self, destination_id: str, *, limit: int = 100, before: int | None = None
    ) -> list[Delivery]:
        """A destination's deliveries, newest first (by `seq`), at most `limit`, only
        those with `seq` below `before` when given (a keyset page)."""
        raise self._no_outbox()

    async def replay_delivery(
        self, delivery_id: str, *, now: datetime, expires_at: datetime
    ) -> Delivery | None:
        """Make a delivery `pending` again, due at `now`, with a new retry window and
        no lease (attempts and the last error kept). None for an unknown id."""
        raise self._no_outbox()

    async def next_delivery_due(self) -> datetime | None:
        """When the soonest pending delivery can next be claimed (its `next_attempt_at`,
        or its lease's end when later), None when none is pending."""
        raise self._no_outbox()

    async def count_deliveries(self, destination_id: str | None = None) -> dict[str, int]:
        """How many deliveries there are by status (of one destination, or all)."""
        raise self._no_outbox()
