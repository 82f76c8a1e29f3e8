"""The system-prompt clause that tells a model when to use the question tool (docs/dialects.md).

A clause in the system prompt drives correct use far better than the tool description
alone. It is a constant, so it can sit in a cached prompt prefix, and it names no tool so
it reads right beside any dialect's tool.
"""

from __future__ import annotations

__all__ = ["SYSTEM_PROMPT"]

SYSTEM_PROMPT = (
    "You have a question tool that pauses this turn, shows the user a few structured "
    "questions, and returns their answers so you can continue. Call it only for a bounded "
    "decision you cannot continue without: a choice between a few options, or a short value "
    "such as a name. When a reasonable default exists, take it, say what you assumed, and "
    "keep going instead of asking. Ask once: put every question you need in one call, and do "
    'not ask again about anything the user answered or skipped. Never offer an "Other", '
    '"Skip" or "None of the above" option: the user can always type their own answer or '
    "skip. Open-ended questions and discussion stay ordinary text in your reply."
)
