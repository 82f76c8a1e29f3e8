"""`midturn.adapters.claude_agent` through the real `claude-agent-sdk`: `query()` over its
`Transport` interface, with a scripted transport that plays Claude Code's side of the
control protocol (`initialize`, `can_use_tool` for `AskUserQuestion` and for `Bash`, the
tool results, the final `result`). No `claude` binary, no network."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions, Transport, UserMessage, query
from claude_agent_sdk.types import ToolResultBlock
from tests._servers import SAFETY_S, start_gateway

from midturn import Asker, AsyncClient, Runtime
from midturn.adapters.claude_agent import MidturnPermissions
from midturn.store import open_store
from midturn.testing import (
    ScriptedResponder,
    allow,
    allow_for_turn,
    answer,
    deny,
    skip,
    stop_turn,
)

ADMIN = "claude-agent-admin-0123456789abcdef"
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
    """Claude Code's side of the stream-json protocol, scripted. Each step is the tool
    calls of one model step: their `can_use_tool` requests go out together, and once the
    SDK has answered all of them each allowed call "runs" (its tool result goes back into
    the conversation, as Claude Code reports it), then the run ends with a `result`."""

    def __init__(self, steps: list[list[Call]], *, agent_id: str | None = None) -> None:
        self.steps = steps
        self.agent_id = agent_id
        self.decisions: dict[str, dict[str, Any]] = {}  # tool_use_id → the SDK's response
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

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        for number, step in enumerate(self.steps):
            asked: list[tuple[Call, asyncio.Future[dict[str, Any]]]] = []
            for index, call in enumerate(step):
                name, tool_input, tool_use_id = call
                request_id = f"cli-{number}-{index}"
                self._waiting[request_id] = future = loop.create_future()
                asked.append((call, future))
                request: dict[str, Any] = {
                    "subtype": "can_use_tool",
                    "tool_name": name,
                    "input": tool_input,
                    "tool_use_id": tool_use_id,
                    "permission_suggestions": [],
                }
                if self.agent_id:
                    request["agent_id"] = self.agent_id
                self._out.put_nowait(
                    {"type": "control_request", "request_id": request_id, "request": request}
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


async def run(permissions: MidturnPermissions, cli: ScriptedClaudeCode) -> list[Any]:
    """One query through the real SDK, inside one midturn turn."""
    options = ClaudeAgentOptions(can_use_tool=permissions)
    async with permissions.turn():
        return [m async for m in query(prompt="Set up the service", options=options, transport=cli)]


# -- the asker: the in-process runtime, or a client of a live gateway --------------------


class Midturn:
    def __init__(self, asker: Asker, answerer: Any, session_id: str) -> None:
        self.asker, self.answerer, self.session_id = asker, answerer, session_id


@pytest.fixture
async def runtime_side() -> AsyncIterator[Midturn]:
    async with open_store("memory://") as store, Runtime(store) as runtime:
        yield Midturn(runtime, runtime, "s1")


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[Any]:
    server = start_gateway(f"sqlite:///{tmp_path / 'midturn.db'}", ADMIN)
    yield server
    server.stop()


@pytest.fixture
async def gateway_side(gateway: Any) -> AsyncIterator[Midturn]:
    async with AsyncClient(gateway.url, ADMIN) as admin:
        session = await admin.create_session({"client": "test"})
        async with (
            AsyncClient(gateway.url, session.agent_token) as agent,
            AsyncClient(gateway.url, session.answer_token) as person,
        ):
            yield Midturn(agent, person, session.session_id)


@pytest.fixture(params=["runtime", "gateway"])
def side(request: pytest.FixtureRequest) -> Midturn:
    found: Midturn = request.getfixturevalue(f"{request.param}_side")
    return found


async def within(work: Any) -> Any:
    return await asyncio.wait_for(work, SAFETY_S * 2)


async def test_1_answer_continues_the_same_run(side: Midturn) -> None:
    permissions = MidturnPermissions(side.asker, side.session_id)
    cli = ScriptedClaudeCode([[("AskUserQuestion", ASK, "toolu_1")]])
    script = [answer({"answers": {"Database": "SQLite"}})]
    async with ScriptedResponder(side.answerer, script, session_id=side.session_id) as human:
        messages = await within(run(permissions, cli))
        await within(human.finished())
    decision = cli.decisions["toolu_1"]
    assert decision["behavior"] == "allow"
    assert decision["updatedInput"]["questions"] == ASK["questions"]
    assert decision["updatedInput"]["answers"] == {QUESTION: "SQLite"}  # by the full text
    assert tool_results(messages) == {
        "toolu_1": [f'User has answered your questions: "{QUESTION}"="SQLite".']
    }


async def test_2_malformed_ask_is_a_fixable_error(runtime_side: Midturn) -> None:
    bad = {"questions": [{**ASK["questions"][0], "options": ASK["questions"][0]["options"][:1]}]}
    permissions = MidturnPermissions(runtime_side.asker, runtime_side.session_id)
    cli = ScriptedClaudeCode([[("AskUserQuestion", bad, "toolu_2")]])
    messages = await within(run(permissions, cli))
    decision = cli.decisions["toolu_2"]
    assert decision["behavior"] == "deny"
    assert "questions[0].options" in decision["message"]
    assert cli.ran == [] and len(tool_results(messages)["toolu_2"]) == 1
    assert await runtime_side.answerer.queue(runtime_side.session_id) == []


async def test_a_skipped_question_never_reads_as_consent(runtime_side: Midturn) -> None:
    permissions = MidturnPermissions(runtime_side.asker, runtime_side.session_id)
    cli = ScriptedClaudeCode([[("AskUserQuestion", ASK, "toolu_s")]])
    script = [skip()]
    async with ScriptedResponder(runtime_side.answerer, script, session_id="s1") as human:
        await within(run(permissions, cli))
        await within(human.finished())
    decision = cli.decisions["toolu_s"]
    assert decision["behavior"] == "deny" and cli.ran == []
    assert "skipped" in decision["message"] and "User has answered" not in decision["message"]


def bash(command: str) -> dict[str, Any]:
    return {"command": command, "description": "run it"}


async def test_3_permissions_allow_deny_allow_for_turn(side: Midturn) -> None:
    permissions = MidturnPermissions(side.asker, side.session_id)
    steps: list[list[Call]] = [
        [("Bash", bash("make build"), "toolu_a")],
        [("Bash", bash("rm -rf /srv"), "toolu_b")],
        [("Write", {"file_path": "/tmp/x", "content": "x"}, "toolu_c")],
        [("Write", {"file_path": "/tmp/y", "content": "y"}, "toolu_d")],  # not asked again
    ]
    cli = ScriptedClaudeCode(steps)
    script = [allow(), deny("Never touch /srv"), allow_for_turn()]
    async with ScriptedResponder(side.answerer, script, session_id=side.session_id) as human:
        await within(run(permissions, cli))
        await within(human.finished())
    assert human.unscripted == []  # the fourth call was not asked
    assert cli.decisions["toolu_a"]["behavior"] == "allow"
    assert cli.decisions["toolu_b"] == {"behavior": "deny", "message": "Never touch /srv"}
    assert cli.decisions["toolu_c"]["behavior"] == "allow"
    assert cli.decisions["toolu_d"]["behavior"] == "allow"
    assert [name for name, _ in cli.ran] == ["Bash", "Write", "Write"]


async def test_5_two_asks_in_one_step_fifo(runtime_side: Midturn) -> None:
    second = {"questions": [{**ASK["questions"][0], "question": "Which cache should it use?"}]}
    permissions = MidturnPermissions(runtime_side.asker, runtime_side.session_id)
    cli = ScriptedClaudeCode(
        [[("AskUserQuestion", ASK, "toolu_x"), ("AskUserQuestion", second, "toolu_y")]]
    )
    script = [answer("PostgreSQL"), answer("SQLite")]
    async with ScriptedResponder(runtime_side.answerer, script, session_id="s1") as human:
        await within(run(permissions, cli))
        await within(human.finished())
    asked = [r.interaction.tool_call_id for r in human.responses]
    assert asked == ["toolu_x", "toolu_y"]  # in the order the model called them
    assert cli.decisions["toolu_x"]["updatedInput"]["answers"] == {QUESTION: "PostgreSQL"}
    assert cli.decisions["toolu_y"]["updatedInput"]["answers"] == {
        "Which cache should it use?": "SQLite"
    }


async def test_6_stopped_turn_cancels(runtime_side: Midturn) -> None:
    permissions = MidturnPermissions(runtime_side.asker, runtime_side.session_id)
    cli = ScriptedClaudeCode(
        [[("AskUserQuestion", ASK, "toolu_6")], [("Bash", bash("ls"), "toolu_7")]]
    )
    async with ScriptedResponder(runtime_side.answerer, [stop_turn()], session_id="s1") as human:
        await within(run(permissions, cli))
        await within(human.finished())
    decision = cli.decisions["toolu_6"]
    assert decision["behavior"] == "deny" and decision["interrupt"] is True
    # the turn ended: a later call in it settles cancelled at once, nothing runs
    assert cli.decisions["toolu_7"]["behavior"] == "deny"
    assert cli.ran == []
    (stopped,) = [
        i
        for i in await runtime_side.asker.store.list_interactions(session_id="s1")
        if i.kind == "ask"
    ]  # type: ignore[attr-defined]
    assert stopped.status == "cancelled"


@pytest.mark.parametrize("where", ["subagent", "headless"])
async def test_7_subagent_and_headless_have_no_tool(runtime_side: Midturn, where: str) -> None:
    interactive = where != "headless"
    permissions = MidturnPermissions(
        runtime_side.asker, runtime_side.session_id, interactive=interactive
    )
    agent = "agent-1" if where == "subagent" else None
    cli = ScriptedClaudeCode([[("AskUserQuestion", ASK, "toolu_9")]], agent_id=agent)
    await within(run(permissions, cli))
    decision = cli.decisions["toolu_9"]
    assert decision["behavior"] == "deny"
    assert "no one" in decision["message"].lower() or "unavailable" in decision["message"].lower()
    assert await runtime_side.asker.store.list_interactions(session_id="s1") == []  # type: ignore[attr-defined]


def test_import_without_the_sdk_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['claude_agent_sdk'] = None\n"
        "try:\n    import midturn.adapters.claude_agent\n"
        "except ImportError as e:\n    print(e)\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ),
    )
    assert 'pip install "midturn[claude-agent]"' in shown.stdout


def test_the_docs_example_runs() -> None:
    page = (
        Path(__file__).resolve().parents[2] / "docs" / "adapters" / "claude-agent.md"
    ).read_text()
    (block,) = re.findall(r"<!-- runnable -->\n```python\n(.*?)```", page, re.S)
    shown = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, env=dict(os.environ)
    )
    assert shown.returncode == 0, shown.stderr
    assert "SQLite" in shown.stdout
