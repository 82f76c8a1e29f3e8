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
PASSIVE checkpoint (which never blocks writers) every `CHECKPOINT_EVERY` writes; the
writing connection's own automatic checkpoint stays on, set far higher, as a backstop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["BUSY_TIMEOUT_MS", "CHECKPOINT_EVERY", "Connection"]

BUSY_TIMEOUT_MS = 30_000
CHECKPOINT_EVERY = 200
"""Writes between background checkpoints (each write adds a few pages to the WAL)."""
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
        self._writes = 0
        self._checkpointer: ThreadPoolExecutor | None = None
        self._checkpoint_db: Db | None = None
        self._checkpoint: Future[None] | None = None

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
            connection._checkpoint = connection._checkpointer.submit(connection._open_checkpoint_db)
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
        """Count a committed write; every `CHECKPOINT_EVERY`, checkpoint in the background
        (unless the last one still runs)."""
        if self.path == ":memory:":
            return
        self._writes += 1
        if self._writes < CHECKPOINT_EVERY:
            return
        if self._checkpoint is not None and not self._checkpoint.done():
            return
        if self._checkpointer is None:  # closing
            return
        self._writes = 0
        self._checkpoint = self._checkpointer.submit(self._run_checkpoint)

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
