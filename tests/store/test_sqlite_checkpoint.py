"""When the SQLite store's background checkpoint thread is woken: only once the writes
pause (or after `CHECKPOINT_EVERY` of them), never by a write, since a thread woken during
a write takes the GIL from the loop's thread (`_sqlite_conn.py`'s module doc)."""

from __future__ import annotations

import asyncio
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from midturn.contract._interactions import NewEvent
from midturn.store import _sqlite_conn, open_store
from midturn.store._base import Store
from midturn.store._sqlite_conn import CHECKPOINT_EVERY, CHECKPOINT_IDLE_S, Connection


class Clock:
    """The store connection's monotonic clock, moved by hand (the event loop keeps its own)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    clock = Clock()
    fake = types.SimpleNamespace(monotonic=clock.monotonic, sleep=time.sleep)
    monkeypatch.setattr(_sqlite_conn, "time", fake)
    yield clock


def connection_of(store: Store) -> Connection:
    connection = getattr(store, "_connection", None)
    assert isinstance(connection, Connection)
    return connection


def count_handoffs(connection: Connection, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of what is handed to the checkpoint thread from now on."""
    checkpointer = connection._checkpointer
    assert checkpointer is not None
    handed: list[str] = []
    submit = checkpointer.submit

    def counted(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        handed.append(getattr(fn, "__name__", repr(fn)))
        return submit(fn, *args, **kwargs)

    monkeypatch.setattr(checkpointer, "submit", counted)
    return handed


async def write(store: Store, count: int, first: int = 0) -> None:
    for n in range(first, first + count):
        await store.append_events([NewEvent(type="turn_waiting", session_id="s", turn_id=f"t{n}")])


def wait_checkpointed(connection: Connection) -> None:
    """Poll `checkpoint_pending()` holding the loop's thread (as `bench/roundtrip.py`
    does between blocks): the loop's timer cannot fire, so the call itself must start an
    overdue checkpoint."""
    for _ in range(1000):
        if not connection.checkpoint_pending():
            return
        time.sleep(0.01)
    raise AssertionError("the background checkpoint never ran")


async def test_a_burst_of_writes_wakes_the_checkpoint_thread_only_at_its_pause(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_store(f"sqlite:///{tmp_path / 'm.db'}") as store:
        connection = connection_of(store)
        handed = count_handoffs(connection, monkeypatch)
        await write(store, 20)
        assert handed == []  # the writes armed a timer on the loop, woke no thread
        assert connection.checkpoint_pending()
        clock.now += 2 * CHECKPOINT_IDLE_S  # the writes have paused
        wait_checkpointed(connection)
        assert len(handed) == 1
        await write(store, 5, 20)  # the next burst: again nothing until its pause
        assert len(handed) == 1
        clock.now += 2 * CHECKPOINT_IDLE_S
        wait_checkpointed(connection)
        assert len(handed) == 2
        assert len(await store.read_events(limit=100)) == 25


async def test_writes_that_never_pause_are_checkpointed_every_so_many(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_store(f"sqlite:///{tmp_path / 'm.db'}") as store:
        connection = connection_of(store)
        handed = count_handoffs(connection, monkeypatch)
        await write(store, CHECKPOINT_EVERY - 1)
        assert handed == []
        await write(store, 1, CHECKPOINT_EVERY)  # the clock never moved: no pause
        assert len(handed) == 1
        for _ in range(1000):  # the checkpoint runs beside the writes, then disarms
            if connection._checkpointed == CHECKPOINT_EVERY and not connection._started:
                break
            await asyncio.sleep(0.01)
        assert connection._checkpointed == CHECKPOINT_EVERY
        assert connection.checkpoint_pending() is False


async def test_the_idle_timer_on_the_loop_starts_the_checkpoint_at_the_pause(
    tmp_path: Path, clock: Clock
) -> None:
    async with open_store(f"sqlite:///{tmp_path / 'm.db'}") as store:
        connection = connection_of(store)
        await write(store, 3)
        clock.now += 2 * CHECKPOINT_IDLE_S
        for _ in range(1000):  # the loop runs: its timer sees the pause
            if not connection._armed:
                break
            await asyncio.sleep(0.01)
        assert not connection._armed
        assert connection._checkpointed == 3


async def test_a_write_during_the_checkpoint_arms_the_next_one(
    tmp_path: Path, clock: Clock
) -> None:
    async with open_store(f"sqlite:///{tmp_path / 'm.db'}") as store:
        connection = connection_of(store)
        run = connection._run_checkpoint
        during: list[int] = []

        def slow_checkpoint() -> None:
            during.append(connection._writes)
            run()
            connection._writes += 1  # as if a write committed while it ran
            connection._last_write = clock.now

        connection._run_checkpoint = slow_checkpoint  # type: ignore[method-assign]
        await write(store, 2)
        clock.now += 2 * CHECKPOINT_IDLE_S
        wait_checkpointed_once(connection)
        assert connection.checkpoint_pending()  # the write during it waits for the next
        connection._run_checkpoint = run  # type: ignore[method-assign]
        clock.now += 2 * CHECKPOINT_IDLE_S
        for _ in range(1000):
            if not connection.checkpoint_pending():
                break
            await asyncio.sleep(0.01)
        assert not connection.checkpoint_pending()
        assert during == [2]


def wait_checkpointed_once(connection: Connection) -> None:
    """Start the overdue checkpoint and wait until it has run (it may leave more)."""
    connection.checkpoint_pending()
    for _ in range(1000):
        if not connection._started:
            return
        time.sleep(0.01)
    raise AssertionError("the background checkpoint never ran")
