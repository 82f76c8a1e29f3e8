"""The question contract: pure values and functions, no I/O (docs/contract.md), and the
ports every surface codes against (`Asker`, `Answerer`; docs/ports.md)."""

from midturn._public import publish as _publish
from midturn.contract._api import parse_answer, parse_ask, render
from midturn.contract._context import InteractionContext, ToolCallContext
from midturn.contract._history import HistoryEntry, HistoryPage
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
from midturn.contract._ports import (
    Answerer,
    Asker,
    Parked,
    Settled,
    SyncAnswerer,
    SyncAsker,
)
from midturn.contract._prompt import SYSTEM_PROMPT
from midturn.contract._tool_spec import tool_spec
from midturn.contract.dialects import (
    DIALECTS,
    Dialect,
    get_dialect,
    load_dialect_entry_points,
    register_dialect,
    unregister_dialect,
)

__all__ = [
    "DIALECTS",
    "HARD_LIMITS",
    "SECRET_MARK",
    "SYSTEM_PROMPT",
    "Answerer",
    "Ask",
    "AskResult",
    "Asker",
    "Dialect",
    "Event",
    "HistoryEntry",
    "HistoryPage",
    "Interaction",
    "InteractionContext",
    "Limits",
    "NewEvent",
    "Option",
    "Parked",
    "PermissionDecision",
    "PermissionRequest",
    "Question",
    "QuestionAnswer",
    "Settled",
    "SyncAnswerer",
    "SyncAsker",
    "ToolCallContext",
    "ToolOutput",
    "get_dialect",
    "load_dialect_entry_points",
    "parse_answer",
    "parse_ask",
    "register_dialect",
    "render",
    "tool_spec",
    "unregister_dialect",
]

_publish("midturn.contract", globals(), __all__)
