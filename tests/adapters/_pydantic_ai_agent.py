"""A pydantic-ai agent as its own process, for the kill-and-resume scenario of
tests/adapters/test_pydantic_ai.py: its durable state is the message history (dumped
with pydantic-ai's `ModelMessagesTypeAdapter`) and the pending `DeferredToolRequests`
on disk; midturn is a gateway on a SQLite file.

    python -m tests.adapters._pydantic_ai_agent ask|resume DIR GATEWAY_URL TOKEN SESSION

`ask` runs the turn until it parks, writes its state, prints `parked` and waits for the
person (the test kills it there). `resume` reads the state, collects the settled
answer and finishes the run, printing its output as JSON. Every call of the side-effect
tool appends a line to DIR/effects.log.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from pydantic_ai import Agent, models
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests
from tests._asks import ASK

from midturn import AsyncClient
from midturn.adapters.pydantic_ai import MidturnTurn

models.ALLOW_MODEL_REQUESTS = False
TURN = "turn-kill"
REQUESTS = TypeAdapter(DeferredToolRequests)


def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
    answered = [p for p in returns if p.tool_name == "ask_user_question"]
    if answered:
        return ModelResponse(parts=[TextPart(f"done: {answered[0].content}")])
    return ModelResponse(
        parts=[
            ToolCallPart("book_room", {"room": "A"}, tool_call_id="call-book"),
            ToolCallPart("ask_user_question", ASK, tool_call_id="call-ask"),
        ]
    )


def agent(folder: Path) -> Agent[None, Any]:
    def book_room(room: str) -> str:
        """Book a room (a side effect that must run once)."""
        with (folder / "effects.log").open("a") as log:
            log.write(f"booked {room}\n")
        return f"booked {room}"

    return Agent(FunctionModel(script), tools=[book_room], output_type=[str, DeferredToolRequests])


async def main(phase: str, folder: Path, url: str, token: str, session_id: str) -> None:
    async with AsyncClient(url, token) as client:
        turn = MidturnTurn(client, session_id, TURN)
        if phase == "ask":
            result = await agent(folder).run("Book a room", capabilities=[turn.capability])
            assert isinstance(result.output, DeferredToolRequests), result.output
            (folder / "history.json").write_bytes(
                ModelMessagesTypeAdapter.dump_json(result.all_messages())
            )
            (folder / "requests.json").write_bytes(REQUESTS.dump_json(result.output))
            print("parked", flush=True)
            await turn.results(result.output)  # waits for the person: killed here
            return
        history = ModelMessagesTypeAdapter.validate_json((folder / "history.json").read_bytes())
        requests = REQUESTS.validate_json((folder / "requests.json").read_bytes())
        results = await turn.results(requests)
        assert results is not None
        result = await agent(folder).run(
            message_history=history, deferred_tool_results=results, capabilities=[turn.capability]
        )
        await turn.end()
        print(json.dumps({"output": result.output}), flush=True)


if __name__ == "__main__":
    phase, folder, url, token, session_id = sys.argv[1:6]
    asyncio.run(main(phase, Path(folder), url, token, session_id))
