"""What an ask and its wait cost on SQLite, in statements: the park reads the queue and
the turn's end in its own write transaction, and a wait right after it reads nothing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.runtime.conftest import ANSWER, ASK, within

from midturn import Runtime, open_store


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[Runtime]:
    async with open_store(f"sqlite:///{tmp_path / 'm.db'}") as store, Runtime(store) as opened:
        yield opened


def statements(runtime: Runtime) -> list[str]:
    """The first word and table of every statement the store's connection runs from now
    on (a trigger's statements are traced as their parent's: one entry each)."""
    connection = getattr(runtime.store, "_connection", None)
    assert connection is not None
    seen: list[str] = []
    last: list[str] = [""]

    def trace(sql: str) -> None:
        if sql != last[0]:
            words = sql.split()
            seen.append(" ".join(words[:3]) if words[0] == "INSERT" else words[0])
        last[0] = sql

    connection.db.set_trace_callback(trace)
    return seen


async def test_an_ask_reads_its_turns_end_inside_its_park(runtime: Runtime) -> None:
    seen = statements(runtime)
    parked = await runtime.ask("s1", ASK, turn_id="t1")
    assert parked.created and parked.interaction.pending
    # the probe (repeat, queue, turn waiting, turn ended), the row, its events
    assert seen == [
        "BEGIN",
        "SELECT",
        "INSERT INTO midturn_interactions",
        "INSERT INTO midturn_events",
        "COMMIT",
    ]


async def test_an_ask_in_a_turn_ended_before_it_parks_is_cancelled_unseen(
    runtime: Runtime,
) -> None:
    await runtime.store.end_turn("s1", "t1", how="stopped")
    parked = await runtime.ask("s1", ASK, turn_id="t1")
    assert parked.created and parked.interaction.status == "cancelled"
    assert [event.type for event in await runtime.store.read_events()] == []


async def test_a_wait_right_after_the_park_reads_nothing_until_the_answer(
    runtime: Runtime,
) -> None:
    parked = await runtime.ask("s1", ASK, turn_id="t1")
    seen = statements(runtime)
    waiting = asyncio.create_task(runtime.wait(parked.interaction.id, timeout=30))
    for _ in range(5):
        await asyncio.sleep(0)
    assert seen == [] and not waiting.done()
    await runtime.answer(parked.interaction.id, ANSWER)
    settled = await within(waiting)
    assert settled.interaction.status == "answered"


async def test_a_look_without_waiting_reads_the_store(runtime: Runtime) -> None:
    parked = await runtime.ask("s1", ASK, turn_id="t1")
    seen = statements(runtime)
    looked = await runtime.wait(parked.interaction.id, timeout=0)
    assert looked.interaction.pending
    assert seen == ["SELECT"]
