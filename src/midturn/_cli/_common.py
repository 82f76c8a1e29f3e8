"""What every `midturn` command shares: the exit codes, the usage error, messages on
stderr, and where tokens come from, in words a person reads."""

from __future__ import annotations

import argparse
import sys

from midturn._cli_tokens import (
    Found,
    TokenProblem,
    admin_token_places,
    find_token,
    is_local,
    local_admin_token,
)

__all__ = [
    "EXIT_CODES",
    "Usage",
    "local",
    "looked",
    "refused",
    "say",
    "token",
    "transport_failure",
]

EXIT_CODES = {
    "answered": 0,
    "skipped": 1,
    "redirected": 1,
    "usage": 2,
    "timed_out": 3,
    "unavailable": 4,
    "cancelled": 130,
}


class Usage(Exception):
    """A usage error found after argument parsing: exit 2 with this message."""


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def refused(gateway: str, found: Found) -> str:
    """A token the gateway does not know: where it came from, and the likely cause."""
    return (
        f"the gateway at {gateway} refused the token {found.origin}: it is not one of that "
        "gateway's tokens (one from another gateway, or from before its data folder was "
        "reset?). Give the token that gateway's `midturn serve` wrote or printed."
    )


def local(gateway: str) -> Found | None:
    """The admin token `midturn serve` wrote, for a gateway on this machine."""
    try:
        return local_admin_token(gateway)
    except TokenProblem as error:
        raise Usage(str(error)) from error


def looked(gateway: str) -> str:
    """The end of a no-token message: the admin token files looked at, or why not."""
    if not is_local(gateway):
        return (
            f". The admin token `midturn serve` wrote on this machine is not sent to "
            f"{gateway}: that gateway has its own"
        )
    places = " or ".join(str(path) for path in admin_token_places())
    return (
        f". There is no {places} here either (where `midturn serve` writes its admin "
        "token): run this in the folder where serve runs, or set MIDTURN_HOME"
    )


def token(args: argparse.Namespace, variables: tuple[str, ...]) -> Found | None:
    """The token from --token, --token-file or the environment (see _cli_tokens.py)."""
    try:
        return find_token(args.token, args.token_file, variables)
    except TokenProblem as error:
        raise Usage(str(error)) from error


def transport_failure(url: str, error: Exception) -> str:
    """Say what went wrong with the connection: a timeout is not an unreachable gateway."""
    import httpx

    detail = str(error) or type(error).__name__
    if isinstance(error, httpx.TimeoutException):
        return f"the gateway at {url} did not answer in time ({detail})"
    return f"cannot reach the gateway at {url} ({detail})"
