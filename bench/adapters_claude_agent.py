"""Claude Agent SDK adapter benchmark: one question's full cycle through the real
`claude-agent-sdk` `query()` with `can_use_tool=MidturnPermissions(...)` (Claude Code's
`can_use_tool` for `AskUserQuestion` becomes a midturn ask in an in-process `Runtime` on a
memory store, the person answers it at once, the callback allows with the answers keyed
by the question text, the tool result comes back, the run ends) beside the same query in
the same run with a bare `can_use_tool` callback that allows with the answers at once.
Both talk to a scripted Claude Code through the SDK's `Transport` interface, offline.

    .venv/bin/python bench/adapters_claude_agent.py [--rounds 200] [--repeats 7]

Prints each cycle's median (milliseconds), timed interleaved so that load on the machine
weighs on both alike, and the ratio adapter / bare (goal: at most 1.5); also the midturn
work of one cycle alone (park, answer, wait, end the turn on the runtime, no SDK), the
part of the difference that is the runtime's and not the adapter's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from _interleave import AnsweredAtOnce, medians_per_cycle  # before the folder leaves sys.path

# Run as a script, this folder comes first on sys.path, and its `mcp.py` would shadow the
# `mcp` package the SDK imports: drop the folder before importing the SDK.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]

from claude_agent_sdk import (  # noqa: E402
    ClaudeAgentOptions,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
    Transport,
    query,
)

from midturn import Runtime, open_store  # noqa: E402
from midturn.adapters.claude_agent import MidturnPermissions  # noqa: E402

QUESTION = "Which database should the service use?"
ASK: dict[str, Any] = {
    "questions": [
        {
            "question": QUESTION,
            "header": "Database",
            "options": [
                {"label": "PostgreSQL", "description": "Managed"},
                {"label": "SQLite", "description": "Embedded"},
            ],
            "multiSelect": False,
        }
    ]
}
GOAL = 1.5


class OneQuestion(Transport):
    """Claude Code asking `can_use_tool` for one `AskUserQuestion` call: the reply to
    `initialize`, the request, the tool result of the allowed call, the `result`."""

    def __init__(self, tool_use_id: str) -> None:
        self.tool_use_id = tool_use_id
        self._out: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.result_text = ""

    async def connect(self) -> None:
        pass

    def is_ready(self) -> bool:
        return True

    async def write(self, data: str) -> None:
        for line in data.splitlines():
            message = json.loads(line)
            if message["type"] == "control_request":
                reply = {"subtype": "success", "request_id": message["request_id"], "response": {}}
                self._out.put_nowait({"type": "control_response", "response": reply})
            elif message["type"] == "user":
                request = {
                    "subtype": "can_use_tool",
                    "tool_name": "AskUserQuestion",
                    "input": ASK,
                    "tool_use_id": self.tool_use_id,
                    "permission_suggestions": [],
                }
                self._out.put_nowait(
                    {"type": "control_request", "request_id": "cli-1", "request": request}
                )
            elif message["type"] == "control_response":
                self._finish(message["response"]["response"])

    def _finish(self, decision: dict[str, Any]) -> None:
        answers = decision.get("updatedInput", {}).get("answers", {})
        text = ", ".join(f'"{q}"="{a}"' for q, a in answers.items())
        block = {"type": "tool_result", "tool_use_id": self.tool_use_id, "content": text}
        self._out.put_nowait(
            {
                "type": "user",
                "message": {"role": "user", "content": [block]},
                "session_id": "bench",
                "parent_tool_use_id": None,
            }
        )
        self._out.put_nowait(
            {
                "type": "result",
                "subtype": "success",
                "duration_ms": 1,
                "duration_api_ms": 1,
                "is_error": False,
                "num_turns": 1,
                "session_id": "bench",
                "result": f"done: {text}",
            }
        )

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        while (message := await self._out.get()) is not None:
            yield message

    async def end_input(self) -> None:
        self._out.put_nowait(None)

    async def close(self) -> None:
        self._out.put_nowait(None)


async def bare_callback(
    tool: str, tool_input: dict[str, Any], context: ToolPermissionContext
) -> PermissionResultAllow | PermissionResultDeny:
    return PermissionResultAllow(updated_input={**tool_input, "answers": {QUESTION: "SQLite"}})


async def cycle(callback: Any, index: int) -> str:
    options = ClaudeAgentOptions(can_use_tool=callback)
    final = ""
    async for message in query(prompt="go", options=options, transport=OneQuestion(f"t{index}")):
        if isinstance(message, ResultMessage):
            final = str(message.result)
    return final


async def adapter_cycle(permissions: MidturnPermissions, index: int) -> str:
    async with permissions.turn(f"turn-{index}"):
        return await cycle(permissions, index)


async def runtime_cycle(asker: AnsweredAtOnce, index: int) -> str:
    """The midturn work of one adapter cycle alone, without the SDK: park, answer, wait,
    end the turn (what the adapter adds over the bare callback, at the least)."""
    turn = f"turn-{index}"
    parked, _ = await asker.ask(
        "bench", ASK, dialect="claude", tool_call_id=f"r{index}", turn_id=turn
    )
    settled = await asker.runtime.wait(parked.id)
    await asker.runtime.end_turn("bench", turn)
    return str(settled.output.text if settled.output else "")


async def main(rounds: int, repeats: int) -> None:
    async with open_store("memory://") as store, Runtime(store) as runtime:
        asker = AnsweredAtOnce(runtime, "SQLite")
        permissions = MidturnPermissions(asker, "bench")  # type: ignore[arg-type]
        print(await cycle(bare_callback, 0))  # warm both paths before timing, and show them
        print(await adapter_cycle(permissions, 0))
        sides = {
            "bare": lambda index: cycle(bare_callback, index),
            "adapter": lambda index: adapter_cycle(permissions, index),
            "runtime": lambda index: runtime_cycle(asker, index),
        }
        medians = await medians_per_cycle(sides, rounds=rounds, repeats=repeats)
    bare_median, adapter_median = medians["bare"], medians["adapter"]
    ratio = adapter_median / bare_median
    print(f"bare claude-agent-sdk can_use_tool cycle {bare_median:8.3f} ms")
    print(f"through midturn (Runtime, memory)        {adapter_median:8.3f} ms")
    print(f"  of which the runtime's ask/answer/end  {medians['runtime']:8.3f} ms")
    print(f"ratio {ratio:.2f}x (goal <= {GOAL}x): {'met' if ratio <= GOAL else 'NOT met'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    options = parser.parse_args()
    asyncio.run(main(options.rounds, options.repeats))
