"""The PostgreSQL store (`postgresql://…`): one database shared by several gateway
replicas behind a load balancer (docs/replicas.md).

URL: `postgresql://user[:password]@host[:port]/database`, plus these query parameters,
which midturn takes for itself (any other is passed on to asyncpg):

- `schema=NAME` — keep midturn's tables in schema NAME (created if missing; it becomes
  the connections' search_path). Isolates deployments, and tests, in one database.
- `pool_min=N`, `pool_max=N` — the connection pool's bounds (defaults 1 and 10). The
  store hands the connections out itself (`_postgres_pool.py`: a statement's caller
  waits for no task of asyncpg's pool to take its connection back).

How it stays correct with many processes:

- Every write of a session's interactions holds the session's advisory lock (one key
  per schema and session) from before its first read until its commit: a park and a
  settle are each one call of a function of the schema (`midturn_park`,
  `midturn_settle`, migration 8; `_postgres_sql.py`), so one round trip and one
  transaction, which takes the lock at the transaction level first, and whose later
  statements see all that the lock's previous holders committed: a park's queue
  position and whether its turn waits, and whether a settle leaves its turn idle, are
  exact across processes. The session lock is taken before any other. Settling is a
  compare-and-set, `UPDATE … WHERE id = … AND status = 'pending'`, in the same
  transaction as the inserts of its events, which happen only when the update did.
  PostgreSQL locks the row for the first updater; every other waits, re-reads the row,
  finds it settled and updates nothing. Exactly one wins.
- A park's events depend on the queue (`create_queued`), which only the function reads.
  So the store chooses them for the queue it expects (what its last write of the
  session left, `_queues`), the function parks only when the queue is that one, and
  otherwise returns the queue it found, for which the store chooses again: one round
  trip when the store knew, two when another process had changed the session. A settle
  needs the interaction as it stands: for one this store parked and has not settled it
  is the interaction as parked (a pending row never changes), otherwise it is read
  first.
- Event ids come from an identity column, and a sequence hands out values when they are
  asked for, not when their transaction commits: without care, a transaction holding id
  7 could commit after one holding id 8, and a reader that had already moved past 8 would
  never see 7. So every append first takes a transaction-level advisory lock (one key
  per schema) and inserts its events under it; the lock is released only when that
  transaction has committed (or rolled back). Appends are thereby serialized, ids are
  committed in the order they were handed out, and "every event with id > N" is a safe
  way to read on. The lock is the last one an append takes and is held only for the
  event insert and the commit, so appends stay short and cannot deadlock.
- Each append also runs `NOTIFY midturn_events` in its transaction (delivered at
  commit) with the payload `<last id>:<schema>`. Every store object LISTENs on a
  dedicated connection (`_postgres_listen.py`) and calls `notify_listeners(last id)` for the
  appends of other store objects — other replicas — in its schema. Its own appends it
  announces once their write has returned (and ignores when their notification comes
  back; one that comes in while writes of its own run waits for those writes to end),
  and once every write in flight that may hold a lower id has returned too
  (`_postgres_announce.py`). Listeners hear each id at most once, in increasing order.
- A write that finds every pooled connection busy queues, and up to 32 queued writes
  commit in one transaction (`_postgres_batch.py`: group commit, one flush of the log
  for them all), the batch's session locks taken first, in key order; each write's
  statement, row and announcement stay its own. A write with a connection free runs
  alone, as above.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import Any

import asyncpg

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
    interaction_columns,
    load_event,
    load_interaction,
    load_session,
    parse_time,
    settled_copy,
    sort_key_time,
    unknown_cursor,
)
from midturn.store._postgres_announce import Announcer
from midturn.store._postgres_batch import Batches
from midturn.store._postgres_listen import Listener
from midturn.store._postgres_outbox import PostgresOutbox
from midturn.store._postgres_pool import Connections
from midturn.store._postgres_schema import advisory_key, migrate, quote_ident
from midturn.store._postgres_sql import (
    APPEND,
    CHANNEL,
    COUNT_PENDING,
    END_TURN,
    FIND_BY_TOOL_CALL,
    GET,
    PARK,
    READ_EVENTS,
    READ_EVENTS_OF_TYPES,
    READ_SESSION_EVENTS,
    READ_SESSION_EVENTS_OF_TYPES,
    SETTLE,
    list_query,
)
from midturn.store._postgres_url import parse_url, redact

__all__ = ["PostgresStore"]

_CLOSE_TIMEOUT_S = 10.0
KEPT = 4096
"""How many sessions' queues (`_queues`) and parked interactions (`_parked`) a store
remembers, the longest unwritten forgotten first. Forgetting costs a round trip: a park
into a forgotten session's queue may miss once, a settle reads the interaction first."""


