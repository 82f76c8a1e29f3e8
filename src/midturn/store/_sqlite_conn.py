"""The SQLite store's connection: where each operation runs, and checkpoints.

An operation is a plain function of the connection, run whole. It runs at once on the
event loop's thread when it can finish without waiting: nothing else is using the
connection, and the database lock is free (the connection's busy timeout is 0 there, so
a lock held by another process fails at once instead of blocking the loop). A SQLite
operation here takes tens to a few hundred microseconds, less than handing it to a
thread and being woken with its result. Otherwise — the connection is busy on the
worker thread, or another process holds the lock — it runs on the worker thread, which
waits for the lock for up to `BUSY_TIMEOUT_MS`. A lock serializes the two threads' use of
the connection.

Writes commit with `synchronous = NORMAL` in WAL mode: no fsync on commit. The fsyncs
happen when the WAL is copied back into the database (a checkpoint), which SQLite would
otherwise run inside whichever commit crosses `wal_autocheckpoint`, stalling that one
write for milliseconds. Instead a checkpoint thread with its own connection runs a
PASSIVE checkpoint (which never blocks writers) once the writes have paused for
`CHECKPOINT_IDLE_S`, or after `CHECKPOINT_EVERY` writes when they never pause. An fsync
slows whatever else the machine does while it runs (a write beside one costs a fifth
more, a slow one twice as much), so it is best run when nothing is written; and a
checkpoint that copies the whole WAL lets the next write start it over from the top, so
the file stays the size of one burst of writes. The writing connection's own automatic
checkpoint stays on, set far higher, as a backstop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["BUSY_TIMEOUT_MS", "CHECKPOINT_EVERY", "CHECKPOINT_IDLE_S", "Connection"]

BUSY_TIMEOUT_MS = 30_000
CHECKPOINT_IDLE_S = 0.05
"""How long the writes must pause before the background checkpoint runs."""
CHECKPOINT_EVERY = 200
"""Writes after which the background checkpoint runs even if they never pause (each write
adds a dozen pages to the WAL)."""
AUTOCHECKPOINT_PAGES = 20_000
"""The writing connection's own checkpoint, should the background one fall behind."""

log = logging.getLogger("midturn.store")
T = TypeVar("T")
Db = sqlite3.Connection
_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _busy(error: sqlite3.OperationalError) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in _BUSY


