"""When the PostgreSQL store tells its listeners of its own appends: once the call that
appended has its result, before any task a listener wakes runs. The runtime skips its
own events when it follows the log for other processes' ones, by the ids a write
returned; told earlier, its log reader woke first and read its own events back from the
database (about one read per round trip under a crowd).

Each test works in a fresh schema of the test database, dropped afterwards. Without a
server the tests skip, except under `CI=true`, where they fail.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from tests._postgres import fresh_schema

from midturn.runtime import Runtime
from midturn.store import open_store
from midturn.store._postgres import PostgresStore
from midturn.testing.conformance._data import note

pytest.importorskip("asyncpg")

SAFETY_S = 20.0

ASK = {
    "questions": [
        {
            "id": "q",
            "header": "Go",
            "question": "Go on?",
            "options": [{"label": "Yes"}, {"label": "No"}],
        }
    ]
}


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async with fresh_schema("t_pgann", "the PostgreSQL store must be tested") as fresh:
        yield fresh


async def test_a_listener_is_told_once_the_appending_call_has_returned(url: str) -> None:
    async with open_store(url) as store:
        order: list[str] = []
        loop = asyncio.get_running_loop()
        store.add_listener(lambda last_event_id: loop.call_soon(order.append, "woken"))
        await store.append_events([note("s1")])
        order.append("returned")
        await asyncio.sleep(0)
        assert order == ["returned", "woken"]


async def test_the_runtime_reads_none_of_its_own_events_back_from_the_log(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A notification that comes in during one of this store's writes waits for the write
    # to end, or NOTIFY_HOLD_S at most; on a loaded machine the write's result can take
    # longer than the 50 ms to reach its caller, and the reader then reads the event back
    # (harmless: it skips it). Lengthened here, so the test sees the mechanism, not the load.
    monkeypatch.setattr("midturn.store._postgres_announce.NOTIFY_HOLD_S", 60.0)
    async with open_store(url) as store, Runtime(store) as runtime:
        reads: list[Any] = []
        read_events = store.read_events

        async def counted(*args: Any, **kwargs: Any) -> Any:
            reads.append(args)
            return await read_events(*args, **kwargs)

        monkeypatch.setattr(store, "read_events", counted)
        for n in range(5):
            parked = await runtime.ask("s1", ASK, turn_id=f"t{n}", tool_call_id=f"c{n}")
            await runtime.answer(parked.interaction.id, {"answers": {"q": "Yes"}})
            await asyncio.sleep(0.01)  # the log reader's turn
        assert reads == []


async def test_a_write_returning_before_an_earlier_one_is_announced_after_it(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two writes in flight, the first to draw its ids the last to have its result (its
    reply held here, as a backend preempted after its commit holds it): the listeners
    hear of the second's ids only once the first has returned too, so the runtime,
    which skips its own ids when it follows the log, never finds an id of its own it
    has not been handed yet, and never reads its own events back."""
    monkeypatch.setattr("midturn.store._postgres_announce.NOTIFY_HOLD_S", 60.0)  # the cap, not hit
    async with open_store(url) as store:
        pool: Any = store._db()  # type: ignore[attr-defined]
        statement = pool.fetchrow
        committed, reply = asyncio.Event(), asyncio.Event()

        async def first_reply_held(query: str, *args: object) -> Any:
            result = await statement(query, *args)
            if not committed.is_set():
                committed.set()
                await reply.wait()
            return result

        monkeypatch.setattr(pool, "fetchrow", first_reply_held)
        heard: list[int] = []
        store.add_listener(heard.append)
        first = asyncio.ensure_future(store.append_events([note("s1")]))
        await asyncio.wait_for(committed.wait(), SAFETY_S)
        second = await store.append_events([note("s2")])
        await asyncio.sleep(0.05)  # the notifications' turn (they are held too)
        assert heard == [] and not first.done()
        reply.set()
        earlier = await asyncio.wait_for(first, SAFETY_S)
        assert [event.id for event in (*earlier, *second)] == [1, 2]
        await asyncio.sleep(0)
        assert heard == [2]


async def test_a_held_id_waits_for_the_writes_in_flight_when_held_not_for_later_ones() -> None:
    """The announcement's bookkeeping alone (no server): ids held while writes fly wait
    for those writes, not for writes begun after them (under a crowd some write is
    always in flight), and go out in increasing order."""
    store = PostgresStore("postgresql://nobody@127.0.0.1:1/none")
    heard: list[int] = []
    store.add_listener(heard.append)
    announcer = store._announcer
    announcer.heard = 3

    def begin() -> int:
        announcer._writes += 1
        announcer._flying.add(announcer._writes)
        return announcer._writes

    def end(write: int, ids: list[int]) -> None:
        announcer.appended([note("s1")] * len(ids), ids)
        announcer._written(write)

    first, second = begin(), begin()
    end(second, [5])  # id 4 may be the first write's, still on its way
    announcer.on_payload("6:")  # another replica's, heard while the first write flies
    later = begin()
    assert heard == []
    end(first, [4])  # the write begun later is still in flight: not waited for
    assert heard == [6]
    end(later, [7])
    assert heard == [6, 7]
    assert announcer._held == [] and announcer._hold_timer is None
