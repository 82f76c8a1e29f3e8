"""What the in-memory store promises beyond the conformance suite: a parked ask costs
little beyond the interaction itself, so one process can hold very many."""

from __future__ import annotations

import gc
import tracemalloc

from midturn.contract._interactions import Interaction, NewEvent
from midturn.contract._models import Ask, Option, Question
from midturn.store import open_store

ASK = Ask(
    questions=(
        Question(
            id="db",
            header="Database",
            question="Which database?",
            options=(Option(label="SQLite"), Option(label="PostgreSQL")),
        ),
    )
)


async def test_a_parked_ask_costs_under_two_kib_beyond_its_interaction() -> None:
    count = 20_000
    asks = [
        Interaction(
            id=f"ask-{n:06d}",
            kind="ask",
            session_id=f"session-{n % 500}",
            turn_id=f"turn-{n}",
            tool_call_id=f"call-{n}",
            ask=ASK,
        )
        for n in range(count)
    ]
    requested = [
        NewEvent(
            type="user_question_requested",
            session_id=ask.session_id,
            turn_id=ask.turn_id,
            interaction_id=ask.id,
        )
        for ask in asks
    ]
    gc.collect()
    tracemalloc.start()
    try:
        async with open_store("memory://") as store:
            before = tracemalloc.get_traced_memory()[0]
            for ask, event in zip(asks, requested, strict=True):
                await store.create_interaction(ask, [event])
            gc.collect()
            per_ask = (tracemalloc.get_traced_memory()[0] - before) / count

            pending = await store.list_interactions(session_id="session-7", status="pending")
            assert len(pending) == count // 500
            assert await store.last_event_id() == count
    finally:
        tracemalloc.stop()
    assert per_ask < 2048, f"{per_ask:.0f} bytes per parked ask (indexes + its event)"


async def test_stored_events_copy_like_any_model() -> None:
    async with open_store("memory://") as store:
        first, second = await store.append_events(
            [NewEvent(type="turn_waiting", session_id=name, turn_id="t") for name in "ab"]
        )
        changed = first.model_copy(update={"data": {"n": 1}})
        assert changed.data == {"n": 1}
        assert first.data == {} and second.session_id == "b"
        assert changed.model_dump(exclude_unset=True)["data"] == {"n": 1}
