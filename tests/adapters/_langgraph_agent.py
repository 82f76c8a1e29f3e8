"""The LangGraph agents the adapter tests drive: LangChain v1's `create_agent` on a
scripted fake chat model (`GenericFakeChatModel`, given `bind_tools`), offline."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from midturn import SYSTEM_PROMPT
from midturn.adapters.langgraph import MidturnMiddleware

ASK_NAME = "ask_user_question"


class ScriptedChat(GenericFakeChatModel):
    """Plays `messages` in order; records the tool names bound and every prompt seen."""

    bound: list[list[str]] = Field(default_factory=list)
    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChat:
        self.bound.append([convert_to_openai_tool(t)["function"]["name"] for t in tools])
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.prompts.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def chat(*steps: AIMessage) -> ScriptedChat:
    iterator: Iterator[AIMessage] = iter(steps)
    return ScriptedChat(messages=iterator)


def call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def asks(*calls: dict[str, Any]) -> AIMessage:
    return AIMessage(content="", tool_calls=list(calls))


SIDE_EFFECTS: list[str] = []
"""What `deploy` did, in this process (a test checks it ran once, or not at all)."""


@tool
def deploy(target: str) -> str:
    """Deploy the service to `target`."""
    SIDE_EFFECTS.append(target)
    return f"deployed to {target}"


def agent(
    model: ScriptedChat,
    checkpointer: Any,
    *,
    interactive: bool = True,
    approve: Sequence[str] = ("deploy",),
    mode: str = "per_call",
    extra_tools: Sequence[Any] = (),
    name: str | None = None,
) -> Any:
    """The root agent: the question tool (via MidturnMiddleware), `deploy` behind
    HumanInTheLoopMiddleware, midturn's system prompt."""
    middleware: list[Any] = [MidturnMiddleware(interactive=interactive)]
    if approve:
        middleware.append(
            HumanInTheLoopMiddleware(interrupt_on=dict.fromkeys(approve, True), interrupt_mode=mode)
        )
    return create_agent(
        model,
        tools=[deploy, *extra_tools],
        system_prompt=SYSTEM_PROMPT,
        middleware=middleware,
        checkpointer=checkpointer,
        name=name,
    )


def tool_messages(value: Any) -> list[ToolMessage]:
    return [m for m in value["messages"] if isinstance(m, ToolMessage)]
