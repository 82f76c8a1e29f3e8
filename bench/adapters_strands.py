"""Strands adapter benchmark: one ask -> answer -> resume through `midturn.adapters.strands`
beside Strands' own bare interrupt/resume cycle, measured in the same run (alternating
blocks, garbage collected before each). Goal: the adapter's cycle <= 1.5x the bare one.

    .venv/bin/python bench/adapters_strands.py [--cycles 300] [--blocks 6]

Both cycles drive one real `strands.Agent` per side with an offline scripted model (the
same for both): a model step that calls the tool, the tool's interrupt, a resume, the
tool's second run and a final model step.

- bare: a `@tool(context=True)` that calls `tool_context.interrupt(...)`; the caller
  resumes at once with `interruptResponse` (no validation, no store, no person).
- midturn: the adapter's question tool (validates the ask), `StrandsHost.run` parks it on
  an in-process `Runtime` (memory store, with its events), a person answers the instant
  the ask is requested (`runtime.watch`), the host waits, renders and resumes, then ends
  the turn.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from _interleave import cycle_samples, p50_p99
from strands import Agent, tool
from strands.types.content import Messages
from strands.types.tools import ToolContext

from midturn import Event, Runtime, open_store
from midturn.adapters.strands import Reply, ScriptedModel, StrandsHost, ToolUse

ASK: dict[str, Any] = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use?",
            "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}],
        }
    ]
}


class LoopModel(ScriptedModel):
    """Asks on a user prompt, answers with text after a tool result: any number of
    cycles on one agent, a fresh tool-use id each time."""

    def __init__(self, tool_name: str) -> None:
        super().__init__(script=())
        self.tool_name = tool_name
        self.count = 0

    def reply_for(self, messages: Messages) -> Reply:
        if any("toolResult" in block for block in messages[-1]["content"]):
            return Reply(text="done")
        self.count += 1
        return Reply(tool_uses=(ToolUse(f"tooluse_{self.count}", self.tool_name, ASK),))


def trim(agent: Agent) -> None:
    """Keep the history short so both sides measure a cycle, not a growing transcript."""
    del agent.messages[:]


async def bare_cycles(n: int) -> list[float]:
    @tool(context=True)
    async def ask_user(tool_context: ToolContext) -> str:
        """Ask the user (async, as the adapter's tool is: no thread hop on either side)."""
        return str(tool_context.interrupt("ask", reason=tool_context.tool_use["input"]))

    model = LoopModel("ask_user")
    agent = Agent(model=model, tools=[ask_user], callback_handler=None)
    times = []
    for _ in range(n):
        start = time.perf_counter()
        result = await agent.invoke_async("go")
        responses = [
            {"interruptResponse": {"interruptId": i.id, "response": "SQLite"}}
            for i in result.interrupts or []
        ]
        result = await agent.invoke_async(responses)  # type: ignore[arg-type]
        times.append(time.perf_counter() - start)
        assert result.stop_reason == "end_turn"
        trim(agent)
    return times


async def midturn_cycles(n: int) -> list[float]:
    times = []
    async with open_store("memory://") as store, Runtime(store) as runtime:
        host = StrandsHost(runtime, "bench")
        model = LoopModel("ask_user_question")
        agent = Agent(model=model, tools=host.tools, callback_handler=None)
        answers: set[asyncio.Task[Any]] = set()

        def person(event: Event) -> None:
            if event.type == "user_question_requested" and event.interaction_id:
                task = asyncio.ensure_future(runtime.answer(event.interaction_id, "SQLite"))
                answers.add(task)
                task.add_done_callback(answers.discard)

        stop = runtime.watch(person)
        for index in range(n):
            start = time.perf_counter()
            result = await host.run(agent, "go", turn_id=f"turn-{index}")
            times.append(time.perf_counter() - start)
            assert result.stop_reason == "end_turn"
            trim(agent)
        stop()
    return times


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=300, help="cycles per block")
    parser.add_argument("--blocks", type=int, default=6, help="alternating blocks per side")
    args = parser.parse_args()
    blocks = {"bare": bare_cycles, "midturn": midturn_cycles}
    samples = await cycle_samples(blocks, cycles=args.cycles, rounds=args.blocks)
    bare, ours = samples["bare"], samples["midturn"]
    b50, b99 = p50_p99(bare)
    m50, m99 = p50_p99(ours)
    print(f"cycles per side: {len(bare)}")
    print(f"Strands bare interrupt/resume  p50 {b50:7.3f} ms  p99 {b99:7.3f} ms")
    print(f"midturn adapter ask/answer     p50 {m50:7.3f} ms  p99 {m99:7.3f} ms")
    print(f"ratio p50 {m50 / b50:.2f}x  p99 {m99 / b99:.2f}x  (goal <= 1.5x)")


if __name__ == "__main__":
    asyncio.run(main())