class PostgresStore(PostgresOutbox, Store):
    """A store in a PostgreSQL database, safe to share between processes."""

    park_sees_turn_end = True
    """`midturn_park` reads the turn's end under the session's lock, which `end_turn`
    takes too (migration 9): an end commits before the park's read or after its commit."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self._dsn, self._schema, self._pool_min, self._pool_max = parse_url(url)
        self._lock_key = advisory_key("events", self._schema or "")
        self._pool: Connections | None = None
        self._batches: Batches | None = None
        self._listener: Listener | None = None
        self._announcer = Announcer(self.notify_listeners, self._schema)
        self._opening = asyncio.Lock()
        self._queues: dict[str, tuple[int, str, bool]] = {}
        """Per session, as this store's last write of it left the queue: the number
        pending, a turn, and whether that turn waits (the queue a park expects)."""
        self._parked: dict[str, Interaction] = {}
        """Pending interactions this store parked, as parked (as their rows stand while
        pending: only a settle changes a row), for their settles."""

    # -- lifecycle -------------------------------------------------------------------

    async def open(self) -> None:
        async with self._opening:
            if self._pool is None:
                await self._open()

    async def _open(self) -> None:
        settings = {"application_name": "midturn"}
        if self._schema is not None:
            settings["search_path"] = quote_ident(self._schema)
        try:
            pool = await asyncpg.create_pool(
                self._dsn,
                min_size=self._pool_min,
                max_size=self._pool_max,
                server_settings=settings,
                reset=self._reset,
            )
        except (OSError, asyncpg.PostgresError) as error:
            raise UsageError(
                f"cannot connect to PostgreSQL at {redact(self.url)}: {error}. Check that "
                "the server is running and that the URL's user, host, port and database "
                "are right"
            ) from error
        try:
            async with pool.acquire() as connection:
                try:
                    await migrate(connection, self._schema)
                except asyncpg.PostgresError as error:
                    raise UsageError(
                        f"preparing midturn's tables in {redact(self.url)} failed: {error}. "
                        "On its first start midturn needs a role that may create the "
                        "schema and tables (later starts only read and write them)"
                    ) from error
                self._announcer.heard = await self._last_id(connection)
            listener = Listener(
                self._dsn,
                CHANNEL,
                on_payload=self._announcer.on_payload,
                on_reconnect=self._catch_up,
                application_name=f"midturn-listener {self._schema or ''}",
            )
            await listener.start()
        except BaseException:
            await pool.close()
            raise
        self._pool, self._listener = Connections(pool, self._pool_max), listener
        self._batches = Batches(self._pool)

    async def _reset(self, connection: Any) -> None:
        """What a pooled connection undoes on its way back to the pool (asyncpg has
        rolled back any transaction left open): nothing. The store's statements leave
        nothing behind on a connection (no cursor, no LISTEN, no setting, no lock: each
        write is one transaction, its locks released at commit), and asyncpg's reset
        statement would be one more round trip on every use of the pool, while the
        connection stays taken."""

    async def aclose(self) -> None:
        listener, self._listener = self._listener, None
        pool, self._pool = self._pool, None
        self._batches = None
        if listener is not None:
            await listener.stop()
        if pool is not None:
            await pool.close()
            try:
                await asyncio.wait_for(pool.pool.close(), _CLOSE_TIMEOUT_S)
            except TimeoutError:  # a connection still busy: do not hang the shutdown
                pool.pool.terminate()

    async def schema_version(self) -> int:
        version = await self._db().fetchval("SELECT max(version) FROM midturn_migrations")
        return int(version or 0)

    @property
    def listener_pid(self) -> int | None:
        """The server process id of this store's notification connection (for
        operators and tests), or None while it is reconnecting or the store is closed."""
        return None if self._listener is None else self._listener.pid

    @property
    def group_commits(self) -> tuple[int, int]:
        """How many batches of writes this store has committed in one transaction each
        (group commit, `_postgres_batch.py`) and how many writes they held, since it
        opened (for operators and tests): (0, 0) while the pool was never busy."""
        if self._batches is None:
            return 0, 0
        return self._batches.batches, self._batches.batched

    def _db(self) -> Connections:
        if self._pool is None:
            raise UsageError(NOT_OPEN)
        return self._pool

    def _writer(self) -> Batches:
        """The writes' way to the pool: alone when a connection is free, else batched."""
        if self._batches is None:
            raise UsageError(NOT_OPEN)
        return self._batches

    # -- notifications ---------------------------------------------------------------

    async def _catch_up(self) -> None:
        """After the notification connection came back: whatever was appended while it
        was down is in the log, so point the readers at its end."""
        self._announcer.heard_up_to(await self.last_event_id())

    def _append_arguments(
        self, events: Sequence[NewEvent], gated: Sequence[bool] | None = None
    ) -> tuple[object, ...]:
        """The events' parameters of a writing statement (see _postgres_sql.py), with
        `gated` (which of them wait for the turn to be idle) for `SETTLE`."""
        arrays = (
            [new.type for new in events],
            [new.session_id for new in events],
            [new.turn_id for new in events],
            [new.interaction_id for new in events],
            [dump_event(new) for new in events],
        )
        extra = () if gated is None else (list(gated),)
        return (*arrays, *extra, self._lock_key, f":{self._schema or ''}")

    def _session_key(self, session_id: str) -> int:
        """The session lock's key, the same in every process (and in earlier versions,
        whose session-level lock of this key excludes a function's alike)."""
        return advisory_key(f"session\x00{session_id}", self._schema or "")

    def _expected_queue(self, session_id: str, turn_id: str) -> tuple[int, bool]:
        """The queue a park of `turn_id` expects: as this store's last write of the
        session left it, or empty for a session it has not written."""
        known = self._queues.get(session_id)
        if known is None:
            return 0, False
        pending, turn, waits = known
        return pending, waits and turn == turn_id

    def _saw_queue(self, session_id: str, pending: int, turn_id: str, waits: bool) -> None:
        self._queues.pop(session_id, None)
        self._queues[session_id] = (pending, turn_id, waits)
        if len(self._queues) > KEPT:
            del self._queues[next(iter(self._queues))]

    def _keep_parked(self, interaction: Interaction) -> None:
        self._parked[interaction.id] = interaction
        if len(self._parked) > KEPT:
            del self._parked[next(iter(self._parked))]

    # -- sessions --------------------------------------------------------------------

    async def create_session(self, session: SessionRecord) -> None:
        created = await self._db().fetchval(
            """
            INSERT INTO midturn_sessions
                (id, agent_token_hash, answer_token_hash, created_at, body)
            VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (id) DO NOTHING
            RETURNING seq
            """,
            session.id,
            session.agent_token_hash,
            session.answer_token_hash,
            sort_key_time(session.created_at),
            dump_session(session),
        )
        if created is None:
            raise UsageError(f"a session with id {session.id!r} already exists; choose another id")

    async def get_session(self, session_id: str) -> SessionRecord | None:
        if _unstorable(session_id):
            self._db()
            return None
        body = await self._db().fetchval(
            "SELECT body FROM midturn_sessions WHERE id = $1", session_id
        )
        return None if body is None else load_session(body)

    async def list_sessions(self) -> list[SessionRecord]:
        rows = await self._db().fetch("SELECT body FROM midturn_sessions ORDER BY created_at, seq")
        return [load_session(row["body"]) for row in rows]

    # -- interactions ----------------------------------------------------------------

    async def create_interaction(
        self, interaction: Interaction, events: Sequence[NewEvent] = ()
    ) -> tuple[Interaction, bool, tuple[Event, ...]]:
        made = await self._park(interaction, lambda _position, _waits: events, queued=False)
        assert made is not None
        return made

    async def create_queued(
        self, interaction: Interaction, events: QueuedEvents
    ) -> tuple[Interaction, bool, tuple[Event, ...]]:
        """One call of `midturn_park` when the session's queue is the one this store
        expects (see the module's docstring), two when it is not."""
        made = await self._park(interaction, events, queued=True)
        assert made is not None
        return made

    async def create_unless_ended(
        self, interaction: Interaction, events: QueuedEvents
    ) -> tuple[Interaction, bool, tuple[Event, ...]] | None:
        """`create_queued`, the turn's end read in the same call of `midturn_park`."""
        return await self._park(interaction, events, queued=True, unless_ended=True)

    async def _park(
        self,
        interaction: Interaction,
        events: QueuedEvents,
        *,
        queued: bool,
        unless_ended: bool = False,
    ) -> tuple[Interaction, bool, tuple[Event, ...]] | None:
        """`midturn_park` under the session's lock: with `queued`, its events chosen by
        `events` for the queue expected, and again for the queue found until the two
        agree (each miss is another write of the session committed meanwhile); with
        `unless_ended`, nothing written (None) when the turn has ended."""
        writer = self._writer()
        check_new_interaction(interaction)
        columns = tuple(interaction_columns(interaction).values())
        session_id, turn_id = interaction.session_id, interaction.turn_id
        key = self._session_key(session_id)
        chosen: Sequence[NewEvent] = ()

        def step(row: Any) -> tuple[object, ...] | None:
            """The park's arguments for the queue expected (`row` None: its first
            statement, or again after a batch that committed nothing), or for the queue
            found when it `missed`; None once it has its outcome."""
            nonlocal chosen
            if row is None:
                position, waits = self._expected_queue(session_id, turn_id)
            elif row["outcome"] == "missed":
                position, waits = int(row["queue_position"]), bool(row["turn_waits"])
            else:
                return None
            chosen = events(position, waits)
            expected = (position, waits) if queued else (None, None)
            return (key, *columns, *expected, unless_ended, *self._append_arguments(chosen))

        async def park() -> tuple[Any, tuple[Event, ...]]:
            row = await writer.run(PARK, key, step)
            if row["outcome"] != "created":
                return row, ()
            self._saw_queue(session_id, int(row["queue_position"]) + 1, turn_id, True)
            self._keep_parked(interaction)
            return row, self._announcer.appended(chosen, row["event_ids"])

        row, appended = await self._announcer.shielded(park)
        if row["outcome"] == "created":
            return interaction, True, appended
        if row["outcome"] == "existing":
            return load_interaction(row["existing"]), False, ()
        if row["outcome"] == "ended":
            return None
        return await self._not_created(interaction)

    async def _not_created(
        self, interaction: Interaction
    ) -> tuple[Interaction, bool, tuple[Event, ...]]:
        """Nothing was inserted: one of the unique keys is taken. DO NOTHING waited for
        any concurrent insert of the same key to commit, so this read sees its row."""
        if interaction.tool_call_id is not None:
            existing = await self.find_by_tool_call(
                interaction.session_id, interaction.tool_call_id
            )
            if existing is not None:
                return existing, False, ()
        raise UsageError(
            f"an interaction with id {interaction.id!r} already exists; "
            "give each interaction a fresh id"
        )

    async def get_interaction(self, interaction_id: str) -> Interaction | None:
        if _unstorable(interaction_id):
            self._db()
            return None
        body = await self._db().fetchval(GET, interaction_id)
        return None if body is None else load_interaction(body)

    async def find_by_tool_call(self, session_id: str, tool_call_id: str) -> Interaction | None:
        if _unstorable(session_id, tool_call_id):
            self._db()
            return None
        body = await self._db().fetchval(FIND_BY_TOOL_CALL, session_id, tool_call_id)
        return None if body is None else load_interaction(body)

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
        """The compare-and-set, in one call of `midturn_settle` under the session's
        lock, with `turn_done` appended in the same transaction when nothing else of the
        turn is pending: of two racing settles of a turn's last two interactions, the
        second to take the lock sees the first one's settle committed, and appends
        `turn_done`. The session and turn are the interaction's own (as stored; those
        named are not needed).

        The interaction as it stands is the one this store parked, when it has not
        settled it yet (a pending row is never changed but by a settle, and the
        compare-and-set finds it pending or not); else it is read first. Either way the
        compare-and-set decides, and a loser gets the row as the winner left it."""
        current = self._parked.get(interaction_id)
        if current is None:
            current = await self.get_interaction(interaction_id)
            if current is None:
                raise NotFound(f"no interaction with id {interaction_id!r} in this store")
        settled = settled_copy(
            current,
            status=status,
            result=result,
            decision=decision,
            settled_by=settled_by,
            settled_at=settled_at,
        )
        if current.status != "pending":
            return Settle(interaction=current, won=False)
        writer = self._writer()
        columns = interaction_columns(settled)
        session_id, turn_id = current.session_id, current.turn_id
        appending = [*events, *turn_done]
        gated = [False] * len(events) + [True] * len(turn_done)
        arguments = (
            self._session_key(session_id),
            interaction_id,
            columns["status"],
            columns["settled_at"],
            columns["body"],
            session_id,
            turn_id,
            *self._append_arguments(appending, gated),
        )

        async def settle() -> tuple[Any, tuple[Event, ...]]:
            row = await writer.run(SETTLE, self._session_key(session_id), _once(arguments))
            self._parked.pop(interaction_id, None)
            if not row["won"]:
                return row, ()
            waits = bool(row["turn_waits"])
            self._saw_queue(session_id, int(row["session_pending"]), turn_id, waits)
            return row, self._announcer.appended(events if waits else appending, row["event_ids"])

        row, appended = await self._announcer.shielded(settle)
        if row["won"]:
            return Settle(interaction=settled, won=True, events=appended)
        if row["current_body"] is None:  # settled by another, and pruned since
            raise NotFound(f"no interaction with id {interaction_id!r} in this store")
        return Settle(interaction=load_interaction(row["current_body"]), won=False)

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
        pool = self._db()
        check_limit(limit)
        if _unstorable(session_id, turn_id, status, kind):
            return []
        start = None
        if after is not None:
            # a keyset page: rows after the cursor's (created_at, seq), by the same index
            start = await pool.fetchrow(
                "SELECT created_at, seq FROM midturn_interactions WHERE id = $1", after
            )
            if start is None:
                raise unknown_cursor(after)
        query, arguments = list_query(
            session_id,
            turn_id,
            status,
            kind,
            limit,
            None if start is None else (start["created_at"], start["seq"]),
        )
        rows = await pool.fetch(query, *arguments)
        return [load_interaction(row["body"]) for row in rows]

    async def count_pending(self) -> int:
        count = await self._db().fetchval(COUNT_PENDING)
        return int(count)

    # -- turns -----------------------------------------------------------------------

    async def end_turn(
        self, session_id: str, turn_id: str, *, how: str, at: datetime | None = None
    ) -> bool:
        """Under the session's lock, as a park's read of the turn's end is: the end
        commits before that read, or after the park's commit, and then the runtime's
        list of the turn's pending interactions (a later statement) finds the park."""
        pool = self._db()
        if _unstorable(session_id, turn_id, how):
            raise UsageError("a session or turn id cannot hold a NUL character")
        inserted = await pool.fetchval(
            END_TURN,
            session_id,
            turn_id,
            how,
            sort_key_time(at or utcnow()),
            self._session_key(session_id),
        )
        return inserted is not None

    async def turn_ended(self, session_id: str, turn_id: str) -> bool:
        pool = self._db()
        if _unstorable(session_id, turn_id):
            return False
        found = await pool.fetchval(
            "SELECT 1 FROM midturn_turns_ended WHERE session_id = $1 AND turn_id = $2",
            session_id,
            turn_id,
        )
        return found is not None

    async def pending_deadlines(
        self, *, after: str | None = None, limit: int = 5000
    ) -> list[tuple[str, datetime]]:
        # Only the id and the deadline, soonest first, a range of the partial index of
        # pending deadlines (migration 5) per page: no body is parsed into a model.
        check_limit(limit)
        pool = self._db()
        cursor = None
        if after is not None and not _unstorable(after):
            cursor = await pool.fetchval(_DEADLINE_OF, after)
        if cursor is None:
            rows = await pool.fetch(_DEADLINES_FIRST, limit)
        else:
            rows = await pool.fetch(_DEADLINES_AFTER, limit, cursor, after)
        return [(row["id"], parse_time(row["deadline"])) for row in rows]

    # -- events ----------------------------------------------------------------------

    async def append_events(self, events: Sequence[NewEvent]) -> tuple[Event, ...]:
        writer = self._writer()
        if not events:
            return ()
        arguments = self._append_arguments(events)

        async def append() -> tuple[Event, ...]:
            row = await writer.run(APPEND, None, _once(arguments))
            return self._announcer.appended(events, row[0])

        return await self._announcer.shielded(append)

    async def read_events(
        self, after_id: int = 0, *, session_id: str | None = None, limit: int = 1000
    ) -> list[Event]:
        pool = self._db()
        check_limit(limit)
        if _unstorable(session_id):
            return []
        if session_id is None:
            rows = await pool.fetch(READ_EVENTS, after_id, limit)
        else:
            rows = await pool.fetch(READ_SESSION_EVENTS, session_id, after_id, limit)
        return [load_event(row["id"], row["body"]) for row in rows]

    async def last_event_id(self) -> int:
        return await self._last_id(self._db())

    async def tail_start(self, count: int, *, session_id: str | None = None) -> int:
        pool = self._db()
        if count < 0:
            raise UsageError(f"count must be 0 or more (got {count})")
        if _unstorable(session_id):
            return 0
        # the (count+1)-th newest id, by the primary key or the (session_id, id) index
        if session_id is None:
            found = await pool.fetchval(
                "SELECT id FROM midturn_events ORDER BY id DESC LIMIT 1 OFFSET $1", count
            )
        else:
            found = await pool.fetchval(
                "SELECT id FROM midturn_events WHERE session_id = $1 "
                "ORDER BY id DESC LIMIT 1 OFFSET $2",
                session_id,
                count,
            )
        return 0 if found is None else int(found)

    async def read_events_of_types(
        self,
        types: Collection[str],
        after_id: int = 0,
        *,
        session_id: str | None = None,
        limit: int = 1000,
    ) -> list[Event]:
        pool = self._db()
        check_limit(limit)
        wanted = sorted(set(types))
        if not wanted:
            return await self.read_events(after_id, session_id=session_id, limit=limit)
        if _unstorable(session_id):
            return []
        if session_id is None:
            rows = await pool.fetch(READ_EVENTS_OF_TYPES, wanted, after_id, limit)
        else:
            rows = await pool.fetch(
                READ_SESSION_EVENTS_OF_TYPES, session_id, wanted, after_id, limit
            )
        return [load_event(row["id"], row["body"]) for row in rows]

    async def tail_start_of_types(
        self, types: Collection[str], count: int, *, session_id: str | None = None
    ) -> int:
        pool = self._db()
        if count < 0:
            raise UsageError(f"count must be 0 or more (got {count})")
        wanted = sorted(set(types))
        if not wanted:
            return await self.tail_start(count, session_id=session_id)
        if _unstorable(session_id):
            return 0
        if session_id is None:
            found = await pool.fetchval(
                "SELECT id FROM midturn_events WHERE type = ANY($1::text[]) "
                "ORDER BY id DESC LIMIT 1 OFFSET $2",
                wanted,
                count,
            )
        else:
            found = await pool.fetchval(
                "SELECT id FROM midturn_events WHERE session_id = $1 AND type = ANY($2::text[]) "
                "ORDER BY id DESC LIMIT 1 OFFSET $3",
                session_id,
                wanted,
                count,
            )
        return 0 if found is None else int(found)

    @staticmethod
    async def _last_id(connection: Any) -> int:
        return int(await connection.fetchval("SELECT coalesce(max(id), 0) FROM midturn_events"))

    # -- retention -------------------------------------------------------------------

    async def prunable(self, settled_before: datetime, *, limit: int = 1000) -> list[Interaction]:
        check_limit(limit)
        cutoff = sort_key_time(settled_before)
        rows = await self._db().fetch(
            f"SELECT body{_PRUNABLE} ORDER BY created_at, seq LIMIT $2", cutoff, limit
        )
        return [load_interaction(row["body"]) for row in rows]

    async def count_prunable(self, settled_before: datetime) -> int:
        cutoff = sort_key_time(settled_before)
        return int(await self._db().fetchval(f"SELECT count(*){_PRUNABLE}", cutoff))

    async def prune(self, interaction_ids: Sequence[str]) -> Pruned:
        pool = self._db()
        wanted = [value for value in dict.fromkeys(interaction_ids) if not _unstorable(value)]
        if not wanted:
            return Pruned()
        async with pool.acquire() as connection, connection.transaction():
            gone = await connection.fetch(_PRUNE_INTERACTIONS, wanted)
            if not gone:
                return Pruned()
            status = await connection.execute(_PRUNE_EVENTS, [row["id"] for row in gone])
            turns = sorted({(row["session_id"], row["turn_id"]) for row in gone})
            turn_status = await connection.execute(
                _PRUNE_TURN_EVENTS, [turn[0] for turn in turns], [turn[1] for turn in turns]
            )
        events = int(status.rsplit(" ", 1)[-1]) + int(turn_status.rsplit(" ", 1)[-1])
        return Pruned(interactions=len(gone), events=events)


