"""One host process of scenario 4 for `midturn.adapters.claude_agent`
(tests/adapters/test_claude_agent.py): the real SDK's `query()` over the scripted Claude
Code, midturn through a gateway or an in-process runtime on a SQLite file.

    python -m tests.adapters._claude_agent_worker start|resume gateway URL TOKEN SESSION [TOOL]
    python -m tests.adapters._claude_agent_worker start|resume sqlite DB_URL - SESSION [TOOL]

`start` runs the query up to Claude Code's `can_use_tool` for `AskUserQuestion` (TOOL
`ask`, the default) or for `Bash` (TOOL `bash`, a permission); the callback parks it and
waits, and the test kills the process there. `resume` is the host started again with
`resume=` the session: Claude Code sends the request it kept again (same `request_id`,
same `tool_use_id`) and the worker prints, as JSON, what the callback answered and what
ran (after a `requested <tool_use_id>` line per request Claude Code sent).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator

from claude_agent_sdk import ClaudeAgentOptions, query
from tests.adapters._claude_code_cli import ASK, ScriptedClaudeCode, tool_results

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


async def main(
    phase: str, kind: str, where: str, token: str, session_id: str, tool: str = "ask"
) -> None:
    resumed = phase == "resume"
    call = ("AskUserQuestion", ASK) if tool == "ask" else ("Bash", {"command": "make deploy"})
    cli = ScriptedClaudeCode(
        [[(*call, "toolu_4")]],
        resumed=resumed,
        on_request=lambda tool_use_id: print(f"requested {tool_use_id}", flush=True),
    )
    async with _asker(kind, where, token) as asker:
        permissions = MidturnPermissions(asker, session_id)
        options = ClaudeAgentOptions(
            can_use_tool=permissions, resume="scripted-session" if resumed else None
        )
        async with permissions.turn(TURN):
            messages = [
                m async for m in query(prompt="Set up the service", options=options, transport=cli)
            ]
    print(
        json.dumps(
            {
                "decisions": cli.decisions,
                "requests": cli.requests,
                "ran": cli.ran,
                "results": tool_results(messages),
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:7]))
