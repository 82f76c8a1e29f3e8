"""LangGraph adapter benchmark: one ask -> answer -> resume cycle through
`midturn.adapters.langgraph` (the question tool, `Host`, an in-process `Runtime`) beside
LangGraph's own bare interrupt/resume cycle on the same graph shape, in the same run.

    .venv/bin/python bench/adapters_langgraph.py [--cycles 300]

Both cycles run a graph `model -> tools -> END` on a fresh thread of one compiled graph,
with `ainvoke(..., version="v2")`: the model node emits one question tool call, the
ToolNode runs it, the tool interrupts, the graph is resumed by interrupt id to its end.

- bare: a tool whose body is `interrupt(questions)`; the host resumes with
  `Command(resume={id: "PostgreSQL"})` — no validation, no store, no rendering.
- adapter: `question_tool()` (validation, one addressed interrupt), `Host.run` (the ask
  parked in a memory store with its event, waited on, the answer parsed, rendered and
  resumed, the turn ended); the person answers from a `runtime.watch` callback as soon as
  the ask is requested.

Prints p50/p99 per cycle and the ratio adapter / bare (goal: at most 1.5x). Needs
`pip install "midturn[langgraph]"`.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from typing import Any

from _interleave import cycle_samples, p50_p99
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt

from midturn import Runtime, open_store
from midturn.adapters.langgraph import Host, question_tool

ASK: dict[str, Any] = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use?",
            "options": [
                {"label": "PostgreSQL", "description": "Managed, scales out"},
                {"label": "SQLite", "description": "Embedded, zero setup"},
            ],
        }
    ]
}


@tool
def bare_ask(questions: list[dict[str, Any]]) -> str:
    """Ask the user (LangGraph's own pattern: the answer is whatever the resume carries)."""
    return f"The user answered: {interrupt(questions)}"


def graph(tool_obj: Any) -> Any:
    def model(state: MessagesState) -> dict[str, Any]:
        call = {"name": tool_obj.name, "args": ASK, "id": f"c-{uuid.uuid4().hex[:8]}"}
        return {"messages": [AIMessage("", tool_calls=[call])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_node("tools", ToolNode([tool_obj]))
    builder.add_edge(START, "model")
    builder.add_edge("model", "tools")
    builder.add_edge("tools", END)
    return builder.compile(checkpointer=InMemorySaver())


async def bare_cycle(app: Any) -> None:
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    out = await app.ainvoke({"messages": []}, config, version="v2")
    (pending,) = out.interrupts
    out = await app.ainvoke(Command(resume={pending.id: "PostgreSQL"}), config, version="v2")
    assert out.interrupts == () and "PostgreSQL" in out.value["messages"][-1].content


async def adapter_cycles(cycles: int) -> list[float]:
    app = graph(question_tool())
    async with open_store("memory://") as store, Runtime(store) as runtime:
        loop = asyncio.get_running_loop()
        answering: set[asyncio.Task[Any]] = set()

        def person(event: Any) -> None:
            if event.type == "user_question_requested" and event.interaction_id:
                task = loop.create_task(runtime.answer(event.interaction_id, "PostgreSQL"))
                answering.add(task)
                task.add_done_callback(answering.discard)

        runtime.watch(person)
        host = Host(runtime, "bench")
        samples = []
        for n in range(cycles):
            config = {"configurable": {"thread_id": uuid.uuid4().hex}}
            start = time.perf_counter()
            run = await host.run(app, {"messages": []}, config, turn_id=f"t{n}")
            samples.append(time.perf_counter() - start)
            assert "PostgreSQL" in run.value["messages"][-1].content
        return samples


async def bare_cycles(cycles: int) -> list[float]:
    app = graph(bare_ask)
    samples = []
    for _ in range(cycles):
        start = time.perf_counter()
        await bare_cycle(app)
        samples.append(time.perf_counter() - start)
    return samples


async def main(cycles: int) -> None:
    blocks = {"bare": bare_cycles, "adapter": adapter_cycles}
    samples = await cycle_samples(blocks, cycles=cycles // 3, rounds=3)
    bare, adapter = samples["bare"], samples["adapter"]
    b50, b99 = p50_p99(bare)
    a50, a99 = p50_p99(adapter)
    print(f"cycles per side: {len(bare)}")
    print(f"LangGraph bare interrupt/resume : p50 {b50:7.2f} ms  p99 {b99:7.2f} ms")
    print(f"midturn adapter ask/answer/resume: p50 {a50:7.2f} ms  p99 {a99:7.2f} ms")
    print(f"ratio adapter / bare (p50): {a50 / b50:.2f}x  (goal: <= 1.5x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=300)
    asyncio.run(main(parser.parse_args().cycles))
