"""Who is asking: what a host may say about the agent behind an ask or a permission
(docs/contract.md#who-is-asking).

Optional, sent by the host (not the model) beside the tool call: the agent's name, what
it was doing (the turn's last assistant text) and the tool call that asked. The text is
still model-written or model-derived, so it is untrusted: every field is bounded, its
control characters are removed here, and each surface strips what else its screen
needs (bidirectional controls in the web inbox, escape sequences in a terminal).
Too-long text is cut (at a word boundary where one is near) and ends with `…`, so a
long assistant message never costs the ask; a wrong type or an unknown key is refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

__all__ = [
    "MAX_AGENT",
    "MAX_DOING",
    "MAX_TOOL_INPUT",
    "ContextInput",
    "InteractionContext",
    "ToolCallContext",
    "bounded",
    "context_of",
]

MAX_AGENT = 80
MAX_DOING = 1000
MAX_TOOL_NAME = 200
MAX_TOOL_INPUT = 1000

# Escape sequences whole (CSI, OSC, other ESC pairs), so no fragment of one is left.
_SEQUENCES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -/]*[0-~]?"
)
# C0 controls but tab and newline, DEL, C1 controls. (Bidirectional controls stay until a
# surface draws the text: each surface strips them, as it does for the ask's own text.)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def bounded(value: str, limit: int, *, multiline: bool) -> str | None:
    """`value` trimmed, without control characters, at most `limit` characters (cut at
    a word boundary in its last fifth when there is one, then `…`); None when empty."""
    text = value.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROLS.sub("", _SEQUENCES.sub("", text))
    text = text.replace("\t", " ")
    if not multiline:
        text = " ".join(text.split())
    text = text.strip()
    if not text:
        return None
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    if space >= limit * 4 // 5:
        cut = cut[:space]
    return cut.rstrip() + "…"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCallContext(_Model):
    """The tool call that asked: its `name` and its `input` as text (a JSON object or
    list given here is kept as compact JSON)."""

    name: str
    input: str | None = None

    @field_validator("name", mode="before")
    @classmethod
    def _name(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value  # pydantic refuses it with its own message
        text = bounded(value, MAX_TOOL_NAME, multiline=False)
        if text is None:
            raise ValueError("the tool's name is empty; give the name of the tool that asked")
        return text

    @field_validator("input", mode="before")
    @classmethod
    def _input(cls, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, str):
            try:
                value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
            except (TypeError, ValueError):
                raise ValueError("the tool's input must be text or JSON") from None
        return bounded(value, MAX_TOOL_INPUT, multiline=True)


class InteractionContext(_Model):
    """Who is asking and why, as the host tells it: `agent` (a name, one line),
    `doing` (what the agent was doing: the turn's last assistant text) and `tool` (the
    tool call that asked). Every field is optional; an all-empty context reads as none."""

    agent: str | None = None
    doing: str | None = None
    tool: ToolCallContext | None = None

    @field_validator("agent", mode="before")
    @classmethod
    def _agent(cls, value: Any) -> Any:
        return bounded(value, MAX_AGENT, multiline=False) if isinstance(value, str) else value

    @field_validator("doing", mode="before")
    @classmethod
    def _doing(cls, value: Any) -> Any:
        return bounded(value, MAX_DOING, multiline=True) if isinstance(value, str) else value

    @model_validator(mode="before")
    @classmethod
    def _not_a_mapping(cls, data: Any) -> Any:
        if data is not None and not isinstance(data, dict | InteractionContext):
            raise ValueError('context must be an object: {"agent", "doing", "tool"}')
        return data

    @property
    def empty(self) -> bool:
        return self.agent is None and self.doing is None and self.tool is None


ContextInput = InteractionContext | Mapping[str, Any]
"""A context as callers give it: the model, or a mapping of its fields."""


def context_of(value: ContextInput | None) -> InteractionContext | None:
    """`value` as a context, None when it says nothing. Raises pydantic's
    `ValidationError` for a malformed one."""
    if value is None:
        return None
    given = value if isinstance(value, InteractionContext) else dict(value)
    context = InteractionContext.model_validate(given)
    return None if context.empty else context
