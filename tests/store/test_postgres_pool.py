"""The PostgreSQL store's round trips: a connection goes back to the pool without a
reset statement (one round trip fewer on every use: no write leaves a lock or anything
else on it), and a park and a settle are one statement each.

Each test works in a fresh schema of the test database, dropped afterwards. Without a
server the tests skip, except under `CI=true`, where they fail.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from tests._postgres import POSTGRES_URL, fresh_schema

from midturn.contract._interactions import Interaction, NewEvent
from midturn.errors import NotFound
from midturn.store import QueuedEvents, Store, open_store
from midturn.store._postgres import PostgresStore
from midturn.store._postgres_pool import Connections
from midturn.store._postgres_schema import advisory_key
from midturn.testing.conformance._data import RESULT, answered, make_ask, note, requested

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
        await store.create_interaction(ask)  # the session's lock is released at commit
        assert "midturn_park(" in await _last_statement(pid)


async def test_a_cancelled_park_completes_and_leaves_the_session_lock_free(url: str) -> None:
    async with open_store(url) as store:
        assert isinstance(store, PostgresStore)
        ask = make_ask("ia_pool_cancelled")
        task = asyncio.create_task(store.create_interaction(ask, [requested(ask)]))
        await asyncio.sleep(0)  # the statement is on its way
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        other = await asyncpg.connect(POSTGRES_URL)
        try:
            await other.execute(f"SET lock_timeout = '{int(SAFETY_S)}s'")
            key = advisory_key(f"session\x00{ask.session_id}", store._schema or "")
            await other.execute("SELECT pg_advisory_lock($1)", key)
            await other.execute("SELECT pg_advisory_unlock($1)", key)
        finally:
            await other.close()
        # the park happened whole, and the pool still works
        assert await store.get_interaction(ask.id) == ask
        assert [event.type for event in await store.read_events()] == ["user_question_requested"]


class _Statements:
    """Counts the statements every asyncpg connection sends (the real driver sends
    them): `execute` without arguments is a simple query, everything else an extended
    one through `_execute`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        connection_class = asyncpg.connection.Connection
        execute, extended = connection_class.execute, connection_class._execute

        async def counted_execute(connection: object, query: str, *args: object) -> object:
            if not args:
                self.count += 1
            return await execute(connection, query, *args)

        async def counted_extended(connection: object, *args: object, **kwargs: object) -> object:
            self.count += 1
            return await extended(connection, *args, **kwargs)

        monkeypatch.setattr(connection_class, "execute", counted_execute)
        monkeypatch.setattr(connection_class, "_execute", counted_extended)

    def since(self, mark: int) -> int:
        return self.count - mark


