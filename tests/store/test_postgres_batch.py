"""The PostgreSQL store's group commit (`_postgres_batch.py`): writes queued behind a
busy pool commit together, each with its own outcome.

Each test holds the one connection of a pool of one while it starts its writes, so
that they queue, then hands it back: the oldest queued write takes it and runs the
others with it, up to the cap. Each test works in a fresh schema of the test database,
dropped afterwards. Without a server the tests skip, except under `CI=true`, where they
fail.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

import pytest
from tests._postgres import fresh_schema

from midturn.contract._interactions import Interaction, NewEvent
from midturn.errors import UsageError
from midturn.store import Store, open_store
from midturn.store._postgres import PostgresStore
from midturn.store._postgres_batch import CAP, Batches
from midturn.testing.conformance._data import RESULT, answered, make_ask, note, requested

asyncpg = pytest.importorskip("asyncpg")

SAFETY_S = 20.0
T = TypeVar("T")


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async with fresh_schema("t_pgbatch", "the PostgreSQL store must be tested") as fresh:
        yield fresh + "&pool_min=1&pool_max=1"


async def _queued(store: Store, writes: Sequence[Callable[[], Awaitable[T]]]) -> list[Any]:
    """Start `writes` while the pool's one connection is held, so that they queue, then
    hand it back; each write's result or error."""
    assert isinstance(store, PostgresStore)
    connection = await store._db().acquire()
    tasks = [asyncio.ensure_future(write()) for write in writes]
    await asyncio.sleep(0)  # every write has queued
    await store._db().release(connection)
    return await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), SAFETY_S)


def _park(store: Store, item: Interaction) -> Callable[[], Awaitable[Any]]:
    def events(position: int, waits: bool) -> list[NewEvent]:
        return [requested(item)] if waits else [requested(item), note(item.session_id)]

    return lambda: store.create_queued(item, events)


def _settle(store: Store, item: Interaction) -> Callable[[], Awaitable[Any]]:
    return lambda: store.settle_in_turn(
        item.id,
        session_id=item.session_id,
        turn_id=item.turn_id,
        status="answered",
        result=RESULT,
        events=[answered(item)],
        turn_done=[note(item.session_id, item.turn_id)],
    )


def _commits(store: Store) -> tuple[int, int]:
    assert isinstance(store, PostgresStore)
    return store.group_commits


async def test_a_lone_write_with_a_connection_free_is_not_batched(url: str) -> None:
    async with open_store(url) as store:
        for n in range(5):
            item = make_ask(f"ia_lone_{n}", turn_id=f"t{n}")
            await _park(store, item)()
            await _settle(store, item)()
        assert _commits(store) == (0, 0)


async def test_queued_parks_commit_together_each_with_its_own_position(url: str) -> None:
    """Parks into one session and into others, queued at once: one transaction, and
    each park's queue position as if they had run one by one (the later ones in a
    session miss their first guess and run again inside the batch)."""
    async with open_store(url) as store:
        chosen: dict[str, int] = {}

        def park(item: Interaction) -> Callable[[], Awaitable[Any]]:
            def events(position: int, waits: bool) -> list[NewEvent]:
                chosen[item.id] = position
                return [requested(item)] if waits else [requested(item), note(item.session_id)]

            return lambda: store.create_queued(item, events)

        same = [make_ask(f"ia_same_{n}", turn_id=f"t{n}") for n in range(6)]
        others = [make_ask(f"ia_other_{n}", session_id=f"s_other_{n}") for n in range(10)]
        outcomes = await _queued(store, [park(item) for item in (*same, *others)])
        assert _commits(store) == (1, 16)
        assert all(created for _, created, _ in outcomes)
        assert sorted(chosen[item.id] for item in same) == list(range(6))
        assert all(chosen[item.id] == 0 for item in others)
        ids = [event.id for _, _, events in outcomes for event in events]
        assert sorted(ids) == list(range(1, 33))  # nothing rolled back
        assert [event.id for event in await store.read_events()] == sorted(ids)


