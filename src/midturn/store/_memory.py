"""The in-memory store (`memory://`): for tests and for hosts that need no durability.

Everything lives in a few plain indexes, so a parked ask costs little beyond the
interaction itself: one dict entry by id, one by `(session_id, tool_call_id)`, one in its
session's ordered id set and, while pending, one in its session's pending set and one in
the store's. No task, lock or future per interaction.

An interaction is kept as a small row (`_Row`: the fields the store filters and sorts
on) and its compact JSON, as the SQL stores keep it, not as a tree of models: a parked
ask with its two events costs about a quarter of what the models did (bench/roundtrip.py).
Events are kept in columns, with no object per event (`_memory_events.py`); a requested
or settle event whose data is `{"interaction": <the interaction>, ...}` keeps a reference
to the interaction's JSON, not a copy. A settle updates the row in place. Models are made
again when read,
and the most recent `MODELS_KEPT` are kept made, so the hot path (park, wait, settle)
reads no JSON.

Concurrency: asyncio runs one coroutine at a time, and no method here awaits between
reading and writing, so every method is atomic — in particular `settle`'s check of
`status == 'pending'` and its write are one step, and exactly one of many concurrent
settles wins. The store is not for use from several threads.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Sequence
from datetime import datetime

from pydantic import TypeAdapter

from midturn.contract._interactions import (
    Event,
    Interaction,
    InteractionKind,
    InteractionStatus,
    NewEvent,
    PermissionDecision,
    utcnow,
)
from midturn.contract._models import AskResult, from_fields
from midturn.errors import NotFound, UsageError
from midturn.store._base import Pruned, QueuedEvents, SessionRecord, Settle, Store
from midturn.store._codec import (
    NOT_OPEN,
    as_utc,
    check_events,
    check_limit,
    check_new_interaction,
    check_session,
    event_from,
    interaction_json,
    settled_copy,
    unknown_cursor,
)
from midturn.store._memory_events import EventLog, pack
from midturn.store._memory_outbox import MemoryOutbox

__all__ = ["MODELS_KEPT", "SETTLED_MODELS_KEPT", "MemoryStore"]

MODELS_KEPT = 256
"""How many pending interactions the store keeps as models besides their JSON (newest
used)."""
SETTLED_MODELS_KEPT = 32
"""How many settled ones: a settled interaction is read again soon after its settle (a
`wait`) or rarely, so a few suffice, and each kept keeps its ask and result as models
for the collector to walk."""

_INTERACTION = TypeAdapter(Interaction)
# its validator called directly: the adapter's wrapper costs more than the work
_load_interaction = _INTERACTION.validator.validate_json


class _Row:
    """An interaction as kept: what the store filters and sorts on, and its JSON."""

    __slots__ = (
        "body",
        "created_at",
        "id",
        "kind",
        "seq",
        "session_id",
        "settled_at",
        "status",
        "tool_call_id",
        "turn_id",
    )

    def __init__(self, interaction: Interaction, seq: int) -> None:
        self.id = interaction.id
        self.kind = interaction.kind
        self.session_id = interaction.session_id
        self.turn_id = interaction.turn_id
        self.tool_call_id = interaction.tool_call_id
        self.status = interaction.status
        self.created_at = as_utc(interaction.created_at)
        self.settled_at = None if interaction.settled_at is None else as_utc(interaction.settled_at)
        self.seq = seq
        self.body: bytes = interaction_json(interaction)

    def settle(self, settled: Interaction) -> None:
        """Hold `settled`, this row's interaction settled (the same row: no new object)."""
        self.status = settled.status
        self.settled_at = None if settled.settled_at is None else as_utc(settled.settled_at)
        self.body = interaction_json(settled)