async def test_a_park_and_a_settle_are_one_statement_each(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the runtime parks and settles: `create_queued` with the events chosen from the
    queue, `settle_in_turn` with `turn_resumed` gated on the turn's last one. A park
    into a queue another store changed costs one statement more (its first guess
    misses), a settle of an interaction another store parked one more (it reads it)."""
    async with open_store(url) as store, open_store(url) as other:
        statements = _Statements(monkeypatch)
        counts: list[tuple[str, int]] = []

        def chooser(item: Interaction) -> QueuedEvents:
            def events(position: int, waiting: bool) -> list[NewEvent]:
                return [requested(item)] if waiting else [requested(item), note(item.session_id)]

            return events

        async def park(on: Store, item: Interaction) -> None:
            mark = statements.count
            _, created, _ = await on.create_queued(item, chooser(item))
            assert created
            counts.append((f"park {item.id}", statements.since(mark)))

        async def settle(on: Store, item: Interaction) -> None:
            mark = statements.count
            outcome = await on.settle_in_turn(
                item.id,
                session_id=item.session_id,
                turn_id=item.turn_id,
                status="answered",
                result=RESULT,
                events=[answered(item)],
                turn_done=[note(item.session_id)],
            )
            assert outcome.won
            counts.append((f"settle {item.id}", statements.since(mark)))

        first, second, third = (make_ask(f"ia_{n}", turn_id=f"t{n}") for n in range(3))
        await park(store, first)
        await settle(store, first)
        await park(store, second)
        await park(other, third)  # the other store has not seen the session's queue
        await settle(store, third)  # nor has this one seen the interaction
        await settle(store, second)

    assert counts == [
        ("park ia_0", 1),
        ("settle ia_0", 1),
        ("park ia_1", 1),
        ("park ia_2", 2),
        ("settle ia_2", 2),
        ("settle ia_1", 1),
    ]


class _Checkouts:
    """Counts one store's checkouts of a connection (the real pool does the work)."""

    def __init__(self, store: PostgresStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        ours = store._db()
        take = Connections.take

        async def counted(connections: Connections) -> object:
            if connections is ours:
                self.count += 1
            return await take(connections)

        monkeypatch.setattr(Connections, "take", counted)


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


class _Turns:
    """Counts the event loop's turns (`_run_once`, one `select` each)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        loop_class = type(asyncio.get_running_loop())
        run_once = loop_class._run_once  # type: ignore[attr-defined]

        def counted(loop: object) -> None:
            self.count += 1
            run_once(loop)

        monkeypatch.setattr(loop_class, "_run_once", counted)


async def test_a_statement_costs_its_caller_no_turns_of_the_loop_for_the_pool(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A statement takes two turns (its reply read, the caller woken); a write two more
    (its task started, the caller handed the result), and the listener's notification
    may come in meanwhile. asyncpg's own pool gave each connection back in a task of its
    own, which the caller waited for: three turns more on every statement (5 per read,
    9 per write). Under a crowd each turn waits behind the loop's other work."""
    async with open_store(url) as store:
        assert isinstance(store, PostgresStore)
        for warm in range(3):  # the statements prepared, the connection opened
            item = make_ask(f"ia_warm_{warm}", turn_id=f"tw{warm}")
            await store.create_interaction(item, [requested(item)])
            await store.get_interaction(item.id)
            await store.settle(item.id, status="answered", result=RESULT, events=[answered(item)])
        turns = _Turns(monkeypatch)
        reads, writes = [], []
        for n in range(10):
            item = make_ask(f"ia_turns_{n}", turn_id=f"t{n}")
            mark = turns.count
            await store.create_interaction(item, [requested(item)])
            writes.append(turns.count - mark)
            mark = turns.count
            await store.get_interaction(item.id)
            reads.append(turns.count - mark)
            mark = turns.count
            await store.settle(item.id, status="answered", result=RESULT, events=[answered(item)])
            writes.append(turns.count - mark)
    # the fewest: other work adds turns (a reply read in two pieces, a notification of
    # another schema's write on the shared channel), never takes them away
    assert min(reads) <= 3, reads
    assert min(writes) <= 6, writes


async def test_a_write_sends_its_statement_in_its_callers_own_step(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write runs in a task of its own (a cancelled caller does not cut it short), but
    its first step, up to its statement sent, runs in the caller's step when a pooled
    connection is idle: a task's first step waited for a turn of the loop, behind all
    of the loop's other work (under a crowd, milliseconds before the statement went)."""
    async with open_store(url) as store:
        assert isinstance(store, PostgresStore)
        warm = make_ask("ia_eager_warm", turn_id="tw")
        await store.create_interaction(warm, [requested(warm)])
        await store.settle(warm.id, status="answered", result=RESULT, events=[answered(warm)])
        turns = _Turns(monkeypatch)
        sent: list[int] = []
        extended = asyncpg.connection.Connection._execute

        async def noted(connection: object, *args: object, **kwargs: object) -> object:
            sent.append(turns.count)
            return await extended(connection, *args, **kwargs)

        monkeypatch.setattr(asyncpg.connection.Connection, "_execute", noted)
        item = make_ask("ia_eager", turn_id="t1")
        marks = [turns.count]
        await store.create_interaction(item, [requested(item)])
        marks.append(turns.count)
        await store.settle(item.id, status="answered", result=RESULT, events=[answered(item)])
        assert sent == marks
        assert (await store.get_interaction(item.id)).status == "answered"  # type: ignore[union-attr]


async def test_a_caller_cancelled_once_its_statement_went_leaves_the_write_to_finish(
    url: str,
) -> None:
    """The write's first step ran in the caller's task; from then on the write's task
    waits for the reply, and cancelling the caller cancels only the caller."""
    async with open_store(url) as store:
        assert isinstance(store, PostgresStore)
        warm = make_ask("ia_cancel_warm", turn_id="tw")
        await store.create_interaction(warm, [requested(warm)])
        item = make_ask("ia_cancel_settle", turn_id="t1")
        await store.create_interaction(item, [requested(item)])
        heard: list[int] = []
        store.add_listener(heard.append)
        settling = asyncio.ensure_future(
            store.settle(item.id, status="answered", result=RESULT, events=[answered(item)])
        )
        await asyncio.sleep(0)  # its first step: the statement sent
        settling.cancel()
        with pytest.raises(asyncio.CancelledError):
            await settling
        for _ in range(int(SAFETY_S / 0.01)):
            if heard:
                break
            await asyncio.sleep(0.01)
        assert heard == [3]  # the settle's event, announced by the write's task
        settled = await store.get_interaction(item.id)
        assert settled is not None and settled.status == "answered"
        # the pool's connection came back: the next write goes on it
        again = await store.settle(item.id, status="answered", result=RESULT)
        assert not again.won


async def test_a_write_costs_its_caller_no_more_turns_of_the_loop_than_a_read(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caller's task waits for a write's reply itself (a wait its cancellation does
    not cut short) and goes on from the reply's turn: a write's task handed it the
    result a turn later, after starting a turn late (4 turns a write, 2 a read)."""
    async with open_store(url) as store:
        assert isinstance(store, PostgresStore)
        for warm in range(3):  # the statements prepared
            item = make_ask(f"ia_wwarm_{warm}", turn_id=f"tw{warm}")
            await store.create_interaction(item, [requested(item)])
            await store.get_interaction(item.id)
            await store.settle(item.id, status="answered", result=RESULT, events=[answered(item)])
        turns = _Turns(monkeypatch)
        reads, writes = [], []
        for n in range(10):
            item = make_ask(f"ia_wturns_{n}", turn_id=f"t{n}")
            mark = turns.count
            await store.create_interaction(item, [requested(item)])
            writes.append(turns.count - mark)
            mark = turns.count
            await store.get_interaction(item.id)
            reads.append(turns.count - mark)
            mark = turns.count
            await store.settle(item.id, status="answered", result=RESULT, events=[answered(item)])
            writes.append(turns.count - mark)
    assert min(writes) <= min(reads), (reads, writes)


async def test_a_write_that_waits_for_a_connection_costs_its_caller_no_more_turns(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that finds the pool's connections taken waits for one in its caller's
    task too: from the connection's hand-over, a turn to send its statement, the
    reply's two and this test's own wake-up (4), where a write's task also handed the
    result back a turn later (5)."""
    async with open_store(url) as store:  # a pool of one
        assert isinstance(store, PostgresStore)
        warm = make_ask("ia_hwarm", turn_id="tw")
        await store.create_interaction(warm, [requested(warm)])
        await store.get_interaction(warm.id)
        turns = _Turns(monkeypatch)
        costs = []
        for n in range(10):
            item = make_ask(f"ia_handed_{n}", turn_id=f"t{n}")
            connection = await store._db().acquire()
            parking = asyncio.ensure_future(store.create_interaction(item, [requested(item)]))
            await asyncio.sleep(0)  # waiting for the one connection
            mark = turns.count
            await store._db().release(connection)
            await parking
            costs.append(turns.count - mark)
            reading = await store.get_interaction(item.id)
            assert reading == item
    assert min(costs) <= 4, costs


async def test_a_write_whose_caller_gives_up_waiting_for_a_connection_completes(
    url: str,
) -> None:
    """Its caller's cancellation lands once the connection is handed over; the write
    then goes on in a task of its own, whole, and is announced."""
    async with open_store(url) as store:  # a pool of one
        assert isinstance(store, PostgresStore)
        ask = make_ask("ia_gives_up")
        heard: list[int] = []
        store.add_listener(heard.append)
        connection = await store._db().acquire()
        parking = asyncio.ensure_future(store.create_interaction(ask, [requested(ask)]))
        await asyncio.sleep(0)  # waiting for the one connection
        parking.cancel()
        await asyncio.sleep(0.05)
        await store._db().release(connection)
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(parking, SAFETY_S)
        for _ in range(int(SAFETY_S / 0.01)):
            if heard:
                break
            await asyncio.sleep(0.01)
        assert heard == [1]
        assert await store.get_interaction(ask.id) == ask


async def test_callers_beyond_the_pool_wait_and_get_a_connection_handed_over(url: str) -> None:
    async with open_store(url) as store:  # pool_max=1
        assert isinstance(store, PostgresStore)
        slow = asyncio.create_task(store._db().fetchval("SELECT pg_sleep(0.2)"))
        await asyncio.sleep(0.05)
        gave_up = asyncio.create_task(store.get_interaction("ia_none"))
        waiting = [asyncio.create_task(store.get_interaction(f"ia_{n}")) for n in range(5)]
        await asyncio.sleep(0.05)
        gave_up.cancel()
        assert await asyncio.gather(*waiting) == [None] * 5
        await slow
        with pytest.raises(asyncio.CancelledError):
            await gave_up
        assert await store.get_interaction("ia_still") is None


async def test_a_failed_statement_and_a_failed_transaction_leave_the_pool_working(
    url: str,
) -> None:
    async with open_store(url) as store:  # pool_max=1: the same connection every time
        assert isinstance(store, PostgresStore)
        connections = store._db()
        with pytest.raises(asyncpg.PostgresError):
            await connections.fetchval("SELECT no_such_column FROM midturn_events")
        with pytest.raises(ZeroDivisionError):
            async with connections.acquire() as connection, connection.transaction():
                await connection.execute("INSERT INTO midturn_outbox_cursor VALUES ('x', 1)")
                raise ZeroDivisionError
        async with connections.acquire() as connection:
            await connection.execute("BEGIN")  # left open: rolled back on its way back
        assert await connections.fetchval("SELECT count(*) FROM midturn_outbox_cursor") == 1
        assert not await connections.fetchval("SELECT pg_current_xact_id_if_assigned() IS NOT NULL")
        slow = asyncio.create_task(connections.fetchval("SELECT pg_sleep(5)"))
        await asyncio.sleep(0.1)
        slow.cancel()  # asyncpg cancels the statement; its connection is waited out
        with pytest.raises(asyncio.CancelledError):
            await slow
        assert await connections.fetchval("SELECT 1") == 1


class _FakeConnection:
    def is_closed(self) -> bool:
        return False

    def is_in_transaction(self) -> bool:
        return False


class _FakePool:
    """asyncpg's pool as `Connections` uses it: a new connection each acquire."""

    async def acquire(self) -> _FakeConnection:
        return _FakeConnection()

    async def release(self, connection: object) -> None:
        return None


async def test_a_waiter_that_gives_up_passes_a_free_place_on() -> None:
    """A connection that failed goes back to asyncpg's pool and wakes one waiter to take
    a new one; if that waiter was cancelled meanwhile, the next is woken instead."""
    connections = Connections(_FakePool(), 1)
    failing = await connections.take()
    first = asyncio.create_task(connections.take())
    second = asyncio.create_task(connections.take())
    await asyncio.sleep(0)  # both wait
    await connections.give_back(failing)  # wakes the first
    first.cancel()  # before it ran
    with pytest.raises(asyncio.CancelledError):
        await first
    assert isinstance(await asyncio.wait_for(second, SAFETY_S), _FakeConnection)
