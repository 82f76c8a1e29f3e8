"""The SQLite store (`sqlite:///relative/path.db`, `sqlite:////absolute/path.db`): the
embedded default, one file several processes can share (docs/storage.md).

Each store object owns one connection. Every operation is a plain function run whole —
a write inside a `BEGIN IMMEDIATE … COMMIT`, which takes SQLite's single write lock up
front, and which the writes of one event-loop iteration share (each in a SAVEPOINT of
its own) — at once on the event loop's thread when the connection and the lock are
free, else on the store's worker thread, which waits for the lock (`_sqlite_conn.py`).
Either way one operation runs at a time, and a settle's compare-and-set (`UPDATE …
WHERE id = ? AND status = 'pending'`) commits together with its events: two processes
can never both settle one interaction. A caller cancelled while its operation runs does
not undo it; the operation completes, and its events are announced to listeners all the
same.
Checkpoints (the fsyncs of WAL mode) run on a thread of their own, off the commit path.

Listeners hear the appends made through this store object at once. Appends by another
process (or another store object on the same file) are found by a watcher that, while
listeners are registered, looks at the newest event id every `WATCH_INTERVAL_S`; SQLite
has no cross-process notification. Several live replicas belong on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote

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
from midturn.errors import NotFound, UsageError
from midturn.store._base import Pruned, QueuedEvents, SessionRecord, Settle, Store
from midturn.store._codec import (
    NOT_OPEN,
    check_limit,
    check_new_interaction,
    dump_event,
    dump_session,
    event_from,
    interaction_columns,
    load_event,
    load_interaction,
    load_session,
    parse_time,
    settled_copy,
    sort_key_time,
    unknown_cursor,
)
from midturn.store._sqlite_conn import BUSY_TIMEOUT_MS, Connection, transaction
from midturn.store._sqlite_outbox import SqliteOutbox
from midturn.store._sqlite_schema import MIGRATIONS, MIGRATIONS_TABLE

__all__ = ["DEFAULT_SQLITE_PATH", "DEFAULT_SQLITE_URL", "SqliteStore", "sqlite_path"]

DEFAULT_SQLITE_PATH = ".midturn/midturn.db"
DEFAULT_SQLITE_URL = f"sqlite:///{DEFAULT_SQLITE_PATH}"
WATCH_INTERVAL_S = 0.5
MODELS_KEPT = 256
"""How many interactions' models one store object keeps beside their body text."""

log = logging.getLogger("midturn.store")
T = TypeVar("T")
Db = sqlite3.Connection

