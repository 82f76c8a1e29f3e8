"""The SQLite store (`sqlite:///relative/path.db`, `sqlite:////absolute/path.db`): the
embedded default, one file several processes can share (docs/storage.md).

One connection per store object, in autocommit mode; every write is an explicit
`BEGIN IMMEDIATE … COMMIT`, which takes SQLite's single write lock up front. So a
settle's compare-and-set (`UPDATE … WHERE id = ? AND status = 'pending'`) and its event
inserts commit together, and two processes can never both settle one interaction. Within
the process an asyncio lock keeps one statement sequence on the connection at a time.

Listeners hear the appends made through this store object. Appends by another process
reach a reader when it next reads the log (there is no cross-process wake-up for SQLite;
use PostgreSQL for several live processes).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import aiosqlite

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
from midturn.store._base import SessionRecord, Settle, Store
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
    settled_copy,
    sort_key_time,
)
from midturn.store._sqlite_schema import MIGRATIONS, MIGRATIONS_TABLE

__all__ = ["DEFAULT_SQLITE_PATH", "DEFAULT_SQLITE_URL", "SqliteStore", "sqlite_path"]

DEFAULT_SQLITE_PATH = ".midturn/midturn.db"
DEFAULT_SQLITE_URL = f"sqlite:///{DEFAULT_SQLITE_PATH}"
BUSY_TIMEOUT_MS = 30_000

_INSERT_INTERACTION = (
    "INSERT INTO midturn_interactions (id, kind, session_id, turn_id, tool_call_id, status,"
    " created_at, settled_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_EVENT = (
    "INSERT INTO midturn_events (type, session_id, turn_id, interaction_id, at, body)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)
_SETTLE = (
    "UPDATE midturn_interactions SET status = ?, settled_at = ?, body = ?"
    " WHERE id = ? AND status = 'pending'"
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


class SqliteStore(Store):
    """A store in one SQLite file, in WAL mode, safe to share between processes."""

    def __init__(self, url: str = DEFAULT_SQLITE_URL) -> None:
        super().__init__()
        self.url = url
        self.path = sqlite_path(url)
        self._db: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()

    # -- lifecycle -------------------------------------------------------------------

    async def open(self) -> None:
        if self._db is not None:
            return
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            db = await aiosqlite.connect(self.path, isolation_level=None, cached_statements=256)
        except (OSError, sqlite3.Error) as error:
            raise UsageError(
                f"cannot open the SQLite file {self.path!r} ({error}); check the path in "
                f"{self.url!r} and that this process may write there"
            ) from error
        try:
            await db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            await db.execute("PRAGMA journal_mode = WAL")
            await db.execute("PRAGMA synchronous = NORMAL")
            await db.execute("PRAGMA foreign_keys = ON")
            await _migrate(db)
        except BaseException:
            await db.close()
            raise
        self._db = db

    async def aclose(self) -> None:
        if self._db is None:
            return
        async with self._lock:
            db, self._db = self._db, None
            if db is not None:
                await db.close()

    async def schema_version(self) -> int:
        rows = await self._read("SELECT coalesce(max(version), 0) FROM midturn_migrations")
        return int(rows[0][0])

    def _conn(self) -> aiosqlite.Connection:
        if self._db is None:
            raise UsageError(NOT_OPEN)
        return self._db

    async def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        db = self._conn()
        async with self._lock:
            return list(await db.execute_fetchall(sql, params))

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[aiosqlite.Connection]:
        """One write transaction, holding SQLite's write lock from its first statement."""
        db = self._conn()
        async with self._lock:
            await db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                await db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    await db.execute("ROLLBACK")
                raise

    # -- sessions ----------------------------------------------------------------------

    async def create_session(self, session: SessionRecord) -> None:
        params = (
            session.id,
            session.agent_token_hash,
            session.answer_token_hash,
            sort_key_time(session.created_at),
            dump_session(session),
        )
        async with self._write() as db:
            try:
                await db.execute(
                    "INSERT INTO midturn_sessions (id, agent_token_hash, answer_token_hash,"
                    " created_at, body) VALUES (?, ?, ?, ?, ?)",
                    params,
                )
            except sqlite3.IntegrityError as error:
                raise UsageError(
                    f"a session with id {session.id!r} already exists; choose another id"
                ) from error

    async def get_session(self, session_id: str) -> SessionRecord | None:
        rows = await self._read("SELECT body FROM midturn_sessions WHERE id = ?", (session_id,))
        return load_session(rows[0][0]) if rows else None

    async def list_sessions(self) -> list[SessionRecord]:
        rows = await self._read("SELECT body FROM midturn_sessions ORDER BY created_at, seq")
        return [load_session(row[0]) for row in rows]

    # -- interactions ------------------------------------------------------------------

    async def create_interaction(
        self, interaction: Interaction, events: Sequence[NewEvent] = ()
    ) -> tuple[Interaction, bool, tuple[Event, ...]]:
        check_new_interaction(interaction)
        columns = interaction_columns(interaction)
        async with self._write() as db:
            if interaction.tool_call_id is not None:
                rows = await db.execute_fetchall(
                    "SELECT body FROM midturn_interactions"
                    " WHERE session_id = ? AND tool_call_id = ?",
                    (interaction.session_id, interaction.tool_call_id),
                )
                if rows:
                    return load_interaction(next(iter(rows))[0]), False, ()
            try:
                await db.execute(_INSERT_INTERACTION, tuple(columns.values()))
            except sqlite3.IntegrityError as error:
                raise UsageError(
                    f"an interaction with id {interaction.id!r} already exists; "
                    "give each interaction a fresh id"
                ) from error
            appended = await _insert_events(db, events)
        self._announce(appended)
        return interaction, True, appended

    async def get_interaction(self, interaction_id: str) -> Interaction | None:
        rows = await self._read(
            "SELECT body FROM midturn_interactions WHERE id = ?", (interaction_id,)
        )
        return load_interaction(rows[0][0]) if rows else None

    async def find_by_tool_call(self, session_id: str, tool_call_id: str) -> Interaction | None:
        rows = await self._read(
            "SELECT body FROM midturn_interactions WHERE session_id = ? AND tool_call_id = ?",
            (session_id, tool_call_id),
        )
        return load_interaction(rows[0][0]) if rows else None

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
        async with self._write() as db:
            rows = list(
                await db.execute_fetchall(
                    "SELECT body FROM midturn_interactions WHERE id = ?", (interaction_id,)
                )
            )
            if not rows:
                raise NotFound(f"no interaction with id {interaction_id!r} in this store")
            current = load_interaction(rows[0][0])
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
            columns = interaction_columns(settled)
            cursor = await db.execute(
                _SETTLE, (status, columns["settled_at"], columns["body"], interaction_id)
            )
            if cursor.rowcount != 1:  # pragma: no cover - the write lock rules this out
                return Settle(interaction=current, won=False)
            appended = await _insert_events(db, events)
        self._announce(appended)
        return Settle(interaction=settled, won=True, events=appended)

    async def list_interactions(
        self,
        *,
        session_id: str | None = None,
        turn_id: str | None = None,
        status: InteractionStatus | None = None,
        kind: InteractionKind | None = None,
        limit: int | None = None,
    ) -> list[Interaction]:
        check_limit(limit)
        clauses: list[str] = []
        params: list[Any] = []
        for column, value in (
            ("session_id", session_id),
            ("turn_id", turn_id),
            ("status", status),
            ("kind", kind),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        sql = "SELECT body FROM midturn_interactions"
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        sql += " ORDER BY created_at, seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [load_interaction(row[0]) for row in await self._read(sql, params)]

    # -- events ------------------------------------------------------------------------

    def _announce(self, appended: tuple[Event, ...]) -> None:
        if appended:
            self._notify(appended[-1].id)

    async def append_events(self, events: Sequence[NewEvent]) -> tuple[Event, ...]:
        self._conn()
        if not events:
            return ()
        async with self._write() as db:
            appended = await _insert_events(db, events)
        self._announce(appended)
        return appended

    async def read_events(
        self, after_id: int = 0, *, session_id: str | None = None, limit: int = 1000
    ) -> list[Event]:
        check_limit(limit)
        if session_id is None:
            rows = await self._read(
                "SELECT id, body FROM midturn_events WHERE id > ? ORDER BY id LIMIT ?",
                (after_id, limit),
            )
        else:
            rows = await self._read(
                "SELECT id, body FROM midturn_events"
                " WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?",
                (session_id, after_id, limit),
            )
        return [load_event(row[0], row[1]) for row in rows]

    async def last_event_id(self) -> int:
        rows = await self._read("SELECT coalesce(max(id), 0) FROM midturn_events")
        return int(rows[0][0])


async def _insert_events(db: aiosqlite.Connection, events: Sequence[NewEvent]) -> tuple[Event, ...]:
    appended = []
    for new in events:
        cursor = await db.execute(
            _INSERT_EVENT,
            (
                new.type,
                new.session_id,
                new.turn_id,
                new.interaction_id,
                sort_key_time(new.at),
                dump_event(new),
            ),
        )
        assert cursor.lastrowid is not None
        appended.append(event_from(new, cursor.lastrowid))
    return tuple(appended)


async def _migrate(db: aiosqlite.Connection) -> None:
    """Apply the migrations this file lacks, all in one transaction (idempotent; safe
    when several processes open the same file at once)."""
    await db.execute("BEGIN IMMEDIATE")
    try:
        await db.execute(MIGRATIONS_TABLE)
        rows = list(
            await db.execute_fetchall("SELECT coalesce(max(version), 0) FROM midturn_migrations")
        )
        current = int(rows[0][0])
        if current > len(MIGRATIONS):
            raise UsageError(
                f"the SQLite file is at schema version {current}, newer than this midturn "
                f"knows ({len(MIGRATIONS)}); upgrade midturn to use it"
            )
        for migration in MIGRATIONS[current:]:
            for statement in migration.statements:
                await db.execute(statement)
            await db.execute(
                "INSERT INTO midturn_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, sort_key_time(utcnow())),
            )
        await db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            await db.execute("ROLLBACK")
        raise
