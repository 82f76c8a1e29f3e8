"""`midturn answer` and `midturn demo`: the commands that answer in this terminal, one
on a gateway (docs/terminal.md#midturn-answer), one on its own scripted agent."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from midturn._cli._common import EXIT_CODES
from midturn._cli._common import Usage as _Usage
from midturn._cli._common import local as _local
from midturn._cli._common import looked as _looked
from midturn._cli._common import refused as _refused
from midturn._cli._common import say as _say
from midturn._cli._common import token as _token
from midturn._cli._common import transport_failure as _transport_failure
from midturn._cli_tokens import Found, from_answer_url
from midturn.errors import Forbidden, MidturnError, Unauthorized

if TYPE_CHECKING:
    from midturn.client import AsyncClient

__all__ = ["run_answer", "run_demo"]


async def _answer(base_url: str, token: str) -> int:
    from midturn.client import AsyncClient
    from midturn.tui._answerer import answer_loop
    from midturn.tui._terminal import open_terminal, repeat_window_from_env

    with open_terminal() as term:
        if term is None:
            _say(
                "midturn answer: there is no terminal here to answer in; run it in one, or "
                "open the web inbox (`midturn serve` printed its link)"
            )
            return EXIT_CODES["unavailable"]
        async with AsyncClient(base_url, token) as client:
            who = await client.whoami()
            session = None if who.get("role") == "admin" else who.get("session_id")
            return await answer_loop(
                client,
                term,
                session_id=session,
                repeat_window_s=repeat_window_from_env(0.5),
                session_title=_titles(client),
            )


def _titles(client: AsyncClient) -> Callable[[str], Awaitable[str | None]]:
    """A session's title by id, read once per session (None when it has none or cannot
    be read: the id is shown then)."""
    known: dict[str, str | None] = {}

    async def title(session_id: str) -> str | None:
        if session_id not in known:
            try:
                known[session_id] = (await client.session(session_id)).title
            except MidturnError:
                known[session_id] = None
        return known[session_id]

    return title


def run_answer(args: argparse.Namespace) -> int:
    import httpx

    from midturn.client import DEFAULT_GATEWAY_URL

    found = _token(args, ())
    from_url: Found | None = None
    if args.url:
        gateway, token = from_answer_url(args.url)
        from_url = Found(token, "in the answer URL", gateway) if token else None
    if found is None:
        found = from_url or _token(args, ("MIDTURN_ANSWER_TOKEN", "MIDTURN_TOKEN"))
    named = args.url and from_answer_url(args.url)[0]
    if found is None:
        found = _local(args.gateway or named or DEFAULT_GATEWAY_URL)
    if found is None:
        raise _Usage(
            "no token to answer with was found. Give the session's answer URL "
            "(midturn answer 'http://127.0.0.1:8765/#token=…'), or an answer or admin token "
            "with --token-file FILE, or set MIDTURN_ANSWER_TOKEN or MIDTURN_TOKEN"
            f"{_looked(args.gateway or named or DEFAULT_GATEWAY_URL)}."
        )
    base_url = args.gateway or named or found.gateway or DEFAULT_GATEWAY_URL
    try:
        return asyncio.run(_answer(base_url, found.token))
    except httpx.TransportError as error:
        _say(
            f"midturn answer: {_transport_failure(base_url, error)}; start it with `midturn serve`"
        )
        return EXIT_CODES["unavailable"]
    except Unauthorized as error:
        if isinstance(error, Forbidden):
            raise
        raise _Usage(_refused(base_url, found)) from error


def run_demo(args: argparse.Namespace) -> int:
    from midturn._demo import run_demo
    from midturn.tui._terminal import open_terminal, repeat_window_from_env

    with open_terminal() as term:
        if term is None:
            _say("midturn demo: the demo asks in a terminal, and there is none here; run it in one")
            return EXIT_CODES["unavailable"]
        return asyncio.run(run_demo(term, repeat_window_s=repeat_window_from_env(0.5)))
