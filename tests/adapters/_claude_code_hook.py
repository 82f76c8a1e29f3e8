"""Shared by the tests of `midturn hook claude-code` (test_claude_code_hook.py,
test_claude_code_turns.py): the hook as Claude Code runs it, a subprocess with the
documented payload on stdin, and the payloads themselves."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests._servers import SAFETY_S

from midturn import AsyncClient, Interaction

ADMIN = "hook-admin-token-0123456789abcdef"
ROOT = Path(__file__).resolve().parents[2]
QUESTION = "Which database should the service use?"
ASK_INPUT: dict[str, Any] = {
    "questions": [
        {
            "question": QUESTION,
            "header": "Database",
            "options": [
                {"label": "PostgreSQL", "description": "Managed, scales out"},
                {"label": "SQLite", "description": "Embedded, zero setup"},
            ],
            "multiSelect": False,
        },
        {
            "question": "Which regions should it run in?",
            "header": "Regions",
            "options": [
                {"label": "EU", "description": "Frankfurt"},
                {"label": "US", "description": "Virginia"},
            ],
            "multiSelect": True,
        },
    ]
}


def payload(event: str, tool: str, tool_input: dict[str, Any], call: str) -> dict[str, Any]:
    """A hook payload as Claude Code documents it (common fields, then the tool's)."""
    return {
        "session_id": "5c1d0e2a-claude-session",
        "transcript_path": "/home/dev/.claude/projects/billing/5c1d0e2a.jsonl",
        "cwd": "/home/dev/src/billing-api",
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": call,
    }


class Hook:
    """`midturn hook claude-code` started with a payload on stdin."""

    def __init__(
        self,
        state: Path,
        gateway: str,
        data: dict[str, Any],
        args: list[str] | None = None,
        **env: str,
    ) -> None:
        environment = {
            **os.environ,
            "MIDTURN_GATEWAY": gateway,
            "MIDTURN_TOKEN": ADMIN,
            "MIDTURN_HOOK_STATE_DIR": str(state),
            "PYTHONPATH": str(ROOT / "src"),
            **env,
        }
        environment.pop("MIDTURN_AGENT_TOKEN", None)
        if "MIDTURN_HOOK_UNATTENDED" not in env:
            environment.pop("MIDTURN_HOOK_UNATTENDED", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "midturn.cli", "hook", "claude-code", *(args or [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environment,
        )
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(data).encode())
        self.process.stdin.close()

    async def output(self) -> tuple[int, dict[str, Any] | None, str]:
        """Exit code, the parsed stdout (None when empty) and stderr, once it exits."""
        code = await asyncio.to_thread(self.process.wait, SAFETY_S * 3)
        assert self.process.stdout is not None and self.process.stderr is not None
        out = self.process.stdout.read().decode()
        err = self.process.stderr.read().decode()
        self.process.stdout.close()
        self.process.stderr.close()
        return code, json.loads(out) if out.strip() else None, err


REQUESTED = {"user_question_requested", "permission_requested"}


async def asked(person: AsyncClient) -> Interaction:
    """The first interaction announced on the event stream that is still pending."""
    async with asyncio.timeout(SAFETY_S * 2):
        async for event in person.events():
            if event.type in REQUESTED and event.interaction_id is not None:
                found = await person.get(event.interaction_id)
                if found.pending:
                    return found
    raise AssertionError("the event stream ended")  # pragma: no cover


def specific(output: dict[str, Any] | None) -> dict[str, Any]:
    assert output is not None
    found: dict[str, Any] = output["hookSpecificOutput"]
    return found


def turn_payload(event: str, **fields: Any) -> dict[str, Any]:
    """A `UserPromptSubmit` or `Stop` payload as Claude Code documents it."""
    return {
        "session_id": "5c1d0e2a-claude-session",
        "transcript_path": "/home/dev/.claude/projects/billing/5c1d0e2a.jsonl",
        "cwd": "/home/dev/src/billing-api",
        "permission_mode": "default",
        "hook_event_name": event,
        **fields,
    }


async def quiet(state: Path, gateway: str, data: dict[str, Any], **env: str) -> None:
    """Run a turn hook: it exits 0 and prints nothing (plain stdout would become context
    for Claude, and no decision lets the prompt go on and Claude stop)."""
    code, output, err = await Hook(state, gateway, data, **env).output()
    assert (code, output) == (0, None), err


async def pending(person: AsyncClient, count: int) -> list[Interaction]:
    """The first `count` interactions announced on the event stream that are still
    pending, in the order they were announced."""
    found: dict[str, Interaction] = {}
    async with asyncio.timeout(SAFETY_S * 2):
        async for event in person.events():
            if event.type in REQUESTED and event.interaction_id not in found:
                interaction = await person.get(str(event.interaction_id))
                if interaction.pending:
                    found[interaction.id] = interaction
                    if len(found) == count:
                        return list(found.values())
    raise AssertionError("the event stream ended")  # pragma: no cover


async def ended_at_the_gateway(person: AsyncClient, session_id: str, turn_id: str) -> bool:
    """Whether the gateway ended `turn_id`: an ask parked in an ended turn settles
    cancelled at once."""
    parked, _ = await person.ask(session_id, ASK_INPUT, dialect="claude", turn_id=turn_id)
    if parked.pending:
        await person.cancel(parked.id)
    return parked.status == "cancelled"


BUILD = {"command": "rm -rf build/", "description": "Clean the build folder"}
