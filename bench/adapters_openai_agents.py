"""OpenAI Agents SDK adapter benchmark: one ask → answer → resume cycle through
`midturn.adapters.openai_agents` in durable mode (the question tool needs approval, the
run pauses, the interruption becomes a midturn ask in an in-process `Runtime` on a
memory store, the person answers it at once, the answer goes in the run context, the
call is approved and the run resumes to its final output) beside the SDK's own bare
approval cycle in the same run (a `needs_approval` tool, `Runner.run` to the
interruption, `to_state()`, the answer put in the context, `approve`, `Runner.run` again).
Both drive the SDK's `agents.testing.ScriptedModel`, offline, tracing off.

    .venv/bin/python bench/adapters_openai_agents.py [--rounds 200] [--repeats 7]

Prints each cycle's median (milliseconds), timed interleaved so that load on the machine
weighs on both alike, and the ratio adapter / bare. Goal: at most 1.5.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from _interleave import AnsweredAtOnce, medians_per_cycle  # before the folder leaves sys.path

# Run as a script, this folder comes first on sys.path, and its `mcp.py` would shadow the
# `mcp` package the SDK imports: drop the folder before importing the SDK.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]

from agents import Agent, FunctionTool, Runner, set_tracing_disabled  # noqa: E402
from agents.testing import (  # noqa: E402
    ModelCall,
    ModelStep,
    ScriptedModel,
    assistant_message,
    function_call,
)

from midturn import Runtime, open_store  # noqa: E402
from midturn.adapters.openai_agents import MidturnRun  # noqa: E402

set_tracing_disabled(True)
ASK: dict[str, Any] = {
    "questions": [{"id": "db", "question": "Which database?", "options": ["PostgreSQL", "SQLite"]}]
}
GOAL = 1.5


def reply(call: ModelCall) -> list[Any]:
    (output,) = [i["output"] for i in call.input if i.get("type") == "function_call_output"]
    return [assistant_message(f"done: {output}")]


def model(tool: str, index: int) -> ScriptedModel:
    return ScriptedModel(
        [[function_call(tool, ASK, call_id=f"{tool}-{index}")], ModelStep.respond(reply)]
    )


async def bare_invoke(ctx: Any, arguments: str) -> str:
    return str(ctx.context["answers"][ctx.tool_call_id])


BARE_TOOL = FunctionTool(
    name="ask",
    description="Ask the user.",
    params_json_schema={"type": "object", "properties": {}},
    on_invoke_tool=bare_invoke,
    strict_json_schema=False,
    needs_approval=True,
)


async def bare_cycle(index: int) -> str:
    agent = Agent(name="assistant", model=model("ask", index), tools=[BARE_TOOL])
    context: dict[str, Any] = {"answers": {}}
    first = await Runner.run(agent, "go", context=context)
    state = first.to_state()
    for item in first.interruptions:
        context["answers"][item.raw_item.call_id] = "The user answered:\n- Db: SQLite"
        state.approve(item)
    final = await Runner.run(agent, state)
    return str(final.final_output)


async def adapter_cycle(asker: Any, index: int) -> str:
    turn = MidturnRun(asker, "bench", f"turn-{index}", durable=True)
    agent = Agent(name="assistant", model=model(turn.tool_name, index), tools=[turn.tool])
    result = await turn.run(agent, "go")
    assert result is not None
    return str(result.final_output)


async def main(rounds: int, repeats: int) -> None:
    async with open_store("memory://") as store, Runtime(store) as runtime:
        asker = AnsweredAtOnce(runtime, "SQLite")
        print(await bare_cycle(0))  # warm both paths before timing, and show them
        print(await adapter_cycle(asker, 0))
        sides = {"bare": bare_cycle, "adapter": lambda index: adapter_cycle(asker, index)}
        medians = await medians_per_cycle(sides, rounds=rounds, repeats=repeats)
    bare_median, adapter_median = medians["bare"], medians["adapter"]
    ratio = adapter_median / bare_median
    print(f"bare openai-agents approval cycle {bare_median:8.3f} ms")
    print(f"through midturn (Runtime, memory) {adapter_median:8.3f} ms")
    print(f"ratio {ratio:.2f}x (goal <= {GOAL}x): {'met' if ratio <= GOAL else 'NOT met'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    options = parser.parse_args()
    asyncio.run(main(options.rounds, options.repeats))
