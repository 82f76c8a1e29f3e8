"""One host process of scenario 4 for `midturn.adapters.claude_agent`
(tests/adapters/test_claude_agent.py): the real SDK driving the real Claude Code CLI (the
one bundled with claude-agent-sdk) against a stand-in Anthropic API, with
`MidturnPermissions(durable=True)`; midturn through a gateway or an in-process runtime on
a SQLite file.

    python -m tests.adapters._claude_agent_worker start KIND WHERE TOKEN SESSION API HOME
    python -m tests.adapters._claude_agent_worker resume KIND WHERE TOKEN SESSION API HOME CLAUDE

KIND is `gateway` (WHERE its URL, TOKEN an agent token) or `sqlite` (WHERE a store URL).
`start` runs the query: the model calls `AskUserQuestion`, the hook parks the question
and defers it, Claude Code ends the run (`tool_deferred`); the worker prints
`{"deferred": tool_use_id, "claude_session": …}` and waits for the answer (the test kills
it there). `resume` resumes the Claude Code session CLAUDE with no new prompt and prints
the tool results and the final text.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeSDKClient,
    ResultMessage,
    TextBlock,
    query,
)
from tests.adapters._claude_code_cli import tool_results
from tests.adapters._fake_anthropic import cli_environment

from midturn import Asker, AsyncClient, Runtime
from midturn.adapters.claude_agent import MidturnPermissions
from midturn.store import open_store

TURN = "claude-turn-4"  # the host keeps its turn id with the Claude Code session id


@contextlib.asynccontextmanager
async def _asker(kind: str, where: str, token: str) -> AsyncIterator[Asker]:
    if kind == "gateway":
        async with AsyncClient(where, token) as client:
            yield client
    else:
        async with open_store(where) as store, Runtime(store) as runtime:
            yield runtime


def _say(data: dict[str, Any]) -> None:
    print(json.dumps(data), flush=True)


async def main(
    phase: str,
    kind: str,
    where: str,
    token: str,
    session_id: str,
    api: str,
    home: str,
    claude_session: str | None = None,
) -> None:
    work = Path(home) / "work"
    work.mkdir(parents=True, exist_ok=True)
    fields: dict[str, Any] = {"env": cli_environment(api, home), "cwd": str(work)}
    async with _asker(kind, where, token) as asker:
        permissions = MidturnPermissions(asker, session_id, durable=True)
        if phase == "start":
            async with permissions.turn(TURN):
                options = permissions.options(**fields)
                messages = [m async for m in query(prompt="Set up the service", options=options)]
            result = messages[-1]
            assert isinstance(result, ResultMessage), result
            assert result.deferred_tool_use is not None, result
            _say({"deferred": result.deferred_tool_use.id, "claude_session": result.session_id})
            settled = await permissions.wait_deferred(result.deferred_tool_use)  # killed here
            _say({"settled": settled.interaction.status})
            return
        async with permissions.turn(TURN):
            options = permissions.options(resume=claude_session, **fields)
            async with ClaudeSDKClient(options=options) as client:
                messages = [m async for m in client.receive_response()]
    texts = [
        block.text
        for m in messages
        if isinstance(m, AssistantMessage)
        for block in m.content
        if isinstance(block, TextBlock)
    ]
    _say({"results": tool_results(messages), "texts": texts})


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:9]))
