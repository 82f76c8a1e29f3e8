"""The names to annotate with: every closed set of strings midturn's values carry.

    from midturn.types import Decision, Outcome

    def on_decided(decision: Decision) -> None: ...

Each is a `typing.Literal`, the same one the models use, so a type checker catches a
misspelt value (`"allow_turn"`) where a plain `str` would not.
"""

from __future__ import annotations

from midturn.contract._interactions import (
    Decision,
    EventType,
    InteractionKind,
    InteractionStatus,
    PermissionOutcome,
    Risk,
)
from midturn.contract._models import AnswerStatus, OnTimeout, Outcome, QuestionKind
from midturn.contract._tool_spec import Format as ToolSpecFormat

__all__ = [
    "AnswerStatus",
    "Decision",
    "EventType",
    "InteractionKind",
    "InteractionStatus",
    "OnTimeout",
    "Outcome",
    "PermissionOutcome",
    "QuestionKind",
    "Risk",
    "ToolSpecFormat",
]

# What each alias holds, for the reader (the Literal is the definition):
#   AnswerStatus       one question's status in a result: answered, skipped, timed_out, ...
#   Decision           a person's permission decision: allow, deny, allow_for_turn
#   EventType          an event's type: user_question_requested, permission_decided, ...
#   InteractionKind    ask or permission
#   InteractionStatus  an interaction's status: pending, then one terminal status
#   OnTimeout          what an ask becomes when it times out: skip or recommended
#   Outcome            an ask result's outcome: answered, skipped, timed_out, ...
#   PermissionOutcome  how a permission settled: allowed, denied, timed_out, ...
#   QuestionKind       choice or text
#   Risk               a permission request's risk: low, medium, high
#   ToolSpecFormat     a tool_spec() format: openai, anthropic, gemini, mcp
