"""The PostgreSQL store's connections: asyncpg's pool opens and closes them, `Connections`
hands them out and takes them back.

Why not asyncpg's pool alone: it returns every connection in a task of its own
(`asyncio.shield` around the release, so that a cancelled caller cannot cut a release
short), and its caller waits for that task: three turns of the event loop on every
statement before the caller has its result, besides the two the statement itself takes
(its reply read, the caller woken). Under a crowd each turn waits behind the loop's other
work (a fan-out's socket writes, the other requests), so those turns were most of a
PostgreSQL round trip's time in the server. A connection whose statement ran to its end
has nothing to undo (no transaction, no lock, no setting: see `PostgresStore._reset`), so
it goes back here at once, with no await. One whose use failed, was cancelled or left a
transaction open goes back through asyncpg's release, which rolls back and waits out a
cancellation, shielded as before.

The connections taken stay out of asyncpg's pool between uses (at most its `max_size`),
so it never closes them for being idle; they close with the store.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Generator
from typing import Any

__all__ = ["Connections"]


class Connections:
    """At most `size` connections of `pool`, each used by one caller at a time, with the
    subset of asyncpg's `Pool` interface the store uses (`fetch`, `fetchrow`, `fetchval`,
    `execute`, `acquire`)."""

    def __init__(self, pool: Any, size: int) -> None:
        self.pool = pool
        self._size = size
        self._idle: list[Any] = []
        self._taken = 0
        """Connections taken out of `pool`, idle here or in use."""
        self._waiters: deque[asyncio.Future[Any]] = deque()
        self._closing = False
        self._returning: set[asyncio.Future[Any]] = set()

    async def fetch(self, query: str, *args: object) -> Any:
        return await self._statement("fetch", query, args)

    async def fetchrow(self, query: str, *args: object) -> Any:
        return await self._statement("fetchrow", query, args)

    async def fetchval(self, query: str, *args: object) -> Any:
        return await self._statement("fetchval", query, args)

    async def execute(self, query: str, *args: object) -> Any:
        return await self._statement("execute", query, args)

    async def _statement(self, method: str, query: str, args: tuple[object, ...]) -> Any:
        """One statement on a connection of its own (`method`: asyncpg's `fetch`,
        `fetchrow`, `fetchval` or `execute`), given back at once when it ran to its end,
        else through asyncpg's release."""
        connection = await self.take()
        try:
            result = await getattr(connection, method)(query, *args)
        except BaseException:
            await self.give_back(connection)
            raise
        self.give(connection)
        return result

    def free(self) -> bool:
        """Whether `take` would not wait: a connection idle, or room to open one, and no
        caller waiting for one."""
        return not self._waiters and (bool(self._idle) or self._taken < self._size)

    def acquire(self) -> _Checkout:
        """A connection for several statements (a transaction), as asyncpg's pool lends
        one: `async with connections.acquire() as connection`, or awaited and then
        `release`d. Given back at once when its use ended normally with no transaction
        open, else through asyncpg."""
        return _Checkout(self)

    async def release(self, connection: Any) -> None:
        if connection.is_in_transaction():
            await self.give_back(connection)
        else:
            self.give(connection)

    async def take(self) -> Any:
        """An idle connection, a new one from the pool while fewer than `size` are
        taken, or the next one given back."""
        while True:
            while self._idle:
                connection = self._idle.pop()
                if not connection.is_closed():
                    return connection
                await self.give_back(connection)  # lost while idle: asyncpg cleans up
            if self._taken < self._size:
                self._taken += 1
                return await self._open()
            waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                connection = await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    if waiter.result() is None:
                        self._wake()  # the free place passes on to the next waiter
                    else:
                        self.give(waiter.result())  # handed over as this caller gave up
                raise
            if connection is not None:
                return connection
            # None: a connection went back to the pool, so one can be taken from it

    async def _open(self) -> Any:
        """A connection from `pool` (opened if need be), taken in a task of its own:
        asyncpg opens it under a timeout of asyncio's, which cancels the task it runs
        in, and a write's caller runs its write in its own task with waits it cannot
        cancel (`PostgresStore._shielded`). A caller cancelled meanwhile leaves the
        connection to come in idle (or its place free)."""
        opening = asyncio.ensure_future(self.pool.acquire())
        try:
            return await asyncio.shield(opening)
        except asyncio.CancelledError:
            if opening.done():
                self._opened(opening)
            else:
                opening.add_done_callback(self._opened)
            raise
        except BaseException:
            self._taken -= 1
            self._wake()
            raise

    def _opened(self, opening: asyncio.Future[Any]) -> None:
        """A connection opened for a caller that gave up: idle, or the place free."""
        if opening.cancelled() or opening.exception() is not None:
            self._taken -= 1
            self._wake()
        else:
            self.give(opening.result())

    def give(self, connection: Any) -> None:
        """Take back a connection that is ready for its next use: to the first waiter,
        or idle."""
        if self._closing:
            self._taken -= 1
            returning = asyncio.ensure_future(self.pool.release(connection))
            self._returning.add(returning)
            returning.add_done_callback(self._returning.discard)
            return
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(connection)
                return
        self._idle.append(connection)

    async def give_back(self, connection: Any) -> None:
        """Return a connection to asyncpg's pool, which rolls back what it holds open and
        waits out a cancelled statement (shielded from the caller's cancellation)."""
        self._taken -= 1
        try:
            await self.pool.release(connection)
        finally:
            self._wake()

    def _wake(self) -> None:
        """A place in the pool is free: the first waiter takes it."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    async def close(self) -> None:
        """Return the idle connections to the pool (its close waits for the others,
        which `give` returns from now on)."""
        self._closing = True
        idle, self._idle = self._idle, []
        for connection in idle:
            self._taken -= 1
            await self.pool.release(connection)


class _Checkout:
    """`Connections.acquire()`: awaitable, or an async context manager that gives the
    connection back at its end (through asyncpg when the block raised)."""

    def __init__(self, connections: Connections) -> None:
        self._connections = connections
        self._connection: Any = None

    def __await__(self) -> Generator[Any, None, Any]:
        return self._connections.take().__await__()

    async def __aenter__(self) -> Any:
        self._connection = await self._connections.take()
        return self._connection

    async def __aexit__(self, kind: type[BaseException] | None, *_: object) -> None:
        connection, self._connection = self._connection, None
        if kind is not None:
            await self._connections.give_back(connection)
        else:
            await self._connections.release(connection)
