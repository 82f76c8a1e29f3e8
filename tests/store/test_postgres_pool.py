"""The PostgreSQL store's connection pool: a connection goes back to the pool without a
reset statement (one round trip fewer on every use), except one that may still hold a
session lock, which is reset so that the lock is released.

Each test works in a fresh schema of the test database, dropped afterwards. Without a
server the tests skip, except under `CI=true`, where they fail.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from tests._postgres import POSTGRES_URL, fresh_schema

from midturn.store import open_store
from midturn.store._postgres import PostgresStore
from midturn.store._postgres_schema import advisory_key
from midturn.testing.conformance._data import make_ask

asyncpg = pytest.importorskip("asyncpg")

SAFETY_S = 20.0


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async with fresh_schema("t_pgpool", "the PostgreSQL store must be tested") as fresh:
        yield fresh + "&pool_min=1&pool_max=1"


async def _last_statement(pid: int) -> str:
    """What the backend `pid` ran last (pg_stat_activity), from another connection."""
    connection = await asyncpg.connect(POSTGRES_URL)
    try:
        for _ in range(200):
            row = await connection.fetchrow(
                "SELECT state, query FROM pg_stat_activity WHERE pid = $1", pid
            )
            if row is not None and row["state"] == "idle":
                return str(row["query"])
            await asyncio.sleep(0.01)
        raise AssertionError(f"backend {pid} never went idle")
    finally:
        await connection.close()


async def _pool_pid(store: PostgresStore) -> int:
    async with store._db().acquire() as connection:
        return int(connection.get_server_pid())


async def test_a_connection_goes_back_to_the_pool_without_a_reset_statement(url: str) -> None:
    async with open_store(url) as store:
        assert isinstance(store, PostgresStore)
        pid = await _pool_pid(store)  # the pool's one connection
        await store.get_interaction("ia_not_there")
        assert "midturn_interactions" in await _last_statement(pid)
        ask = make_ask("ia_pool_1")
        await store.create_interaction(ask)  # under the session's lock: unlocked last
        assert "pg_advisory_unlock($1" in await _last_statement(pid)


async def test_a_connection_whose_unlock_was_cancelled_is_reset_and_the_lock_released(
    url: str,
) -> None:
    async with open_store(url) as store:
        assert isinstance(store, PostgresStore)
        session_id = "s_cancelled_unlock"
        key = advisory_key(f"session\x00{session_id}", store._schema or "")
        inside = asyncio.Event()

        async def hold() -> None:
            async with store._session_locked(session_id):
                inside.set()
                await asyncio.sleep(SAFETY_S)

        task = asyncio.create_task(hold())
        await asyncio.wait_for(inside.wait(), SAFETY_S)
        task.cancel()  # the block ends: its unlock starts ...
        await asyncio.sleep(0)
        task.cancel()  # ... and is cancelled in its turn
        with pytest.raises(asyncio.CancelledError):
            await task
        other = await asyncpg.connect(POSTGRES_URL)
        try:
            # the lock comes free once the connection is back in the pool, reset
            await other.execute(f"SET lock_timeout = '{int(SAFETY_S)}s'")
            await other.execute("SELECT pg_advisory_lock($1)", key)
            await other.execute("SELECT pg_advisory_unlock($1)", key)
        finally:
            await other.close()
        # and the pool still works
        assert await store.get_interaction("ia_not_there") is None
