"""The SQLite store's group commit: the writes of one event-loop iteration share one
transaction (`store/_sqlite_conn.py`), and each is still all or nothing, acknowledged
and announced only once the shared COMMIT succeeded."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from midturn.contract._interactions import Interaction, NewEvent
from midturn.errors import UsageError
from midturn.store import open_store
from midturn.store._base import Store
from midturn.store._sqlite_conn import SOLO_BATCHES


def pending_ask(interaction_id: str) -> Interaction:
    return Interaction(id=interaction_id, kind="ask", session_id="s1", turn_id="t1")


def requested(interaction_id: str) -> NewEvent:
    return NewEvent(
        type="user_question_requested",
        session_id="s1",
        turn_id="t1",
        interaction_id=interaction_id,
    )


def turn_event(turn_id: str) -> NewEvent:
    return NewEvent(type="turn_waiting", session_id="s1", turn_id=turn_id)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with open_store(f"sqlite:///{tmp_path / 'm.db'}") as opened:
        yield opened


def statements(store: Store) -> list[str]:
    """Every statement the store's connection runs from now on, in order."""
    connection = getattr(store, "_connection", None)
    assert connection is not None
    seen: list[str] = []
    connection.db.set_trace_callback(lambda sql: seen.append(sql.split()[0].upper()))
    return seen


def doom_commits(path: Path) -> None:
    """Make the COMMIT of any transaction that appends an event of turn `doomed` fail: a
    trigger inserts a row breaking a deferred foreign key, which SQLite checks at COMMIT."""
    with sqlite3.connect(path) as db:
        db.executescript(
            """
            CREATE TABLE doom_parent (id TEXT PRIMARY KEY);
            CREATE TABLE doom_child (
                parent TEXT REFERENCES doom_parent (id) DEFERRABLE INITIALLY DEFERRED
            );
            CREATE TRIGGER doom AFTER INSERT ON midturn_events WHEN NEW.turn_id = 'doomed'
            BEGIN
                INSERT INTO doom_child (parent) VALUES ('missing');
            END;
            """
        )


async def test_writes_of_one_loop_iteration_share_one_transaction(store: Store) -> None:
    seen = statements(store)
    created = await asyncio.gather(
        *(store.create_interaction(pending_ask(f"i{n}"), [requested(f"i{n}")]) for n in range(5))
    )
    assert seen.count("BEGIN") == 1 and seen.count("COMMIT") == 1
    assert [events[0].id for _, _, events in created] == [1, 2, 3, 4, 5]
    assert [event.interaction_id for event in await store.read_events()] == [
        f"i{n}" for n in range(5)
    ]


async def test_a_lone_write_commits_without_waiting_for_company(store: Store) -> None:
    seen = statements(store)
    await store.create_interaction(pending_ask("i1"), [requested("i1")])
    assert seen[0] == "BEGIN" and seen[-1] == "COMMIT"
    assert await store.get_interaction("i1") is not None


async def test_a_failing_write_of_a_batch_rolls_back_alone(store: Store) -> None:
    seen = statements(store)
    first, repeated, last = await asyncio.gather(
        store.create_interaction(pending_ask("i1"), [requested("i1")]),
        store.create_interaction(pending_ask("i1"), [requested("i1")]),  # the id is taken
        store.create_interaction(pending_ask("i2"), [requested("i2")]),
        return_exceptions=True,
    )
    assert seen.count("BEGIN") == 1
    assert isinstance(repeated, UsageError)
    assert not isinstance(first, BaseException) and not isinstance(last, BaseException)
    assert [event.interaction_id for event in await store.read_events()] == ["i1", "i2"]
    assert [item.id for item in await store.list_interactions()] == ["i1", "i2"]


