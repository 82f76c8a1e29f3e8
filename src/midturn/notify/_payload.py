"""The one notification payload every destination gets, built in one place.

`build_payload(...)` turns a runtime event (or a reminder or an escalation about a
pending interaction) into a `Notification`: what happened, when, the interaction's
question(s) or permission request, the session's id and title, the queue position and
`answer_url`, a link into the web inbox for that one interaction. The link carries no
credential: the inbox asks the person to sign in (docs/notifications.md).

What a payload never holds: a secret's value or anything a secret answer contained. It is
built from the stored `Interaction`, which holds none (docs/runtime.md), and it carries no
answers at all: a settled event says only how the interaction settled.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal, get_args
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict

from midturn.contract._interactions import (
    EventType,
    Interaction,
    InteractionKind,
    InteractionStatus,
)

__all__ = [
    "NOTIFY_EVENT_TYPES",
    "Notification",
    "NotificationData",
    "NotifiedInteraction",
    "NotifiedOption",
    "NotifiedPermission",
    "NotifiedQuestion",
    "NotifiedSession",
    "answer_url_for",
    "build_payload",
    "notification_from_json",
    "payload_bytes",
]

NOTIFY_EVENT_TYPES: tuple[str, ...] = (
    *get_args(EventType),
    "interaction.reminder",
    "interaction.escalation",
)
"""What a destination's `events` may name: the SSE event names
(docs/protocol.md#events-server-sent), plus the two that come from the notifier itself
(a reminder while an interaction is still pending, and its escalation)."""

_DETAILS_SHOWN = 2000
"""How much of a permission's `details` a payload carries (they may be 200,000 chars)."""


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class NotifiedOption(_Value):
    label: str
    description: str | None = None


class NotifiedQuestion(_Value):
    """One question as the person will see it. For a `secret` question this is the
    question only: its answer is never in a payload."""

    id: str
    header: str
    question: str
    kind: str
    options: tuple[NotifiedOption, ...] = ()
    multi: bool = False
    allow_other: bool = True
    recommended: int | None = None
    secret: bool = False


class NotifiedPermission(_Value):
    tool: str
    summary: str
    risk: Literal["low", "medium", "high"]
    details: str | None = None
    """The first 2,000 characters of the request's details, if any."""


class NotifiedInteraction(_Value):
    id: str
    kind: InteractionKind
    status: InteractionStatus
    turn_id: str
    created_at: datetime
    deadline: datetime | None = None
    settled_at: datetime | None = None
    questions: tuple[NotifiedQuestion, ...] = ()
    permission: NotifiedPermission | None = None


class NotifiedSession(_Value):
    id: str
    title: str | None = None


class NotificationData(_Value):
    event_id: int | None
    """The id of the runtime event in the store's log (None for a reminder or an
    escalation, which the notifier makes itself)."""
    session: NotifiedSession
    interaction: NotifiedInteraction | None
    position: int | None
    """How many interactions of the session are pending before this one (0: it is the
    one shown), as the requested event said; None when not known."""
    answer_url: str | None
    """The web inbox on this interaction (`<public_url>/#interaction=<id>`), no token in it."""
    reminder: int | None = None
    """1 for the first reminder, 2 for the second…; None otherwise."""


class Notification(_Value):
    """The payload, in the Standard Webhooks shape `{type, timestamp, data}`."""

    type: str
    timestamp: datetime
    data: NotificationData


def answer_url_for(public_url: str, interaction_id: str) -> str:
    """The inbox link for one interaction. It names the interaction and nothing else: no
    token, no session credential (the inbox signs the person in)."""
    return f"{public_url.rstrip('/')}/#interaction={quote(interaction_id, safe='')}"


def _question_view(interaction: Interaction) -> tuple[NotifiedQuestion, ...]:
    if interaction.ask is None:
        return ()
    return tuple(
        NotifiedQuestion(
            id=question.id,
            header=question.header,
            question=question.question,
            kind=question.kind,
            options=tuple(
                NotifiedOption(label=option.label, description=option.description)
                for option in question.options
            ),
            multi=question.multi,
            allow_other=question.allow_other,
            recommended=question.recommended,
            secret=question.secret,
        )
        for question in interaction.ask.questions
    )


def _permission_view(interaction: Interaction) -> NotifiedPermission | None:
    request = interaction.permission
    if request is None:
        return None
    details = request.details
    if details is not None and len(details) > _DETAILS_SHOWN:
        details = details[:_DETAILS_SHOWN] + "…"
    return NotifiedPermission(
        tool=request.tool, summary=request.summary, risk=request.risk, details=details
    )


def build_payload(
    event_type: str,
    *,
    at: datetime,
    session_id: str,
    session_title: str | None,
    interaction: Interaction | None,
    public_url: str,
    event_id: int | None = None,
    position: int | None = None,
    reminder: int | None = None,
) -> Notification:
    """The notification for one event (`event_type`, one of `NOTIFY_EVENT_TYPES`) at
    `at`. `interaction` is the interaction the event is about, as stored (None for a
    turn event without one); its answers are left out whatever its status."""
    shown = None
    if interaction is not None:
        shown = NotifiedInteraction(
            id=interaction.id,
            kind=interaction.kind,
            status=interaction.status,
            turn_id=interaction.turn_id,
            created_at=interaction.created_at,
            deadline=interaction.deadline,
            settled_at=interaction.settled_at,
            questions=_question_view(interaction),
            permission=_permission_view(interaction),
        )
    return Notification(
        type=event_type,
        timestamp=at,
        data=NotificationData(
            event_id=event_id,
            session=NotifiedSession(id=session_id, title=session_title),
            interaction=shown,
            position=position,
            answer_url=answer_url_for(public_url, interaction.id) if interaction else None,
            reminder=reminder,
        ),
    )


def payload_bytes(notification: Notification) -> bytes:
    """The exact bytes sent (and signed) for a notification: compact JSON, UTF-8."""
    return notification.model_dump_json().encode("utf-8")


def notification_from_json(raw: str | bytes) -> Notification:
    """A stored payload back as a `Notification`."""
    return Notification.model_validate_json(raw)
