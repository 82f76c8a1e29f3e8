"""`ScriptedModel`: a stand-in for an LLM in tests and demos, and the minimal agent loop
that drives it (`run_turn`).

A script is a list of steps. A step is a `ModelStep` (assistant text and/or tool calls)
or a function of the conversation so far that returns one, so a reply can be built from
the last tool result:

    model = ScriptedModel([
        ModelStep(tool_calls=(ToolCall("call_1", "ask_user_question", {"questions": [...]}),)),
        lambda conversation: ModelStep(text=f"Going with {conversation.last_tool_result().text}"),
    ])
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from midturn.contract._models import ToolOutput
from midturn.errors import UsageError

__all__ = [
    "Conversation",
    "Message",
    "ModelStep",
    "ScriptedModel",
    "ToolCall",
    "ToolHandler",
    "run_turn",
]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the model makes."""

    id: str
    name: str
    input: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ModelStep:
    """One assistant message: text, tool calls, or both. No tool calls ends the turn."""

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class Message:
    """One entry of the conversation. `role` is `user`, `assistant` or `tool`; a tool
    message answers `tool_call_id` with the tool's `text` (`is_error` for an error)."""

    role: Literal["user", "assistant", "tool"]
    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False


@dataclass
class Conversation:
    """The messages of a session, oldest first."""

    messages: list[Message] = field(default_factory=list)

    def last_tool_result(self) -> Message:
        """The most recent tool message; a script step uses it to build its reply."""
        for message in reversed(self.messages):
            if message.role == "tool":
                return message
        raise UsageError("the conversation has no tool result yet; put this step after a tool call")


Step = ModelStep | Callable[[Conversation], ModelStep]


class ScriptedModel:
    """Plays its steps in order, one per call of `respond`. `seen` keeps a copy of the
    conversation each step was given, for assertions."""

    def __init__(self, steps: Sequence[Step]) -> None:
        if not steps:
            raise UsageError("ScriptedModel needs at least one step")
        self._steps = list(steps)
        self._next = 0
        self.seen: list[list[Message]] = []

    @property
    def finished(self) -> bool:
        return self._next >= len(self._steps)

    async def respond(self, conversation: Conversation) -> ModelStep:
        if self.finished:
            raise UsageError(
                f"ScriptedModel ran out of steps after {len(self._steps)}; the agent asked "
                "for another response: add a step, or end the turn with a text-only step"
            )
        step = self._steps[self._next]
        self._next += 1
        self.seen.append(list(conversation.messages))
        return step(conversation) if callable(step) else step


ToolHandler = Callable[[ToolCall], Awaitable[ToolOutput] | ToolOutput]


async def run_turn(
    model: ScriptedModel,
    conversation: Conversation,
    user_text: str,
    handle_tool: ToolHandler,
    *,
    on_message: Callable[[Message], Any] | None = None,
    max_steps: int = 20,
) -> Conversation:
    """One agent turn: the user's message, then model steps and tool results until the
    model answers with no tool call. Every message is passed to `on_message` as it is
    added (to print a transcript)."""

    def add(message: Message) -> None:
        conversation.messages.append(message)
        if on_message is not None:
            on_message(message)

    add(Message("user", user_text))
    for _ in range(max_steps):
        step = await model.respond(conversation)
        add(Message("assistant", step.text, step.tool_calls))
        if not step.tool_calls:
            return conversation
        for call in step.tool_calls:
            output = handle_tool(call)
            if inspect.isawaitable(output):
                output = await output
            add(Message("tool", output.text, tool_call_id=call.id, is_error=output.is_error))
    raise UsageError(f"the turn took more than {max_steps} model steps; raise max_steps")