async def test_a_failed_commit_fails_every_write_of_its_batch(store: Store, tmp_path: Path) -> None:
    doom_commits(tmp_path / "m.db")
    heard: list[int] = []
    store.add_listener(heard.append)
    outcomes = await asyncio.gather(
        store.create_interaction(pending_ask("i1"), [requested("i1")]),
        store.append_events([turn_event("doomed")]),
        store.create_interaction(pending_ask("i2"), [requested("i2")]),
        return_exceptions=True,
    )
    assert all(isinstance(outcome, sqlite3.IntegrityError) for outcome in outcomes)
    assert heard == []  # nothing was announced
    assert await store.read_events() == []
    assert await store.list_interactions() == []
    # The connection is usable again, and the next write commits.
    await store.create_interaction(pending_ask("i3"), [requested("i3")])
    assert [event.interaction_id for event in await store.read_events()] == ["i3"]


async def test_a_read_during_an_open_batch_waits_for_its_commit(store: Store) -> None:
    seen = statements(store)
    _, found = await asyncio.gather(
        store.create_interaction(pending_ask("i1"), [requested("i1")]),
        store.get_interaction("i1"),
    )
    assert found is not None and found.id == "i1"
    assert seen.index("SELECT", seen.index("COMMIT")) > seen.index("COMMIT")
    assert "SELECT" not in seen[: seen.index("COMMIT")][2:]  # only the write's own reads


async def test_a_read_during_a_batch_whose_commit_fails_sees_none_of_it(
    store: Store, tmp_path: Path
) -> None:
    doom_commits(tmp_path / "m.db")
    appended, read = await asyncio.gather(
        store.append_events([turn_event("doomed")]),
        store.read_events(),
        return_exceptions=True,
    )
    assert isinstance(appended, sqlite3.IntegrityError)
    assert read == []


async def test_a_write_whose_caller_is_cancelled_in_its_batch_commits_and_is_announced(
    store: Store,
) -> None:
    await store.create_interaction(pending_ask("i1"))
    heard = asyncio.Event()
    store.add_listener(lambda _: heard.set())
    task = asyncio.create_task(store.settle("i1", status="cancelled", events=[requested("i1")]))
    await asyncio.sleep(0)  # the settle runs, in a batch whose COMMIT is scheduled
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert heard.is_set()
    settled = await store.get_interaction("i1")
    assert settled is not None and settled.status == "cancelled"


async def lone_write(store: Store, n: int) -> bool:
    """One write by this task, with another callback ready to run (so company is
    possible); whether the write gave the loop a turn before it returned."""
    ran: list[int] = []
    asyncio.get_running_loop().call_soon(ran.append, 1)
    await store.append_events([turn_event(f"t{n}")])
    return bool(ran)


async def test_a_lone_writer_stops_waiting_for_company_that_never_comes(store: Store) -> None:
    seen = statements(store)
    waited = [await lone_write(store, n) for n in range(SOLO_BATCHES + 5)]
    assert waited == [True] * SOLO_BATCHES + [False] * 5
    assert seen.count("BEGIN") == seen.count("COMMIT") == SOLO_BATCHES + 5
    assert "SAVEPOINT" not in seen
    assert len(await store.read_events()) == SOLO_BATCHES + 5


async def test_writes_of_two_tasks_in_one_iteration_batch_again(store: Store) -> None:
    for n in range(SOLO_BATCHES):
        await lone_write(store, n)
    assert not await lone_write(store, SOLO_BATCHES)  # committing at once now
    # Two tasks writing in one loop iteration: the first pair commit alone, then batch.
    await asyncio.gather(*(store.append_events([turn_event(f"a{n}")]) for n in range(3)))
    seen = statements(store)
    created = await asyncio.gather(
        *(store.create_interaction(pending_ask(f"i{n}"), [requested(f"i{n}")]) for n in range(5))
    )
    assert seen.count("BEGIN") == 1 and seen.count("COMMIT") == 1
    assert [item.id for item, _, _ in created] == [f"i{n}" for n in range(5)]
    assert await lone_write(store, 99)  # batching: a lone write waits a turn again


def held(store: Store) -> threading.Lock:
    """The connection's lock, as the worker or the checkpoint thread holds it while it
    uses the connection: the writes that come meanwhile queue for the worker thread."""
    connection = getattr(store, "_connection", None)
    assert connection is not None
    lock: threading.Lock = connection._lock
    lock.acquire()
    return lock


