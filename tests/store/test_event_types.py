"""The `Store` base class's own reads by event type, which a backend outside midturn gets
when it overrides only `read_events`: the same answers as the backends' indexed queries,
across more than one page of the log."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from midturn.contract._interactions import Event, NewEvent
from midturn.store._base import Store
from midturn.store._memory import MemoryStore


class _OnlyReadEvents(MemoryStore):
    """A store with the base class's reads by type, as a backend that never wrote its own."""

    read_events_of_types = Store.read_events_of_types
    tail_start_of_types = Store.tail_start_of_types


@pytest.fixture
async def stores() -> AsyncIterator[tuple[Store, Store]]:
    base, own = _OnlyReadEvents(), MemoryStore()
    async with base, own:
        for store in (base, own):
            for start in range(0, 2500, 500):
                await store.append_events([_event(index) for index in range(start, start + 500)])
        yield base, own


_AT = datetime(2026, 12, 3, tzinfo=UTC)


def _event(index: int) -> NewEvent:
    kind = "turn_resumed" if index % 7 == 0 else "turn_waiting"
    return NewEvent(type=kind, session_id=f"s{index % 3}", turn_id=f"t{index}", at=_AT)


async def test_the_base_reads_by_type_as_the_backends_do(stores: tuple[Store, Store]) -> None:
    base, own = stores
    reads: list[tuple[list[str], int, str | None, int]] = [
        (["turn_resumed"], 0, None, 1000),
        (["turn_resumed"], 0, None, 50),
        (["turn_resumed"], 1200, None, 1000),
        (["turn_resumed"], 0, "s1", 100),
        (["turn_resumed"], 2499, None, 10),
        (["turn_resumed", "turn_waiting"], 1990, "s2", 1000),
        ([], 10, None, 5),
    ]
    for types, after_id, session_id, limit in reads:
        got: list[Event] = await base.read_events_of_types(
            types, after_id, session_id=session_id, limit=limit
        )
        assert got == await own.read_events_of_types(
            types, after_id, session_id=session_id, limit=limit
        )
        assert got and all(event.type in (types or [event.type]) for event in got)
        assert len(got) <= limit


async def test_the_base_tail_counts_only_the_types(stores: tuple[Store, Store]) -> None:
    base, own = stores
    for count in (0, 1, 50, 357, 358, 5000):
        for session_id in (None, "s0", "nobody"):
            start = await base.tail_start_of_types(["turn_resumed"], count, session_id=session_id)
            assert start == await own.tail_start_of_types(
                ["turn_resumed"], count, session_id=session_id
            )
            window = await base.read_events_of_types(
                ["turn_resumed"], start, session_id=session_id, limit=5000
            )
            every = await base.read_events_of_types(
                ["turn_resumed"], session_id=session_id, limit=5000
            )
            assert window == every[len(every) - min(count, len(every)) :]
