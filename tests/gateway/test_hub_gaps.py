"""The event hub hands events on in id order: one heard ahead of a lower id waits for it.
Two writers in one process often announce their events out of order (the later one's
result handled first); the lower id then arrives from the tap a moment later, and the
hub takes it from there instead of reading the log (a store round trip, during which no
stream gets anything). Only a gap that stays open past a short grace is read from the
log.

A real runtime on the memory store; the events are handed to the hub as its tap would.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from midturn.contract._interactions import Event
from midturn.gateway import _hub
from midturn.gateway._hub import EventHub, Subscriber
from midturn.runtime import Runtime
from midturn.store import Store, open_store
from midturn.store._codec import event_from
from midturn.testing.conformance._data import note

SAFETY_S = 20.0


@pytest.fixture
async def store() -> AsyncIterator[Store]:
    async with open_store("memory://") as opened:
        yield opened


def _event(event_id: int) -> Event:
    return event_from(note("s1", f"t{event_id}"), event_id)


async def _taken(subscriber: Subscriber, count: int) -> list[int]:
    ids: list[int] = []
    async with asyncio.timeout(SAFETY_S):
        while len(ids) < count:
            subscriber.wake.clear()
            ids += [event_id for event_id, _ in subscriber.take()]
            if len(ids) < count:
                await subscriber.wake.wait()
    return ids


async def test_an_event_heard_late_fills_its_gap_without_a_log_read(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_hub, "GAP_GRACE_S", SAFETY_S, raising=False)
    async with Runtime(store) as runtime:
        hub = EventHub(runtime, store)
        try:
            subscriber = await hub.subscribe(None)
            hub._heard(_event(2))  # the second writer's event, announced first
            for _ in range(20):  # the hub's task runs meanwhile
                await asyncio.sleep(0)
            hub._heard(_event(1))
            assert await _taken(subscriber, 2) == [1, 2]
            assert hub.log_reads == 0
        finally:
            await hub.aclose()


async def test_a_gap_left_open_past_the_grace_is_read_from_the_log(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_hub, "GAP_GRACE_S", 0.01, raising=False)
    async with Runtime(store) as runtime:
        hub = EventHub(runtime, store)
        try:
            subscriber = await hub.subscribe(None)
            hub._heard(_event(2))  # id 1 was never committed: the log has no 1
            assert await _taken(subscriber, 1) == [2]
            assert hub.log_reads == 1
            hub._heard(_event(1))  # too late: passed over, never handed on after 2
            hub._heard(_event(3))
            assert await _taken(subscriber, 1) == [3]
        finally:
            await hub.aclose()
