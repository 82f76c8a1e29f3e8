"""`midturn mcp --gateway URL`: the MCP server over a remote gateway's `AsyncClient`.

Which session its asks go to depends on the token (docs/mcp.md#against-a-remote-gateway):

- an **agent token** asks in its own session (`whoami`). It cannot answer, so a form's
  answer is settled with the session's **answer token** when one is given
  (`MIDTURN_ANSWER_TOKEN`, `--answer-token-file`); without one the server shows no form
  and every ask waits for the inbox.
- the **admin token** asks, answers and decides everywhere. It asks in the session named
  by `--session`: that session id if the gateway has it, else the session this data
  folder remembers under that name for this gateway, else a new one (meta
  `{"name": …, "client": "midturn mcp"}`), remembered in `<data>/mcp_sessions.json` so
  a restarted server asks in the same session (and `wait_for_answer` still finds its
  asks).
- an **answer token** is refused: it answers, it does not ask.
"""

from __future__ import annotations

import json
import os
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

from midturn.client import AsyncClient
from midturn.errors import NotFound, UsageError
from midturn.mcp._backend import Backend

__all__ = ["SESSIONS_FILE", "Remote", "connect"]

SESSIONS_FILE = "mcp_sessions.json"


@dataclass(frozen=True, slots=True)
class Remote:
    """The ports on the gateway, and the session the server asks in."""

    backend: Backend
    session_id: str


def _remembered(data_dir: Path) -> dict[str, dict[str, str]]:
    try:
        value = json.loads((data_dir / SESSIONS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(value, dict):
        return {}
    return {
        str(gateway): {str(k): str(v) for k, v in names.items() if isinstance(v, str)}
        for gateway, names in value.items()
        if isinstance(names, dict)
    }


def _remember(data_dir: Path, gateway: str, name: str, session_id: str) -> None:
    known = _remembered(data_dir)
    known.setdefault(gateway, {})[name] = session_id
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = data_dir / SESSIONS_FILE
    fresh = path.with_name(f".{SESSIONS_FILE}.{os.getpid()}")
    fresh.write_text(json.dumps(known, indent=2) + "\n", encoding="utf-8")
    fresh.replace(path)


async def _exists(client: AsyncClient, session_id: str) -> bool:
    try:
        await client.queue(session_id)
    except NotFound:
        return False
    return True


async def _admin_session(client: AsyncClient, name: str, data_dir: Path) -> str:
    if await _exists(client, name):
        return name
    remembered = _remembered(data_dir).get(client.base_url, {}).get(name)
    if remembered is not None and await _exists(client, remembered):
        return remembered
    created = await client.create_session({"name": name, "client": "midturn mcp"})
    _remember(data_dir, client.base_url, name, created.session_id)
    return created.session_id


async def connect(
    stack: AsyncExitStack,
    gateway: str,
    token: str,
    *,
    answer_token: str | None,
    session: str | None,
    data_dir: Path,
) -> Remote:
    """Open the clients (closed with `stack`) and pick the session. Raises `UsageError`
    for a token that cannot ask or tokens of two sessions; `Unauthorized` for an unknown
    token; `httpx.TransportError` when the gateway is not there."""
    client = await stack.enter_async_context(AsyncClient(gateway, token))
    who = await client.whoami()
    role = who.get("role")
    if role == "admin":
        session_id = await _admin_session(client, session or "mcp", data_dir)
        return Remote(Backend.over(client), session_id)
    if role != "agent":
        raise UsageError(
            "an answer token cannot ask; give the admin token or the session's agent token"
        )
    session_id = str(who["session_id"])
    if session is not None and session != session_id:
        raise UsageError(
            f"the agent token is session {session_id}'s, not {session}'s; drop --session "
            "or give that session's agent token"
        )
    if answer_token is None:
        return Remote(Backend(client), session_id)
    answerer = await stack.enter_async_context(AsyncClient(gateway, answer_token))
    answering = await answerer.whoami()
    if answering.get("role") != "answer" or answering.get("session_id") != session_id:
        raise UsageError(
            f"the answer token is not session {session_id}'s answer token (it is a "
            f"{answering.get('role')} token); give that session's answer token"
        )
    return Remote(Backend(client, answerer), session_id)