class Connection:
    """One opened sqlite3 connection, its worker thread and its checkpoint thread.
    Made by `Connection.open`; `close` once."""

    def __init__(self, db: Db, worker: ThreadPoolExecutor, path: str) -> None:
        self.db = db
        self.path = path
        self._worker = worker
        self._lock = threading.Lock()
        # Set by the event loop's thread: writes committed, when the last one was.
        self._writes = 0
        self._last_write = 0.0
        # Set by the checkpoint thread: `_writes` as the last checkpoint began.
        self._checkpointed = 0
        self._armed = False  # a checkpoint task waits for a pause, or runs
        self._checkpointer: ThreadPoolExecutor | None = None
        self._checkpoint_db: Db | None = None

    @classmethod
    async def open(cls, connect: Callable[[], Db], path: str) -> Connection:
        """Connect (and migrate) with `connect` on a new worker thread."""
        worker = ThreadPoolExecutor(1, thread_name_prefix="midturn-sqlite")
        try:
            db = await asyncio.get_running_loop().run_in_executor(worker, connect)
        except BaseException:
            worker.shutdown(wait=False)
            raise
        db.execute("PRAGMA busy_timeout = 0")
        connection = cls(db, worker, path)
        if path != ":memory:":
            db.execute(f"PRAGMA wal_autocheckpoint = {AUTOCHECKPOINT_PAGES}")
            # The checkpoint thread and its connection are made now, not by the write
            # that asks for the first checkpoint (starting a thread waits for it to run).
            connection._checkpointer = ThreadPoolExecutor(
                1, thread_name_prefix="midturn-checkpoint"
            )
            connection._checkpointer.submit(connection._open_checkpoint_db)
        return connection

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        checkpointer, self._checkpointer = self._checkpointer, None
        if checkpointer is not None:
            await loop.run_in_executor(checkpointer, self._close_checkpoint_db)
            checkpointer.shutdown(wait=False)
        await loop.run_in_executor(self._worker, self._locked, Db.close)
        self._worker.shutdown(wait=False)

    # -- running operations ------------------------------------------------------------

    async def run(self, operation: Callable[[Db], T], done: Callable[[T], None] | None = None) -> T:
        """`operation(db)`, at once when it can finish without waiting, else on the
        worker thread. `done(result)` is called once it has succeeded, even if the
        caller was cancelled meanwhile (the operation is never undone)."""
        if self._lock.acquire(blocking=False):
            try:
                result = operation(self.db)
            except sqlite3.OperationalError as error:
                if not _busy(error):
                    raise
            else:
                if done is not None:
                    done(result)
                return result
            finally:
                self._lock.release()
        future = asyncio.get_running_loop().run_in_executor(self._worker, self._patient, operation)
        if done is not None:

            def finished(future: asyncio.Future[T]) -> None:
                if not future.cancelled() and future.exception() is None:
                    done(future.result())

            future.add_done_callback(finished)
        return await asyncio.shield(future)

    def _patient(self, operation: Callable[[Db], T]) -> T:
        """On the worker thread: `operation`, waiting for the database lock if need be."""
        with self._lock:
            db = self.db
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            try:
                return operation(db)
            finally:
                db.execute("PRAGMA busy_timeout = 0")

    def _locked(self, operation: Callable[[Db], Any]) -> Any:
        with self._lock:
            return operation(self.db)

    # -- checkpoints -------------------------------------------------------------------

    def wrote(self) -> None:
        """Count a committed write, and arm the background checkpoint if it is not."""
        checkpointer = self._checkpointer
        if checkpointer is None:  # in memory, or closing
            return
        self._writes += 1
        self._last_write = time.monotonic()
        if not self._armed:
            self._armed = True
            checkpointer.submit(self._checkpoint_when_idle)

    def checkpoint_pending(self) -> bool:
        """Whether written pages wait for the background checkpoint (or it runs)."""
        return self._armed

    def _checkpoint_when_idle(self) -> None:
        """On the checkpoint thread: once the writes pause for `CHECKPOINT_IDLE_S` (or
        `CHECKPOINT_EVERY` more were made), checkpoint; again while more came meanwhile."""
        while True:
            while True:
                if self._checkpointer is None:  # closing: the last close checkpoints
                    return
                quiet = time.monotonic() - self._last_write
                if quiet >= CHECKPOINT_IDLE_S:
                    break
                if self._writes - self._checkpointed >= CHECKPOINT_EVERY:
                    break
                time.sleep(CHECKPOINT_IDLE_S - quiet)
            self._checkpointed = self._writes
            self._run_checkpoint()
            # Disarmed before the last look: a write after the look finds it disarmed
            # and arms it again, so no write is left waiting for a checkpoint.
            self._armed = False
            if self._writes == self._checkpointed:
                return
            self._armed = True

    def _open_checkpoint_db(self) -> None:
        try:
            db = sqlite3.connect(self.path, isolation_level=None)
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        except sqlite3.Error as error:  # tried again by the first checkpoint
            log.warning("opening the checkpoint connection to %s failed: %s", self.path, error)
        else:
            self._checkpoint_db = db

    def _run_checkpoint(self) -> None:
        if self._checkpoint_db is None:
            self._open_checkpoint_db()
        if self._checkpoint_db is None:  # the writer's own checkpoint remains
            return
        try:
            self._checkpoint_db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error as error:  # the writer's own checkpoint remains
            log.warning("a background checkpoint of %s failed: %s", self.path, error)

    def _close_checkpoint_db(self) -> None:
        db, self._checkpoint_db = self._checkpoint_db, None
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.close()
