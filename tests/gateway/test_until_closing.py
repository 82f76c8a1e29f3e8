"""`GatewayState.until_closing`, the long-poll's race: its work runs in the request's own
task, which the server's closing or the client's going away cancels. Only that
cancellation ends as None; any other cancellation of the request's task goes on."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from starlette.requests import Request
from starlette.types import Message

from midturn.gateway._auth import TokenAuthority
from midturn.gateway._protocol_state import CONNECTION_LOST, connection_lost, connection_state
from midturn.gateway._state import GatewayState
from midturn.runtime import Runtime
from midturn.store import open_store


@pytest.fixture
async def state() -> AsyncIterator[GatewayState]:
    async with open_store("memory://") as store, Runtime(store) as runtime:
        yield GatewayState(runtime=runtime, store=store, authority=TokenAuthority(store, "admin"))


class Client:
    """A request whose client stays until `leave()`, then disconnects."""

    def __init__(self) -> None:
        self.left = asyncio.Event()
        self.request = Request({"type": "http", "method": "GET", "headers": []}, self.receive)

    async def receive(self) -> Message:
        await self.left.wait()
        return {"type": "http.disconnect"}

    def leave(self) -> None:
        self.left.set()


class Work:
    """Work that finishes with "done" when `finish()` is called; it notes a cancellation."""

    def __init__(self) -> None:
        self.finished = asyncio.Event()
        self.cancelled = False

    async def run(self) -> str:
        try:
            await self.finished.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return "done"

    def finish(self) -> None:
        self.finished.set()


async def started(state: GatewayState, work: Work, client: Client) -> asyncio.Task[str | None]:
    task = asyncio.create_task(state.until_closing(work.run(), client.request))
    for _ in range(3):
        await asyncio.sleep(0)
    assert not task.done()
    return task


async def test_the_work_s_result_when_it_finishes_first(state: GatewayState) -> None:
    work, client = Work(), Client()
    task = await started(state, work, client)
    work.finish()
    assert await task == "done"
    assert not work.cancelled
    assert task.cancelling() == 0


async def test_none_and_the_work_cancelled_when_the_server_closes(state: GatewayState) -> None:
    work, client = Work(), Client()
    task = await started(state, work, client)
    state.closing.set()
    assert await task is None
    assert work.cancelled
    assert task.cancelling() == 0  # the task goes on as if never cancelled


async def test_none_when_the_server_closed_before_the_wait_began(state: GatewayState) -> None:
    state.closing.set()
    work, client = Work(), Client()
    assert await state.until_closing(work.run(), client.request) is None


async def test_none_and_the_work_cancelled_when_the_client_goes(state: GatewayState) -> None:
    work, client = Work(), Client()
    task = await started(state, work, client)
    client.leave()
    assert await task is None
    assert work.cancelled


async def test_a_cancellation_from_elsewhere_is_not_swallowed(state: GatewayState) -> None:
    work, client = Work(), Client()
    task = await started(state, work, client)
    task.cancel()  # as the server cancels a request's task
    with pytest.raises(asyncio.CancelledError):
        await task
    assert work.cancelled


async def test_a_cancellation_from_elsewhere_with_the_closing_still_goes_on(
    state: GatewayState,
) -> None:
    work, client = Work(), Client()
    task = await started(state, work, client)
    state.closing.set()
    task.cancel()  # both before the task runs again: the other one must not be lost
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_closing_after_the_work_finished_changes_nothing(state: GatewayState) -> None:
    work, client = Work(), Client()
    task = await started(state, work, client)
    work.finish()
    assert await task == "done"
    state.closing.set()
    client.leave()
    await asyncio.sleep(0)
    assert task.cancelling() == 0
    watchers = [t for t in asyncio.all_tasks() if "client_gone" in repr(t.get_coro())]
    assert watchers == []  # the task that watched the client is gone too


async def test_a_closing_in_the_same_turn_as_the_work_s_end_does_not_reach_past_it(
    state: GatewayState,
) -> None:
    work, client = Work(), Client()

    async def request() -> str | None:
        result = await state.until_closing(work.run(), client.request)
        await asyncio.sleep(0)  # what the route does next: write its response
        return result

    task = asyncio.create_task(request())
    for _ in range(3):
        await asyncio.sleep(0)
    work.finish()  # the task's wake-up is queued first,
    state.closing.set()  # then the closing's callback, before either has run
    assert await task == "done"
    assert task.cancelling() == 0


class Connection:
    """A request on a connection of the gateway's own protocol: its state holds the
    future done when the connection is lost (`_protocol_state.py`)."""

    def __init__(self) -> None:
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        scope = {"type": "http", "method": "GET", "headers": [], "state": {}}
        scope["state"][CONNECTION_LOST] = self.lost
        self.request = Request(scope, self.receive)

    async def receive(self) -> Message:  # never asked: the future says when it is lost
        raise AssertionError("the client was watched through receive()")


async def test_a_lost_connection_ends_the_wait_with_no_task_watching_it(
    state: GatewayState,
) -> None:
    work, connection = Work(), Connection()
    task = asyncio.create_task(state.until_closing(work.run(), connection.request))
    for _ in range(3):
        await asyncio.sleep(0)
    assert not task.done()
    assert [t for t in asyncio.all_tasks() if "client_gone" in repr(t.get_coro())] == []
    connection.lost.set_result(None)
    assert await task is None
    assert work.cancelled
    assert task.cancelling() == 0


async def test_a_connection_lost_before_the_wait_began_ends_it_at_once(
    state: GatewayState,
) -> None:
    work, connection = Work(), Connection()
    connection.lost.set_result(None)
    assert await state.until_closing(work.run(), connection.request) is None
    assert work.cancelled


async def test_the_work_s_result_leaves_the_connection_s_future_untouched(
    state: GatewayState,
) -> None:
    """The future is the connection's, shared by its next requests: a request that ends
    neither cancels it nor leaves its callback on it."""
    work, connection = Work(), Connection()
    task = asyncio.create_task(state.until_closing(work.run(), connection.request))
    for _ in range(3):
        await asyncio.sleep(0)
    work.finish()
    assert await task == "done"
    assert not connection.lost.done()
    connection.lost.set_result(None)
    await asyncio.sleep(0)
    assert task.cancelling() == 0


def test_a_lost_connection_marks_its_state() -> None:
    async def run() -> None:
        transport = asyncio.Transport()
        state = connection_state({"kept": 1}, transport)
        assert state["kept"] == 1
        lost = state[CONNECTION_LOST]
        assert not lost.done()
        connection_lost(state)
        connection_lost(state)  # twice, as a protocol may see it: no error
        assert lost.done()

    asyncio.run(run())


async def test_a_long_poll_that_ends_leaves_nothing_for_the_closing_to_call(
    state: GatewayState,
) -> None:
    works = [Work() for _ in range(100)]
    tasks = [await started(state, work, Client()) for work in works]
    called: list[str] = []
    state.closing.watch(lambda: called.append("still waiting"))
    for work in works:
        work.finish()
    assert await asyncio.gather(*tasks) == ["done"] * 100
    state.closing.unwatch(lambda: None)  # one it never had: nothing
    state.closing.set()
    await asyncio.sleep(0)
    assert called == ["still waiting"]  # the ended long-polls' callbacks went with them
    assert all(task.cancelling() == 0 for task in tasks)
    state.closing.watch(lambda: called.append("after the close"))
    await asyncio.sleep(0)
    assert called == ["still waiting", "after the close"]