class MemoryStore(MemoryOutbox, Store):
    """A store that keeps everything in this process's memory; gone when it exits.

    Closing and reopening the same object keeps its contents.
    """

    park_sees_turn_end = True  # nothing else runs between the check and the insert

    def __init__(self, url: str = "memory://") -> None:
        super().__init__()
        if not url.startswith("memory://"):
            raise UsageError(f"MemoryStore needs a memory:// URL, got {url!r}")
        self.url = url
        self._open = False
        self._sessions: dict[str, SessionRecord] = {}
        self._by_id: dict[str, _Row] = {}
        self._models: OrderedDict[str, Interaction] = OrderedDict()  # pending, newest used
        self._settled_models: OrderedDict[str, Interaction] = OrderedDict()
        self._next_seq = 0  # insertion order, the tie-break after created_at
        # keyed by `_call_key`: a string, not a tuple, so no object is kept per key
        self._by_tool_call: dict[str, str] = {}
        # Ordered id sets (dicts with None values keep insertion order, delete in O(1)).
        self._by_session: dict[str, dict[str, None]] = {}
        self._pending: dict[str, dict[str, None]] = {}
        self._all_pending: dict[str, None] = {}
        self._events = EventLog()
        self._last_event_id = 0
        self._ended: dict[tuple[str, str], tuple[str, datetime]] = {}
        self._init_outbox()

    # -- lifecycle -------------------------------------------------------------------

    async def open(self) -> None:
        self._open = True

    async def aclose(self) -> None:
        self._open = False

    async def schema_version(self) -> int:
        """Always 0: memory has no schema and nothing to migrate."""
        self._check_open()
        return 0

    def _check_open(self) -> None:
        if not self._open:
            raise UsageError(NOT_OPEN)

    # -- sessions --------------------------------------------------------------------

    async def create_session(self, session: SessionRecord) -> None:
        self._check_open()
        check_session(session)
        if session.id in self._sessions:
            raise UsageError(f"a session with id {session.id!r} already exists; choose another id")
        self._sessions[session.id] = session

    async def get_session(self, session_id: str) -> SessionRecord | None:
        self._check_open()
        return self._sessions.get(session_id)

    async def list_sessions(self) -> list[SessionRecord]:
        self._check_open()
        return sorted(self._sessions.values(), key=lambda session: as_utc(session.created_at))

    # -- interactions ----------------------------------------------------------------

    async def create_interaction(
        self, interaction: Interaction, events: Sequence[NewEvent] = ()
    ) -> tuple[Interaction, bool, tuple[Event, ...]]:
        self._check_open()
        check_new_interaction(interaction)
        check_events(events)
        existing = self._repeat(interaction)
        if existing is not None:
            return existing, False, ()
        return self._insert(interaction, events)

    async def create_queued(
        self, interaction: Interaction, events: QueuedEvents
    ) -> tuple[Interaction, bool, tuple[Event, ...]]:
        self._check_open()
        return self._create_queued(interaction, events)

    def _create_queued(
        self, interaction: Interaction, events: QueuedEvents
    ) -> tuple[Interaction, bool, tuple[Event, ...]]:
        check_new_interaction(interaction)
        existing = self._repeat(interaction)
        if existing is not None:
            return existing, False, ()
        by_id, turn_id = self._by_id, interaction.turn_id
        queue = self._pending.get(interaction.session_id, {})
        waiting = any(by_id[key].turn_id == turn_id for key in queue)
        chosen = events(len(queue), waiting)
        check_events(chosen)
        return self._insert(interaction, chosen)

    async def create_unless_ended(
        self, interaction: Interaction, events: QueuedEvents
    ) -> tuple[Interaction, bool, tuple[Event, ...]] | None:
        self._check_open()
        if (interaction.session_id, interaction.turn_id) in self._ended:
            return None
        return self._create_queued(interaction, events)

    def _repeat(self, interaction: Interaction) -> Interaction | None:
        """The interaction already created for this one's `(session_id, tool_call_id)`."""
        if interaction.tool_call_id is None:
            return None
        existing_id = self._by_tool_call.get(
            _call_key(interaction.session_id, interaction.tool_call_id)
        )
        return None if existing_id is None else self._model(self._by_id[existing_id])

    def _model(self, row: _Row) -> Interaction:
        """The interaction a row holds, made from its JSON unless made recently."""
        models = self._models if row.status == "pending" else self._settled_models
        model = models.get(row.id)
        if model is None:
            model = _load_interaction(row.body)
            self._keep(model)
        else:
            models.move_to_end(row.id)
        return model

    def _keep(self, model: Interaction) -> None:
        key = model.id
        if model.status == "pending":
            models, most = self._models, MODELS_KEPT
        else:
            self._models.pop(key, None)
            models, most = self._settled_models, SETTLED_MODELS_KEPT
        models[key] = model
        models.move_to_end(key)
        if len(models) > most:
            models.popitem(last=False)

    def _insert(
        self, interaction: Interaction, events: Sequence[NewEvent]
    ) -> tuple[Interaction, bool, tuple[Event, ...]]:
        if interaction.id in self._by_id:
            raise UsageError(
                f"an interaction with id {interaction.id!r} already exists; "
                "give each interaction a fresh id"
            )
        self._by_id[interaction.id] = _Row(interaction, self._next_seq)
        self._next_seq += 1
        self._keep(interaction)
        if interaction.tool_call_id is not None:
            key = _call_key(interaction.session_id, interaction.tool_call_id)
            self._by_tool_call[key] = interaction.id
        self._by_session.setdefault(interaction.session_id, {})[interaction.id] = None
        self._pending.setdefault(interaction.session_id, {})[interaction.id] = None
        self._all_pending[interaction.id] = None
        return interaction, True, self._append(events)

    async def get_interaction(self, interaction_id: str) -> Interaction | None:
        self._check_open()
        row = self._by_id.get(interaction_id)
        return None if row is None else self._model(row)

    async def find_by_tool_call(self, session_id: str, tool_call_id: str) -> Interaction | None:
        self._check_open()
        interaction_id = self._by_tool_call.get(_call_key(session_id, tool_call_id))
        return None if interaction_id is None else self._model(self._by_id[interaction_id])

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
        return self._settle(
            interaction_id,
            status=status,
            result=result,
            decision=decision,
            settled_by=settled_by,
            settled_at=settled_at,
            events=events,
            turn_done=(),
        )

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
        return self._settle(
            interaction_id,
            status=status,
            result=result,
            decision=decision,
            settled_by=settled_by,
            settled_at=settled_at,
            events=events,
            turn_done=turn_done,
        )

    def _settle(
        self,
        interaction_id: str,
        *,
        status: InteractionStatus,
        result: AskResult | None,
        decision: PermissionDecision | None,
        settled_by: str | None,
        settled_at: datetime | None,
        events: Sequence[NewEvent],
        turn_done: Sequence[NewEvent],
    ) -> Settle:
        self._check_open()
        check_events(events)
        check_events(turn_done)
        row = self._by_id.get(interaction_id)
        if row is None:
            raise NotFound(f"no interaction with id {interaction_id!r} in this store")
        current = self._model(row)
        settled = settled_copy(
            current,
            status=status,
            result=result,
            decision=decision,
            settled_by=settled_by,
            settled_at=settled_at,
        )
        if current.status != "pending":
            return _settle_of(current, False, ())
        # No await since the check above: this write is the only winner's.
        row.settle(settled)
        self._keep(settled)
        del self._all_pending[interaction_id]
        pending = self._pending.get(current.session_id)
        if pending is not None:
            pending.pop(interaction_id, None)
            if turn_done and not any(
                self._by_id[key].turn_id == current.turn_id for key in pending
            ):
                events = [*events, *turn_done]
            if not pending:
                del self._pending[current.session_id]
        elif turn_done:
            events = [*events, *turn_done]
        return _settle_of(settled, True, self._append(events))

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
        self._check_open()
        check_limit(limit)
        start: tuple[datetime, int] | None = None
        if after is not None:
            known = self._by_id.get(after)
            if known is None:
                raise unknown_cursor(after)
            start = (known.created_at, known.seq)
        by_id = self._by_id
        candidates: list[_Row]
        if session_id is not None:
            index = self._pending if status == "pending" else self._by_session
            candidates = [by_id[key] for key in index.get(session_id, ())]
        elif status == "pending":
            candidates = [by_id[key] for key in self._all_pending]
        else:
            candidates = list(by_id.values())
        found = [
            row
            for row in candidates
            if (turn_id is None or row.turn_id == turn_id)
            and (status is None or row.status == status)
            and (kind is None or row.kind == kind)
        ]
        found.sort(key=_order)
        if start is not None:
            found = [row for row in found if _order(row) > start]
        return [self._model(row) for row in (found if limit is None else found[:limit])]

    async def count_pending(self) -> int:
        self._check_open()
        return len(self._all_pending)

    # -- turns -----------------------------------------------------------------------

    async def end_turn(
        self, session_id: str, turn_id: str, *, how: str, at: datetime | None = None
    ) -> bool:
        self._check_open()
        key = (session_id, turn_id)
        if key in self._ended:
            return False
        self._ended[key] = (how, at or utcnow())
        return True

    async def turn_ended(self, session_id: str, turn_id: str) -> bool:
        self._check_open()
        return (session_id, turn_id) in self._ended

    # -- events ----------------------------------------------------------------------

    def _append(self, events: Sequence[NewEvent]) -> tuple[Event, ...]:
        if not events:
            return ()
        appended = []
        by_id, log = self._by_id, self._events
        for new in events:
            self._last_event_id += 1
            event = event_from(new, self._last_event_id)
            row = by_id.get(new.interaction_id) if new.interaction_id else None
            log.append(event, *pack(new, None if row is None else row.body))
            appended.append(event)
        self.notify_listeners(self._last_event_id)
        return tuple(appended)

    async def append_events(self, events: Sequence[NewEvent]) -> tuple[Event, ...]:
        self._check_open()
        check_events(events)
        return self._append(events)

    async def read_events(
        self, after_id: int = 0, *, session_id: str | None = None, limit: int = 1000
    ) -> list[Event]:
        self._check_open()
        check_limit(limit)
        return self._events.after(after_id, session_id, limit)

    async def last_event_id(self) -> int:
        self._check_open()
        return self._last_event_id

    async def tail_start(self, count: int, *, session_id: str | None = None) -> int:
        self._check_open()
        if count < 0:
            raise UsageError(f"count must be 0 or more (got {count})")
        return self._events.tail_start(count, session_id)

    async def read_events_of_types(
        self,
        types: Collection[str],
        after_id: int = 0,
        *,
        session_id: str | None = None,
        limit: int = 1000,
    ) -> list[Event]:
        self._check_open()
        check_limit(limit)
        if not types:
            return self._events.after(after_id, session_id, limit)
        return self._events.after_of_types(after_id, session_id, limit, frozenset(types))

    async def tail_start_of_types(
        self, types: Collection[str], count: int, *, session_id: str | None = None
    ) -> int:
        self._check_open()
        if count < 0:
            raise UsageError(f"count must be 0 or more (got {count})")
        if not types:
            return self._events.tail_start(count, session_id)
        return self._events.tail_start_of_types(count, session_id, frozenset(types))

    # -- retention -------------------------------------------------------------------

    def _settled_before(self, settled_before: datetime) -> list[_Row]:
        cutoff = as_utc(settled_before)
        found = [
            row
            for row in self._by_id.values()
            if row.status != "pending" and row.settled_at is not None and row.settled_at < cutoff
        ]
        found.sort(key=_order)
        return found

    async def prunable(self, settled_before: datetime, *, limit: int = 1000) -> list[Interaction]:
        self._check_open()
        check_limit(limit)
        return [self._model(row) for row in self._settled_before(settled_before)[:limit]]

    async def count_prunable(self, settled_before: datetime) -> int:
        self._check_open()
        return len(self._settled_before(settled_before))

    async def prune(self, interaction_ids: Sequence[str]) -> Pruned:
        self._check_open()
        gone: set[str] = set()
        turns: set[tuple[str, str]] = set()
        for interaction_id in interaction_ids:
            item = self._by_id.get(interaction_id)
            if item is None or item.status == "pending":
                continue
            gone.add(item.id)
            turns.add((item.session_id, item.turn_id))
            del self._by_id[item.id]
            self._models.pop(item.id, None)
            self._settled_models.pop(item.id, None)
            if item.tool_call_id is not None:
                self._by_tool_call.pop(_call_key(item.session_id, item.tool_call_id), None)
            ids = self._by_session.get(item.session_id, {})
            ids.pop(item.id, None)
            if not ids:
                self._by_session.pop(item.session_id, None)
        if not gone:
            return Pruned()
        pruned = self._events.prune(gone, turns, self._last_event_id)
        return Pruned(interactions=len(gone), events=pruned)


def _settle_of(interaction: Interaction, won: bool, events: tuple[Event, ...]) -> Settle:
    """The `Settle` of values this store made itself: built without validating them again
    (pydantic's check of the interaction and each event costs more than the settle's own
    bookkeeping)."""
    return from_fields(Settle, {"interaction": interaction, "won": won, "events": events})


def _call_key(session_id: str, tool_call_id: str) -> str:
    """One string for a `(session_id, tool_call_id)` pair: a NUL between them, which no
    stored identifier holds (`check_identifiers`), so no two pairs share a key."""
    return f"{session_id}\x00{tool_call_id}"


def _order(row: _Row) -> tuple[datetime, int]:
    return row.created_at, row.seq
