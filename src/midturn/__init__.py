"""midturn: let an AI agent stop mid-turn, ask its user a few bounded, structured
questions, and continue the same turn with the answers."""

from midturn.contract import (
    HARD_LIMITS,
    SECRET_MARK,
    Ask,
    AskResult,
    Event,
    Interaction,
    Limits,
    Option,
    PermissionDecision,
    PermissionRequest,
    Question,
    QuestionAnswer,
    ToolOutput,
    parse_answer,
    parse_ask,
    render,
)
from midturn.errors import (
    AlreadySettled,
    Forbidden,
    GatewayError,
    InvalidAnswer,
    InvalidAsk,
    MidturnError,
    NotFound,
    Problem,
    Unauthorized,
    UsageError,
)
from midturn.runtime import Runtime, Settled
from midturn.store import Store, open_store

__version__ = "0.1.0"

__all__ = [
    "HARD_LIMITS",
    "SECRET_MARK",
    "AlreadySettled",
    "Ask",
    "AskResult",
    "Event",
    "Forbidden",
    "GatewayError",
    "Interaction",
    "InvalidAnswer",
    "InvalidAsk",
    "Limits",
    "MidturnError",
    "NotFound",
    "Option",
    "PermissionDecision",
    "PermissionRequest",
    "Problem",
    "Question",
    "QuestionAnswer",
    "Runtime",
    "Settled",
    "Store",
    "ToolOutput",
    "Unauthorized",
    "UsageError",
    "open_store",
    "parse_answer",
    "parse_ask",
    "render",
]
