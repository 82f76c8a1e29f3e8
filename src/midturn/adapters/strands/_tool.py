"""The question tool: validate with the midturn contract, then pause the agent with one
`tool_context.interrupt(...)` carrying the whole ask; on resume the same call returns the
answer the host put in the interrupt's response.

The tool does no I/O: the host (`StrandsHost`) parks the ask, keyed by the tool-use id,
and answers the interrupt when it settles. So the tool runs in whatever thread or event
loop Strands runs it in, and a resumed call never asks twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from strands import tool
from strands.agent import Agent
from strands.tools.decorator import DecoratedFunctionTool
from strands.types.tools import ToolContext

from midturn.contract import (
    AskResult,
    Limits,
    QuestionAnswer,
    parse_ask,
    render,
    tool_spec,
)
from midturn.errors import InvalidAsk

__all__ = ["ASK_INTERRUPT", "MARK", "HostMark", "question_tool", "tool_result"]

ASK_INTERRUPT = "midturn.ask"
"""The name of the question tool's interrupt (unique within the tool, as Strands asks)."""

MARK = "midturn"
"""The `invocation_state` key under which the host marks the run it drives."""


@dataclass(frozen=True)
class HostMark:
    """What the host puts in `invocation_state[MARK]`: the root agent it runs, whether a
    person can answer there, and the turn. A sub-agent (an agent used as a tool) is
    invoked without its parent's invocation state, so it carries no mark."""

    agent: Agent
    interactive: bool
    turn_id: str


def tool_result(tool_use_id: str, text: str, *, is_error: bool) -> dict[str, Any]:
    """A Strands tool result holding the text the model reads."""
    status = "error" if is_error else "success"
    return {"toolUseId": tool_use_id, "status": status, "content": [{"text": text}]}


def _unavailable(ask_questions: Any, dialect: str) -> str:
    answers = tuple(
        QuestionAnswer(id=q.id, header=q.header, question=q.question, status="unavailable")
        for q in ask_questions
    )
    return render(AskResult(outcome="unavailable", answers=answers), dialect).text


def question_tool(
    dialect: str = "midturn", *, limits: Limits | None = None
) -> DecoratedFunctionTool[Any, Any]:
    """The question tool for a Strands agent, registered under the dialect's spec
    (`midturn.tool_spec(dialect)`, a constant: the same bytes every call)."""
    spec = tool_spec(dialect, "mcp", limits=limits)

    async def ask_user_question(tool_context: ToolContext) -> dict[str, Any]:
        tool_use = tool_context.tool_use
        tool_use_id = tool_use["toolUseId"]
        raw = tool_use["input"]
        try:
            ask = parse_ask(raw, dialect, limits=limits)
        except InvalidAsk as error:
            return tool_result(tool_use_id, str(error), is_error=True)
        mark = tool_context.invocation_state.get(MARK)
        if not (
            isinstance(mark, HostMark) and mark.agent is tool_context.agent and mark.interactive
        ):
            # a headless run or a sub-agent: nobody can answer here, and nothing is parked
            return tool_result(tool_use_id, _unavailable(ask.questions, dialect), is_error=False)
        reason = {
            "kind": "ask",
            "tool_use_id": tool_use_id,
            "turn_id": mark.turn_id,
            "dialect": dialect,
            "tool_input": raw,
        }
        response = tool_context.interrupt(ASK_INTERRUPT, reason=reason)
        text, is_error = _response_text(response)
        if isinstance(response, dict) and response.get("status") == "cancelled":
            # the turn was stopped: end the loop before the model reads anything more; the
            # result stays in the history so every tool call keeps its result
            tool_context.agent.cancel(after_current_tools=True)
            is_error = True
        return tool_result(tool_use_id, text, is_error=is_error)

    ask_user_question.__doc__ = spec["description"]
    decorate = tool(
        name=spec["name"],
        description=spec["description"],
        inputSchema={"json": spec["inputSchema"]},
        context=True,
    )
    return decorate(ask_user_question)


def _response_text(response: Any) -> tuple[str, bool]:
    if isinstance(response, dict) and isinstance(response.get("text"), str):
        return response["text"], bool(response.get("is_error"))
    return (
        "The question tool was resumed with a response it cannot read; "
        "resume it through midturn.adapters.strands.StrandsHost.",
        True,
    )
