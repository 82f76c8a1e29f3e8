"""`midturn hook claude-code` and Claude Code's turns: `UserPromptSubmit` and `Stop` give a
Claude Code turn one midturn turn; scenarios 5-7 on the hook subprocess against a live
gateway answered by a second party; and the real Claude Code (the CLI bundled with
claude-agent-sdk) against a stand-in Anthropic API, running the documented settings."""

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

import claude_agent_sdk
import pytest
from claude_agent_sdk import ClaudeAgentOptions, PermissionResultDeny, ResultMessage, query
from tests._servers import SAFETY_S, LiveGateway, start_gateway
from tests.adapters._claude_code_hook import (
    ADMIN,
    ASK_INPUT,
    BUILD,
    QUESTION,
    ROOT,
    Hook,
    ended_at_the_gateway,
    payload,
    pending,
    quiet,
    specific,
    turn_payload,
)
from tests.adapters._fake_anthropic import FakeAnthropic, cli_environment
from tests.adapters._fake_anthropic import tool_results as fake_tool_results

from midturn import AsyncClient
from midturn.store import open_store


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[LiveGateway]:
    server = start_gateway(f"sqlite:///{tmp_path / 'midturn.db'}", ADMIN)
    yield server
    server.stop()


@pytest.fixture
async def person(gateway: LiveGateway) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(gateway.url, ADMIN) as client:
        yield client


async def test_allow_for_this_turn_ends_with_the_claude_code_turn(
    gateway: LiveGateway, person: AsyncClient, tmp_path: Path
) -> None:
    await quiet(tmp_path, gateway.url, turn_payload("UserPromptSubmit", prompt="Clean up"))
    first = Hook(tmp_path, gateway.url, payload("PreToolUse", "Bash", BUILD, "toolu_50"))
    (request,) = await pending(person, 1)
    turn_id = request.turn_id
    assert turn_id is not None and turn_id.startswith("claude-code-")
    await person.decide(request.id, "allow_for_turn")
    _, output, _ = await first.output()
    assert specific(output)["permissionDecision"] == "allow"

    # the next call of the tool in the same Claude Code turn is allowed without asking
    _, output, _ = await Hook(
        tmp_path, gateway.url, payload("PreToolUse", "Bash", BUILD, "toolu_51")
    ).output()
    assert specific(output)["permissionDecision"] == "allow"
    assert await person.inbox() == []

    await quiet(tmp_path, gateway.url, turn_payload("Stop", stop_hook_active=False))
    assert await ended_at_the_gateway(person, request.session_id, turn_id)

    # the next prompt is another turn: the grant is gone, the call is asked again
    await quiet(tmp_path, gateway.url, turn_payload("UserPromptSubmit", prompt="Clean up"))
    again = Hook(tmp_path, gateway.url, payload("PreToolUse", "Bash", BUILD, "toolu_52"))
    (asked_again,) = await pending(person, 1)
    assert asked_again.tool_call_id == "toolu_52"
    assert asked_again.turn_id not in (None, turn_id)  # the same prompt text, a new turn
    await person.decide(asked_again.id, "deny", message="Not now")
    _, output, _ = await again.output()
    assert specific(output)["permissionDecision"] == "deny"


async def test_without_the_prompt_hooks_each_call_is_a_turn_of_its_own(
    gateway: LiveGateway, person: AsyncClient, tmp_path: Path
) -> None:
    first = Hook(tmp_path, gateway.url, payload("PreToolUse", "Bash", BUILD, "toolu_60"))
    (request,) = await pending(person, 1)
    await person.decide(request.id, "allow_for_turn")
    await first.output()
    second = Hook(tmp_path, gateway.url, payload("PreToolUse", "Bash", BUILD, "toolu_61"))
    (asked_again,) = await pending(person, 1)  # the grant covered only its own call
    assert asked_again.tool_call_id == "toolu_61" and asked_again.turn_id != request.turn_id
    await person.decide(asked_again.id, "allow")
    _, output, _ = await second.output()
    assert specific(output)["permissionDecision"] == "allow"


