"""Group commit for the PostgreSQL store's writes: the writes that find every pooled
connection busy queue here, and one connection runs up to `CAP` of them in one
transaction, one commit (one flush of the write-ahead log) for all.

Why: a commit costs a flush (about 4 ms on a server with `fsync` and
`synchronous_commit` on), and a write holds the append lock of the event log through
its commit (`_postgres.py`), so under a crowd the writes queue behind one another's
flushes. A batch pays one flush for up to `CAP` of them.

A write is one statement (`PARK`, `SETTLE` or `APPEND` of `_postgres_sql.py`), given as
its text, the key of the session lock it takes (None for an append) and `step`, which
makes its arguments (`step(None)`) and reads each reply (`step(row)`): None when the
row is the write's outcome, else the arguments to run again (a park that missed the
queue, `midturn_park`'s `missed`).

- Alone (a connection idle, or room for one, and no write queued), a write runs as
  before: each statement on its own, one implicit transaction each.
- Else it queues, and one queued write, the leader, waits for a connection. With one,
  it takes itself and up to `CAP - 1` of the oldest queued writes, hands the lead on to
  the next queued write (if any), and runs them in one round trip to begin (`BEGIN`,
  the batch's session locks, sorted), one round trip per statement text
  (asyncpg's `fetchmany`: every write of that text pipelined, in queue order), the
  reruns of misses, and `COMMIT`. Each write then gets its own row.
- Lock order: a write takes its session's lock, then the append lock, which it holds
  to its commit. In a batch, a later write taking its session's lock while an earlier
  one holds the append lock would take them the other way round (and deadlock with a
  lone write of that session waiting for the append lock), so a batch takes all its
  sessions' locks first, in increasing key order, and its writes' own takes of them
  are then no-ops (a transaction holding an advisory lock takes it again at once).
  Every transaction thus waits only for a session key above all it holds, or for the
  append lock once it holds all its session keys: no cycle. (Rows: two writes of a
  row's session never run at once, as each holds the session's lock. The one wait a
  batch can make on a row while holding the append lock is an insert of an
  interaction id another session's uncommitted park holds, a caller's mistake; if
  that park waits for the append lock, the server finds the deadlock after
  `deadlock_timeout` and rolls one back, which is then run again: see below.)
- Outcomes: a batch whose error came before its `COMMIT` was sent committed nothing
  (the server rolls back a failed transaction, asyncpg's release rolls back whatever
  else): each of its writes runs again alone, so its outcome, its error included, is
  its own. A batch whose `COMMIT` failed may have committed, as a lone statement whose
  connection dropped may have: each caller gets the error. A lone write rolled back as
  a deadlock's victim runs again.
- A batch's transaction is open across its round trips, so `SET LOCAL
  idle_in_transaction_session_timeout` bounds how long a replica that stopped
  mid-batch (a network cut; a killed process's connection closes at once) holds its
  locks: `IDLE_S`.

Callers run a write inside `PostgresStore._shielded`, whose waits the caller's
cancellation does not cut short: a leader runs its batch to its end, and a queued write
waits for its row, however its caller fares.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg

from midturn.store._postgres_pool import Connections

__all__ = ["CAP", "IDLE_S", "Batches", "Step"]

CAP = 32
"""The most writes one transaction commits."""
IDLE_S = 10
"""How long the server lets a batch's transaction sit idle between round trips."""
DEADLOCK_RETRIES = 3
"""How many times a lone write rolled back as a deadlock's victim runs again."""

Step = Callable[[Any], "tuple[object, ...] | None"]

_LEAD = object()
"""A queued write's signal: wait for a connection and lead a batch."""
_ALONE = object()
"""A queued write's signal: its batch committed nothing; run alone."""


class _Write:
    __slots__ = ("arguments", "done", "key", "query", "row", "step")

    def __init__(self, query: str, key: int | None, step: Step) -> None:
        self.query = query
        self.key = key
        self.step = step
        self.arguments: tuple[object, ...] | None = None
        self.row: Any = None
        self.done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()


