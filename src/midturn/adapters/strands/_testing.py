"""`ScriptedModel`: a `strands.models.Model` that replays a script, offline.

It streams the events a real provider streams (message start, text and tool-use content
blocks, message stop, metadata), so the agent loop, the tools and the hooks run for
real and nothing reaches a network. Reply `i` is the one for a conversation holding `i`
assistant messages, so a conversation restored from a session after a restart (another
process) picks up the script where it stopped.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel
from strands.models import Model
from strands.types.content import Messages
from strands.types.event_loop import StopReason
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec

__all__ = ["Reply", "ScriptedModel", "ToolUse"]


@dataclass(frozen=True)
class ToolUse:
    """One tool call the model makes: its id, the tool's name and the input."""

    id: str
    name: str
    input: Any


@dataclass(frozen=True)
class Reply:
    """One model response: text, tool calls, or both (tool calls end it with `tool_use`)."""

    text: str | None = None
    tool_uses: tuple[ToolUse, ...] = ()


Step = Reply | Callable[[Messages], Reply]


@dataclass
class ScriptedModel(Model):
    """A model whose replies are scripted; `calls` records what each request carried."""

    script: Sequence[Step]
    calls: list[dict[str, Any]] = field(default_factory=list)

    def update_config(self, **model_config: Any) -> None:
        return None

    def get_config(self) -> Any:
        return {"model_id": "midturn-scripted"}

    def structured_output(
        self, output_model: type[Any], prompt: Messages, system_prompt: str | None = None, **kw: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        raise NotImplementedError("ScriptedModel has no structured output")

    def reply_for(self, messages: Messages) -> Reply:
        index = sum(1 for message in messages if message["role"] == "assistant")
        if index >= len(self.script):
            raise AssertionError(f"the script has {len(self.script)} replies; reply {index} asked")
        step = self.script[index]
        return step if isinstance(step, Reply) else step(messages)

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        *,
        structured_output_model: type[BaseModel] | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        self.calls.append(
            {
                "messages": json.loads(json.dumps(messages, default=str)),
                "tools": [spec["name"] for spec in tool_specs or []],
                "specs": json.loads(json.dumps(tool_specs or [])),
                "system_prompt": system_prompt,
            }
        )
        reply = self.reply_for(messages)
        yield {"messageStart": {"role": "assistant"}}
        if reply.text is not None:
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": reply.text}}}
            yield {"contentBlockStop": {}}
        for use in reply.tool_uses:
            start = {"toolUse": {"toolUseId": use.id, "name": use.name}}
            yield {"contentBlockStart": {"start": start}}  # type: ignore[typeddict-item]
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(use.input)}}}}
            yield {"contentBlockStop": {}}
        stop: StopReason = "tool_use" if reply.tool_uses else "end_turn"
        yield {"messageStop": {"stopReason": stop}}
        usage = {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}
        yield {"metadata": {"usage": usage, "metrics": {"latencyMs": 0}}}  # type: ignore[typeddict-item]
