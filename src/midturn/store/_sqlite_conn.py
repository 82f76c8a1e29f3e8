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

Writes made on the loop's thread while a write transaction is open there share it (a
group commit): the first write of a loop iteration begins the transaction and schedules
its COMMIT with `call_soon`, the writes that come before that callback runs (other
requests of the same iteration, under concurrency) each run inside a SAVEPOINT of their
own, so a failing one rolls back only itself, and the COMMIT then ends them all. Each
caller gets its result, and its `done` runs, only once that COMMIT has succeeded; when
the COMMIT fails, every write of the batch fails with it. Nothing waits to gather a batch:
a write commits in the loop's next turn, or at once when nothing else is ready to run
before that turn (then no other write could join it). A shared transaction pays BEGIN and
COMMIT once, and each page its writes touch is one WAL frame, not one per write. Waiting
for company costs the writer that loop turn, so a connection whose last `SOLO_BATCHES`
batches each held one write stops opening batches: its writes commit at once, until two
tasks write in one loop iteration again (one task's writes in a row cannot share a
batch: it waits in each). A read
that comes while a batch is open runs right after its COMMIT, before the writes of any
later batch (inside it, it would see rows not yet committed, which might never be).

A write that finds the connection in use (by the worker thread, or by the checkpoint
thread starting the WAL over), or the database lock held by another process, queues for
the worker thread (`_queue_write`): that thread, once it has the lock, runs every write
queued until then in one transaction, each in a SAVEPOINT of its own, with the same
guarantees (each caller's result and `done` after that COMMIT, a failing write rolled
back alone, a failed COMMIT failing them all). With a transaction each, as before, a
write on the worker thread held the connection while the next ones came, which went to
the worker thread in turn: under load the group commit stopped while writes kept coming.

Writes commit with `synchronous = NORMAL` in WAL mode: no fsync on commit. The fsyncs
happen when the WAL is copied back into the database (a checkpoint), which SQLite would
otherwise run inside whichever commit crosses `wal_autocheckpoint`, stalling that one
write for milliseconds. Instead a checkpoint thread with its own connection runs a
PASSIVE checkpoint (which never blocks writers) once the writes have paused for
`CHECKPOINT_IDLE_S`, or after `CHECKPOINT_EVERY` writes when they never pause. A timer
on the event loop looks for the pause (armed by the first write after a checkpoint,
looking again at most once per `CHECKPOINT_IDLE_S`), so the checkpoint thread is woken
only to checkpoint: a thread woken during a write takes the GIL from the loop's thread
at its next SQLite call, and on a busy machine waits for a core while holding its turn
to it. An fsync
slows whatever else the machine does while it runs (a write beside one costs a fifth
more, a slow one twice as much), so it is best run when nothing is written. A
checkpoint that copies the whole WAL then starts it over from the top, so the file stays
the size of one burst of writes, and the fsync of the new WAL header that starting over
costs is paid at the pause, not by the next burst's first write. When writes never
pause, one comes while the checkpoint copies; once the WAL holds `RESTART_FRAMES`, the
checkpoint thread copies what they added with the connection held off, and starts the
WAL over (`Connection._start_wal_over`). The writing connection's own automatic
checkpoint stays on, set far higher, as a backstop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = [
    "BUSY_TIMEOUT_MS",
    "CHECKPOINT_EVERY",
    "CHECKPOINT_IDLE_S",
    "RESTART_FRAMES",
    "SOLO_BATCHES",
    "Connection",
    "transaction",
]