async def test_an_interrupted_turn_ends_when_the_next_prompt_comes(
    gateway: LiveGateway, person: AsyncClient, tmp_path: Path
) -> None:
    """Claude Code runs no `Stop` hook when the person interrupts it: the next prompt ends
    the turn it interrupted (and its grants) at the gateway."""
    await quiet(tmp_path, gateway.url, turn_payload("UserPromptSubmit", prompt="Clean up"))
    first = Hook(tmp_path, gateway.url, payload("PreToolUse", "Bash", BUILD, "toolu_70"))
    (request,) = await pending(person, 1)
    await person.decide(request.id, "allow_for_turn")
    await first.output()
    assert request.turn_id is not None
    assert not await ended_at_the_gateway(person, request.session_id, request.turn_id)
    # the same prompt hook run again keeps its turn
    await quiet(tmp_path, gateway.url, turn_payload("UserPromptSubmit", prompt="Clean up"))
    assert not await ended_at_the_gateway(person, request.session_id, request.turn_id)
    await quiet(tmp_path, gateway.url, turn_payload("UserPromptSubmit", prompt="Stop that"))
    assert await ended_at_the_gateway(person, request.session_id, request.turn_id)


async def test_5_two_parallel_asks_queue_in_fifo_order(
    gateway: LiveGateway, person: AsyncClient, tmp_path: Path
) -> None:
    await quiet(tmp_path, gateway.url, turn_payload("UserPromptSubmit", prompt="Set it up"))
    regions = {"questions": [ASK_INPUT["questions"][1]]}
    hooks = {
        "toolu_80": Hook(
            tmp_path, gateway.url, payload("PreToolUse", "AskUserQuestion", ASK_INPUT, "toolu_80")
        ),
        "toolu_81": Hook(
            tmp_path, gateway.url, payload("PreToolUse", "AskUserQuestion", regions, "toolu_81")
        ),
    }
    announced = await pending(person, 2)
    (session_id,) = {a.session_id for a in announced}  # one session, opened once
    queue = await person.queue(session_id)
    assert [q.id for q in queue] == [a.id for a in announced]  # first parked, first asked
    head, behind = queue
    answers = {
        "toolu_80": {"answers": {"Database": "SQLite"}},
        "toolu_81": {"answers": {"Regions": ["EU"]}},
    }
    await person.answer(head.id, answers[str(head.tool_call_id)])
    await person.answer(behind.id, answers[str(behind.tool_call_id)])
    outputs = {call: await hook.output() for call, hook in hooks.items()}
    assert specific(outputs["toolu_80"][1])["updatedInput"]["answers"] == {QUESTION: "SQLite"}
    assert specific(outputs["toolu_81"][1])["updatedInput"]["answers"] == {
        "Which regions should it run in?": "EU"
    }
    sessions = await asyncio.to_thread(lambda: [p for p in tmp_path.glob("*.json")])
    assert len([p for p in sessions if not p.name.endswith(".turn.json")]) == 1


async def test_6_a_stopped_turn_returns_a_waiting_hook_with_no_allow(
    gateway: LiveGateway, person: AsyncClient, tmp_path: Path
) -> None:
    await quiet(tmp_path, gateway.url, turn_payload("UserPromptSubmit", prompt="Deploy"))
    question = Hook(
        tmp_path, gateway.url, payload("PreToolUse", "AskUserQuestion", ASK_INPUT, "toolu_90")
    )
    command = Hook(tmp_path, gateway.url, payload("PreToolUse", "Bash", BUILD, "toolu_91"))
    announced = await pending(person, 2)
    (turn_id,) = {a.turn_id for a in announced}
    assert turn_id is not None
    await person.stop_turn(announced[0].session_id, turn_id)  # the inbox's Stop
    for hook in (question, command):
        code, output, _ = await hook.output()
        assert code == 0 and output is not None
        decided = specific(output)
        assert decided["permissionDecision"] == "deny"  # never an allow
        assert "updatedInput" not in decided
        assert output["continue"] is False  # Claude stops
    assert await person.inbox() == []


async def test_7_a_sub_agents_question_is_unavailable_its_permissions_are_asked(
    gateway: LiveGateway, person: AsyncClient, tmp_path: Path
) -> None:
    sub = {"agent_id": "agent-7f3a", "agent_type": "Explore"}
    data = {**payload("PreToolUse", "AskUserQuestion", ASK_INPUT, "toolu_100"), **sub}
    code, output, _ = await Hook(tmp_path, gateway.url, data).output()
    decided = specific(output)
    assert code == 0 and decided["permissionDecision"] == "deny"
    assert "updatedInput" not in decided
    assert "no one" in decided["permissionDecisionReason"].lower()
    assert await person.inbox() == []  # asked of no one, nothing recorded
    assert await asyncio.to_thread(lambda: list(tmp_path.glob("*.json"))) == []

    command = Hook(
        tmp_path, gateway.url, {**payload("PreToolUse", "Bash", BUILD, "toolu_101"), **sub}
    )
    (request,) = await pending(person, 1)  # a person still decides what the sub-agent runs
    await person.decide(request.id, "allow")
    _, output, _ = await command.output()
    assert specific(output)["permissionDecision"] == "allow"

    # `claude --agent reviewer` names the root agent's type but no agent_id: it asks
    root = {**payload("PreToolUse", "AskUserQuestion", ASK_INPUT, "toolu_102")}
    question = Hook(tmp_path, gateway.url, {**root, "agent_type": "reviewer"})
    (ask,) = await pending(person, 1)
    assert ask.tool_call_id == "toolu_102"
    await person.answer(ask.id, {"answers": {"Database": "SQLite", "Regions": None}})
    _, output, _ = await question.output()
    assert specific(output)["permissionDecision"] == "allow"


