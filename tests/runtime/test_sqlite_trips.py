"""What an ask costs on SQLite, in statements: the park reads the queue and the turn's
end in its own write transaction."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.runtime.conftest import ASK

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
