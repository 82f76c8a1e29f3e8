"""midturn: let an AI agent stop mid-turn, ask its user a few bounded, structured
questions, and continue the same turn with the answers.

`import midturn` loads the pure contract and the errors only; the runtime, the stores
and the HTTP client load on first use of one of their names (`midturn.Runtime`,
`midturn.open_store`, `midturn.Client`, ...), so a host that only parses asks never
imports HTTP or a database driver.
"""

import importlib
import typing

from midturn._public import publish as _publish
from midturn.contract import (
    DIALECTS,
    HARD_LIMITS,
    SECRET_MARK,
    SYSTEM_PROMPT,
    Answerer,
    Ask,
    Asker,
    AskResult,
    Dialect,
    Event,
    Interaction,
    InteractionContext,
    Limits,
    Option,
    Parked,
    PermissionDecision,
    PermissionRequest,
    Question,
    QuestionAnswer,
    Settled,
    SyncAnswerer,
    SyncAsker,
    ToolOutput,
    get_dialect,
    parse_answer,
    parse_ask,
    register_dialect,
    render,
    tool_spec,
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
    ToolCallConflict,
    Unauthorized,
    UsageError,
)

if typing.TYPE_CHECKING:
    from midturn.client import AsyncClient, Client
    from midturn.runtime import Runtime, Turn
    from midturn.store import Store, open_store, register_store

__version__ = "0.1.0"

__all__ = [
    "DIALECTS",
    "HARD_LIMITS",
    "SECRET_MARK",
    "SYSTEM_PROMPT",
    "AlreadySettled",
    "Answerer",
    "Ask",
    "AskResult",
    "Asker",
    "AsyncClient",
    "Client",
    "Dialect",
    "Event",
    "Forbidden",
    "GatewayError",
    "Interaction",
    "InteractionContext",
    "InvalidAnswer",
    "InvalidAsk",
    "Limits",
    "MidturnError",
    "NotFound",
    "Option",
    "Parked",
    "PermissionDecision",
    "PermissionRequest",
    "Problem",
    "Question",
    "QuestionAnswer",
    "Runtime",
    "Settled",
    "Store",
    "SyncAnswerer",
    "SyncAsker",
    "ToolCallConflict",
    "ToolOutput",
    "Turn",
    "Unauthorized",
    "UsageError",
    "__version__",
    "get_dialect",
    "open_store",
    "parse_answer",
    "parse_ask",
    "register_dialect",
    "register_store",
    "render",
    "tool_spec",
]

_LAZY = {
    "AsyncClient": "midturn.client",
    "Client": "midturn.client",
    "Runtime": "midturn.runtime",
    "Turn": "midturn.runtime",
    "Store": "midturn.store",
    "open_store": "midturn.store",
    "register_store": "midturn.store",
}
"""Names loaded on first use, and the public module each comes from."""


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'midturn' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


_publish("midturn", globals(), __all__)
