"""A paused turn as a value: interactions (asks and permissions), their decisions and
the events about them (docs/runtime.md, docs/protocol.md#events-server-sent). The same objects live
in the store, travel on the wire and feed the user interfaces.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from midturn.contract._context import InteractionContext
from midturn.contract._models import Ask, AskResult

__all__ = [
    "PERMISSION_STATUSES",
    "TERMINAL_STATUSES",
    "Decision",
    "Event",
    "EventType",
    "Interaction",
    "InteractionKind",
    "InteractionStatus",
    "NewEvent",
    "PermissionDecision",
    "PermissionOutcome",
    "PermissionRequest",
    "Risk",
    "utcnow",
]

InteractionKind = Literal["ask", "permission"]
InteractionStatus = Literal[
    "pending",
    "answered",
    "skipped",
    "redirected",
    "timed_out",
    "cancelled",
    "unavailable",
    "allowed",
    "denied",
]
TERMINAL_STATUSES: frozenset[str] = frozenset(get_args(InteractionStatus)) - {"pending"}
PERMISSION_STATUSES: frozenset[str] = frozenset(
    {"allowed", "denied", "timed_out", "cancelled", "unavailable"}
)
Risk = Literal["low", "medium", "high"]
Decision = Literal["allow", "deny", "allow_for_turn"]
PermissionOutcome = Literal["allowed", "denied", "timed_out", "cancelled", "unavailable"]
EventType = Literal[
    "user_question_requested",
    "user_question_answered",
    "user_question_skipped",
    "user_question_timeout",
    "user_question_cancelled",
    "user_question_redirected",
    "permission_requested",
    "permission_decided",
    "turn_waiting",
    "turn_resumed",
]


def utcnow() -> datetime:
    return datetime.now(UTC)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PermissionRequest(_Model):
    """An approval request for one tool call (docs/runtime.md#permissions)."""

    tool: str = Field(min_length=1, max_length=200)
    summary: str = Field(min_length=1, max_length=500)
    risk: Risk = "medium"
    details: str | None = Field(default=None, max_length=200_000)


class PermissionDecision(_Model):
    """How a permission settled. `decision` is what a person chose (None when it timed
    out, was cancelled or nobody could answer); `message` is passed to the model on a
    deny; `auto` marks an allow granted by an earlier `allow_for_turn`."""

    outcome: PermissionOutcome
    decision: Decision | None = None
    message: str | None = None
    auto: bool = False


class Interaction(_Model):
    """An ask or a permission, pending or settled.

    `status` is `pending` until it settles, exactly once, into one terminal status. An ask
    carries `ask` and, once settled, `result`; a permission carries `permission` and, once
    settled, `decision`. `context` is what the host said about who is asking (the agent,
    what it was doing, the tool call), or None. Nothing here ever holds a secret value.
    """

    id: str
    kind: InteractionKind
    session_id: str
    turn_id: str
    tool_call_id: str | None = None
    status: InteractionStatus = "pending"
    created_at: datetime = Field(default_factory=utcnow)
    settled_at: datetime | None = None
    deadline: datetime | None = None
    settled_by: str | None = None
    context: InteractionContext | None = None
    dialect: str = "midturn"
    ask: Ask | None = None
    result: AskResult | None = None
    permission: PermissionRequest | None = None
    decision: PermissionDecision | None = None

    @property
    def pending(self) -> bool:
        return self.status == "pending"


class NewEvent(_Model):
    """An event before the store gives it an id."""

    type: EventType
    session_id: str
    turn_id: str
    interaction_id: str | None = None
    at: datetime = Field(default_factory=utcnow)
    data: dict[str, Any] = Field(default_factory=dict)


class Event(NewEvent):
    """An event in the append-only log; `id` increases monotonically per store."""

    id: int
