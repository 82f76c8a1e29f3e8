"""An OpenAI Agents SDK agent as its own process, for the kill-and-resume scenario of
tests/adapters/test_openai_agents.py: its durable state is the serialized `RunState`
(`DIR/state.json`, written by the adapter's checkpoint at the pause); midturn is a
gateway on a SQLite file. The model is the SDK's own `ScriptedModel`, offline.

    python -m tests.adapters._openai_agents_agent ask|resume DIR GATEWAY_URL TOKEN SESSION

`ask` runs the turn until it pauses on the question, saves the state (printing `saved`),
parks the question and waits for the person (the test kills it there). `resume` loads
the state, finishes the run, and prints its output and how many model calls it made as
JSON. Every call of
the side-effect tool appends a line to DIR/effects.log.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from agents import Agent, function_tool, set_tracing_disabled
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

from midturn import AsyncClient
from midturn.adapters.openai_agents import MidturnRun

set_tracing_disabled(True)
TURN = "turn-kill"
ASK = {
    "questions": [{"id": "db", "question": "Which database?", "options": ["PostgreSQL", "SQLite"]}]
}


def done(call: ModelCall) -> list[Any]:
    (answer,) = [
        item["output"]
        for item in call.input
        if isinstance(item, dict) and item.get("call_id") == "call-ask" and "output" in item
    ]
    return [assistant_message(f"done: {answer}")]


def agent(folder: Path, turn: MidturnRun, model: ScriptedModel) -> Agent[Any]:
    @function_tool
    def book_room(room: str) -> str:
        """Book a room (a side effect that must run once)."""
        with (folder / "effects.log").open("a") as log:
            log.write(f"booked {room}\n")
        return f"booked {room}"

    return Agent(name="assistant", model=model, tools=[turn.tool, book_room])


async def main(phase: str, folder: Path, url: str, token: str, session_id: str) -> None:
    state_file = folder / "state.json"
    async with AsyncClient(url, token) as client:

        def checkpoint(state: str) -> None:
            state_file.write_text(state)
            print("saved", flush=True)

        turn = MidturnRun(client, session_id, TURN, durable=True, checkpoint=checkpoint)
        if phase == "ask":
            model = ScriptedModel(
                [
                    [
                        function_call("book_room", {"room": "A"}, call_id="call-book"),
                        function_call("ask_user_question", ASK, call_id="call-ask"),
                    ]
                ]
            )
            await turn.run(agent(folder, turn, model), "Book a room")  # killed while waiting
            return
        model = ScriptedModel([ModelStep.respond(done)])
        result = await turn.resume(agent(folder, turn, model), state_file.read_text())
        assert result is not None
        print(json.dumps({"output": result.final_output, "model_calls": len(model.calls)}))


if __name__ == "__main__":
    phase, folder, url, token, session_id = sys.argv[1:6]
    asyncio.run(main(phase, Path(folder), url, token, session_id))
