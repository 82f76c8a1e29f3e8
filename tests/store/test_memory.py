"""What the in-memory store promises beyond the conformance suite: a parked ask costs
little beyond the interaction itself, so one process can hold very many."""

from __future__ import annotations

import gc
import json
import tracemalloc

import pytest
from pydantic import ValidationError

from midturn.contract._interactions import Interaction, NewEvent
from midturn.contract._models import Ask, Option, Question
from midturn.store import open_store
from midturn.store._base import Settle, Store

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


_TOOL_INPUT = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use?",
            "options": [
                {"label": "PostgreSQL", "description": "Managed, scales out"},
                {"label": "SQLite", "description": "Embedded, zero setup"},
            ],
        }
    ]
}


async def test_a_parked_ask_with_its_events_costs_under_two_kib_beyond_its_json() -> None:
    """As the runtime parks it (its own parsed ask, its requested event carrying the
    whole interaction, `turn_waiting`), and nothing else holds it: the store's copy."""
    from midturn import parse_ask
    from midturn.runtime._events import requested_event, turn_event

    count = 10_000
    payload = len(json.dumps(_TOOL_INPUT, separators=(",", ":")))
    gc.collect()
    tracemalloc.start()
    try:
        async with open_store("memory://") as store:
            before = tracemalloc.get_traced_memory()[0]
            for n in range(count):
                item = Interaction(
                    id=f"ia_{n:022d}",
                    kind="ask",
                    session_id=f"s{n % 100}",
                    turn_id=f"t{n}",
                    tool_call_id=f"c{n}",
                    ask=parse_ask(_TOOL_INPUT),
                )
                events = [
                    requested_event(item, n // 100),
                    turn_event("turn_waiting", item.session_id, item.turn_id),
                ]
                await store.create_interaction(item, events)
            del item, events
            gc.collect()
            per_ask = (tracemalloc.get_traced_memory()[0] - before) / count
            assert await store.count_pending() == count
    finally:
        tracemalloc.stop()
    assert per_ask - payload < 2048, f"{per_ask:.0f} bytes per parked ask"


async def test_what_is_kept_as_json_reads_back_as_it_was_given() -> None:
    """More interactions than the store keeps as models, settled and not, with events
    of every shape: each reads back equal to what was stored (secret values aside)."""
    from midturn.runtime._events import requested_event, settled_event, turn_event
    from midturn.store._memory import MODELS_KEPT

    count = MODELS_KEPT + 50
    async with open_store("memory://") as store:
        made, sent = [], []
        for n in range(count):
            item = Interaction(
                id=f"ia_{n:06d}", kind="ask", session_id=f"s{n % 3}", turn_id=f"t{n}", ask=ASK
            )
            events = [requested_event(item, n // 3), turn_event("turn_waiting", "s", f"t{n}")]
            if n % 7 == 0:  # data that names an interaction, but not as stored
                events.append(
                    NewEvent(
                        type="turn_waiting",
                        session_id="s",
                        turn_id=f"t{n}",
                        interaction_id=item.id,
                        data={"interaction": {"id": item.id}, "position": 1, "x": [1.5, None]},
                    )
                )
            stored, _, appended = await store.create_interaction(item, events)
            made.append(stored)
            sent.extend(appended)
        for item in made[::5]:
            settled = item.model_copy(
                update={"status": "cancelled", "settled_at": item.created_at, "settled_by": "x"}
            )
            announced = settled_event(settled)
            assert announced is not None
            outcome = await store.settle(
                item.id,
                status="cancelled",
                settled_by="x",
                settled_at=item.created_at,
                events=[announced],
            )
            assert outcome.won
            sent.extend(outcome.events)
            made[made.index(item)] = outcome.interaction
        for item in made:
            assert await store.get_interaction(item.id) == item
        listed = await store.list_interactions()
        assert listed == sorted(made, key=lambda item: item.created_at)
        read = await store.read_events(0, limit=10_000)
        assert [event.model_dump(mode="json") for event in read] == [
            event.model_dump(mode="json") for event in sent
        ]


def test_an_interactions_json_is_made_once_only_for_the_very_same_values() -> None:
    """The JSON of an interaction is reused for a copy holding the very same field
    values (the runtime's settled copy and the store's), never for one merely equal:
    the same moment in another time zone dumps differently."""
    from datetime import timedelta, timezone

    from midturn.store._codec import copy_interaction, interaction_data, interaction_json

    item = Interaction(id="ia_once", kind="ask", session_id="s", turn_id="t", ask=ASK)
    body = interaction_json(item)
    assert body == item.model_dump_json().encode()
    assert interaction_json(copy_interaction(item, {})) is body
    elsewhere = item.created_at.astimezone(timezone(timedelta(hours=2)))
    moved = copy_interaction(item, {"created_at": elsewhere})
    assert moved == item.model_copy(update={"created_at": elsewhere})
    assert interaction_json(moved) == moved.model_dump_json().encode() != body
    assert interaction_data(item) == item.model_dump(mode="json")
    assert interaction_data(item) is not interaction_data(item)  # each event its own dict


async def test_a_parked_and_settled_ask_leaves_one_object_for_the_collector() -> None:
    """What the store keeps of an interaction and its events, once settled, is one
    object the garbage collector tracks (the interaction's row): the events are kept
    in columns of plain values, so a long run of parks and settles does not bring young
    collections for what it keeps."""

    async def cycles(store: Store, first: int, count: int) -> None:
        for n in range(first, first + count):
            item = Interaction(
                id=f"ask-{n:06d}", kind="ask", session_id="s", turn_id=f"t{n}", ask=ASK
            )
            events = [
                NewEvent(type="turn_waiting", session_id="s", turn_id=f"t{n}"),
                NewEvent(
                    type="user_question_requested",
                    session_id="s",
                    turn_id=f"t{n}",
                    interaction_id=item.id,
                    data={"position": 0},
                ),
            ]
            await store.create_interaction(item, events)
            resumed = NewEvent(type="turn_resumed", session_id="s", turn_id=f"t{n}")
            await store.settle(item.id, status="cancelled", events=[resumed])

    async with open_store("memory://") as store:
        await cycles(store, 0, 300)  # the store's caches of recent models fill up
        gc.collect()
        before = len(gc.get_objects())
        await cycles(store, 300, 500)
        gc.collect()
        kept = len(gc.get_objects()) - before
        assert len(await store.read_events(limit=10_000)) == 800 * 3
    assert kept <= 500 * 1.1  # was 500 * 4: a row object per event too


async def test_a_settle_comes_back_as_the_model_a_validated_one_equals() -> None:
    """The store builds its `Settle` without validating its own values again: the winner's
    and the loser's are still the frozen models, equal to ones validated field by field."""
    item = Interaction(id="ask-settle", kind="ask", session_id="s", turn_id="t", ask=ASK)
    async with open_store("memory://") as store:
        await store.create_interaction(item)
        resumed = NewEvent(type="turn_resumed", session_id="s", turn_id="t")
        won = await store.settle(item.id, status="cancelled", events=[resumed])
        lost = await store.settle(item.id, status="skipped")
    assert won == Settle(interaction=won.interaction, won=True, events=won.events)
    assert won.won and len(won.events) == 1 and won.interaction.status == "cancelled"
    assert lost == Settle(interaction=won.interaction, won=False)
    assert lost.events == () and lost.model_fields_set == {"interaction", "won", "events"}
    with pytest.raises(ValidationError):
        won.won = False  # type: ignore[misc]
