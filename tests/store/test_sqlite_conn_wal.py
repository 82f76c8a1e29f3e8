"""The SQLite store's WAL starts over after each background checkpoint even when the
writes never pause, a write landing while the checkpoint copies (`_sqlite_conn.py`,
`Connection._start_wal_over`): it does not grow into new file space until the writer's
own checkpoint, inside a write on the loop's thread, catches it up."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from midturn.contract._interactions import NewEvent
from midturn.store import open_store
from midturn.store._base import Store
from midturn.store._sqlite_conn import Connection


def connection_of(store: Store) -> Connection:
    connection = getattr(store, "_connection", None)
    assert isinstance(connection, Connection)
    return connection


def wal_sequence(wal: Path) -> int:
    """The WAL header's checkpoint sequence number: one more each time it starts over."""
    return int.from_bytes(wal.read_bytes()[12:16], "big")


class WriteDuringCheckpoint:
    """The checkpoint thread's connection, with a write by this process committed while
    its first checkpoint copies (made here on a connection of its own, and counted as
    the loop's thread counts its writes)."""

    def __init__(self, db: sqlite3.Connection, connection: Connection, file: Path) -> None:
        self.db, self.connection, self.file = db, connection, file
        self.checkpoints = 0

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        cursor = self.db.execute(sql, *args)
        if "wal_checkpoint" in sql:
            self.checkpoints += 1
            if self.checkpoints == 1:
                with sqlite3.connect(self.file, isolation_level=None) as other:
                    other.execute("PRAGMA user_version = 7")
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
    tmp_path: Path,
) -> None:
    file, wal = tmp_path / "m.db", tmp_path / "m.db-wal"
    async with open_store(f"sqlite:///{file}") as store:
        connection = connection_of(store)
        for n in range(30):
            await store.append_events(
                [NewEvent(type="turn_waiting", session_id="s", turn_id=f"t{n}")]
            )
        assert connection._checkpointer is not None
        connection._checkpointer.submit(lambda: None).result()  # its connection opened
        assert connection._checkpoint_db is not None
        spy = WriteDuringCheckpoint(connection._checkpoint_db, connection, file)
        connection._checkpoint_db = spy  # type: ignore[assignment]
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