async def test_more_writes_than_the_cap_take_several_batches(url: str) -> None:
    async with open_store(url) as store:
        items = [make_ask(f"ia_cap_{n}", session_id=f"s_cap_{n}") for n in range(CAP + 5)]
        outcomes = await _queued(store, [_park(store, item) for item in items])
        assert all(created for _, created, _ in outcomes)
        batches, writes = _commits(store)
        assert writes == CAP + 5 and batches == 2


async def test_a_failing_write_fails_alone_and_the_others_commit(url: str) -> None:
    """A duplicate id (refused), a settle of a settled interaction (lost), a statement
    the server refuses (its error, to its caller only): the batch they share commits
    nothing, each write runs again alone, and every other write commits."""
    async with open_store(url) as store:
        assert isinstance(store, PostgresStore)
        settled = make_ask("ia_settled", session_id="s_settled")
        await store.create_interaction(settled, [requested(settled)])
        await _settle(store, settled)()
        fresh = [make_ask(f"ia_ok_{n}", session_id=f"s_ok_{n}") for n in range(5)]
        duplicate = make_ask("ia_ok_0", session_id="s_dup")
        writer = store._writer()

        def failing() -> Awaitable[Any]:
            return writer.run("SELECT 1 / $1", None, lambda row: (0,) if row is None else None)

        outcomes = await _queued(
            store,
            [
                _park(store, fresh[0]),
                failing,
                _park(store, duplicate),
                _settle(store, settled),
                *(_park(store, item) for item in fresh[1:]),
            ],
        )
        assert isinstance(outcomes[1], asyncpg.DivisionByZeroError)
        twins = [outcomes[0], outcomes[2]]  # the same id: the first to run alone has it
        refused = [outcome for outcome in twins if isinstance(outcome, UsageError)]
        assert len(refused) == 1 and "already exists" in str(refused[0])
        assert outcomes[3].won is False and outcomes[3].interaction.status == "answered"
        parks = [*(outcome for outcome in twins if outcome not in refused), *outcomes[4:]]
        assert all(created for _, created, _ in parks)
        assert await store.get_interaction("ia_ok_0") == parks[0][0]
        for item in fresh[1:]:
            assert await store.get_interaction(item.id) == item
        logged = await store.read_events()
        drawn = [event.id for _, _, events in parks for event in events]
        assert sorted(drawn) == [event.id for event in logged[3:]]  # after the settled's 3


async def test_racing_settles_in_one_batch_have_one_winner(url: str) -> None:
    async with open_store(url) as store:
        ask = make_ask("ia_race")
        await store.create_interaction(ask, [requested(ask)])
        outcomes = await _queued(store, [_settle(store, ask)] * 10)
        assert _commits(store) == (1, 10)
        assert [outcome.won for outcome in outcomes].count(True) == 1
        winner = next(outcome for outcome in outcomes if outcome.won)
        assert all(
            outcome.interaction == winner.interaction for outcome in outcomes if not outcome.won
        )
        logged = [event.type for event in await store.read_events()]
        assert logged == ["user_question_requested", "user_question_answered", "turn_waiting"]


async def test_a_cancelled_caller_in_a_batch_leaves_its_write_whole(url: str) -> None:
    """Callers cancelled while their writes wait in the queue: each write is done whole
    (its row and its events) and announced, and the writes around it commit."""
    async with open_store(url) as store:
        assert isinstance(store, PostgresStore)
        heard: list[int] = []
        store.add_listener(heard.append)
        items = [make_ask(f"ia_cut_{n}", session_id=f"s_cut_{n}") for n in range(8)]
        connection = await store._db().acquire()
        tasks = [asyncio.ensure_future(_park(store, item)()) for item in items]
        await asyncio.sleep(0)
        for task in tasks[::2]:  # the leader among them
            task.cancel()
        await asyncio.sleep(0)
        await store._db().release(connection)
        outcomes = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), SAFETY_S)
        assert all(isinstance(outcome, asyncio.CancelledError) for outcome in outcomes[::2])
        assert all(outcome[1] for outcome in outcomes[1::2])
        for _ in range(int(SAFETY_S / 0.01)):
            if heard and heard[-1] == 16:
                break
            await asyncio.sleep(0.01)
        logged = await store.read_events()
        assert [event.id for event in logged] == list(range(1, 17))
        assert heard[-1] == 16 and heard == sorted(heard)
        for item in items:
            assert await store.get_interaction(item.id) == item
        assert _commits(store) == (1, 8)


