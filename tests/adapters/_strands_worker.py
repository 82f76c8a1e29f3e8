"""One process of scenario 4: a Strands agent on a `FileSessionManager`, midturn on a
gateway. `start` runs the turn (it parks its ask and waits: the test kills it there);
`resume` restores the agent from disk and resumes it. A side-effect tool appends to a
file, so a second run of it would show."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from strands import Agent, tool
from strands.session import FileSessionManager

from midturn import AsyncClient
from midturn.adapters.strands import Reply, ScriptedModel, StrandsHost, ToolUse

ASK = {
    "questions": [
        {
            "id": "db",
            "question": "Which database should the service use?",
            "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}],
        }
    ]
}


def last_results(messages: Any) -> str:
    blocks = messages[-1]["content"]
    return " | ".join(b["toolResult"]["content"][0]["text"] for b in blocks if "toolResult" in b)


async def main(url: str, token: str, session_id: str, storage: str, notes: str, phase: str) -> None:
    @tool
    def write_note(text: str) -> str:
        """Append a note to the notes file (a side effect)."""
        with Path(notes).open("a") as file:
            file.write(text + "\n")
        return "noted"

    model = ScriptedModel(
        [
            Reply(
                tool_uses=(
                    ToolUse("tooluse_note", "write_note", {"text": "started"}),
                    ToolUse("tooluse_ask", "ask_user_question", ASK),
                )
            ),
            lambda messages: Reply(text="final: " + last_results(messages)),
        ]
    )
    async with AsyncClient(url, token) as client:
        host = StrandsHost(client, session_id)
        agent = Agent(
            model=model,
            tools=[*host.tools, write_note],
            system_prompt=host.system_prompt,
            session_manager=FileSessionManager(session_id=session_id, storage_dir=storage),
            callback_handler=None,
        )
        if phase == "start":
            result = await host.run(agent, "set up the service", turn_id="turn-4")
        else:
            result = await host.resume(agent)
        print(
            json.dumps(
                {"stop_reason": result.stop_reason, "text": str(result), "calls": len(model.calls)}
            )
        )


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:7]))
