"""Test doubles that ship with midturn, for your own tests: a scripted model that plays
assistant steps (text or tool calls) and can build a reply from the tool result, and the
minimal agent loop that drives it.

    from midturn.testing import ModelStep, ScriptedModel, ToolCall, run_turn
"""

from midturn._scripted_model import (
    Conversation,
    Message,
    ModelStep,
    ScriptedModel,
    ToolCall,
    ToolHandler,
    run_turn,
)

__all__ = [
    "Conversation",
    "Message",
    "ModelStep",
    "ScriptedModel",
    "ToolCall",
    "ToolHandler",
    "run_turn",
]