async def test_two_replicas_batching_across_the_same_sessions_do_not_deadlock(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two stores on one schema, each batching parks and settles into the same ten
    sessions, one in one order and the other in the reverse: no batch fails (a
    deadlock would fail one: the batch takes its sessions' locks first, in key
    order), and a reader following the log meanwhile misses no event."""
    monkeypatch.setattr("midturn.store._postgres_batch.DEADLOCK_RETRIES", 0)
    failures: list[BaseException] = []
    together = Batches._together

    async def watched(batches: Batches, connection: Any, batch: Any) -> None:
        try:
            await together(batches, connection, batch)
        except BaseException as error:
            failures.append(error)
            raise

    monkeypatch.setattr(Batches, "_together", watched)
    async with open_store(url) as replica_a, open_store(url) as replica_b:
        seen: list[int] = []
        stop = asyncio.Event()

        async def follow() -> None:
            while not stop.is_set():
                for event in await replica_a.read_events(seen[-1] if seen else 0):
                    seen.append(event.id)
                await asyncio.sleep(0.001)

        follower = asyncio.ensure_future(follow())
        sessions = [f"s_x_{n}" for n in range(10)]
        for rounds in range(3):
            items_a = [make_ask(f"ia_a_{rounds}_{s}", session_id=s) for s in sessions]
            items_b = [make_ask(f"ia_b_{rounds}_{s}", session_id=s) for s in reversed(sessions)]
            parked = await asyncio.gather(
                _queued(replica_a, [_park(replica_a, item) for item in items_a]),
                _queued(replica_b, [_park(replica_b, item) for item in items_b]),
            )
            assert all(created for outcomes in parked for _, created, _ in outcomes)
            settled = await asyncio.gather(
                _queued(replica_a, [_settle(replica_a, item) for item in items_b]),
                _queued(replica_b, [_settle(replica_b, item) for item in items_a]),
            )
            assert all(outcome.won for outcomes in settled for outcome in outcomes)
        stop.set()
        await follower
        logged = [event.id for event in await replica_b.read_events(limit=10_000)]
        seen += [event.id for event in await replica_a.read_events(seen[-1] if seen else 0)]
        assert seen == logged
        assert len(logged) == len(set(logged))
        assert _commits(replica_a)[0] >= 3 and _commits(replica_b)[0] >= 3
    assert failures == []


async def test_a_batch_whose_commit_fails_gives_every_caller_the_error(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed `COMMIT` may have committed (as a lone statement whose connection
    drops): no write runs again, each caller gets the error, and the pool goes on."""
    execute = asyncpg.connection.Connection.execute

    async def cut(connection: Any, query: str, *args: object, **kwargs: Any) -> Any:
        if query == "COMMIT":
            await execute(connection, "ROLLBACK")
            raise asyncpg.ConnectionDoesNotExistError("the connection was cut at the commit")
        return await execute(connection, query, *args, **kwargs)

    async with open_store(url) as store:
        items = [make_ask(f"ia_cut_commit_{n}", session_id=f"s_cc_{n}") for n in range(4)]
        monkeypatch.setattr(asyncpg.connection.Connection, "execute", cut)
        outcomes = await _queued(store, [_park(store, item) for item in items])
        monkeypatch.setattr(asyncpg.connection.Connection, "execute", execute)
        assert all(isinstance(outcome, asyncpg.ConnectionDoesNotExistError) for outcome in outcomes)
        assert _commits(store) == (0, 0)
        assert [await store.get_interaction(item.id) for item in items] == [None] * 4
        assert (await _park(store, items[0])())[1]  # the pool goes on
