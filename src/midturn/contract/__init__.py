"""The question contract: pure values and functions, no I/O (SPEC §2)."""

from midturn.contract._api import parse_answer, parse_ask, render
from midturn.contract._interactions import (
    Event,
    Interaction,
    NewEvent,
    PermissionDecision,
    PermissionRequest,
)
from midturn.contract._models import (
    HARD_LIMITS,
    SECRET_MARK,
    Ask,
    AskResult,
    Limits,
    Option,
    Question,
    QuestionAnswer,
    ToolOutput,
)

__all__ = [
    "HARD_LIMITS",
    "SECRET_MARK",
    "Ask",
    "AskResult",
    "Event",
    "Interaction",
    "Limits",
    "NewEvent",
    "Option",
    "PermissionDecision",
    "PermissionRequest",
    "Question",
    "QuestionAnswer",
    "ToolOutput",
    "parse_answer",
    "parse_ask",
    "render",
]
