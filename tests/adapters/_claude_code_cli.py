"""Claude Code's side of the stream-json control protocol, scripted, as a
`claude_agent_sdk.Transport`: what the real SDK's `query()` talks to in the tests of
`midturn.adapters.claude_agent` (tests/adapters/test_claude_agent.py; the restart
scenario runs the real CLI instead, tests/adapters/_claude_agent_worker.py). No `claude`
binary, no network."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from claude_agent_sdk import Transport, UserMessage
from claude_agent_sdk.types import ToolResultBlock

QUESTION = "Which database should the service use?"
ASK: dict[str, Any] = {
    "questions": [
        {
            "question": QUESTION,
            "header": "Database",
            "options": [
                {"label": "PostgreSQL", "description": "Managed, scales out"},
                {"label": "SQLite", "description": "Embedded, zero setup"},
            ],
            "multiSelect": False,
        }
    ]
}
Call = tuple[str, dict[str, Any], str]  # tool name, input, tool_use_id


class ScriptedClaudeCode(Transport):
    """Each step is the tool calls of one model step: their `can_use_tool` requests go
    out together, and once the SDK has answered all of them each allowed call "runs"
    (its tool result goes back into the conversation, as Claude Code reports it), then
    the run ends with a `result`."""

    def __init__(self, steps: list[list[Call]], *, agent_id: str | None = None) -> None:
        self.steps = steps
        self.agent_id = agent_id
        self.decisions: dict[str, dict[str, Any]] = {}  # tool_use_id → the SDK's response
        self.initialize: dict[str, Any] | None = None  # the SDK's initialize request
        self.ran: list[tuple[str, dict[str, Any]]] = []  # the tools that ran, with their input
        self._out: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._play: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        pass

    def is_ready(self) -> bool:
        return True

    async def write(self, data: str) -> None:
        for line in data.splitlines():
            message = json.loads(line)
            if message["type"] == "control_request":
                if message["request"].get("subtype") == "initialize":
                    self.initialize = message["request"]
                self._reply(message)
            elif message["type"] == "control_response":
                response = message["response"]
                self._waiting.pop(response["request_id"]).set_result(response)
            elif message["type"] == "user" and self._play is None:
                self._play = asyncio.create_task(self._run())

    def _reply(self, request: dict[str, Any]) -> None:
        self._out.put_nowait(
            {
                "type": "control_response",
                "response": {
                    "subtype": "success",
                    "request_id": request["request_id"],
                    "response": {},
                },
            }
        )

    def _request(self, name: str, tool_input: dict[str, Any], tool_use_id: str) -> dict[str, Any]:
        request: dict[str, Any] = {
            "subtype": "can_use_tool",
            "tool_name": name,
            "input": tool_input,
            "tool_use_id": tool_use_id,
            "permission_suggestions": [],
        }
        if self.agent_id:
            request["agent_id"] = self.agent_id
        return request

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        for number, step in enumerate(self.steps):
            asked: list[tuple[Call, asyncio.Future[dict[str, Any]]]] = []
            for index, call in enumerate(step):
                name, tool_input, tool_use_id = call
                request_id = f"cli-{number}-{index}"
                self._waiting[request_id] = future = loop.create_future()
                asked.append((call, future))
                self._out.put_nowait(
                    {
                        "type": "control_request",
                        "request_id": request_id,
                        "request": self._request(name, tool_input, tool_use_id),
                    }
                )
            for (name, _, tool_use_id), future in asked:
                response = await future
                decision = response.get("response", {"error": response.get("error")})
                self.decisions[tool_use_id] = decision
                self._out.put_nowait(self._tool_result(name, tool_use_id, decision))
        self._out.put_nowait(
            {
                "type": "result",
                "subtype": "success",
                "duration_ms": 1,
                "duration_api_ms": 1,
                "is_error": False,
                "num_turns": len(self.steps),
                "session_id": "scripted",
                "result": "done",
            }
        )

    def _tool_result(self, name: str, tool_use_id: str, decision: dict[str, Any]) -> dict[str, Any]:
        """What Claude Code puts in the conversation for the call: the tool's output when
        it was allowed, the deny message when not."""
        if decision.get("behavior") == "allow":
            updated = decision["updatedInput"]
            self.ran.append((name, updated))
            if name == "AskUserQuestion":
                pairs = ", ".join(f'"{q}"="{a}"' for q, a in updated.get("answers", {}).items())
                text = f"User has answered your questions: {pairs}."
            else:
                text = f"ran {updated.get('command')}"
            error = False
        else:
            text, error = str(decision.get("message") or decision), True
        return {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": tool_use_id,
                        "content": text,
                        "is_error": error,
                    }
                ],
            },
            "session_id": "scripted",
            "parent_tool_use_id": None,
        }

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        while (message := await self._out.get()) is not None:
            yield message

    async def end_input(self) -> None:
        """Claude Code exits once its stdin closes and the run is over: end the stream."""
        if self._play is not None:
            await self._play
        self._out.put_nowait(None)

    async def close(self) -> None:
        if self._play is not None and not self._play.done():
            self._play.cancel()
        self._out.put_nowait(None)


def tool_results(messages: list[Any]) -> dict[str, list[Any]]:
    """tool_use_id → the tool result blocks the host's history holds for it."""
    found: dict[str, list[Any]] = {}
    for message in messages:
        if isinstance(message, UserMessage) and isinstance(message.content, list):
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    found.setdefault(block.tool_use_id, []).append(block.content)
    return found
