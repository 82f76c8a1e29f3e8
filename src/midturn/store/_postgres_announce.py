"""When a PostgreSQL store tells its listeners of new event ids (`PostgresStore`'s
`Announcer`): its own appends once each write has returned, and once every write in
flight that may hold a lower id has returned too; other processes' appends, heard as
notifications, once the writes in flight when they came in have ended, or
`NOTIFY_HOLD_S` at most. Listeners hear each id at most once, in increasing order.

A write runs shielded from its caller's cancellation (`Announcer.shielded`): once sent,
a statement may commit whatever the caller does, so the write always runs to its end
and its ids are announced."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Generator, Sequence
from typing import Any, TypeVar

from midturn.contract._interactions import Event, NewEvent
from midturn.store._codec import event_from

__all__ = ["NOTIFY_HOLD_S", "Announcer"]

NOTIFY_HOLD_S = 0.05
"""The longest a notification that came in during a write of this store waits (see
`on_payload`): a write ending announces it at once."""

T = TypeVar("T")


class Announcer:
    """The bookkeeping of a store's announcements: `notify` tells the store's listeners
    of an id (`Store.notify_listeners`); `schema` is the store's (None: the default),
    whose notifications alone it heeds."""

    def __init__(self, notify: Callable[[int], None], schema: str | None) -> None:
        self._notify = notify
        self._schema = schema
        self.heard = 0
        self._flying: set[int] = set()
        """The writes of this store in flight (a number each, from `_writes`)."""
        self._writes = 0
        self._held: list[tuple[int, int]] = []
        """Ids not yet announced, each with the newest write begun when it was held: it
        waits until none of the writes up to that one is in flight (see `_written`)."""
        self._drawn: tuple[int, int] | None = None
        """The first and last id a write drew, from `appended` to `_written` (both in
        the write's last step)."""
        self._hold_timer: asyncio.TimerHandle | None = None

    def heard_up_to(self, last_event_id: int) -> None:
        """Tell the listeners about `last_event_id` unless they have heard of it (or of a
        newer id) already, so they hear ids in increasing order."""
        if last_event_id > self.heard:
            self.heard = last_event_id
            self._notify(last_event_id)

    def on_payload(self, payload: str) -> None:
        """A notification from any store object on this database, this one included: its
        own appends it has announced already, and `heard_up_to` drops them."""
        text_id, _, schema = payload.partition(":")
        if schema != (self._schema or ""):
            return
        try:
            last_event_id = int(text_id)
        except ValueError:
            return  # not one of ours
        if last_event_id <= self.heard:
            return  # announced already (this store's own, mostly)
        if self._flying:
            # Perhaps a write of this store, whose caller has not had its ids yet (the
            # notification can come in before the statement's result): held back until
            # the writes in flight now have ended, or `NOTIFY_HOLD_S` at most.
            self._hold(last_event_id)
            return
        self.heard_up_to(last_event_id)

    def appended(self, events: Sequence[NewEvent], ids: list[int] | None) -> tuple[Event, ...]:
        """The events under the ids their statement drew (the statement has committed:
        it ran in its own transaction), to be announced by `shielded`."""
        if not ids:
            return ()
        appended = tuple(
            event_from(new, event_id) for new, event_id in zip(events, ids, strict=True)
        )
        self._drawn = (ids[0], ids[-1])
        return appended

    def _announce(self) -> None:
        """Tell the listeners of every id held, whatever it waits for (after
        `NOTIFY_HOLD_S`: a write in flight that long is stuck, not late)."""
        held, self._held, self._hold_timer = self._held, [], None
        self.heard_up_to(max((last_event_id for last_event_id, _ in held), default=0))

    def _hold(self, last_event_id: int) -> None:
        """Announce `last_event_id` once the writes in flight now have ended (those
        begun up to the newest, `_writes`, as no write begun later can be one of them),
        or `NOTIFY_HOLD_S` after the oldest id held now at most."""
        self._held.append((last_event_id, self._writes))
        if self._hold_timer is None:
            loop = asyncio.get_running_loop()
            self._hold_timer = loop.call_later(NOTIFY_HOLD_S, self._announce)

    def _release(self) -> None:
        """Announce the newest held id below which no held id still waits for a write:
        one held at write `n` waits while a write numbered `n` or less is in flight."""
        oldest = min(self._flying, default=self._writes + 1)
        ready = 0
        waiting: list[tuple[int, int]] = []
        for last_event_id, newest in sorted(self._held):
            if waiting or newest >= oldest:
                waiting.append((last_event_id, newest))
            else:
                ready = last_event_id
        self._held = waiting
        if not waiting and self._hold_timer is not None:
            self._hold_timer.cancel()
            self._hold_timer = None
        self.heard_up_to(ready)

    async def shielded(self, work: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """`await work()`, shielded from the caller's cancellation: once sent, a statement
        may commit whatever the caller does, so the work always runs to its end and its
        events are announced — a committed event is never left unannounced in this
        process.

        The caller's own task runs the work: its statement is sent in the caller's
        step, where a task's first step waited a turn behind the loop's other work
        (under a crowd, milliseconds), and the caller goes on from the reply's turn,
        where a task handed it the result a turn later. Its waits (for a connection,
        for a reply) are not cut short by the caller's cancellation (`_Uncancelled`):
        the cancellation lands once the wait is over, and the work goes on from there
        in a task of its own (`_carry_on`). (No timeout of asyncio's runs in the work:
        `Connections` opens a connection in a task of its own.)

        `run` hands the result over (`handed`), then announces: the caller, which has
        the result in the same step (or, cancelled, the work's task, which hands it to
        nobody), runs on before any task a listener wakes. The runtime, which skips its
        own events by the ids a write returned when it follows the log, has those ids
        by then; told earlier, its log reader woke first and read them back from the
        database, about once per round trip."""
        handed: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._writes += 1
        write = self._writes
        self._flying.add(write)

        async def run() -> None:
            try:
                result = await work()
            except Exception as error:
                if not handed.done():
                    handed.set_exception(error)
            except BaseException:  # the loop closing: the caller goes with it
                handed.cancel()
                raise
            else:
                if not handed.done():
                    handed.set_result(result)
            finally:
                self._written(write)

        steps = run()
        try:
            waiting_for = steps.send(None)  # up to the statement sent, or a connection
            while True:
                if waiting_for is not None:
                    try:
                        await _Uncancelled(waiting_for)
                    except asyncio.CancelledError:  # the wait is over: the work goes on alone
                        task = asyncio.ensure_future(_carry_on(steps, waiting_for))
                        task.add_done_callback(_retrieve)
                        raise
                waiting_for = steps.send(None)
        except StopIteration:  # `run` has ended: `handed` holds the outcome
            return handed.result()

    def _written(self, write: int) -> None:
        """A write has ended: announce its ids, and what waited for it.

        Its ids wait for the writes still in flight when they are below an id not yet
        heard of: such a write may hold those ids, drawn before this write's and
        committed, with its reply still on its way (its backend, preempted after the
        commit, or a reply read a turn later). Told of this write's ids first, the
        runtime's log reader would find those of the other write, not yet handed to
        their caller, and read them back from the database (under a crowd, about every
        second round trip). A write sent after this one returned draws ids above it, so
        the wait ends with the writes in flight now."""
        drawn, self._drawn = self._drawn, None
        self._flying.discard(write)
        if drawn is not None:
            first, last = drawn
            if first > self.heard + 1 and self._flying:
                self._hold(last)
            else:
                self._held.append((last, 0))  # waits for no write, only for lower ids held
        self._release()


async def _carry_on(steps: Coroutine[Any, Any, None], waiting_for: Any) -> None:
    """Run `steps`, a coroutine whose first step ran elsewhere, on to its end, from
    where that step left it: waiting for the future `waiting_for` (None: for a turn of
    the loop). Each wait is this task's, as if the coroutine had run in it from the
    start; a cancellation of this task goes into the coroutine where it waits."""
    while True:
        try:
            await _Awaiting(waiting_for)
        except BaseException as error:  # cancelled (the loop closing): into the work
            try:
                waiting_for = steps.throw(error)
            except StopIteration:
                return
            continue
        try:
            waiting_for = steps.send(None)
        except StopIteration:
            return


class _Awaiting:
    """Awaited: wait until `future` is done (None: for one turn of the loop), leaving
    its outcome to the coroutine that yielded it, which reads it when resumed."""

    __slots__ = ("future",)

    def __init__(self, future: Any) -> None:
        self.future = future

    def __await__(self) -> Generator[Any, None, None]:
        if self.future is None:
            yield None
        elif not self.future.done():
            self.future._asyncio_future_blocking = True
            yield self.future


class _Uncancelled:
    """Awaited: wait for `future` to be done, leaving its outcome to the coroutine that
    yielded it, in a way the waiting task's cancellation does not cancel it (asyncio's
    protocol for a future-like object: a task that is cancelled while it waits cancels
    what it waits for, and here that refuses; the task's cancellation then lands once
    `future` is done). The task is woken straight from `future`'s done callbacks, with
    no turn of the loop between, as if it waited for `future` itself."""

    __slots__ = ("_asyncio_future_blocking", "_future")

    def __init__(self, future: asyncio.Future[Any]) -> None:
        self._future = future
        self._asyncio_future_blocking = False

    def __await__(self) -> Generator[Any, None, None]:
        if not self._future.done():
            self._asyncio_future_blocking = True
            yield self

    def get_loop(self) -> asyncio.AbstractEventLoop:
        return self._future.get_loop()

    def add_done_callback(self, callback: Callable[[Any], object], *, context: Any = None) -> None:
        self._future.add_done_callback(lambda _: callback(self), context=context)

    def cancel(self, msg: object = None) -> bool:
        return False

    def cancelled(self) -> bool:
        return False

    def done(self) -> bool:
        return self._future.done()

    def result(self) -> None:
        """Nothing: the outcome is the coroutine's to read from `future`."""

    def exception(self) -> None:
        """Nothing, as `result`."""


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Collect the outcome of a write whose caller was cancelled (so asyncio does not
    report it as never retrieved); its error, if any, was the caller's to see."""
    if not task.cancelled():
        task.exception()