BUSY_TIMEOUT_MS = 30_000
CHECKPOINT_IDLE_S = 0.05
"""How long the writes must pause before the background checkpoint runs."""
CHECKPOINT_EVERY = 200
"""Writes after which the background checkpoint runs even if they never pause (each write
adds a dozen pages to the WAL)."""
SOLO_BATCHES = 8
"""Batches in a row that held one write each, after which writes commit at once (no loop
turn spent waiting for company) until two tasks write in one loop iteration."""
RESTART_FRAMES = 4096
"""The WAL's frames beyond which the background checkpoint holds the connection off to
copy what writes added while it ran, so that the WAL starts over (`_start_wal_over`):
one hash table of SQLite's WAL index (a larger WAL makes a page's lookup search more
than one), about 16 MiB."""
AUTOCHECKPOINT_PAGES = 20_000
"""The writing connection's own checkpoint, should the background one fall behind."""

log = logging.getLogger("midturn.store")
T = TypeVar("T")
Db = sqlite3.Connection
_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _busy(error: sqlite3.OperationalError) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in _BUSY


def transaction(db: Db, operation: Callable[[Db], T]) -> T:
    """`operation` inside `BEGIN IMMEDIATE … COMMIT`, rolled back if it raises."""
    db.execute("BEGIN IMMEDIATE")
    try:
        result = operation(db)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return result


class _Batch:
    """The writes sharing the transaction open on the loop's thread (see the module
    doc): what to call once it commits, the reads waiting for it, and how it ended."""

    __slots__ = ("dones", "error", "finished", "reads", "waiter", "writes")

    def __init__(self) -> None:
        self.writes = 1  # the write that opened it, and each that joined
        self.dones: list[Callable[[], None]] = []
        self.reads: list[tuple[Callable[[Db], Any], asyncio.Future[Any]]] = []
        self.finished = False
        self.error: BaseException | None = None  # why the batch failed
        self.waiter: asyncio.Future[None] | None = None  # for a read that waits

    async def wait(self) -> None:
        """Until the batch has committed or failed."""
        if self.finished:
            return
        if self.waiter is None:
            self.waiter = asyncio.get_running_loop().create_future()
        await asyncio.shield(self.waiter)

    def failed(self) -> BaseException:
        """The error to raise to one writer of a failed batch (each its own)."""
        assert self.error is not None
        return _copied(self.error)


class _Queued:
    """Writes that found the connection in use (the worker thread or the checkpoint
    thread holds it, or another process the database lock), to run together on the
    worker thread in one transaction: each write's operation and where its outcome goes."""

    __slots__ = ("writes",)

    def __init__(self) -> None:
        self.writes: list[
            tuple[Callable[[Db], Any], Callable[[Any], None] | None, asyncio.Future[Any]]
        ] = []