@pytest.mark.parametrize("how", [["--unattended"], []])
async def test_7_an_unattended_run_asks_no_one(
    gateway: LiveGateway, person: AsyncClient, tmp_path: Path, how: list[str]
) -> None:
    """`claude -p` with no one to answer: `--unattended` (or MIDTURN_HOOK_UNATTENDED=1)."""
    env = {} if how else {"MIDTURN_HOOK_UNATTENDED": "1"}
    question = payload("PreToolUse", "AskUserQuestion", ASK_INPUT, "toolu_110")
    _, output, _ = await Hook(tmp_path, gateway.url, question, args=how, **env).output()
    decided = specific(output)
    assert decided["permissionDecision"] == "deny" and "updatedInput" not in decided
    assert "no one" in decided["permissionDecisionReason"].lower()
    command = payload("PreToolUse", "Bash", BUILD, "toolu_111")
    _, output, _ = await Hook(tmp_path, gateway.url, command, args=how, **env).output()
    assert specific(output)["permissionDecision"] == "ask"  # Claude Code's own rules, no allow
    request = payload("PermissionRequest", "Bash", BUILD, "toolu_112")
    code, output, _ = await Hook(tmp_path, gateway.url, request, args=how, **env).output()
    assert (code, output) == (0, None)
    assert await person.inbox() == []


async def test_a_turn_ended_by_an_api_error_ends_its_grants_too(
    gateway: LiveGateway, person: AsyncClient, tmp_path: Path
) -> None:
    """`StopFailure` (the turn ended on an API error) ends the turn as `Stop` does; a call
    made after it, before any new prompt, is a turn of its own."""
    await quiet(tmp_path, gateway.url, turn_payload("UserPromptSubmit", prompt="Migrate"))
    first = Hook(tmp_path, gateway.url, payload("PreToolUse", "Bash", BUILD, "toolu_120"))
    (request,) = await pending(person, 1)
    await person.decide(request.id, "allow_for_turn")
    await first.output()
    failure = turn_payload("StopFailure", error="rate_limit", error_details="429")
    await quiet(tmp_path, gateway.url, failure)
    assert request.turn_id is not None
    assert await ended_at_the_gateway(person, request.session_id, request.turn_id)
    later = Hook(tmp_path, gateway.url, payload("PreToolUse", "Bash", BUILD, "toolu_121"))
    (asked_again,) = await pending(person, 1)
    assert asked_again.turn_id != request.turn_id
    await person.decide(asked_again.id, "deny")
    _, output, _ = await later.output()
    assert specific(output)["permissionDecision"] == "deny"


# -- the real Claude Code ----------------------------------------------------------------


CLAUDE = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"


