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

from midturn.errors import NotFound
from midturn.store import open_store
from midturn.store._postgres import PostgresStore
from midturn.store._postgres_schema import advisory_key
from midturn.testing.conformance._data import RESULT, answered, make_ask, requested

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


class _Checkouts:
    """Counts one pool's checkouts (the real pool does the work)."""

    def __init__(self, store: PostgresStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        ours = store._db()
        pool_class = type(ours)
        acquire = pool_class.acquire

        def counted(pool: object, *args: object, **kwargs: object) -> object:
            if pool is ours:
                self.count += 1
            return acquire(pool, *args, **kwargs)

        monkeypatch.setattr(pool_class, "acquire", counted)


async def test_a_settle_naming_its_session_takes_one_checkout_and_settles_once(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_store(url) as store:
        assert isinstance(store, PostgresStore)
        ask = make_ask("ia_pool_settle")
        await store.create_interaction(ask, [requested(ask)])
        checkouts = _Checkouts(store, monkeypatch)
        first = await store.settle_in_turn(
            ask.id,
            session_id=ask.session_id,
            turn_id=ask.turn_id,
            status="answered",
            result=RESULT,
            events=[answered(ask)],
        )
        assert first.won and first.interaction.status == "answered"
        assert [event.type for event in first.events] == ["user_question_answered"]
        assert checkouts.count == 1  # the read rides on the lock's statement
        again = await store.settle_in_turn(
            ask.id, session_id=ask.session_id, turn_id=ask.turn_id, status="cancelled"
        )
        assert not again.won and again.interaction == first.interaction


async def test_a_settle_naming_another_session_settles_the_interaction_anyway(
    url: str,
) -> None:
    async with open_store(url) as store:
        ask = make_ask("ia_pool_elsewhere", session_id="s_real")
        await store.create_interaction(ask, [requested(ask)])
        settled = await store.settle_in_turn(
            ask.id,
            session_id="s_other",
            turn_id=ask.turn_id,
            status="answered",
            result=RESULT,
            events=[answered(ask)],
        )
        assert settled.won and settled.interaction.session_id == "s_real"
        with pytest.raises(NotFound):
            await store.settle_in_turn(
                "ia_missing", session_id="s_real", turn_id="t1", status="cancelled"
            )


async def test_of_200_racing_settles_naming_the_session_over_two_stores_one_wins(
    url: str,
) -> None:
    async with open_store(url) as replica_a, open_store(url) as replica_b:
        ask = make_ask("ia_pool_race")
        await replica_a.create_interaction(ask, [requested(ask)])
        outcomes = await asyncio.gather(
            *(
                (replica_a if n % 2 else replica_b).settle_in_turn(
                    ask.id,
                    session_id=ask.session_id,
                    turn_id=ask.turn_id,
                    status="answered",
                    result=RESULT,
                    settled_by=f"responder-{n}",
                    events=[answered(ask)],
                )
                for n in range(200)
            )
        )
        winners = [outcome for outcome in outcomes if outcome.won]
        assert len(winners) == 1
        assert all(
            outcome.interaction == winners[0].interaction and outcome.events == ()
            for outcome in outcomes
            if not outcome.won
        )
        assert [event.type for event in await replica_b.read_events()] == [
            "user_question_requested",
            "user_question_answered",
        ]
