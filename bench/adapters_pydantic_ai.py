"""pydantic-ai adapter benchmark: one ask → answer → resume cycle through
`midturn.adapters.pydantic_ai` (the question tool parks in an in-process `Runtime` on a
memory store, the run ends with `DeferredToolRequests`, the person answers through the
runtime, `turn.results` collects it, the next run resumes) beside pydantic-ai's own bare
deferral cycle in the same run (a tool that raises `CallDeferred`, `build_results` with
the answer text, the same resume). Both drive the same `FunctionModel`, offline.

    .venv/bin/python bench/adapters_pydantic_ai.py [--rounds 200] [--repeats 7]

Prints each cycle's median (milliseconds), timed interleaved so that load on the machine
weighs on both alike, and the ratio adapter / bare. Goal: at most 1.5.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from _interleave import medians_per_cycle
from pydantic_ai import Agent, RunContext, models
from pydantic_ai.exceptions import CallDeferred
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests

from midturn import Runtime, open_store
from midturn.adapters.pydantic_ai import MidturnTurn

models.ALLOW_MODEL_REQUESTS = False
ASK: dict[str, Any] = {
    "questions": [{"id": "db", "question": "Which database?", "options": ["PostgreSQL", "SQLite"]}]
}
GOAL = 1.5


class Model:
    """Asks once (a fresh call id per cycle), then replies with the tool's result."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self.count = 0

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returned = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        if returned:
            return ModelResponse(parts=[TextPart(f"done: {returned[0].content}")])
        self.count += 1
        call_id = f"{self.tool}-{self.count}"
        return ModelResponse(parts=[ToolCallPart(self.tool, ASK, tool_call_id=call_id)])


def bare_agent() -> Agent[None, Any]:
    agent: Agent[None, Any] = Agent(
        FunctionModel(Model("ask")), output_type=[str, DeferredToolRequests]
    )

    @agent.tool
    def ask(ctx: RunContext[None], questions: list[dict[str, Any]]) -> str:
        """Ask the user."""
        raise CallDeferred(kind="question")

    return agent


async def bare_cycle(agent: Agent[None, Any]) -> str:
    first = await agent.run("go")
    requests = first.output
    assert isinstance(requests, DeferredToolRequests)
    results = requests.build_results(
        calls={call.tool_call_id: "The user answered:\n- Db: SQLite" for call in requests.calls}
    )
    final = await agent.run(message_history=first.all_messages(), deferred_tool_results=results)
    return str(final.output)


async def adapter_cycle(agent: Agent[None, Any], runtime: Runtime, index: int) -> str:
    turn = MidturnTurn(runtime, "bench", f"turn-{index}")
    first = await agent.run("go", capabilities=[turn.capability])
    requests = first.output
    assert isinstance(requests, DeferredToolRequests)
    for call in requests.calls:
        await runtime.answer(
            requests.metadata[call.tool_call_id]["midturn_interaction_id"], "SQLite"
        )
    results = await turn.results(requests)
    assert results is not None
    final = await agent.run(
        message_history=first.all_messages(),
        deferred_tool_results=results,
        capabilities=[turn.capability],
    )
    await turn.end()
    return str(final.output)


async def main(rounds: int, repeats: int) -> None:
    bare = bare_agent()
    adapted: Agent[None, Any] = Agent(
        FunctionModel(Model("ask_user_question")), output_type=[str, DeferredToolRequests]
    )
    async with open_store("memory://") as store, Runtime(store) as runtime:
        await bare_cycle(bare)  # warm both paths before timing
        await adapter_cycle(adapted, runtime, 0)
        sides = {
            "bare": lambda index: bare_cycle(bare),
            "adapter": lambda index: adapter_cycle(adapted, runtime, index),
        }
        medians = await medians_per_cycle(sides, rounds=rounds, repeats=repeats)
    bare_median, adapter_median = medians["bare"], medians["adapter"]
    ratio = adapter_median / bare_median
    print(f"bare pydantic-ai deferral cycle   {bare_median:8.3f} ms")
    print(f"through midturn (Runtime, memory) {adapter_median:8.3f} ms")
    print(f"ratio {ratio:.2f}x (goal <= {GOAL}x): {'met' if ratio <= GOAL else 'NOT met'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    options = parser.parse_args()
    asyncio.run(main(options.rounds, options.repeats))