class Batches:
    """The writes of one store, run alone or in batches of up to `cap` on `connections`."""

    def __init__(self, connections: Connections, cap: int = CAP) -> None:
        self._connections = connections
        self._cap = cap
        self._queue: deque[_Write] = deque()
        self._leading = False
        """Whether a queued write waits for a connection to lead a batch (or was told to)."""
        self.batches = 0
        """Batches of two writes or more committed (for operators and tests)."""
        self.batched = 0
        """Writes those batches committed."""

    async def run(self, query: str, key: int | None, step: Step) -> Any:
        """The write's final row (see the module's docstring)."""
        if not self._queue and self._connections.free():
            return await self._alone(query, step)
        write = _Write(query, key, step)
        self._queue.append(write)
        if self._leading:
            signal = await write.done
            if signal is _ALONE:
                return await self._alone(query, step)
            if signal is not _LEAD:
                return signal
        self._leading = True
        return await self._lead(write)

    async def _alone(self, query: str, step: Step) -> Any:
        """The write's statements each on a connection of the pool, each its own
        transaction, as before batches."""
        return await _each(self._connections.fetchrow, query, step)

    async def _lead(self, write: _Write) -> Any:
        try:
            connection = await self._connections.take()
        except BaseException:  # the loop closing: the lead passes on
            self._queue.remove(write)
            self._leading = False
            self._pass_lead()
            raise
        self._leading = False
        self._queue.remove(write)
        batch = [write]
        while self._queue and len(batch) < self._cap:
            batch.append(self._queue.popleft())
        self._pass_lead()
        if len(batch) == 1:  # alone after all, on the connection it has
            try:
                row = await _each(connection.fetchrow, write.query, write.step)
            except BaseException:
                await self._connections.give_back(connection)
                raise
            self._connections.give(connection)
            return row
        committing = False
        try:
            await self._together(connection, batch)
            committing = True
            await connection.execute("COMMIT")
        except BaseException as error:
            shared = committing or not isinstance(error, Exception)
            for other in batch[1:]:
                if shared:
                    _fail(other.done, error)
                else:
                    other.done.set_result(_ALONE)
            await self._undo(connection, error)
            if shared:
                raise
            return await self._alone(write.query, write.step)
        self._connections.give(connection)
        self.batches += 1
        self.batched += len(batch)
        for other in batch[1:]:
            other.done.set_result(other.row)
        return write.row

    async def _together(self, connection: Any, batch: list[_Write]) -> None:
        """Run `batch` in a transaction on `connection`, up to its commit; each write's
        final row is left in its `row`."""
        keys = sorted({write.key for write in batch if write.key is not None})
        await connection.execute(_begin(keys))
        for write in batch:
            write.arguments = write.step(None)
        todo = [write for write in batch if write.arguments is not None]
        while todo:
            again: list[_Write] = []
            for query, group in _by_query(todo).items():
                rows = await connection.fetchmany(query, [write.arguments for write in group])
                for write, row in zip(group, rows, strict=True):
                    arguments = write.step(row)
                    if arguments is None:
                        write.row = row
                    else:
                        write.arguments = arguments
                        again.append(write)
            todo = again

    async def _undo(self, connection: Any, error: BaseException) -> None:
        """Take back the connection of a batch that failed: its transaction rolled back
        here while the connection works (asyncpg's release, which would roll it back
        too, logs that as an error), else through asyncpg's release."""
        if isinstance(error, Exception) and not connection.is_closed():
            try:
                if connection.is_in_transaction():
                    await connection.execute("ROLLBACK")
            except Exception:  # the connection is broken: asyncpg's release cleans up
                pass
            else:
                self._connections.give(connection)
                return
        await self._connections.give_back(connection)

    def _pass_lead(self) -> None:
        """The oldest queued write leads the next batch."""
        if self._queue and not self._leading:
            self._leading = True
            self._queue[0].done.set_result(_LEAD)


async def _each(fetchrow: Callable[..., Awaitable[Any]], query: str, step: Step) -> Any:
    """`step`'s statements through `fetchrow` until it has its row; one rolled back as a
    deadlock's victim (nothing of it committed) runs again."""
    retries = DEADLOCK_RETRIES
    row = None
    arguments = step(None)
    while arguments is not None:
        try:
            row = await fetchrow(query, *arguments)
        except asyncpg.DeadlockDetectedError:
            if retries == 0:
                raise
            retries -= 1
            continue
        arguments = step(row)
    return row


def _begin(keys: list[int]) -> str:
    """The batch's first round trip: its transaction, the idle bound, and the session
    locks in increasing key order (one statement each, run in order: keys are ints,
    written as literals)."""
    locks = "".join(f" SELECT pg_advisory_xact_lock({int(key)});" for key in keys)
    return f"BEGIN; SET LOCAL idle_in_transaction_session_timeout = '{IDLE_S}s';{locks}"


def _by_query(writes: list[_Write]) -> dict[str, list[_Write]]:
    groups: dict[str, list[_Write]] = {}
    for write in writes:
        groups.setdefault(write.query, []).append(write)
    return groups


def _fail(done: asyncio.Future[Any], error: BaseException) -> None:
    """Hand a queued write its batch's error (a cancellation, the loop closing, as one)."""
    if isinstance(error, Exception):
        done.set_exception(error)
    else:
        done.cancel()
