"""What the routes return: the wire shapes of docs/protocol.md as pydantic models, so the
OpenAPI document describes them exactly."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from midturn.contract._interactions import Decision, Interaction, Risk
from midturn.contract._models import AskResult, ToolOutput
from midturn.contract._ports import Settled

__all__ = [
    "AnswerOut",
    "AskIn",
    "DecisionIn",
    "InteractionList",
    "InteractionOut",
    "ModelResponse",
    "PermissionIn",
    "SessionIn",
    "SessionOut",
    "SettledOut",
    "StopOut",
    "WhoAmI",
    "interaction_out",
]


class ModelResponse(Response):
    """A model as a JSON response, serialized once by pydantic. Routes return it directly
    (their `response_model` still documents the shape), which skips FastAPI's second
    validation of what the runtime already validated."""

    media_type = "application/json"

    def __init__(self, model: BaseModel, status_code: int = 200) -> None:
        super().__init__(model.model_dump_json().encode(), status_code=status_code)


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SessionIn(_In):
    meta: dict[str, Any] = Field(default_factory=dict, description="free-form, kept as is")


class SessionOut(BaseModel):
    session_id: str
    agent_token: str
    answer_token: str
    answer_url: str


class WhoAmI(BaseModel):
    role: Literal["admin", "agent", "answer"]
    session_id: str | None


_ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,200}$"


class AskIn(_In):
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


class PermissionIn(_In):
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


class DecisionIn(_In):
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


class StopOut(BaseModel):
    cancelled: list[Interaction]


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
