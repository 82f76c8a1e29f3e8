"""`midturn hook claude-code` as Claude Code runs it: a subprocess with the documented hook
payload on stdin, its decision on stdout, against a live gateway that a second party (the
test, through the answerer port) answers. Turns and scenarios 5-7: test_claude_code_turns.py."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests._servers import LiveGateway, start_gateway
from tests.adapters._claude_code_hook import (
    ADMIN,
    ASK_INPUT,
    BUILD,
    QUESTION,
    ROOT,
    Hook,
    asked,
    ended_at_the_gateway,
    payload,
    pending,
    quiet,
    specific,
    turn_payload,
)

from midturn import AsyncClient


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[LiveGateway]:
    server = start_gateway(f"sqlite:///{tmp_path / 'midturn.db'}", ADMIN)
    yield server
    server.stop()


@pytest.fixture
async def person(gateway: LiveGateway) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(gateway.url, ADMIN) as client:
        yield client


async def test_ask_user_question_is_answered_from_the_inbox_keyed_by_question_text(
    gateway: LiveGateway, person: AsyncClient, tmp_path: Path
) -> None:
    hook = Hook(
        tmp_path, gateway.url, payload("PreToolUse", "AskUserQuestion", ASK_INPUT, "toolu_01")
    )
    ask = await asked(person)
    assert ask.kind == "ask" and ask.dialect == "claude" and ask.tool_call_id == "toolu_01"
    await person.answer(ask.id, {"answers": {"Database": "SQLite", "Regions": ["EU", "US"]}})
    code, output, _ = await hook.output()
    assert code == 0
    decided = specific(output)
    assert decided["hookEventName"] == "PreToolUse"
    assert decided["permissionDecision"] == "allow"
    updated = decided["updatedInput"]
    assert updated["questions"] == ASK_INPUT["questions"]  # Claude Code's own input, intact
    assert updated["answers"] == {QUESTION: "SQLite", "Which regions should it run in?": "EU, US"}
    # one session for this Claude Code session, titled from its working folder
    (session_file,) = await asyncio.to_thread(lambda: list(tmp_path.glob("*.json")))
    assert json.loads(session_file.read_text())["title"] == "billing-api"
    assert session_file.stat().st_mode & 0o077 == 0


async def test_a_skipped_question_never_reads_as_consent(
    gateway: LiveGateway, person: AsyncClient, tmp_path: Path
) -> None:
    hook = Hook(
        tmp_path, gateway.url, payload("PreToolUse", "AskUserQuestion", ASK_INPUT, "toolu_02")
    )
    ask = await asked(person)
    await person.answer(ask.id, {"skip": True})
    code, output, _ = await hook.output()
    decided = specific(output)
    assert code == 0 and decided["permissionDecision"] == "deny"
    assert "updatedInput" not in decided
    assert "User has answered" not in decided["permissionDecisionReason"]
    assert "skipped" in decided["permissionDecisionReason"]


async def test_a_rerun_hook_never_asks_twice(
    gateway: LiveGateway, person: AsyncClient, tmp_path: Path
) -> None:
    data = payload("PreToolUse", "AskUserQuestion", ASK_INPUT, "toolu_03")
    first = Hook(tmp_path, gateway.url, data)
    ask = await asked(person)
    first.process.kill()  # Claude Code gave up on it (its hook timeout), the ask still waits
    await first.output()
    second = Hook(tmp_path, gateway.url, data)  # the same tool call, run again
    await person.answer(ask.id, {"answers": {"Database": "PostgreSQL", "Regions": None}})
    _, output, _ = await second.output()
    assert specific(output)["updatedInput"]["answers"] == {QUESTION: "PostgreSQL"}
    third = Hook(tmp_path, gateway.url, data)  # once more, after it settled
    _, again, _ = await third.output()
    assert again == output
    listed = await person.get(ask.id)
    assert listed.status == "answered"
    assert await person.inbox() == []  # nothing was asked again


@pytest.mark.parametrize("event", ["PreToolUse", "PermissionRequest"])
async def test_permissions_allow_deny_and_allow_for_turn(
    gateway: LiveGateway, person: AsyncClient, tmp_path: Path, event: str
) -> None:
    command = {"command": "rm -rf build/", "description": "Clean the build folder"}
    allowed = Hook(tmp_path, gateway.url, payload(event, "Bash", command, "toolu_10"))
    request = await asked(person)
    assert request.kind == "permission" and request.permission is not None
    assert request.permission.tool == "Bash"
    assert request.permission.summary == "Bash: rm -rf build/"
    await person.decide(request.id, "allow")
    _, output, _ = await allowed.output()
    decided = specific(output)
    if event == "PreToolUse":
        assert decided["permissionDecision"] == "allow"
    else:
        assert decided["decision"]["behavior"] == "allow"

    denied = Hook(tmp_path, gateway.url, payload(event, "Bash", command, "toolu_11"))
    first_session = request.session_id
    request = await asked(person)
    assert request.session_id == first_session  # one midturn session for the Claude Code one
    await person.decide(request.id, "deny", message="Not the build folder; it holds releases")
    _, output, _ = await denied.output()
    decided = specific(output)
    if event == "PreToolUse":
        assert decided["permissionDecision"] == "deny"
        assert decided["permissionDecisionReason"] == "Not the build folder; it holds releases"
    else:
        assert decided["decision"] == {
            "behavior": "deny",
            "message": "Not the build folder; it holds releases",
            "interrupt": False,
        }
    assert len(await asyncio.to_thread(lambda: list(tmp_path.glob("*.json")))) == 1


async def test_an_unreachable_gateway_falls_back_to_claude_codes_prompt(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    for tool, tool_input in (("AskUserQuestion", ASK_INPUT), ("Bash", {"command": "ls"})):
        code, output, err = await Hook(
            tmp_path, closed, payload("PreToolUse", tool, tool_input, "toolu_20")
        ).output()
        assert code == 0
        assert specific(output)["permissionDecision"] == "ask"  # never an allow
        assert "cannot reach the gateway" in err
    code, output, _ = await Hook(
        tmp_path, closed, payload("PermissionRequest", "Bash", {"command": "ls"}, "toolu_21")
    ).output()
    assert code == 0 and output is None  # no decision: Claude Code shows its own dialog


async def test_no_token_or_an_answer_token_falls_back_too(
    gateway: LiveGateway, person: AsyncClient, tmp_path: Path
) -> None:
    data = payload("PreToolUse", "Bash", {"command": "ls"}, "toolu_30")
    _, output, _ = await Hook(tmp_path, gateway.url, data, MIDTURN_TOKEN="").output()
    assert specific(output)["permissionDecision"] == "ask"
    session = await person.create_session()
    _, output, err = await Hook(
        tmp_path, gateway.url, data, MIDTURN_TOKEN=session.answer_token
    ).output()
    assert specific(output)["permissionDecision"] == "ask"
    assert "answer token" in err
    assert await person.inbox() == []


async def test_a_malformed_question_is_denied_with_problems_the_model_can_fix(
    gateway: LiveGateway, person: AsyncClient, tmp_path: Path
) -> None:
    bad = {
        "questions": [
            {
                "question": "Pick?",
                "header": "Pick",
                "options": [{"label": "A", "description": "a"}],
                "multiSelect": False,
            }
        ]
    }
    _, output, _ = await Hook(
        tmp_path, gateway.url, payload("PreToolUse", "AskUserQuestion", bad, "toolu_40")
    ).output()
    decided = specific(output)
    assert decided["permissionDecision"] == "deny"
    assert re.search(r"questions\[0\]\.options", decided["permissionDecisionReason"])
    assert await person.inbox() == []


async def test_the_settings_json_in_the_docs_is_valid_and_every_entry_runs(
    gateway: LiveGateway, person: AsyncClient, tmp_path: Path
) -> None:
    """The page's `settings.json` registers the hook for every event it handles, each
    entry's command runs as Claude Code would run it for that event, and the whole turn
    (prompt, a permission allowed for the turn, its next call, stop) works through it."""
    page = (ROOT / "docs" / "adapters" / "claude-code.md").read_text()
    blocks = re.findall(r"```json\n(.*?)```", page, re.S)
    settings = json.loads(blocks[0])
    assert set(settings["hooks"]) == {"PreToolUse", "PermissionRequest", "UserPromptSubmit", "Stop"}
    entries = {
        event: [hook for entry in found for hook in entry["hooks"]]
        for event, found in settings["hooks"].items()
    }
    assert all(h["type"] == "command" for hooks in entries.values() for h in hooks)
    commands = {event: hooks[0]["command"].split() for event, hooks in entries.items()}
    assert all(c[:3] == ["midturn", "hook", "claude-code"] for c in commands.values())
    matchers = {e["matcher"] for e in settings["hooks"]["PreToolUse"]}
    assert "AskUserQuestion" in matchers

    def hook(event: str, data: dict[str, Any]) -> Hook:
        return Hook(tmp_path, gateway.url, data, args=commands[event][3:])

    await quiet(tmp_path, gateway.url, turn_payload("UserPromptSubmit", prompt="Build it"))
    first = hook("PermissionRequest", payload("PermissionRequest", "Bash", BUILD, "toolu_1a"))
    (request,) = await pending(person, 1)
    await person.decide(request.id, "allow_for_turn")
    _, output, _ = await first.output()
    assert specific(output)["decision"]["behavior"] == "allow"
    _, output, _ = await hook(
        "PermissionRequest", payload("PermissionRequest", "Bash", BUILD, "toolu_1b")
    ).output()
    assert specific(output)["decision"]["behavior"] == "allow"  # the same turn: not asked
    code, output, err = await hook("Stop", turn_payload("Stop", stop_hook_active=False)).output()
    assert (code, output) == (0, None), err
    assert request.turn_id is not None
    assert await ended_at_the_gateway(person, request.session_id, request.turn_id)
    question = hook("PreToolUse", payload("PreToolUse", "AskUserQuestion", ASK_INPUT, "toolu_1c"))
    (ask,) = await pending(person, 1)
    await person.answer(ask.id, {"answers": {"Database": "SQLite", "Regions": ["EU"]}})
    _, output, _ = await question.output()
    assert specific(output)["permissionDecision"] == "allow"
    shown = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "midturn.cli", *commands["PreToolUse"][1:], "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert "PreToolUse" in shown.stdout and "UserPromptSubmit" in shown.stdout


async def test_the_interaction_says_who_asks_and_what_claude_was_doing(
    gateway: LiveGateway, person: AsyncClient, tmp_path: Path
) -> None:
    """The hook reads the end of Claude Code's transcript: the newest assistant text
    becomes the context's `doing`, beside the agent's name and the tool call."""
    transcript = tmp_path / "transcript.jsonl"
    lines = [
        {"type": "user", "message": {"role": "user", "content": "Clean up and rebuild"}},
        {
            "type": "assistant",
            "message": {"content": [{"type": "text", "text": "Old text, not the newest."}]},
        },
        {
            "type": "assistant",
            "message": {
                "content": [
                    {"type": "text", "text": "The build folder is stale; removing it first."},
                    {"type": "tool_use", "id": "toolu_60", "name": "Bash", "input": {}},
                ]
            },
        },
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "x"}]}},
    ]
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n{cut")
    command = {"command": "rm -rf build/"}
    data = payload("PreToolUse", "Bash", command, "toolu_60")
    data |= {"transcript_path": str(transcript), "agent_id": "a1", "agent_type": "cleaner"}
    hook = Hook(tmp_path, gateway.url, data)
    request = await asked(person)
    assert request.context is not None
    assert request.context.agent == "Claude Code · cleaner"
    assert request.context.doing == "The build folder is stale; removing it first."
    assert request.context.tool is not None and request.context.tool.name == "Bash"
    assert json.loads(request.context.tool.input or "") == command
    await person.decide(request.id, "deny", message="not now")
    _, output, _ = await hook.output()
    assert specific(output)["permissionDecision"] == "deny"


def test_a_missing_or_unreadable_transcript_gives_no_doing(tmp_path: Path) -> None:
    from midturn._hook_claude_code import last_assistant_text

    assert last_assistant_text("") is None
    assert last_assistant_text(str(tmp_path / "absent.jsonl")) is None
    (tmp_path / "junk.jsonl").write_bytes(b"\xff\xfe not json\n[1, 2]\n")
    assert last_assistant_text(str(tmp_path / "junk.jsonl")) is None
