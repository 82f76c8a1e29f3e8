"""The bytes a client receives stay what the protocol specifies: an SSE frame is the
event's `model_dump_json()` and a stored event body is the `NewEvent`'s, however either
is assembled (`event_json` splices in the interaction JSON the store already made)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from midturn import Event, InvalidAsk, Runtime, open_store
from midturn.gateway._hub import format_event
from midturn.runtime._events import interaction_from, requested_event, settled_event
from midturn.store._codec import dump_event

_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=40,
).filter(str.strip)


def _reference(event: Event) -> bytes:
    """The frame as the hub wrote it before: the whole event dumped by pydantic."""
    return f"id: {event.id}\nevent: {event.type}\ndata: {event.model_dump_json()}\n\n".encode()


async def _events(url: str, ask: dict[str, Any], answer: dict[str, Any]) -> list[Event]:
    """The events one ask and its answer publish, in a fresh store at `url`."""
    heard: list[Event] = []
    async with open_store(url) as store, Runtime(store) as runtime:
        subscription = runtime.subscribe(heard.append)
        try:
            asked, _ = await runtime.ask(
                "s", ask, turn_id="t", tool_call_id="c", context={"agent": "agent ✓", "doing": "x"}
            )
        except InvalidAsk:
            return []  # text the contract refuses: nothing to compare
        await runtime.answer(asked.id, answer)
        await runtime.wait(asked.id, timeout=5)
        for _ in range(100):
            if len(heard) >= 4:
                break
            await asyncio.sleep(0.01)
        subscription.close()
    return heard


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    header=_TEXT,
    question=_TEXT,
    label=_TEXT,
    typed=_TEXT,
    timeout=st.none() | st.floats(min_value=1e-3, max_value=1e7, allow_nan=False),
)
def test_frames_and_stored_bodies_are_the_events_own_json(
    tmp_path: Path, header: str, question: str, label: str, typed: str, timeout: float | None
) -> None:
    ask: dict[str, Any] = {
        "questions": [
            {
                "id": "db",
                "header": header[:12],
                "question": question,
                "options": [{"label": f"A {label[:60]}"}, {"label": "Second choice"}],
            },
            {"id": "name", "question": f'{question} \U0001f600 "quoted"', "kind": "text"},
        ]
    }
    if timeout is not None:
        ask["timeout_s"] = timeout
    answer = {"answers": {"db": "Second choice", "name": typed}}
    for url in ("memory://", f"sqlite:///{tmp_path / 'frames.db'}"):
        events = asyncio.run(_events(url, ask, answer))
        assume(events)
        kinds = [event.type for event in events]
        assert "user_question_requested" in kinds and "user_question_answered" in kinds
        for event in events:
            assert format_event(event) == _reference(event)
            interaction = interaction_from(event)
            if interaction is not None:  # the body a SQL store writes for it
                made = requested_event(interaction, 3) if interaction.pending else None
                for new in (made, settled_event(interaction)):
                    if new is not None:
                        assert dump_event(new) == new.model_dump_json()
        (tmp_path / "frames.db").unlink(missing_ok=True)
