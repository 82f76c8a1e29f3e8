"""One agent process of the restart scenario (tests/adapters/test_langgraph.py): a
`create_agent` agent on an `AsyncSqliteSaver` file
(or `AsyncPostgresSaver`), its midturn side through a gateway.

    python -m tests.adapters._langgraph_worker first|resume URL TOKEN SESSION DB EFFECTS

`first` runs a turn that writes a side effect, then asks (and waits: the test kills it);
`resume` runs the same thread again with `input=None` and prints the tool results as JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from tests._asks import ASK
from tests.adapters._langgraph_agent import ASK_NAME, agent, asks, call, chat, tool_messages

from midturn import AsyncClient
from midturn.adapters.langgraph import Host

THREAD = {"configurable": {"thread_id": "restart"}}


async def main(phase: str, url: str, token: str, session: str, db: str, effects: str) -> None:
    @tool
    def record(note: str) -> str:
        """Record a note (the side effect that must run once)."""
        with Path(effects).open("a") as file:
            file.write(note + "\n")
        return "recorded"

    if phase == "first":
        model = chat(
            asks(call("record", {"note": "before"}, "r1")), asks(call(ASK_NAME, ASK, "c1"))
        )
    else:
        model = chat(AIMessage("Using the answer."))
    async with _saver(db) as saver, AsyncClient(url, token) as client:
        graph = agent(model, saver, approve=(), extra_tools=[record])
        start: Any = {"messages": [("user", "set it up")]} if phase == "first" else None
        run = await Host(client, session).run(graph, start, THREAD, turn_id="restart-turn")
        results = [{"id": m.tool_call_id, "content": m.content} for m in tool_messages(run.value)]
        print(json.dumps({"results": results, "last": run.value["messages"][-1].content}))


@contextlib.asynccontextmanager
async def _saver(db: str) -> AsyncIterator[Any]:
    """`AsyncPostgresSaver` for a `postgresql://` URL, else `AsyncSqliteSaver` on a file."""
    if db.startswith("postgresql://"):
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(db) as saver:
            await saver.setup()
            yield saver
    else:
        async with AsyncSqliteSaver.from_conn_string(db) as saver:
            yield saver


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
