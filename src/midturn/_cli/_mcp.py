"""`midturn mcp`: the MCP server over stdio, on the store in this process or on a remote
gateway (docs/mcp.md)."""

from __future__ import annotations

import argparse
import asyncio

from midturn._cli._common import EXIT_CODES
from midturn._cli._common import Usage as _Usage
from midturn._cli._common import say as _say
from midturn._cli._common import token as _token
from midturn._cli._common import transport_failure as _transport_failure
from midturn._cli._store_wording import on_store as _on_store
from midturn._cli_tokens import Found, TokenProblem, find_token

__all__ = ["MCP_INBOX", "run_mcp"]

MCP_INBOX = "http://127.0.0.1:8765"


def run_mcp(args: argparse.Namespace) -> int:
    remote = bool(args.gateway) and not args.store
    if remote:
        found, answering = _mcp_tokens(args)
        # A token that cannot ask is refused before the MCP server loads (the SDK is
        # about a second of CPU): one whoami, and a wrong token fails at once.
        refusal = _cannot_ask(found.gateway or args.gateway, found.token)
        if refusal is not None:
            return refusal
    try:
        from midturn.mcp import McpOptions
        from midturn.mcp._run import run_stdio, run_stdio_remote
    except ImportError as error:
        _say(f"midturn mcp: {error}")
        return EXIT_CODES["usage"]
    from midturn.gateway import DEFAULT_DB_URL

    gateway = args.gateway or MCP_INBOX
    options = McpOptions(
        session_id=args.session or "mcp", public_url=gateway, wait_bound_s=args.wait_bound
    )
    if not remote:  # in this process, on the store
        if args.token or args.token_file or args.answer_token_file:
            raise _Usage("tokens are for a remote gateway: give --gateway URL without --store")
        url = args.store or DEFAULT_DB_URL
        return _on_store("mcp", url, lambda: asyncio.run(run_stdio(url, options)) or 0)
    import httpx

    try:
        asyncio.run(
            run_stdio_remote(
                found.gateway or args.gateway,
                found.token,
                answer_token=None if answering is None else answering.token,
                session=args.session,
                options=options,
            )
        )
    except httpx.TransportError as error:
        _say(f"midturn mcp: {_transport_failure(args.gateway, error)}")
        return EXIT_CODES["unavailable"]
    return 0


def _mcp_tokens(args: argparse.Namespace) -> tuple[Found, Found | None]:
    """The token `midturn mcp --gateway` asks with, and the answer token, if given."""
    found = _token(args, ("MIDTURN_AGENT_TOKEN", "MIDTURN_TOKEN"))
    if found is None:
        raise _Usage(
            "an MCP server on a gateway needs a token: the admin token or a session's agent "
            "token in MIDTURN_TOKEN / MIDTURN_AGENT_TOKEN or a file (--token-file FILE)"
        )
    try:
        answering = find_token(None, args.answer_token_file, ("MIDTURN_ANSWER_TOKEN",))
    except TokenProblem as error:
        raise _Usage(str(error)) from error
    return found, answering


def _cannot_ask(gateway: str, token: str) -> int | None:
    """The exit code when `token` is an answer token (it cannot ask) or the gateway is
    not there, said on stderr; None when it may ask (the MCP server checks the rest)."""
    import httpx

    from midturn.client import AsyncClient

    async def role() -> object:
        async with AsyncClient(gateway, token) as client:
            return (await client.whoami()).get("role")

    try:
        found = asyncio.run(role())
    except httpx.TransportError as error:
        _say(f"midturn mcp: {_transport_failure(gateway, error)}")
        return EXIT_CODES["unavailable"]
    if found == "answer":
        raise _Usage(
            "an answer token cannot ask; give the admin token or the session's agent token"
        )
    return None
