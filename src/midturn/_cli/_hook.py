"""`midturn hook claude-code`: Claude Code's hook, answered through a gateway
(docs/adapters/claude-code.md)."""

from __future__ import annotations

import argparse
import os
import sys

from midturn._cli._common import Usage as _Usage
from midturn._cli._common import say as _say
from midturn._cli_tokens import TokenProblem, find_token

__all__ = ["run_hook"]


def run_hook(args: argparse.Namespace) -> int:
    """`midturn hook claude-code`: never a usage error that Claude Code would read as a
    failed hook with no decision; whatever is missing falls back to its own prompt."""
    from midturn._hook_claude_code import run
    from midturn.client import DEFAULT_GATEWAY_URL

    text = sys.stdin.read()
    try:
        found = find_token(args.token, args.token_file, ("MIDTURN_AGENT_TOKEN", "MIDTURN_TOKEN"))
    except TokenProblem as error:
        _say(f"midturn hook claude-code: {error}")
        found = None
    gateway = args.gateway or os.environ.get("MIDTURN_GATEWAY") or DEFAULT_GATEWAY_URL
    if args.timeout is not None and args.timeout <= 0:
        raise _Usage(f"--timeout {args.timeout:g} is no time to answer; give seconds above 0")
    unattended = args.unattended or os.environ.get("MIDTURN_HOOK_UNATTENDED", "") not in ("", "0")
    return run(
        text,
        gateway=gateway,
        token=None if found is None else found.token,
        timeout=args.timeout,
        unattended=unattended,
    )
