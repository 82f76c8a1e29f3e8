"""What the routes return: the wire shapes of docs/protocol.md as pydantic models, so the
OpenAPI document describes them exactly."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from starlette.responses import Response

from midturn.contract._context import InteractionContext
from midturn.contract._history import HistoryEntry
from midturn.contract._interactions import Decision, Interaction, Risk
from midturn.contract._models import AskResult, ToolOutput
from midturn.contract._ports import Settled
from midturn.store._codec import interaction_json

__all__ = [
    "AnswerOut",
    "AskIn",
    "DecisionIn",
    "HistoryOut",
    "InteractionList",
    "InteractionOut",
    "ModelResponse",
    "PermissionIn",
    "SessionIn",
    "SessionInfo",
    "SessionOut",
    "SettledOut",
    "StopOut",
    "WhoAmI",
    "interaction_out",
]


class ModelResponse(Response):
    """A model as a JSON response, serialized once by pydantic. Routes return it directly
    (their `response_model` still documents the shape), which skips FastAPI's second
    validation of what the runtime already validated.

    Its body is pydantic's JSON bytes as they come (what `model_dump_json()` decodes),
    and its headers are the two Starlette's `Response` would build for them, in its
    order (`tests/gateway/test_views.py`)."""

    media_type = "application/json"

    def __init__(self, model: BaseModel, status_code: int = 200) -> None:
        self.status_code = status_code
        self.background = None
        self.body = body = _json(model)
        self.raw_headers = [
            (b"content-length", str(len(body)).encode()),
            (b"content-type", b"application/json"),
        ]


_ONE_INTERACTION: frozenset[type[BaseModel]] = frozenset()  # set below, once declared
_INTERACTION = {"interaction"}


def _json(model: BaseModel) -> bytes:
    """The model's JSON. For an envelope of one interaction (declared first), the
    interaction's part is the JSON its store made of the same values, when it is one of
    the last few dumped (`interaction_json`): the same bytes, not dumped again."""
    serializer = model.__pydantic_serializer__
    if type(model) not in _ONE_INTERACTION:
        whole: bytes = serializer.to_json(model)
        return whole
    rest: bytes = serializer.to_json(model, exclude=_INTERACTION)
    interaction = interaction_json(model.interaction)  # type: ignore[attr-defined]
    return b'{"interaction":' + interaction + (b"," + rest[1:] if len(rest) > 2 else b"}")


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")

    _UNSET_WHEN_ZERO: ClassVar[frozenset[str]] = frozenset()
    """Fields whose zero value (`""`, `0`, `null`: what a Go struct marshals for a field
    it never set) reads as the field not given, so its default applies. Only fields with
    no sound zero of their own: an empty id, dialect or risk, a timeout of no time."""

    @model_validator(mode="before")
    @classmethod
    def _zero_is_unset(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not cls._UNSET_WHEN_ZERO:
            return data
        return {
            key: value
            for key, value in data.items()
            if key not in cls._UNSET_WHEN_ZERO or not _is_zero(value)
        }


def _is_zero(value: Any) -> bool:
    if isinstance(value, bool):
        return False  # no field read through here is a flag
    return value is None or value == "" or (isinstance(value, int | float) and value == 0)


class SessionIn(_In):
    _UNSET_WHEN_ZERO = frozenset({"meta"})  # a nil Go map marshals as null

    meta: dict[str, Any] = Field(default_factory=dict, description="free-form, kept as is")


class SessionOut(BaseModel):
    session_id: str
    agent_token: str
    answer_token: str
    answer_url: str


class SessionInfo(BaseModel):
    session_id: str
    created_at: datetime
    title: str | None = Field(
        description="`meta.title` when it is text (cut to 200 characters), else null"
    )
    meta: dict[str, Any] = Field(description="the meta given at creation, as it was given")


class HistoryOut(BaseModel):
    entries: list[HistoryEntry]
    next_cursor: str | None = Field(
        default=None,
        description="pass as `cursor` for the next page; null at the end (a page may "
        "hold fewer entries than `limit` while it is set)",
    )


class WhoAmI(BaseModel):
    role: Literal["admin", "agent", "answer"]
    session_id: str | None


_ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,200}$"


_CONTEXT = (
    "who is asking, as the host tells it: {agent, doing, tool: {name, input}}, each "
    "optional, text bounded (docs/contract.md#who-is-asking)"
)


class AskIn(_In):
    _UNSET_WHEN_ZERO = frozenset({"dialect", "tool_call_id", "turn_id", "context"})

    tool_input: Any = Field(description="the model's tool input, in the dialect's shape")
    dialect: str = Field(
        default="midturn",
        max_length=40,
        description=(
            "a registered dialect (midturn, claude, maka, omp, neo, agentcore, pi-legacy, or "
            "one a package added, docs/dialects.md#adding-a-dialect), or auto"
        ),
    )
    tool_call_id: str | None = Field(default=None, pattern=_ID_PATTERN)
    turn_id: str | None = Field(
        default=None,
        pattern=_ID_PATTERN,
        description="the agent's turn; without one the interaction belongs to no turn",
    )
    context: InteractionContext | None = Field(default=None, description=_CONTEXT)


class PermissionIn(_In):
    _UNSET_WHEN_ZERO = frozenset(
        {"risk", "details", "tool_call_id", "turn_id", "timeout_s", "context"}
    )

    tool: str = Field(min_length=1, max_length=200)
    summary: str = Field(min_length=1, max_length=500)
    risk: Risk = "medium"
    details: str | None = Field(default=None, max_length=60_000)
    tool_call_id: str | None = Field(default=None, pattern=_ID_PATTERN)
    turn_id: str | None = Field(
        default=None,
        pattern=_ID_PATTERN,
        description="the agent's turn; without one the interaction belongs to no turn",
    )
    timeout_s: float | None = Field(default=None, gt=0, le=86_400)
    context: InteractionContext | None = Field(default=None, description=_CONTEXT)


class DecisionIn(_In):
    _UNSET_WHEN_ZERO = frozenset({"message"})

    decision: Decision
    message: str | None = Field(default=None, max_length=2000)


class InteractionOut(BaseModel):
    interaction: Interaction
    output: ToolOutput | None = Field(
        default=None, description="the tool output for the model, once an ask settled"
    )
    secrets: dict[str, str] = Field(
        default_factory=dict,
        description="secret answers by question id; only for the agent, only from memory",
    )


_OUTPUT = "the tool output for the model, rendered in the ask's dialect (null for a permission)"


class AnswerOut(BaseModel):
    interaction: Interaction
    result: AskResult | None
    output: ToolOutput | None = Field(default=None, description=_OUTPUT)
    duplicate: bool


class SettledOut(BaseModel):
    interaction: Interaction
    output: ToolOutput | None = Field(default=None, description=_OUTPUT)
    duplicate: bool


class InteractionList(BaseModel):
    interactions: list[Interaction]
    next_cursor: str | None = Field(
        default=None,
        description="pass as `cursor` for the next page; null on the last page",
    )


class StopOut(BaseModel):
    cancelled: list[Interaction]


_ONE_INTERACTION = frozenset({InteractionOut, AnswerOut, SettledOut})


def interaction_out(settled: Settled, *, with_secrets: bool) -> InteractionOut:
    """The envelope for one interaction: the tool output once an ask settled, and (for the
    asking agent only) the secret values this process holds in memory."""
    interaction, output = settled.interaction, settled.output
    secrets: dict[str, str] = {}
    result = interaction.result
    if with_secrets and interaction.kind == "ask" and result is not None:
        secrets = {
            answer.id: answer.secret_value.get_secret_value()
            for answer in result.answers
            if answer.secret_value is not None
        }
    return InteractionOut(interaction=interaction, output=output, secrets=secrets)
