"""The SQLite store's WAL starts over after each background checkpoint even when the
writes never pause, a write landing while the checkpoint copies (`_sqlite_conn.py`,
`Connection._start_wal_over`): it does not grow into new file space until the writer's
own checkpoint, inside a write on the loop's thread, catches it up."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from midturn.contract._interactions import NewEvent
from midturn.store import _sqlite_conn, open_store
from midturn.store._base import Store
from midturn.store._sqlite_conn import Connection


def connection_of(store: Store) -> Connection:
    connection = getattr(store, "_connection", None)
    assert isinstance(connection, Connection)
    return connection


def wal_sequence(wal: Path) -> int:
    """The WAL header's checkpoint sequence number: one more each time it starts over."""
    return int.from_bytes(wal.read_bytes()[12:16], "big")


async def write(store: Store, count: int) -> None:
    for n in range(count):
        await store.append_events([NewEvent(type="turn_waiting", session_id="s", turn_id=f"t{n}")])


async def spied(store: Store, file: Path) -> WriteDuringCheckpoint:
    """The store's checkpoint connection, wrapped (on its own thread, once opened)."""
    connection = connection_of(store)
    assert connection._checkpointer is not None
    connection._checkpointer.submit(lambda: None).result()  # its connection opened
    assert connection._checkpoint_db is not None
    spy = WriteDuringCheckpoint(connection._checkpoint_db, connection, file)
    connection._checkpoint_db = spy  # type: ignore[assignment]
    return spy


class WriteDuringCheckpoint:
    """The checkpoint thread's connection, with a write by this process committed while
    its first checkpoint copies (made here on a connection of its own, and counted as
    the loop's thread counts its writes)."""

    def __init__(self, db: sqlite3.Connection, connection: Connection, file: Path) -> None:
        self.db, self.connection, self.file = db, connection, file
        self.checkpoints = 0

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if "wal_checkpoint" not in sql:
            return self.db.execute(sql, *args)
        self.checkpoints += 1
        if self.checkpoints > 1:
            return self.db.execute(sql, *args)
        # the write begins before this checkpoint and commits after it: it appends to
        # the WAL, as a write that comes while a checkpoint copies does
        other = sqlite3.connect(self.file, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            cursor = self.db.execute(sql, *args)
            other.execute("PRAGMA user_version = 7")
            other.execute("COMMIT")
        finally:
            other.close()
        self.connection._writes += 1
        return cursor

    def close(self) -> None:
        self.db.close()


async def checkpointed(connection: Connection, spy: WriteDuringCheckpoint) -> None:
    """Until the checkpoint thread is done with the checkpoint started."""
    for _ in range(1000):
        if spy.checkpoints and not connection._started:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the background checkpoint never finished")


async def test_a_write_while_the_checkpoint_copies_does_not_keep_the_wal_from_starting_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_sqlite_conn, "RESTART_FRAMES", 1)  # the WAL below: 30 writes' frames
    file, wal = tmp_path / "m.db", tmp_path / "m.db-wal"
    async with open_store(f"sqlite:///{file}") as store:
        connection = connection_of(store)
        await write(store, 30)
        spy = await spied(store, file)
        sequence = wal_sequence(wal)
        connection._start_checkpoint()  # as after `CHECKPOINT_EVERY` writes
        await checkpointed(connection, spy)
        assert spy.checkpoints == 2  # the frames of the write during the first, copied
        assert wal_sequence(wal) == sequence + 1  # and the WAL started over
        assert connection._checkpointed == connection._writes  # nothing left to copy
        size = wal.stat().st_size
        await store.append_events([NewEvent(type="turn_waiting", session_id="s", turn_id="u")])
        assert wal.stat().st_size <= size  # the next write went to the WAL's top
        assert len(await store.read_events(limit=100)) == 31
    with sqlite3.connect(file) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (7,)  # the write kept
    db.close()


async def test_below_restart_frames_the_checkpoint_leaves_the_wal_to_the_next_one(
    tmp_path: Path,
) -> None:
    """The connection is held off for a second checkpoint only once the WAL holds
    `RESTART_FRAMES`: a smaller one, with a write during its checkpoint, waits for the
    next checkpoint (which the write armed)."""
    file, wal = tmp_path / "m.db", tmp_path / "m.db-wal"
    async with open_store(f"sqlite:///{file}") as store:
        connection = connection_of(store)
        await write(store, 30)
        spy = await spied(store, file)
        sequence = wal_sequence(wal)
        connection._start_checkpoint()
        await checkpointed(connection, spy)
        assert spy.checkpoints == 1
        assert wal_sequence(wal) == sequence
        assert connection._checkpointed != connection._writes  # the next one is armed
