"""The events the runtime publishes (docs/protocol.md#events-server-sent), and reading the log:
replay, then follow.

A requested event carries `{"interaction": <the full interaction>, "position": <0-based
index in the session's queue>}`; a settle event carries `{"interaction": <the settled
interaction>}`; `turn_waiting` and `turn_resumed` carry `{}`. No event ever holds a
secret value: interactions in the runtime never carry one (secrets live on the side, in
memory, see `_parking.py`).

The interaction is carried as its JSON, the same bytes its store row holds, and its dict
is parsed only when the event's `data` is first read (`interaction_event`): a store keeps
that JSON, and a frame is written around it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime

from midturn.contract._interactions import (
    Event,
    EventType,
    Interaction,
    InteractionStatus,
    NewEvent,
    utcnow,
)
from midturn.store._base import Store
from midturn.store._codec import (
    carried_json,
    interaction_event,
    interaction_json,
    load_interaction,
    new_event,
)

__all__ = [
    "REQUESTED_EVENT_TYPES",
    "SETTLE_EVENT_TYPES",
    "follow_events",
    "interaction_from",
    "requested_data",
    "requested_event",
    "settled_event",
    "turn_event",
]

_ASK_SETTLED: dict[str, EventType] = {
    "answered": "user_question_answered",
    "skipped": "user_question_skipped",
    "timed_out": "user_question_timeout",
    "cancelled": "user_question_cancelled",
    "redirected": "user_question_redirected",
}
SETTLE_EVENT_TYPES: frozenset[str] = frozenset({*_ASK_SETTLED.values(), "permission_decided"})
REQUESTED_EVENT_TYPES: frozenset[str] = frozenset(
    {"user_question_requested", "permission_requested"}
)
_PAGE = 1000


def requested_data(interaction: Interaction) -> bytes:
    """The JSON of `interaction`, for its requested event (made before the store's
    transaction, not inside it)."""
    return interaction_json(interaction)


def requested_event(
    interaction: Interaction, position: int, *, data: bytes | None = None
) -> NewEvent:
    """`data`, when given, is `requested_data(interaction)` made earlier."""
    kind: EventType = (
        "user_question_requested" if interaction.kind == "ask" else "permission_requested"
    )
    return interaction_event(
        type=kind,
        session_id=interaction.session_id,
        turn_id=interaction.turn_id,
        interaction_id=interaction.id,
        at=interaction.created_at,
        body=interaction_json(interaction) if data is None else data,
        position=position,
    )


def settled_event(interaction: Interaction) -> NewEvent | None:
    """The event announcing a settled interaction; None for an ask settled `unavailable`
    (nobody could have seen it, so nothing is announced)."""
    status: InteractionStatus = interaction.status
    if interaction.kind == "permission":
        kind: EventType = "permission_decided"
    elif status in _ASK_SETTLED:
        kind = _ASK_SETTLED[status]
    else:
        return None
    return interaction_event(
        type=kind,
        session_id=interaction.session_id,
        turn_id=interaction.turn_id,
        interaction_id=interaction.id,
        at=interaction.settled_at or interaction.created_at,
        body=interaction_json(interaction),
        position=None,
    )


def turn_event(
    kind: EventType, session_id: str, turn_id: str, at: datetime | None = None
) -> NewEvent:
    """`at` defaults to now; the runtime gives the moment of the park or the settle that
    made the turn wait or resume."""
    return new_event(  # fields the runtime built itself: valid by construction
        type=kind,
        session_id=session_id,
        turn_id=turn_id,
        interaction_id=None,
        at=utcnow() if at is None else at,
        data={},
    )


def interaction_from(event: Event) -> Interaction | None:
    """The interaction an event carries, if any."""
    carried = carried_json(event)
    if carried is not None:  # its JSON at hand: no dict made for it
        return load_interaction(carried[0])
    raw = event.data.get("interaction")
    return Interaction.model_validate(raw) if isinstance(raw, dict) else None


async def follow_events(
    store: Store, *, after: int = 0, session_id: str | None = None, follow: bool = True
) -> AsyncIterator[Event]:
    """Events with id > `after`, oldest first; with `follow`, then every new one as the
    store appends it. Woken by the store's listener: no polling loop here."""
    wake = asyncio.Event()

    def heard(_newest: int) -> None:
        wake.set()

    cursor = after
    if follow:
        store.add_listener(heard)  # before the first read, so no append falls between
    try:
        while True:
            wake.clear()
            page = await store.read_events(cursor, session_id=session_id, limit=_PAGE)
            for event in page:
                cursor = event.id
                yield event
            if len(page) == _PAGE:
                continue
            if not follow:
                return
            await wake.wait()
    finally:
        if follow:
            store.remove_listener(heard)