def _claude_code_model(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The model: tries to ask a question, then runs two commands, then says it is done."""
    done = fake_tool_results(messages)
    if not done:
        call = {"type": "tool_use", "id": "toolu_q", "name": "AskUserQuestion"}
        return [{**call, "input": ASK_INPUT}]
    if len(done) < 3:
        command = {"command": f"echo {len(done)} >> built.txt", "description": "Record a step"}
        return [{"type": "tool_use", "id": f"toolu_b{len(done)}", "name": "Bash", "input": command}]
    return [{"type": "text", "text": "done"}]


async def test_the_real_claude_code_runs_the_documented_settings(
    gateway: LiveGateway, person: AsyncClient, tmp_path: Path
) -> None:
    """`claude -p` (the CLI bundled with claude-agent-sdk, against a stand-in Anthropic
    API) with the page's `settings.json`: `-p` offers no `AskUserQuestion` (Claude Code
    2.1.332 answers the call "disabled for this session"), so nothing is asked for it; the
    first command's permission prompt reaches midturn, allowed for this turn it lets the
    second run unasked, and `Stop` ends the turn at the gateway."""
    page = (ROOT / "docs" / "adapters" / "claude-code.md").read_text()
    settings = re.findall(r"```json\n(.*?)```", page, re.S)[0]
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    work.mkdir()
    (home / ".claude" / "settings.json").write_text(settings)
    with FakeAnthropic(_claude_code_model) as api:
        env = {
            **os.environ,
            **cli_environment(api.url, str(home)),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "MIDTURN_GATEWAY": gateway.url,
            "MIDTURN_TOKEN": ADMIN,
            "MIDTURN_HOOK_STATE_DIR": str(tmp_path / "state"),
        }
        env.pop("MIDTURN_AGENT_TOKEN", None)
        claude = await asyncio.to_thread(
            subprocess.Popen,
            [str(CLAUDE), "-p", "Set up the billing service", "--output-format", "json"],
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            (request,) = await pending(person, 1)
            assert request.kind == "permission" and request.permission is not None
            assert request.permission.summary == "Bash: echo 1 >> built.txt"
            assert request.turn_id is not None and request.turn_id.startswith("claude-code-")
            await person.decide(request.id, "allow_for_turn")
            out, err = await asyncio.to_thread(claude.communicate, timeout=SAFETY_S * 6)
        finally:
            if claude.poll() is None:
                claude.kill()
                claude.communicate()
    assert claude.returncode == 0, err
    assert json.loads(out)["result"] == "done"
    refused = fake_tool_results(api.requests[1])[-1]
    assert refused["tool_use_id"] == "toolu_q" and refused["is_error"] is True
    assert "AskUserQuestion is disabled" in str(refused["content"])
    assert (work / "built.txt").read_text() == "1\n2\n"  # both ran, the first was asked
    async with open_store(gateway.db_url) as store:
        asked = await store.list_interactions(session_id=request.session_id)
    assert [(i.kind, i.status) for i in asked] == [("permission", "allowed")] * 2
    first, second = sorted(asked, key=lambda i: i.created_at)
    assert first.decision is not None and not first.decision.auto  # the person allowed it
    assert second.decision is not None and second.decision.auto  # the grant, no one asked
    assert await ended_at_the_gateway(person, request.session_id, request.turn_id)  # Stop ran


def _question_model(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The model: asks the question, then repeats the tool's result."""
    if results := fake_tool_results(messages):
        return [{"type": "text", "text": f"done: {results[-1]['content']}"}]
    return [{"type": "tool_use", "id": "toolu_q", "name": "AskUserQuestion", "input": ASK_INPUT}]


async def test_the_real_claude_code_takes_the_hooks_answers(
    gateway: LiveGateway, person: AsyncClient, tmp_path: Path
) -> None:
    """Where Claude Code offers `AskUserQuestion` (here a session driven by the Agent SDK,
    which loads the user's `settings.json`), the `PreToolUse` entry answers it: the
    person answers in midturn, Claude Code takes the hook's `updatedInput` and runs the
    tool, and the model reads the answers keyed by the question text."""
    page = (ROOT / "docs" / "adapters" / "claude-code.md").read_text()
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    work.mkdir()
    (home / ".claude" / "settings.json").write_text(re.findall(r"```json\n(.*?)```", page, re.S)[0])
    asked_host: list[str] = []

    async def host_prompt(tool: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked_host.append(tool)  # the hook decided: the SDK host is never asked
        return PermissionResultDeny(message="the host was asked")

    with FakeAnthropic(_question_model) as api:
        env = {
            **cli_environment(api.url, str(home)),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "MIDTURN_GATEWAY": gateway.url,
            "MIDTURN_TOKEN": ADMIN,
            "MIDTURN_HOOK_STATE_DIR": str(tmp_path / "state"),
        }
        options = ClaudeAgentOptions(
            env=env, cwd=str(work), setting_sources=["user"], can_use_tool=host_prompt
        )

        async def run() -> list[Any]:
            return [m async for m in query(prompt="Set up the service", options=options)]

        running = asyncio.create_task(run())
        (ask,) = await pending(person, 1)
        assert ask.kind == "ask" and ask.tool_call_id == "toolu_q" and ask.dialect == "claude"
        assert ask.turn_id is not None  # UserPromptSubmit opened the turn
        await person.answer(ask.id, {"answers": {"Database": "SQLite", "Regions": ["EU", "US"]}})
        messages = await asyncio.wait_for(running, SAFETY_S * 6)
    assert asked_host == []
    result = str(fake_tool_results(api.requests[-1])[-1]["content"])
    assert f'"{QUESTION}"="SQLite"' in result
    assert '"Which regions should it run in?"="EU, US"' in result
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error
    assert await ended_at_the_gateway(person, ask.session_id, ask.turn_id)  # Stop ran
