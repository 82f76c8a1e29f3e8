"""One step of the crash test, run as its own process: `park`, `answer` or `resume`.

python -m tests.runtime._crash_worker park   <db_url>   -> prints the ask id, then
                                                          waits to be killed
python -m tests.runtime._crash_worker answer <db_url> <id>
python -m tests.runtime._crash_worker resume <db_url>   -> prints one JSON line
"""

from __future__ import annotations

import asyncio
import json
import sys

from midturn import Runtime, open_store

SESSION = "crash-session"
TOOL_CALL = "call_crash_1"
ASK = {
    "questions": [
        {"id": "db", "question": "Which database?", "options": ["PostgreSQL", "SQLite"]},
    ]
}


async def main(step: str, url: str, *rest: str) -> None:
    async with open_store(url) as store, Runtime(store) as runtime:
        if step == "park":
            interaction, _ = await runtime.ask(
                SESSION, ASK, turn_id="turn-1", tool_call_id=TOOL_CALL
            )
            print(interaction.id, flush=True)
            await asyncio.Event().wait()  # parked until SIGKILL
        elif step == "answer":
            settled = await runtime.answer(rest[0], {"answers": {"db": "SQLite"}}, by="user")
            print(settled.interaction.status, flush=True)
        elif step == "resume":
            output = await runtime.handle_tool_call(
                SESSION,
                name="ask_user_question",
                tool_call_id=TOOL_CALL,
                tool_input=ASK,
                turn_id="turn-1",
            )
            print(json.dumps({"text": output.text, "data": output.data}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