def _company_possible(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether another write could join a batch opened now. asyncio runs a COMMIT
    scheduled now before the callbacks of the loop's next poll, so only those already
    waiting to run (its `_ready` queue) could write first; with none, a batch would
    only cost its writer a loop turn. A loop without that queue (uvloop) may always."""
    ready = getattr(loop, "_ready", None)
    return ready is None or len(ready) > 0


def _copied(error: BaseException) -> BaseException:
    """The error to raise to one writer of a failed transaction (each its own)."""
    if isinstance(error, sqlite3.Error):
        copy = type(error)(*error.args)
        copy.__cause__ = error
        return copy
    return error


def _in_savepoint(db: Db, operation: Callable[[Db], T]) -> T:
    """(Inside a transaction.) `operation` in a SAVEPOINT of its own, rolled back alone if
    it raises. When SQLite has rolled the whole transaction back (an I/O error, a full
    disk), `db.in_transaction` is False after the raise: the caller fails the rest."""
    db.execute("SAVEPOINT midturn_write")
    try:
        result = operation(db)
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK TO midturn_write")
            db.execute("RELEASE midturn_write")
        raise
    db.execute("RELEASE midturn_write")
    return result


def _announce(done: Callable[[], None]) -> None:
    """A committed write's `done`; one writer's failing announcement must not stop the
    others'."""
    try:
        done()
    except Exception:
        log.exception("announcing a committed write failed")


def _each_in_savepoint(queued: _Queued, db: Db) -> list[tuple[bool, Any]]:
    """(Inside a transaction.) Each queued write in a SAVEPOINT of its own, so that a
    failing one rolls back only itself: its (succeeded, result or error). An error that
    ended the whole transaction is raised, failing them all."""
    outcomes: list[tuple[bool, Any]] = []
    for operation, _, _ in queued.writes:
        try:
            outcomes.append((True, _in_savepoint(db, operation)))
        except Exception as error:
            if not db.in_transaction:
                raise
            outcomes.append((False, error))
    return outcomes


def _queued_ran(queued: _Queued, ran: asyncio.Future[list[tuple[bool, Any]]]) -> None:
    """(On the loop's thread, once the worker thread ran `queued`.) Each write's `done`,
    then its outcome to its caller (unless the caller gave up on it)."""
    failure = asyncio.CancelledError() if ran.cancelled() else ran.exception()
    outcomes = ran.result() if failure is None else []
    for index, (_, done, future) in enumerate(queued.writes):
        if failure is not None:
            if not future.done():
                future.set_exception(_copied(failure))
            continue
        succeeded, outcome = outcomes[index]
        if succeeded and done is not None:
            _announce(functools.partial(done, outcome))
        if future.done():
            continue
        if succeeded:
            future.set_result(outcome)
        else:
            future.set_exception(outcome)


def _pass_on(future: asyncio.Future[Any], done: asyncio.Future[Any]) -> None:
    """Settle `future` as `done` ended (unless its caller gave up on it)."""
    if future.done():
        return
    if done.cancelled():
        future.cancel()
    elif done.exception() is not None:
        future.set_exception(done.exception())  # type: ignore[arg-type]
    else:
        future.set_result(done.result())


class Connection:
    """One opened sqlite3 connection, its worker thread and its checkpoint thread.
    Made by `Connection.open`; `close` once."""

    def __init__(self, db: Db, worker: ThreadPoolExecutor, path: str) -> None:
        self.db = db
        self.path = path
        self._worker = worker
        self._lock = threading.Lock()
        self._batch: _Batch | None = None  # the transaction open on the loop's thread
        # Whether a write may open a batch (see the module doc): cleared after
        # `SOLO_BATCHES` batches of one write in a row, set again when, in one loop
        # iteration, a lone write follows another task's (`_lone_task`).
        self._batching = True
        self._solo = 0
        self._lone_task: object | None = None
        # The writes waiting for the worker thread (`_queue_write`); under `_queued_lock`,
        # since that thread takes them.
        self._queued: _Queued | None = None
        self._queued_lock = threading.Lock()
        # Set by the event loop's thread: writes committed, when the last one was.
        self._writes = 0
        self._last_write = 0.0
        # Set by the checkpoint thread: `_writes` as the last checkpoint began.
        self._checkpointed = 0
        # Written pages wait for a checkpoint: the idle timer (`_idle`) looks for the
        # pause, then `_started` while the checkpoint thread has it. Both are cleared
        # by that thread, under `_state`, once no write came during its checkpoint.
        self._armed = False
        self._started = False
        self._state = threading.Lock()
        self._idle: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
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
        connection._loop = asyncio.get_running_loop()
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
        if self._idle is not None:
            self._idle.cancel()
        if checkpointer is not None:
            await loop.run_in_executor(checkpointer, self._close_checkpoint_db)
            checkpointer.shutdown(wait=False)
        await loop.run_in_executor(self._worker, self._locked, Db.close)
        self._worker.shutdown(wait=False)

    # -- running operations ------------------------------------------------------------

    async def run(self, operation: Callable[[Db], T]) -> T:
        """`operation(db)`, at once when it can finish without waiting, else on the
        worker thread. While a batch of writes is open it runs right after its COMMIT
        (or its failure), before any later write."""
        batch = self._batch
        if batch is not None:
            future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
            batch.reads.append((operation, future))
            return await future
        if self._lock.acquire(blocking=False):
            try:
                return operation(self.db)
            except sqlite3.OperationalError as error:
                if not _busy(error):
                    raise
            finally:
                self._lock.release()
        return await self._on_worker(operation, None)

    def _read(self, operation: Callable[[Db], Any], future: asyncio.Future[Any]) -> None:
        """A read that waited for a batch: at once when it can be, else on the worker."""
        if future.done():  # its caller was cancelled
            return
        if self._lock.acquire(blocking=False):
            try:
                result = operation(self.db)
            except sqlite3.OperationalError as error:
                if not _busy(error):
                    future.set_exception(error)
                    return
            except Exception as error:
                future.set_exception(error)
                return
            else:
                future.set_result(result)
                return
            finally:
                self._lock.release()
        worker = asyncio.ensure_future(self._on_worker(operation, None))
        worker.add_done_callback(functools.partial(_pass_on, future))

    async def write(
        self, operation: Callable[[Db], T], done: Callable[[T], None] | None = None
    ) -> T:
        """`operation(db)` in a write transaction, shared with the other writes of this
        loop iteration (see the module doc); its result once that transaction has
        committed. `done(result)` as for `run`: after the COMMIT, even if the caller
        was cancelled meanwhile."""
        batch = self._batch
        if batch is not None:
            result = self._join(batch, operation)
        elif self._lock.acquire(blocking=False):
            try:
                result = self._begin(operation)
            except sqlite3.OperationalError as error:
                self._lock.release()
                if not _busy(error):
                    raise
                return await self._queue_write(operation, done)
            except BaseException:
                self._lock.release()
                raise
            loop = asyncio.get_running_loop()
            if not (self._batching and _company_possible(loop)):
                self._commit_alone()
                if not self._batching:
                    self._look_for_company(loop)
                if done is not None:
                    done(result)
                return result
            batch = self._batch = _Batch()
            loop.call_soon(self._commit, batch)
        else:
            return await self._queue_write(operation, done)
        if done is not None:
            batch.dones.append(functools.partial(done, result))
        # The COMMIT was scheduled before this task's next step, so it has run when the
        # task resumes here (if the loop ran things in another order, wait for it).
        await asyncio.sleep(0)
        if not batch.finished:
            await batch.wait()
        if batch.error is not None:
            raise batch.failed()
        return result

    async def _queue_write(
        self, operation: Callable[[Db], T], done: Callable[[T], None] | None
    ) -> T:
        """A write that found the connection in use: on the worker thread, in one
        transaction with the other writes queued before that thread takes them
        (`_run_queued`); its result, and `done`, once that transaction has committed."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        with self._queued_lock:
            queued = self._queued
            first = queued is None
            if queued is None:
                queued = self._queued = _Queued()
            queued.writes.append((operation, done, future))
        if first:
            try:
                ran = loop.run_in_executor(self._worker, self._run_queued, queued)
            except BaseException:  # the worker is shut down (closed): no later write joins it
                with self._queued_lock:
                    self._queued = None
                raise
            ran.add_done_callback(functools.partial(_queued_ran, queued))
        return await asyncio.shield(future)

    def _run_queued(self, queued: _Queued) -> list[tuple[bool, Any]]:
        """On the worker thread: the queued writes in one transaction, waiting for the
        database lock if need be (`_each_in_savepoint`). Raises, and so fails them all,
        when the transaction as a whole fails."""
        with self._lock:
            with self._queued_lock:  # no write joins it from now on
                if self._queued is queued:
                    self._queued = None
            db = self.db
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            try:
                return transaction(db, functools.partial(_each_in_savepoint, queued))
            finally:
                db.execute("PRAGMA busy_timeout = 0")

    def _begin(self, operation: Callable[[Db], T]) -> T:
        """The first write of a batch: the transaction is its alone until it succeeds."""
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            return operation(db)
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def _commit_alone(self) -> None:
        """COMMIT a write that no other can join (the lock is held: released here)."""
        db = self.db
        try:
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        finally:
            self._lock.release()

    def _look_for_company(self, loop: asyncio.AbstractEventLoop) -> None:
        """(After a lone write while not batching.) Batch again if another task wrote
        alone in this loop iteration: that write could have joined this one's batch."""
        task = asyncio.current_task(loop)
        if self._lone_task is None:
            self._lone_task = task
            loop.call_soon(self._iteration_over)
        elif self._lone_task is not task:
            self._batching = True
            self._solo = 0

    def _iteration_over(self) -> None:
        self._lone_task = None

    def _join(self, batch: _Batch, operation: Callable[[Db], T]) -> T:
        """A write joining the open batch, in a SAVEPOINT of its own."""
        db = self.db
        try:
            result = _in_savepoint(db, operation)
        except BaseException as error:
            if not db.in_transaction:  # SQLite rolled the whole transaction back
                self._finish(batch, error)
            raise
        batch.writes += 1
        return result

    def _commit(self, batch: _Batch) -> None:
        """(A loop callback.) COMMIT the batch, then resolve its writers."""
        if batch.finished:
            return
        db = self.db
        try:
            db.execute("COMMIT")
        except BaseException as error:
            with contextlib.suppress(sqlite3.Error):
                if db.in_transaction:
                    db.execute("ROLLBACK")
            self._finish(batch, error)
            return
        self._finish(batch, None)
        if batch.writes > 1:
            self._solo = 0
        else:
            self._solo += 1
            if self._solo >= SOLO_BATCHES:
                self._batching = False
        for done in batch.dones:
            _announce(done)

    def _finish(self, batch: _Batch, error: BaseException | None) -> None:
        """The batch is over (committed, or failed with `error`): free the connection."""
        batch.finished = True
        batch.error = error
        if self._batch is batch:
            self._batch = None
            self._lock.release()
        if batch.waiter is not None and not batch.waiter.done():
            batch.waiter.set_result(None)
        for operation, future in batch.reads:  # before any write of a later batch
            self._read(operation, future)

    async def _on_worker(self, operation: Callable[[Db], T], done: Callable[[T], None] | None) -> T:
        """`operation` on the worker thread, which waits for the database lock."""
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
        """(On the loop's thread.) Count a committed write, and arm the idle timer if it
        is not: the checkpoint thread is woken only once the writes pause (or after
        `CHECKPOINT_EVERY` of them), never by a write itself."""
        if self._checkpointer is None:  # in memory, or closing
            return
        self._writes += 1
        self._last_write = time.monotonic()
        if not self._armed:
            with self._state:  # the checkpoint thread may be disarming it
                if not self._armed:
                    self._armed = True
                    self._look_for_pause()
        elif self._writes - self._checkpointed >= CHECKPOINT_EVERY:
            self._start_checkpoint()

    def checkpoint_pending(self) -> bool:
        """Whether written pages wait for the background checkpoint (or it runs). A
        caller holding the loop's thread while it polls this (the idle timer cannot
        fire then) has an overdue checkpoint started by the call."""
        if self._armed and time.monotonic() - self._last_write >= CHECKPOINT_IDLE_S:
            self._start_checkpoint()
        return self._armed

    def _look_for_pause(self) -> None:
        """(A loop callback, or called on the loop's thread.) Start the checkpoint if the
        writes have paused for `CHECKPOINT_IDLE_S`, else look again when they could
        have."""
        if self._idle is not None:  # one timer at most (this one, or one made before it)
            self._idle.cancel()
            self._idle = None
        if not self._armed or self._started or self._loop is None:
            return
        quiet = time.monotonic() - self._last_write
        if quiet >= CHECKPOINT_IDLE_S:
            self._start_checkpoint()
        else:
            self._idle = self._loop.call_later(CHECKPOINT_IDLE_S - quiet, self._look_for_pause)

    def _start_checkpoint(self) -> None:
        checkpointer = self._checkpointer
        if self._started or checkpointer is None:
            return
        self._started = True
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        checkpointer.submit(self._checkpoint)

    def _checkpoint(self) -> None:
        """On the checkpoint thread: checkpoint, then disarm, or (writes came meanwhile)
        have the loop look for the next pause."""
        self._checkpointed = self._writes
        if self._checkpointer is not None:  # closing: the last close checkpoints
            self._run_checkpoint()
        with self._state:
            self._started = False
            if self._writes == self._checkpointed or self._checkpointer is None:
                self._armed = False
                return
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed: nothing to do
                loop.call_soon_threadsafe(self._look_for_pause)

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
        copied = self._copy_wal()
        if copied is None:
            return
        whole, frames = copied
        try:
            self._start_wal_over(whole=whole, frames=frames)
        except sqlite3.Error as error:  # the next write starts it over instead
            log.warning("starting the WAL of %s over failed: %s", self.path, error)

    def _copy_wal(self) -> tuple[bool, int] | None:
        """A PASSIVE checkpoint on this thread's connection: whether it copied the whole
        WAL (so that it can start over) and the WAL's frames; None if it failed."""
        assert self._checkpoint_db is not None
        try:
            ((busy, frames, copied),) = self._checkpoint_db.execute(
                "PRAGMA wal_checkpoint(PASSIVE)"
            ).fetchall()
        except sqlite3.Error as error:  # the writer's own checkpoint remains
            log.warning("a background checkpoint of %s failed: %s", self.path, error)
            return None
        return bool(busy == 0 and 0 < frames == copied), int(frames)

    def _start_wal_over(self, whole: bool = True, frames: int = 0) -> None:
        """Start the copied WAL over now (`whole`: the checkpoint copied all of it), by
        a write of nothing new on the writing connection (the file header's
        `user_version`, rewritten as it is). The first write into a WAL that starts over
        writes the WAL's header and fsyncs it (even with `synchronous = NORMAL`), for a
        millisecond or more: done here, that fsync lands on this thread, not on the
        loop's thread inside a cycle's write. Made on the writing connection, not this
        thread's own, because a write by another connection makes the writer drop its
        cached pages and read them again.

        A write that came while the checkpoint copied (writes that never pause: one
        comes every few milliseconds, a checkpoint with its fsyncs takes longer) left
        frames it did not copy, and SQLite starts a WAL over only from a write that
        begins with every frame copied. Left to itself the WAL then grew until the
        writer's own checkpoint (`AUTOCHECKPOINT_PAGES`) ran inside a write on the loop's
        thread, every frame on the way written into new file space (which the kernel
        allocates and zeroes first). So once the WAL holds `RESTART_FRAMES` (`frames`:
        its size as the checkpoint began), those frames are copied here too, with this
        process's use of the connection held off for that second checkpoint and the
        start over, three fsyncs (its writes queue for the worker thread, which commits
        them together once the lock is free; the loop's thread is not held). Below that,
        the WAL is left to grow: the next checkpoint tries again."""
        caught_up = whole and self._writes == self._checkpointed
        if not caught_up and frames < RESTART_FRAMES:
            return
        with self._lock:
            if self._checkpointer is None:
                return
            if not caught_up:  # writes came while it copied
                copied = self._copy_wal()
                if copied is None or not copied[0]:
                    return  # another process reads or writes it: its writes start it over
                self._checkpointed = self._writes  # every write counted so far is copied
            elif self._writes != self._checkpointed:
                return  # a write since: it appended, so leave the WAL to the next checkpoint
            db = self.db
            try:
                db.execute("BEGIN IMMEDIATE")  # busy timeout 0: another process writes
            except sqlite3.OperationalError as error:
                if _busy(error):  # its write starts the WAL over instead
                    return
                raise
            try:
                (version,) = db.execute("PRAGMA user_version").fetchone()
                db.execute(f"PRAGMA user_version = {int(version)}")
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise

    def _close_checkpoint_db(self) -> None:
        db, self._checkpoint_db = self._checkpoint_db, None
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.close()