async def test_writes_that_find_the_connection_held_share_one_transaction(store: Store) -> None:
    seen = statements(store)
    lock = held(store)
    writes = [
        asyncio.ensure_future(store.create_interaction(pending_ask(f"i{n}"), [requested(f"i{n}")]))
        for n in range(5)
    ]
    await asyncio.sleep(0)  # each found the lock held, and queued
    assert not any(write.done() for write in writes)
    assert "BEGIN" not in seen  # the worker thread waits for the lock
    lock.release()
    created = await asyncio.gather(*writes)
    assert seen.count("BEGIN") == 1 and seen.count("COMMIT") == 1
    assert seen.count("SAVEPOINT") == 5
    assert [events[0].id for _, _, events in created] == [1, 2, 3, 4, 5]
    assert [item.id for item in await store.list_interactions()] == [f"i{n}" for n in range(5)]


async def test_a_failing_queued_write_rolls_back_alone(store: Store) -> None:
    heard: list[int] = []
    store.add_listener(heard.append)
    lock = held(store)
    outcomes = asyncio.gather(
        store.create_interaction(pending_ask("i1"), [requested("i1")]),
        store.create_interaction(pending_ask("i1"), [requested("i1")]),  # the id is taken
        store.create_interaction(pending_ask("i2"), [requested("i2")]),
        return_exceptions=True,
    )
    await asyncio.sleep(0)
    lock.release()
    first, repeated, last = await outcomes
    assert isinstance(repeated, UsageError)
    assert not isinstance(first, BaseException) and not isinstance(last, BaseException)
    assert [event.interaction_id for event in await store.read_events()] == ["i1", "i2"]
    assert heard and max(heard) == 2  # the committed ones were announced


async def test_a_failed_commit_fails_every_queued_write(store: Store, tmp_path: Path) -> None:
    doom_commits(tmp_path / "m.db")
    heard: list[int] = []
    store.add_listener(heard.append)
    lock = held(store)
    outcomes = asyncio.gather(
        store.create_interaction(pending_ask("i1"), [requested("i1")]),
        store.append_events([turn_event("doomed")]),
        store.create_interaction(pending_ask("i2"), [requested("i2")]),
        store.read_events(),  # on the worker thread too, after them: nothing to see
        return_exceptions=True,
    )
    await asyncio.sleep(0)
    lock.release()
    *written, read = await outcomes
    assert all(isinstance(outcome, sqlite3.IntegrityError) for outcome in written)
    assert len({id(outcome) for outcome in written}) == 3  # each writer its own error
    assert read == []
    assert heard == []
    await store.create_interaction(pending_ask("i3"), [requested("i3")])
    assert [event.interaction_id for event in await store.read_events()] == ["i3"]


async def test_a_queued_write_whose_caller_is_cancelled_commits_and_is_announced(
    store: Store,
) -> None:
    await store.create_interaction(pending_ask("i1"))
    heard = asyncio.Event()
    store.add_listener(lambda _: heard.set())
    lock = held(store)
    task = asyncio.create_task(store.settle("i1", status="cancelled", events=[requested("i1")]))
    await asyncio.sleep(0)  # queued for the worker thread
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    lock.release()
    await asyncio.wait_for(heard.wait(), 10)
    settled = await store.get_interaction("i1")
    assert settled is not None and settled.status == "cancelled"


async def test_writes_queued_after_the_connection_closed_fail_instead_of_waiting(
    tmp_path: Path,
) -> None:
    async with open_store(f"sqlite:///{tmp_path / 'm.db'}") as opened:
        connection = getattr(opened, "_connection", None)
        assert connection is not None
    # Closed: its worker thread is gone. With the lock held, a write queues for it.
    lock: threading.Lock = connection._lock
    lock.acquire()
    for _ in range(2):  # the second must not join the first's queue, which never runs
        with pytest.raises(RuntimeError):
            await asyncio.wait_for(connection.write(lambda db: db.execute("SELECT 1")), 5)
    lock.release()
