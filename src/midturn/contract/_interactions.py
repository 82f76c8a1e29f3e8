"""A paused turn as a value: interactions (asks and permissions), their decisions and
the events about them (docs/runtime.md, docs/protocol.md#events-server-sent). The same objects live
in the store, travel on the wire and feed the user interfaces.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, get_args

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


# -- an event's data, made when first read -------------------------------------------------
#
# The runtime's requested and settle events carry a whole interaction, which it holds as
# JSON: their `data` dict is made from that JSON only if something reads it (in process,
# with no watcher, nothing does: the stores keep the JSON). Such an event keeps, in the
# place of `data` in its fields, `(make, *args)` under `DATA_LATER`; the first read of
# `data` calls `make(*args)` and puts the dict in its place. Every read goes through the
# model's `__dict__` (the attribute, `model_dump`, `model_dump_json`, an event inside
# another model, equality, `repr`, copies, pickling), so each sees the event as made.

DATA_LATER = "\x00data"
"""The key of an event's fields holding how to make its `data` (never a field name)."""
_fields_of = BaseModel.__dict__["__dict__"].__get__
_set_fields = BaseModel.__dict__["__dict__"].__set__


def _made_fields(event: BaseModel) -> dict[str, Any]:
    """`event`'s fields, its `data` made first if it was not yet."""
    fields: dict[str, Any] = _fields_of(event)
    later = fields.get(DATA_LATER)
    if later is None:
        return fields
    data = later[0](*later[1:])
    # the same order of fields (a dump follows it), `data` where its maker stood
    made = {("data" if key == DATA_LATER else key): value for key, value in fields.items()}
    made["data"] = data
    _set_fields(event, made)
    return made


class NewEvent(_Model):
    """An event before the store gives it an id."""

    type: EventType
    session_id: str
    turn_id: str
    interaction_id: str | None = None
    at: datetime = Field(default_factory=utcnow)
    data: dict[str, Any] = Field(default_factory=dict)

    if not TYPE_CHECKING:
        # An event whose data is made when first read (above): its fields, made, are
        # what every reader of `__dict__` sees, pydantic's serializer among them.
        __dict__ = property(_made_fields, _set_fields)

        def __getattr__(self, name: str) -> Any:
            if name == "data" and DATA_LATER in _fields_of(self):
                return _made_fields(self)["data"]
            return super().__getattr__(name)


class Event(NewEvent):
    """An event in the append-only log; `id` increases monotonically per store."""

    id: int
