"""The question tool for LangGraph: validate with the midturn contract, then make exactly
one `interrupt()` carrying every question of the call, and return the rendered answer the
host resumed it with (docs/adapters/langgraph.md).

The resume value is addressed: it names the tool call it answers, and LangGraph checks it
against a per-call `response_schema` before the tool sees it. A value meant for another
call (parallel calls sharing one ToolNode task, langgraph #6533) or a stale one delivered
again (`invoke(None)` after a bare resume, langgraph #8837) fails that check: the run
stops with a validation error and the ask stays pending, answerable again. It is never
read as this call's answer.
"""

from __future__ import annotations

import contextvars
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, AnyMessage
from langchain_core.tools import BaseTool, ToolException
from langgraph.types import Send, interrupt
from pydantic import BaseModel, ConfigDict, create_model

from midturn.contract import AskResult, Limits, QuestionAnswer, parse_ask, render, tool_spec
from midturn.errors import InvalidAsk

__all__ = ["ASK_MARK", "QuestionTool", "fan_out", "question_tool"]

ASK_MARK = "midturn.ask"
"""The `midturn` field of an interrupt value the question tool raised."""

_CALL_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "midturn_langgraph_tool_call_id", default=None
)


class _Reply(BaseModel):
    """What the host resumes a question interrupt with: addressed to one tool call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    midturn: str
    text: str
    is_error: bool = False


def _reply_schema(tool_call_id: str) -> type[_Reply]:
    """`_Reply` whose `midturn` must be exactly `tool_call_id`."""
    literal: Any = Literal[tool_call_id]  # a type built at run time
    return create_model("MidturnReply", __base__=_Reply, midturn=(literal, ...))


def reply(tool_call_id: str, text: str, is_error: bool) -> dict[str, Any]:
    """The resume value for the question interrupt of `tool_call_id`."""
    return {"midturn": tool_call_id, "text": text, "is_error": is_error}


def unavailable_text(tool_input: Any, dialect: str, limits: Limits | None) -> str:
    """What the model reads where no one can answer: `unavailable`, in `dialect`."""
    ask = parse_ask(tool_input, dialect, limits=limits)
    answers = tuple(
        QuestionAnswer(id=q.id, header=q.header, question=q.question, status="unavailable")
        for q in ask.questions
    )
    result = AskResult(outcome="unavailable", answers=answers, message=None)
    return render(result, dialect).text


class QuestionTool(BaseTool):
    """midturn's question tool as a LangChain tool. Build it with `question_tool()`.

    Its schema is `midturn.tool_spec(dialect)`'s, byte for byte. A malformed call raises
    nothing and pauses nothing: the problems come back as an error tool result
    (`status="error"`) for the model to fix in the same turn. A valid one interrupts once;
    `interactive=False` (a sub-agent, a headless run) returns `unavailable` at once and
    interrupts nothing.
    """

    dialect: str = "midturn"
    limits: Limits | None = None
    interactive: bool = True
    handle_tool_error: bool = True

    def run(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        token = _CALL_ID.set(kwargs.get("tool_call_id"))
        try:
            return super().run(tool_input, *args, **kwargs)
        finally:
            _CALL_ID.reset(token)

    async def arun(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        token = _CALL_ID.set(kwargs.get("tool_call_id"))
        try:
            return await super().arun(tool_input, *args, **kwargs)
        finally:
            _CALL_ID.reset(token)

    def _run(self, **tool_input: Any) -> str:
        tool_input.pop("run_manager", None)
        try:
            parse_ask(tool_input, self.dialect, limits=self.limits)
        except InvalidAsk as error:
            raise ToolException(str(error)) from None
        if not self.interactive:
            return unavailable_text(tool_input, self.dialect, self.limits)
        tool_call_id = _CALL_ID.get()
        if not tool_call_id:
            raise ValueError(
                f"{self.name} must be called with a model tool call (an id is needed to key "
                "the ask); run it from a ToolNode or invoke it with a ToolCall"
            )
        value = {
            "midturn": ASK_MARK,
            "tool_call_id": tool_call_id,
            "dialect": self.dialect,
            "tool_input": tool_input,
        }
        answer: _Reply = interrupt(value, response_schema=_reply_schema(tool_call_id))
        if answer.is_error:
            raise ToolException(answer.text)
        return answer.text


def question_tool(
    *, dialect: str = "midturn", limits: Limits | None = None, interactive: bool = True
) -> QuestionTool:
    """The question tool for an agent's tools, its spec `midturn.tool_spec(dialect)`.

    Give it to the interactive root agent only; `interactive=False` makes the stand-in for
    places no one can answer (see `MidturnMiddleware`)."""
    spec = tool_spec(dialect, "openai", limits=limits)["function"]
    return QuestionTool(
        name=spec["name"],
        description=spec["description"],
        args_schema=spec["parameters"],
        dialect=dialect,
        limits=limits,
        interactive=interactive,
    )


def fan_out(state: Any, node: str = "tools") -> list[Send]:
    """A conditional edge for a hand-built graph: one `Send(node, ...)` per tool call of
    the last AI message, so each call runs as its own task with its own interrupt id
    (what `create_agent` does). Route to a ToolNode with it instead of a plain edge when
    a step can carry more than one question call (langgraph #6533). No tool call: [].
    """
    messages: Sequence[AnyMessage] = (
        state["messages"] if isinstance(state, dict) else state.messages
    )
    last = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    if last is None:
        return []
    return [
        Send(node, {"__type": "tool_call_with_context", "tool_call": call, "state": state})
        for call in last.tool_calls
    ]
