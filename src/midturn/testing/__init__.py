"""What you test with: the doubles and harnesses midturn's own suite trusts.

- `ScriptedModel` plays assistant steps (text or tool calls) and can build a reply from
  the tool result; `run_turn` is the minimal agent loop that drives it.
- `ScriptedResponder` is a scripted human over the answerer port (`midturn.Answerer`: the
  in-process `Runtime`, or an `AsyncClient` on a gateway): it follows the events and
  responds to each new interaction with the next step (`answer`, `skip`, `redirect`,
  `allow`, `deny`, `allow_for_turn`, `stall`, `cancel`, `stop_turn`).
- `live_gateway()` / `start_gateway(...)`: a real gateway in a thread (`LiveGateway`).
- `midturn.testing.pilot`: the terminal pilot, drive the picker with real keys and read
  the screen (needs `pip install "midturn[testing]"`).
- `midturn.testing.conformance`: the store conformance suite, for a backend of your own
  (needs pytest and pytest-asyncio, also in the `testing` extra).

    from midturn.testing import ModelStep, ScriptedModel, ScriptedResponder, ToolCall, answer

docs/testing.md has the whole picture.
"""

import importlib
import typing

from midturn._public import publish as _publish
from midturn.testing._model import (
    Conversation,
    Message,
    ModelStep,
    ScriptedModel,
    ToolCall,
    ToolHandler,
    run_turn,
)
from midturn.testing._responder import (
    Response,
    ScriptedResponder,
    allow,
    allow_for_turn,
    answer,
    cancel,
    deny,
    redirect,
    skip,
    stall,
    stop_turn,
)

if typing.TYPE_CHECKING:
    from midturn.testing._gateway import LiveGateway, live_gateway, start_gateway

__all__ = [
    "Conversation",
    "LiveGateway",
    "Message",
    "ModelStep",
    "Response",
    "ScriptedModel",
    "ScriptedResponder",
    "ToolCall",
    "ToolHandler",
    "allow",
    "allow_for_turn",
    "answer",
    "cancel",
    "deny",
    "live_gateway",
    "redirect",
    "run_turn",
    "skip",
    "stall",
    "start_gateway",
    "stop_turn",
]

_LAZY = {
    name: "midturn.testing._gateway" for name in ("LiveGateway", "live_gateway", "start_gateway")
}
"""Names loaded on first use (the gateway's web stack), and the module each comes from."""


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'midturn.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


_publish("midturn.testing", globals(), __all__)