_INSERT_INTERACTION = (
    "INSERT INTO midturn_interactions (id, kind, session_id, turn_id, tool_call_id, status,"
    " created_at, settled_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_EVENTS = (
    "INSERT INTO midturn_events (type, session_id, turn_id, interaction_id, at, body) VALUES "
)
_EVENTS_PER_INSERT = 64
"""Rows of one event INSERT (six parameters each, well under SQLite's limit)."""
_INSERT_SESSION = (
    "INSERT INTO midturn_sessions (id, agent_token_hash, answer_token_hash, created_at, body)"
    " VALUES (?, ?, ?, ?, ?)"
)
_SETTLE = (
    "UPDATE midturn_interactions SET status = ?, settled_at = ?, body = ?"
    " WHERE id = ? AND status = 'pending'"
)
_BY_ID = "SELECT body FROM midturn_interactions WHERE id = ?"
_BY_TOOL_CALL = "SELECT body FROM midturn_interactions WHERE session_id = ? AND tool_call_id = ?"
# A park's reads in one statement: the row of a repeated tool call (none when ?3 is
# NULL), the queue position from the session's pending count (migration 4), and whether
# the turn waits, one probe of the turn's index (migration 8).
_PARK_PROBE = (
    "SELECT (SELECT body FROM midturn_interactions WHERE session_id = ?1 AND tool_call_id = ?3),"
    " coalesce((SELECT pending FROM midturn_queues WHERE session_id = ?1), 0),"
    " EXISTS (SELECT 1 FROM midturn_interactions"
    " WHERE session_id = ?1 AND turn_id = ?2 AND status = 'pending')"
)
# The same, also whether the turn has ended (`create_unless_ended`).
_PARK_PROBE_ENDED = (
    f"{_PARK_PROBE}, EXISTS (SELECT 1 FROM midturn_turns_ended"
    " WHERE session_id = ?1 AND turn_id = ?2)"
)
# A settle's read when the turn may be done: the row, and whether anything else of its
# turn is pending (asked before the update, so the row itself is left out).
_SETTLE_PROBE = (
    "SELECT body, EXISTS (SELECT 1 FROM midturn_interactions AS other"
    " WHERE other.session_id = this.session_id AND other.turn_id = this.turn_id"
    " AND other.status = 'pending' AND other.seq <> this.seq)"
    " FROM midturn_interactions AS this WHERE id = ?"
)
# The sum of the per-session counts (migrations 4 and 6: one row per session with
# something pending), not a count of every pending row.
_COUNT_PENDING = "SELECT coalesce(sum(pending), 0) FROM midturn_queues"
_END_TURN = (
    "INSERT OR IGNORE INTO midturn_turns_ended (session_id, turn_id, how, ended_at)"
    " VALUES (?, ?, ?, ?)"
)
_TURN_ENDED = "SELECT 1 FROM midturn_turns_ended WHERE session_id = ? AND turn_id = ?"
# Retention (docs/storage.md): settled before the cutoff implies created before it, so
# the time index bounds the scan to what is prunable plus the old pending rows.
_PRUNABLE = (
    " FROM midturn_interactions WHERE created_at < ? AND status != 'pending' AND settled_at < ?"
)
_PRUNE_ROW = "SELECT session_id, turn_id, status FROM midturn_interactions WHERE id = ?"
# A batch's events, one statement per session (no index of events by interaction since
# migration 11): ?2 is the JSON array of the session's interactions pruned, ?3 of their
# turns. One range of the session's index deletes their events, and their turns' own
# events (no interaction) older than the first event kept of the turn's interactions,
# all of them when none is kept; `kept` is read once, before any row goes, and never the
# newest event of the log goes.
_PRUNE_SESSION_EVENTS_OF = """
WITH gone(interaction_id) AS (SELECT value FROM json_each(?2)),
    turns(turn_id) AS (SELECT value FROM json_each(?3)),
    kept(turn_id, first_id) AS MATERIALIZED ({kept})
DELETE FROM midturn_events
WHERE session_id = ?1 AND id < (SELECT max(id) FROM midturn_events)
    AND (interaction_id IN gone
        OR (interaction_id IS NULL AND turn_id IN turns
            AND id < coalesce((SELECT first_id FROM kept
                               WHERE kept.turn_id = midturn_events.turn_id),
                              9223372036854775807)))
"""
# Several turns: `kept` in one more range of the session's index, for all of them.
_PRUNE_SESSION_EVENTS = _PRUNE_SESSION_EVENTS_OF.format(
    kept="""SELECT turn_id, min(id) FROM midturn_events
        WHERE session_id = ?1 AND interaction_id IS NOT NULL
            AND interaction_id NOT IN gone AND turn_id IN turns
        GROUP BY turn_id"""
)
# One turn (a batch of one ask of the session, or of an agent's turn of many asks): its
# first kept event read in the index's order, which stops there (at the next ask of the
# turn, when it has one) instead of reading the session's whole range.
_PRUNE_TURN_EVENTS = _PRUNE_SESSION_EVENTS_OF.format(
    kept="""SELECT turn_id, (SELECT min(id) FROM midturn_events
            WHERE session_id = ?1 AND turn_id = turns.turn_id
                AND interaction_id IS NOT NULL AND interaction_id NOT IN gone) FROM turns"""
)

# Start-up (Store.pending_deadlines): ranges of the partial index of pending deadlines.
_DEADLINE = "json_extract(body, '$.deadline')"
_DEADLINE_OF = f"SELECT {_DEADLINE} FROM midturn_interactions WHERE id = ?"
_DEADLINES = (
    f"SELECT id, {_DEADLINE} FROM midturn_interactions"
    " INDEXED BY midturn_interactions_deadlines WHERE status = 'pending'"
)
_DEADLINES_FIRST = f"{_DEADLINES} AND {_DEADLINE} IS NOT NULL ORDER BY {_DEADLINE}, id LIMIT ?"
_DEADLINES_AFTER = (
    f"{_DEADLINES} AND {_DEADLINE} >= ?1 AND ({_DEADLINE} > ?1 OR id > ?2)"
    f" ORDER BY {_DEADLINE}, id LIMIT ?3"
)


