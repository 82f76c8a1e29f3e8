"""Test doubles that ship with midturn, for your own tests.

- `ScriptedModel` plays assistant steps (text or tool calls) and can build a reply from
  the tool result; `run_turn` is the minimal agent loop that drives it.
- `ScriptedResponder` is a scripted human over the answerer port (`midturn.Answerer`: the
  in-process `Runtime`, or an `AsyncClient` on a gateway): it follows the events and
  responds to each new interaction with the next step (`answer`, `skip`, `redirect`,
  `allow`, `deny`, `allow_for_turn`, `stall`, `cancel`, `stop_turn`).

    from midturn.testing import ModelStep, ScriptedModel, ScriptedResponder, ToolCall, answer
"""

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

__all__ = [
    "Conversation",
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
    "redirect",
    "run_turn",
    "skip",
    "stall",
    "stop_turn",
]