# Start-up (Store.pending_deadlines): ranges of the partial index of pending deadlines.
_DEADLINE = """(substring(body from '"deadline":"([^"]+)"'))"""  # migration 5's expression
_DEADLINE_OF = f"SELECT {_DEADLINE} FROM midturn_interactions WHERE id = $1"
_DEADLINES = (
    f"SELECT id, {_DEADLINE} AS deadline FROM midturn_interactions WHERE status = 'pending'"
)
_DEADLINES_FIRST = f"{_DEADLINES} AND {_DEADLINE} IS NOT NULL ORDER BY {_DEADLINE}, id LIMIT $1"
_DEADLINES_AFTER = (
    f"{_DEADLINES} AND ({_DEADLINE}, id) > ($2, $3) ORDER BY {_DEADLINE}, id LIMIT $1"
)

# Retention (docs/storage.md): settled before the cutoff implies created before it, so the
# time index bounds the scan to what is prunable plus the old pending rows.
_PRUNABLE = (
    " FROM midturn_interactions WHERE created_at < $1 AND status <> 'pending' AND settled_at < $1"
)
_PRUNE_INTERACTIONS = """
DELETE FROM midturn_interactions WHERE id = ANY($1::text[]) AND status <> 'pending'
RETURNING id, session_id, turn_id
"""
_NOT_NEWEST = "id < (SELECT max(id) FROM midturn_events)"
_PRUNE_EVENTS = f"""
DELETE FROM midturn_events WHERE interaction_id = ANY($1::text[]) AND {_NOT_NEWEST}
"""
# A turn event goes when it is older than every event left of its turn's interactions.
_PRUNE_TURN_EVENTS = f"""
DELETE FROM midturn_events AS e
USING unnest($1::text[], $2::text[]) AS t (session_id, turn_id)
WHERE e.session_id = t.session_id AND e.turn_id = t.turn_id AND e.interaction_id IS NULL
  AND e.{_NOT_NEWEST}
  AND e.id < coalesce((SELECT min(k.id) FROM midturn_events AS k
                       WHERE k.session_id = t.session_id AND k.turn_id = t.turn_id
                         AND k.interaction_id IS NOT NULL), 9223372036854775807)
"""


def _once(arguments: tuple[object, ...]) -> Callable[[Any], tuple[object, ...] | None]:
    """A write's `step` (`_postgres_batch.py`) for a statement run once: its row is its
    outcome."""
    return lambda row: arguments if row is None else None


def _unstorable(*identifiers: str | None) -> bool:
    """Whether any identifier holds a NUL character: PostgreSQL text cannot, so no row
    has it (writes refuse it), and a query with it would fail rather than find nothing."""
    return any(value is not None and "\x00" in value for value in identifiers)