def sqlite_path(url: str) -> str:
    """The file path in a `sqlite://` URL: three slashes then a relative path
    (`sqlite:///data/midturn.db`, relative to the working directory), four for an
    absolute one (`sqlite:////var/lib/midturn.db`). `sqlite://` alone means the default
    `./.midturn/midturn.db`; `sqlite:///:memory:` a private in-memory database."""
    if not url.startswith("sqlite://"):
        raise UsageError(f"SqliteStore needs a sqlite:// URL, got {url!r}")
    rest, _, query = url[len("sqlite://") :].partition("?")
    if query:
        raise UsageError(f"sqlite URL {url!r} takes no query parameters; remove '?{query}'")
    if rest and not rest.startswith("/"):
        raise UsageError(
            f"sqlite URL {url!r} names a host; use three slashes for a relative path "
            "(sqlite:///data/midturn.db) or four for an absolute one "
            "(sqlite:////var/lib/midturn.db)"
        )
    path = unquote(rest[1:])
    if not path:
        return DEFAULT_SQLITE_PATH
    if path == ":memory:":
        return path
    return str(Path(path).expanduser())


class SqliteStore(SqliteOutbox, Store):
    """A store in one SQLite file, in WAL mode, safe to share between processes."""

    park_sees_turn_end = True  # one write transaction: `end_turn` commits before or after

    def __init__(self, url: str = DEFAULT_SQLITE_URL) -> None:
        super().__init__()
        self.url = url
        self.path = sqlite_path(url)
        self._connection: Connection | None = None
        self._opening = asyncio.Lock()
        self._watcher: asyncio.Task[None] | None = None
        self._heard = 0  # the newest event id announced to listeners
        self._models = _Models()

    # -- lifecycle -------------------------------------------------------------------

    async def open(self) -> None:
        async with self._opening:
            if self._connection is not None:
                return
            self._connection = await Connection.open(
                lambda: _connect(self.path, self.url), self.path
            )
            self._heard = await self._run(_newest_event_id)
            self._watcher = asyncio.create_task(self._watch(), name=f"midturn-watch {self.url}")

    async def aclose(self) -> None:
        async with self._opening:
            watcher, self._watcher = self._watcher, None
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
            connection, self._connection = self._connection, None
            if connection is not None:
                await connection.close()

    async def schema_version(self) -> int:
        return await self._run(_schema_version)

    async def _run(self, operation: Callable[[Db], T]) -> T:
        """Run `operation` whole (see `_sqlite_conn.py` for where)."""
        connection = self._connection
        if connection is None:
            raise UsageError(NOT_OPEN)
        return await connection.run(operation)

    async def _write(self, operation: Callable[[Db], tuple[T, tuple[Event, ...]]]) -> T:
        """Run `operation` in a write transaction (shared with the other writes of this
        loop iteration: `_sqlite_conn.py`); announce the events it appended once it has
        committed, even if the caller was cancelled meanwhile."""
        connection = self._connection
        if connection is None:
            raise UsageError(NOT_OPEN)

        def committed(outcome: tuple[T, tuple[Event, ...]]) -> None:
            connection.wrote()
            appended = outcome[1]
            if appended:
                self._hear(appended[-1].id)

        result, _ = await connection.write(operation, committed)
        return result

    def _hear(self, newest: int) -> None:
        """Tell listeners about `newest`, unless they have heard of it or a newer id."""
        if newest > self._heard:
            self._heard = newest
            self.notify_listeners(newest)

    async def _watch(self) -> None:
        """Find appends made through other connections to the file (see the module doc)."""
        while True:
            await asyncio.sleep(WATCH_INTERVAL_S)
            if not self._listeners:
                continue
            try:
                newest = await self._run(_newest_event_id)
            except UsageError:  # closed meanwhile
                return
            except sqlite3.Error as error:  # try again next time
                log.warning("reading the newest event id of %s failed: %s", self.url, error)
                continue
            self._hear(newest)

    # -- sessions --------------------------------------------------------------------

    async def create_session(self, session: SessionRecord) -> None:
        params = (
            session.id,
            session.agent_token_hash,
            session.answer_token_hash,
            sort_key_time(session.created_at),
            dump_session(session),
        )

        def insert(db: Db) -> tuple[None, tuple[Event, ...]]:
            try:
                db.execute(_INSERT_SESSION, params)
            except sqlite3.IntegrityError as error:
                raise UsageError(
                    f"a session with id {session.id!r} already exists; choose another id"
                ) from error
            return None, ()

        await self._write(insert)

    async def get_session(self, session_id: str) -> SessionRecord | None:
        def get(db: Db) -> SessionRecord | None:
            row = db.execute("SELECT body FROM midturn_sessions WHERE id = ?", (session_id,))
            found = row.fetchone()
            return None if found is None else load_session(found[0])

        return await self._run(get)

    async def list_sessions(self) -> list[SessionRecord]:
        def every(db: Db) -> list[SessionRecord]:
            rows = db.execute("SELECT body FROM midturn_sessions ORDER BY created_at, seq")
            return [load_session(body) for (body,) in rows]

        return await self._run(every)

    # -- interactions ----------------------------------------------------------------

    async def create_interaction(
        self, interaction: Interaction, events: Sequence[NewEvent] = ()
    ) -> tuple[Interaction, bool, tuple[Event, ...]]:
        check_new_interaction(interaction)
        params = tuple(interaction_columns(interaction).values())
        bodies = [dump_event(new) for new in events]

        def create(db: Db) -> tuple[tuple[Interaction, bool, tuple[Event, ...]], tuple[Event, ...]]:
            found = None
            if interaction.tool_call_id is not None:
                row = db.execute(_BY_TOOL_CALL, (interaction.session_id, interaction.tool_call_id))
                found = row.fetchone()
            if found is not None:
                return (load_interaction(found[0]), False, ()), ()
            return self._created(_create(db, interaction, params, events, bodies), params)

        return await self._write(create)

    async def create_queued(
        self, interaction: Interaction, events: QueuedEvents
    ) -> tuple[Interaction, bool, tuple[Event, ...]]:
        created = await self._park(interaction, events, unless_ended=False)
        assert created is not None
        return created

    async def create_unless_ended(
        self, interaction: Interaction, events: QueuedEvents
    ) -> tuple[Interaction, bool, tuple[Event, ...]] | None:
        return await self._park(interaction, events, unless_ended=True)

    async def _park(
        self, interaction: Interaction, events: QueuedEvents, *, unless_ended: bool
    ) -> tuple[Interaction, bool, tuple[Event, ...]] | None:
        """`create_queued`'s reads (and the turn's end, with `unless_ended`) in one
        statement, then the insert, in one write transaction."""
        check_new_interaction(interaction)
        params = tuple(interaction_columns(interaction).values())
        probe = _PARK_PROBE_ENDED if unless_ended else _PARK_PROBE
        keys = (interaction.session_id, interaction.turn_id, interaction.tool_call_id)

        def create(
            db: Db,
        ) -> tuple[tuple[Interaction, bool, tuple[Event, ...]] | None, tuple[Event, ...]]:
            found, position, waiting, *ended = db.execute(probe, keys).fetchone()
            if ended and ended[0]:
                return None, ()
            if found is not None:
                return (load_interaction(found), False, ()), ()
            chosen = events(position, bool(waiting))
            bodies = [dump_event(new) for new in chosen]
            return self._created(_create(db, interaction, params, chosen, bodies), params)

        return await self._write(create)

    def _created(
        self,
        outcome: tuple[tuple[Interaction, bool, tuple[Event, ...]], tuple[Event, ...]],
        params: tuple[str | None, ...],
    ) -> tuple[tuple[Interaction, bool, tuple[Event, ...]], tuple[Event, ...]]:
        """(In the write operation.) Keep a created interaction's model for its body."""
        (interaction, created, _), _ = outcome
        body = params[-1]
        if created and body is not None:
            self._models.keep(interaction.id, body, interaction)
        return outcome

    async def get_interaction(self, interaction_id: str) -> Interaction | None:
        def get(db: Db) -> Interaction | None:
            found = db.execute(_BY_ID, (interaction_id,)).fetchone()
            return None if found is None else self._models.load(interaction_id, found[0])

        return await self._run(get)

    async def find_by_tool_call(self, session_id: str, tool_call_id: str) -> Interaction | None:
        def find(db: Db) -> Interaction | None:
            found = db.execute(_BY_TOOL_CALL, (session_id, tool_call_id)).fetchone()
            return None if found is None else load_interaction(found[0])

        return await self._run(find)

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
        return await self.settle_in_turn(
            interaction_id,
            session_id="",
            turn_id="",
            status=status,
            result=result,
            decision=decision,
            settled_by=settled_by,
            settled_at=settled_at,
            events=events,
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
        bodies = [dump_event(new) for new in events]
        ending = (*events, *turn_done)  # the events when the settle ends the turn
        ending_bodies = bodies + [dump_event(new) for new in turn_done]

        def settle(db: Db) -> tuple[Settle, tuple[Event, ...]]:
            found = db.execute(_SETTLE_PROBE if turn_done else _BY_ID, (interaction_id,)).fetchone()
            if found is None:
                raise NotFound(f"no interaction with id {interaction_id!r} in this store")
            current = self._models.load(interaction_id, found[0])
            settled = settled_copy(
                current,
                status=status,
                result=result,
                decision=decision,
                settled_by=settled_by,
                settled_at=settled_at,
            )
            if current.status != "pending":
                return Settle(interaction=current, won=False), ()
            columns = interaction_columns(settled)
            cursor = db.execute(
                _SETTLE, (status, columns["settled_at"], columns["body"], interaction_id)
            )
            if cursor.rowcount != 1:  # pragma: no cover - the write lock rules this out
                return Settle(interaction=current, won=False), ()
            self._models.keep(interaction_id, columns["body"], settled)
            if turn_done and not found[1]:  # nothing else of the turn is pending
                appended = _insert_events(db, ending, ending_bodies)
            else:
                appended = _insert_events(db, events, bodies)
            return Settle(interaction=settled, won=True, events=appended), appended

        return await self._write(settle)

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
        check_limit(limit)
        sql, params = list_sql(
            session_id=session_id, turn_id=turn_id, status=status, kind=kind, after=after
        )
        tail: list[Any] = [] if limit is None else [limit]
        if limit is not None:
            sql += " LIMIT ?"

        def select(db: Db) -> list[Interaction]:
            start: tuple[Any, ...] = ()
            if after is not None:
                start = db.execute(
                    "SELECT created_at, seq FROM midturn_interactions WHERE id = ?", (after,)
                ).fetchone()
                if start is None:
                    raise unknown_cursor(after)
            rows = db.execute(sql, [*params, *start, *tail])
            return [load_interaction(body) for (body,) in rows]

        return await self._run(select)

    async def count_pending(self) -> int:
        def count(db: Db) -> int:
            return int(db.execute(_COUNT_PENDING).fetchone()[0])

        return await self._run(count)

    # -- turns -----------------------------------------------------------------------

    async def end_turn(
        self, session_id: str, turn_id: str, *, how: str, at: datetime | None = None
    ) -> bool:
        params = (session_id, turn_id, how, sort_key_time(at or utcnow()))

        def end(db: Db) -> tuple[bool, tuple[Event, ...]]:
            return db.execute(_END_TURN, params).rowcount == 1, ()

        return await self._write(end)

    async def turn_ended(self, session_id: str, turn_id: str) -> bool:
        def ended(db: Db) -> bool:
            return db.execute(_TURN_ENDED, (session_id, turn_id)).fetchone() is not None

        return await self._run(ended)

    async def pending_deadlines(
        self, *, after: str | None = None, limit: int = 5000
    ) -> list[tuple[str, datetime]]:
        # Only the id and the deadline, soonest first, a range of the partial index of
        # pending deadlines (migration 5) per page: no body is parsed into a model.
        check_limit(limit)

        def select(db: Db) -> list[tuple[str, datetime]]:
            cursor = None
            if after is not None:
                cursor = db.execute(_DEADLINE_OF, (after,)).fetchone()
            if cursor is None or cursor[0] is None:
                rows = db.execute(_DEADLINES_FIRST, (limit,))
            else:
                rows = db.execute(_DEADLINES_AFTER, (cursor[0], after, limit))
            return [(key, parse_time(text)) for key, text in rows]

        return await self._run(select)

    # -- events ----------------------------------------------------------------------

    async def append_events(self, events: Sequence[NewEvent]) -> tuple[Event, ...]:
        if self._connection is None:
            raise UsageError(NOT_OPEN)
        if not events:
            return ()
        bodies = [dump_event(new) for new in events]

        def append(db: Db) -> tuple[tuple[Event, ...], tuple[Event, ...]]:
            appended = _insert_events(db, events, bodies)
            return appended, appended

        return await self._write(append)

    async def read_events(
        self, after_id: int = 0, *, session_id: str | None = None, limit: int = 1000
    ) -> list[Event]:
        check_limit(limit)
        if session_id is None:
            sql = "SELECT id, body FROM midturn_events WHERE id > ? ORDER BY id LIMIT ?"
            params: tuple[Any, ...] = (after_id, limit)
        else:
            sql = (
                "SELECT id, body FROM midturn_events"
                " WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?"
            )
            params = (session_id, after_id, limit)

        def select(db: Db) -> list[Event]:
            return [load_event(event_id, body) for event_id, body in db.execute(sql, params)]

        return await self._run(select)

    async def last_event_id(self) -> int:
        return await self._run(_newest_event_id)

    async def tail_start(self, count: int, *, session_id: str | None = None) -> int:
        if count < 0:
            raise UsageError(f"count must be 0 or more (got {count})")
        # the (count+1)-th newest id, by the primary key or the (session_id, id) index
        where, params = ("WHERE session_id = ?", [session_id]) if session_id else ("", [])
        sql = f"SELECT id FROM midturn_events {where} ORDER BY id DESC LIMIT 1 OFFSET ?"

        def find(db: Db) -> int:
            row = db.execute(sql, [*params, count]).fetchone()
            return 0 if row is None else int(row[0])

        return await self._run(find)

    async def read_events_of_types(
        self,
        types: Collection[str],
        after_id: int = 0,
        *,
        session_id: str | None = None,
        limit: int = 1000,
    ) -> list[Event]:
        check_limit(limit)
        wanted = sorted(set(types))
        if not wanted:
            return await self.read_events(after_id, session_id=session_id, limit=limit)
        # by the primary key or the (session_id, id) index, the type checked on each row
        where, params = _of_types(session_id, wanted)
        sql = f"SELECT id, body FROM midturn_events WHERE {where} AND id > ? ORDER BY id LIMIT ?"

        def select(db: Db) -> list[Event]:
            rows = db.execute(sql, [*params, after_id, limit])
            return [load_event(event_id, body) for event_id, body in rows]

        return await self._run(select)

    async def tail_start_of_types(
        self, types: Collection[str], count: int, *, session_id: str | None = None
    ) -> int:
        if count < 0:
            raise UsageError(f"count must be 0 or more (got {count})")
        wanted = sorted(set(types))
        if not wanted:
            return await self.tail_start(count, session_id=session_id)
        where, params = _of_types(session_id, wanted)
        sql = f"SELECT id FROM midturn_events WHERE {where} ORDER BY id DESC LIMIT 1 OFFSET ?"

        def find(db: Db) -> int:
            row = db.execute(sql, [*params, count]).fetchone()
            return 0 if row is None else int(row[0])

        return await self._run(find)

    # -- retention -------------------------------------------------------------------

    async def prunable(self, settled_before: datetime, *, limit: int = 1000) -> list[Interaction]:
        check_limit(limit)
        cutoff = sort_key_time(settled_before)
        sql = f"SELECT body{_PRUNABLE} ORDER BY created_at, seq LIMIT ?"

        def select(db: Db) -> list[Interaction]:
            rows = db.execute(sql, (cutoff, cutoff, limit))
            return [load_interaction(body) for (body,) in rows]

        return await self._run(select)

    async def count_prunable(self, settled_before: datetime) -> int:
        cutoff = sort_key_time(settled_before)

        def count(db: Db) -> int:
            return int(db.execute(f"SELECT count(*){_PRUNABLE}", (cutoff, cutoff)).fetchone()[0])

        return await self._run(count)

    async def prune(self, interaction_ids: Sequence[str]) -> Pruned:
        wanted = list(dict.fromkeys(interaction_ids))

        def prune(db: Db) -> tuple[Pruned, tuple[Event, ...]]:
            gone = 0
            sessions: dict[str, tuple[list[str], set[str]]] = {}
            for interaction_id in wanted:
                row = db.execute(_PRUNE_ROW, (interaction_id,)).fetchone()
                if row is None or row[2] == "pending":
                    continue
                db.execute("DELETE FROM midturn_interactions WHERE id = ?", (interaction_id,))
                gone += 1
                ids, turns = sessions.setdefault(row[0], ([], set()))
                ids.append(interaction_id)
                turns.add(row[1])
            before = db.total_changes  # a statement starting WITH has no rowcount
            for session_id, (ids, turns) in sorted(sessions.items()):
                params = (session_id, json.dumps(ids), json.dumps(sorted(turns)))
                db.execute(_PRUNE_TURN_EVENTS if len(turns) == 1 else _PRUNE_SESSION_EVENTS, params)
            events = db.total_changes - before
            return Pruned(interactions=gone, events=events), ()

        return await self._write(prune)


def list_sql(
    *,
    session_id: str | None = None,
    turn_id: str | None = None,
    status: InteractionStatus | None = None,
    kind: InteractionKind | None = None,
    after: str | None = None,
) -> tuple[str, list[Any]]:
    """`list_interactions`' query (without its LIMIT) and its parameters, the cursor's
    `(created_at, seq)` still to follow when `after` is given."""
    clauses: list[str] = []
    params: list[Any] = []
    for column, value in (
        ("session_id", session_id),
        ("turn_id", turn_id),
        ("status", None if status == "pending" else status),
        ("kind", kind),
    ):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if status == "pending":  # a literal, so that the partial index of pending rows serves
        clauses.append("status = 'pending'")
    if after is not None:
        # a keyset page: rows after the cursor's (created_at, seq), by the same index
        clauses.append("(created_at, seq) > (?, ?)")
    sql = "SELECT body FROM midturn_interactions"
    if session_id is not None and turn_id is not None:
        # A turn has few rows: a probe of the turn's index and a sort, rather than the
        # walk of the whole session in order that the planner picks to save the sort.
        sql += " INDEXED BY midturn_interactions_by_turn_status"
    if clauses:
        sql += " WHERE " + " AND ".join(clauses)
    return sql + " ORDER BY created_at, seq", params


class _Models:
    """The models of the interactions this store object wrote or read last, each with
    the body text it came from: a row read back with that same text is that same model,
    so it is not parsed again (park → wait → settle reads each row it wrote). Used only
    inside operations, which run one at a time (`_sqlite_conn.py`)."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        self._kept: OrderedDict[str, tuple[str, Interaction]] = OrderedDict()

    def keep(self, interaction_id: str, body: str | None, model: Interaction) -> None:
        if body is None:
            return
        kept = self._kept
        kept[interaction_id] = (body, model)
        kept.move_to_end(interaction_id)
        if len(kept) > MODELS_KEPT:
            kept.popitem(last=False)

    def load(self, interaction_id: str, body: str) -> Interaction:
        found = self._kept.get(interaction_id)
        if found is not None and found[0] == body:
            return found[1]
        model = load_interaction(body)
        self.keep(interaction_id, body, model)
        return model


# -- on the store's thread -------------------------------------------------------------


def _create(
    db: Db,
    interaction: Interaction,
    params: tuple[str | None, ...],
    events: Sequence[NewEvent],
    bodies: list[str],
) -> tuple[tuple[Interaction, bool, tuple[Event, ...]], tuple[Event, ...]]:
    """Insert `interaction` (its tool call already checked for a repeat) with `events`."""
    try:
        db.execute(_INSERT_INTERACTION, params)
    except sqlite3.IntegrityError as error:
        raise UsageError(
            f"an interaction with id {interaction.id!r} already exists; "
            "give each interaction a fresh id"
        ) from error
    appended = _insert_events(db, events, bodies)
    return (interaction, True, appended), appended


def _of_types(session_id: str | None, types: list[str]) -> tuple[str, list[str]]:
    """The WHERE clause (and its parameters) of events of `types`, of one session or all."""
    clause = f"type IN ({', '.join(['?'] * len(types))})"
    if session_id is None:
        return clause, types
    return f"session_id = ? AND {clause}", [session_id, *types]


def _insert_events(db: Db, events: Sequence[NewEvent], bodies: list[str]) -> tuple[Event, ...]:
    """Append `events`, up to `_EVENTS_PER_INSERT` rows per statement. Rows of one INSERT
    take consecutive ids in their order (the write lock is held, and SQLite gives
    each the largest id so far plus one), so the last row's id gives every row's."""
    appended: list[Event] = []
    for start in range(0, len(events), _EVENTS_PER_INSERT):
        chunk = events[start : start + _EVENTS_PER_INSERT]
        values: list[str | None] = []
        for new, body in zip(chunk, bodies[start : start + _EVENTS_PER_INSERT], strict=True):
            values += (new.type, new.session_id, new.turn_id, new.interaction_id)
            values += (sort_key_time(new.at), body)
        cursor = db.execute(_insert_events_sql(len(chunk)), values)
        assert cursor.lastrowid is not None
        first = cursor.lastrowid - len(chunk) + 1
        appended += (event_from(new, first + n) for n, new in enumerate(chunk))
    return tuple(appended)


@functools.cache
def _insert_events_sql(rows: int) -> str:
    return _INSERT_EVENTS + ", ".join(["(?, ?, ?, ?, ?, ?)"] * rows)


def _newest_event_id(db: Db) -> int:
    return int(db.execute("SELECT coalesce(max(id), 0) FROM midturn_events").fetchone()[0])


def _schema_version(db: Db) -> int:
    return int(db.execute("SELECT coalesce(max(version), 0) FROM midturn_migrations").fetchone()[0])


def _connect(path: str, url: str) -> Db:
    """Open the file (making it and its folder if missing), set the pragmas and apply
    pending migrations."""
    try:
        if path != ":memory:":
            # Answers and token hashes are private: a new folder and file are the
            # owner's alone (SQLite gives the -wal and -shm files the file's mode).
            Path(path).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        db = sqlite3.connect(
            path, isolation_level=None, cached_statements=256, check_same_thread=False
        )
    except (OSError, sqlite3.Error) as error:
        raise UsageError(
            f"cannot open the SQLite file {path!r} ({error}); check the path in {url!r} "
            "and that this process may write there"
        ) from error
    try:
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        _use_wal(db)
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA foreign_keys = ON")
        transaction(db, _migrate)
    except BaseException:
        db.close()
        raise
    return db


def _use_wal(db: Db) -> None:
    """Switch the file to WAL. The switch takes an exclusive lock, and SQLite reports
    "database is locked" at once (without its busy handler) when another connection is
    opening the same new file, so retry within the busy timeout; a file already in WAL
    needs no switch (its mode is read without a lock)."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.001
    while True:
        try:
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _migrate(db: Db) -> None:
    """Apply the migrations this file lacks (idempotent; run inside one transaction, so
    several processes opening one file at once migrate it once)."""
    db.execute(MIGRATIONS_TABLE)
    current = _schema_version(db)
    if current > len(MIGRATIONS):
        raise UsageError(
            f"the SQLite file is at schema version {current}, newer than this midturn "
            f"knows ({len(MIGRATIONS)}); upgrade midturn to use it"
        )
    for migration in MIGRATIONS[current:]:
        for statement in migration.statements:
            db.execute(statement)
        db.execute(
            "INSERT INTO midturn_migrations (version, name, applied_at) VALUES (?, ?, ?)",
            (migration.version, migration.name, sort_key_time(utcnow())),
        )
