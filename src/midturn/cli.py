"""The `midturn` command (docs/terminal.md#the-midturn-command): `serve`, `mcp`, `ask`,
`answer`, `prune`, `demo` and `hook claude-code` (docs/adapters/claude-code.md).

`midturn ask` exit codes: 0 answered, 1 skipped (or redirected), 2 usage error,
3 timed out, 4 unavailable (no terminal here and no gateway), 130 stopped.

`midturn ask` itself lives in `_cli/_ask.py`, what the commands share (exit codes, the
usage error, token messages) in `_cli/_common.py`, the help texts in `_cli/_help.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from midturn._cli import _help
from midturn._cli._ask import run_ask as _run_ask
from midturn._cli._common import EXIT_CODES
from midturn._cli._common import Usage as _Usage
from midturn._cli._common import local as _local
from midturn._cli._common import looked as _looked
from midturn._cli._common import refused as _refused
from midturn._cli._common import say as _say
from midturn._cli._common import token as _token
from midturn._cli._common import transport_failure as _transport_failure
from midturn._cli._store_wording import store_failure
from midturn._cli._wording import for_a_person
from midturn._cli_tokens import Found, TokenProblem, find_token, from_answer_url
from midturn.errors import (
    Forbidden,
    GatewayError,
    InvalidAsk,
    MidturnError,
    Unauthorized,
    UsageError,
)

if TYPE_CHECKING:
    from midturn.client import AsyncClient

__all__ = ["EXIT_CODES", "main"]

# -- midturn answer, demo, serve -------------------------------------------------------


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


def _run_answer(args: argparse.Namespace) -> int:
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


def _run_demo(args: argparse.Namespace) -> int:
    from midturn._demo import run_demo
    from midturn.tui._terminal import open_terminal, repeat_window_from_env

    with open_terminal() as term:
        if term is None:
            _say("midturn demo: the demo asks in a terminal, and there is none here; run it in one")
            return EXIT_CODES["unavailable"]
        return asyncio.run(run_demo(term, repeat_window_s=repeat_window_from_env(0.5)))


def _run_serve(args: argparse.Namespace) -> int:
    from midturn.gateway import DEFAULT_DB_URL, serve
    from midturn.runtime._retention import parse_age

    found = _token(args, ())  # MIDTURN_TOKEN and the data folder's file: serve's own
    retention = None if args.retention in (None, "off") else parse_age(args.retention)
    slack_secret = None
    if args.slack_signing_secret_file is not None:
        try:
            slack_secret = Path(args.slack_signing_secret_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            _say(f"midturn serve: cannot read the Slack signing secret file: {error}")
            return EXIT_CODES["usage"]
        if not slack_secret:
            _say(
                f"midturn serve: {args.slack_signing_secret_file} is empty; put the Slack "
                "app's signing secret in it"
            )
            return EXIT_CODES["usage"]
    if slack_secret or os.environ.get("MIDTURN_SLACK_SIGNING_SECRET", "").strip():
        try:
            import midturn.notify._slack  # noqa: F401 - slack_sdk, with the install hint
        except ImportError as error:
            _say(f"midturn serve: Slack interactivity: {error}")
            return EXIT_CODES["usage"]
    notify = _notify_options(args)
    if args.webhook:
        try:
            from midturn.notify import standardwebhooks

            standardwebhooks()
        except ImportError as error:
            _say(f"midturn serve: --webhook: {error}")
            return EXIT_CODES["usage"]
    db_url = args.db or DEFAULT_DB_URL

    def run() -> int:
        serve(
            access_log=args.access_log,
            log_level=args.log_level,
            db_url=db_url,
            host=args.host,
            port=args.port,
            token=None if found is None else found.token,
            token_origin=None if found is None else found.origin,
            retention=retention,
            retention_records=None
            if args.retention_export is None
            else Path(args.retention_export),
            stream_buffer_bytes=args.stream_buffer_bytes,
            max_streams_per_token=args.max_streams_per_token,
            webhooks=tuple(args.webhook or ()),
            notify_options=notify,
            slack_signing_secret=slack_secret,
            loop=args.loop,
            http=args.http,
        )
        return 0

    return _on_store("serve", db_url, run)


def _on_store(command: str, url: str, work: Callable[[], int]) -> int:
    """`work()`, where a store at `url` that cannot be opened is one paragraph in words
    (exit 2), not the driver's error."""
    try:
        return work()
    except (UsageError, OSError, sqlite3.Error) as error:
        told = store_failure(error, url)
        if told is None:
            raise
        _say(f"midturn {command}: {told}")
        return EXIT_CODES["usage"]


def _notify_options(args: argparse.Namespace) -> object:
    """The notifier's settings from `midturn serve`'s flags (and the environment)."""
    from midturn.notify import NotifyOptions, parse_duration

    given: dict[str, object] = {}
    if args.webhook_retry_window:
        given["retry_window"] = parse_duration(args.webhook_retry_window)
    if args.remind_after:
        given["remind_after"] = parse_duration(args.remind_after)
    if args.reminders is not None:
        given["reminders"] = args.reminders
    if args.escalate_after:
        given["escalate_after"] = parse_duration(args.escalate_after)
    return NotifyOptions.from_env(**given)


_MCP_INBOX = "http://127.0.0.1:8765"


def _run_mcp(args: argparse.Namespace) -> int:
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

    gateway = args.gateway or _MCP_INBOX
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


def _run_prune(args: argparse.Namespace) -> int:
    from midturn.gateway import DEFAULT_DB_URL
    from midturn.gateway._serve import RECORDS_FILE, data_dir_for
    from midturn.runtime._retention import parse_age, prune_settled
    from midturn.store import open_store

    age = parse_age(args.older_than)
    url = args.store or DEFAULT_DB_URL
    if args.export and args.no_export:
        raise _Usage("give --export FILE or --no-export, not both")
    records = None if args.no_export else Path(args.export or data_dir_for(url) / RECORDS_FILE)

    async def run() -> int:
        async with open_store(url) as store:
            if records is not None and not args.dry_run:
                records.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            report = await prune_settled(store, age, records=records, dry_run=args.dry_run)
        if args.dry_run:
            print(
                f"would prune {report.interactions} settled interactions older than "
                f"{args.older_than} (and their events); nothing was deleted"
            )
            return 0
        kept = (
            f"; their decision records were appended to {records}"
            if records is not None and report.records
            else ""
        )
        print(f"pruned {report.interactions} settled interactions and {report.events} events{kept}")
        return 0

    return _on_store("prune", url, lambda: asyncio.run(run()))


def _run_hook(args: argparse.Namespace) -> int:
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="midturn",
        description="Let an agent stop mid-turn, ask a few bounded questions, and go on.",
    )
    from midturn import __version__

    parser.add_argument("--version", action="version", version=f"midturn {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser(
        "serve", help="run the gateway and the web inbox", **_help.texts("serve")
    )
    serve.add_argument(
        "--db",
        metavar="URL",
        help="the store: sqlite:///PATH or postgresql://USER@HOST/DB "
        "(default: sqlite:///.midturn/midturn.db)",
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default: 127.0.0.1, this machine only; "
        "0.0.0.0 listens on every network interface)",
    )
    serve.add_argument(
        "--port",
        type=int,
        default=8765,
        help="the TCP port to listen on (default: 8765; 0 picks a free one)",
    )
    serve.add_argument(
        "--token",
        help="the admin token (default: MIDTURN_TOKEN, else the data folder's admin_token, "
        "generated on the first start); visible to other users in `ps`: prefer "
        "--token-file or the variable",
    )
    serve.add_argument(
        "--stream-buffer-bytes",
        type=int,
        metavar="BYTES",
        help="how far (bytes of events) an event stream may fall behind before it is "
        "dropped for its client to resume (default: MIDTURN_STREAM_BUFFER_BYTES, else 1 MiB)",
    )
    serve.add_argument(
        "--max-streams-per-token",
        type=int,
        metavar="N",
        help="event streams one token may hold open at once "
        "(default: MIDTURN_MAX_STREAMS_PER_TOKEN, else 32)",
    )
    serve.add_argument(
        "--token-file", metavar="FILE", help="read the admin token from FILE (mode 0600 advised)"
    )
    serve.add_argument(
        "--retention",
        metavar="AGE",
        help="prune settled interactions older than AGE (30d, 12h, …) in the background "
        "(default: off, nothing is deleted)",
    )
    serve.add_argument(
        "--retention-export",
        metavar="FILE",
        help="append the pruned decision records to FILE (default: <data>/pruned-decisions.jsonl)",
    )
    serve.add_argument(
        "--access-log",
        action="store_true",
        help="log one JSON line per request to stderr (default: off, so the inbox link "
        "stays on screen)",
    )
    serve.add_argument(
        "--log-level",
        choices=_help.LOG_LEVELS,
        default="warning",
        metavar="LEVEL",
        help=f"what else is logged to stderr: {', '.join(_help.LOG_LEVELS)} (default: warning)",
    )
    serve.add_argument(
        "--loop",
        choices=("asyncio", "uvloop"),
        default="asyncio",
        help="the event loop (default: asyncio; uvloop, installed by hand, measured no "
        "worthwhile gain: docs/benchmarks.md)",
    )
    serve.add_argument(
        "--http",
        choices=("auto", "h11", "httptools"),
        default="auto",
        help="the HTTP parser (default: auto, httptools when midturn[fast] is installed)",
    )
    serve.add_argument(
        "--webhook",
        metavar="URL",
        action="append",
        help="deliver signed notifications to URL (repeatable; the same destination across "
        "restarts, its secret printed once; docs/notifications.md)",
    )
    serve.add_argument(
        "--webhook-retry-window",
        metavar="AGE",
        help="retry a failed delivery for this long (default 24h)",
    )
    serve.add_argument(
        "--remind-after",
        metavar="AGE",
        help="re-notify an interaction still pending this long after it was asked (default off)",
    )
    serve.add_argument(
        "--reminders", type=int, metavar="N", help="how many reminders, AGE apart (default 1)"
    )
    serve.add_argument(
        "--escalate-after",
        metavar="AGE",
        help="notify the escalation webhooks of an interaction still pending this long "
        "after it was asked (default off)",
    )
    serve.add_argument(
        "--slack-signing-secret-file",
        metavar="FILE",
        help="take Slack's button clicks at /v1/slack/interactions, checked with the signing "
        "secret in FILE (default: MIDTURN_SLACK_SIGNING_SECRET, else off)",
    )
    serve.set_defaults(run=_run_serve)

    mcp = commands.add_parser(
        "mcp", help="run the MCP server over stdio (for MCP clients)", **_help.texts("mcp")
    )
    mcp.add_argument(
        "--store",
        metavar="URL",
        help="run in this process on this store (default: sqlite:///.midturn/midturn.db)",
    )
    mcp.add_argument(
        "--gateway",
        metavar="URL",
        help="run on this `midturn serve` (a token in MIDTURN_TOKEN / MIDTURN_AGENT_TOKEN or "
        "--token-file); with --store, only the inbox the links point to "
        f"(default: {_MCP_INBOX})",
    )
    mcp.add_argument(
        "--session",
        help="the midturn session (default: mcp; on a gateway with the admin token, a "
        "session id or a name to create and reuse)",
    )
    mcp.add_argument(
        "--token",
        help="the admin or an agent token for --gateway (default: MIDTURN_AGENT_TOKEN, "
        "MIDTURN_TOKEN); visible to other users in `ps`: prefer --token-file or the variables",
    )
    mcp.add_argument("--token-file", metavar="FILE", help="read the --gateway token from FILE")
    mcp.add_argument(
        "--answer-token-file",
        metavar="FILE",
        help="with an agent token: read the session's answer token from FILE, so the "
        "client's forms can settle (default: MIDTURN_ANSWER_TOKEN)",
    )
    mcp.add_argument(
        "--wait-bound",
        type=float,
        default=45.0,
        metavar="S",
        help="a tool call returns 'still open' after S seconds without an answer, and the "
        "model polls again (default: 45)",
    )
    mcp.set_defaults(run=_run_mcp)

    prune = commands.add_parser(
        "prune",
        help="delete settled interactions older than an age, after exporting their records",
        **_help.texts("prune"),
    )
    prune.add_argument(
        "--older-than",
        required=True,
        metavar="AGE",
        help="prune what settled longer ago than AGE: 45s, 90m, 12h, 30d, 2w (required)",
    )
    prune.add_argument(
        "--store",
        "--db",
        metavar="URL",
        help="the store (default: sqlite:///.midturn/midturn.db)",
    )
    prune.add_argument(
        "--export",
        metavar="FILE",
        help="append the decision records (JSON Lines) to FILE before deleting "
        "(default: <data>/pruned-decisions.jsonl)",
    )
    prune.add_argument(
        "--no-export", action="store_true", help="delete without writing the decision records"
    )
    prune.add_argument(
        "--dry-run", action="store_true", help="count what would be pruned; delete nothing"
    )
    prune.set_defaults(run=_run_prune)

    ask = commands.add_parser(
        "ask",
        help="ask a question in this terminal (or through a gateway) and print the answer",
        **_help.texts("ask"),
    )
    ask.add_argument(
        "question", nargs="?", help="the question to ask (or give the whole ask with --file)"
    )
    ask.add_argument(
        "-o",
        "--option",
        action="append",
        metavar="LABEL",
        help="one choice; repeat it for each (2–4 choices; Other is always offered)",
    )
    ask.add_argument(
        "--multi", action="store_true", help="let the person choose several of the -o choices"
    )
    ask.add_argument(
        "--header",
        help="the short label shown above the question, at most 12 characters "
        "(default: derived from the question)",
    )
    ask.add_argument(
        "--text", action="store_true", help="ask for typed text instead of choices (no -o)"
    )
    ask.add_argument(
        "--secret",
        action="store_true",
        help="ask for typed text that is shown as dots, never as text (a password, a key)",
    )
    ask.add_argument(
        "--file",
        metavar="ASK.json",
        help="the whole ask as tool-input JSON, several questions allowed (- reads stdin)",
    )
    ask.add_argument(
        "--dialect",
        default="auto",
        help="the --file's tool-input dialect: midturn, claude, … (default: auto, "
        "recognised from its shape; docs/dialects.md)",
    )
    ask.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="give up after S seconds without an answer, exit 3 (default: the ask's own "
        "timeout_s, else none)",
    )
    ask.add_argument(
        "--json",
        action="store_true",
        help="print the whole result as JSON instead of the bare answer",
    )
    ask.add_argument(
        "--gateway",
        metavar="URL",
        help="ask through this `midturn serve` instead of this terminal",
    )
    ask.add_argument(
        "--token",
        help="with --gateway: the admin or an agent token (default: MIDTURN_AGENT_TOKEN, "
        "MIDTURN_TOKEN, else, for a gateway on this machine, the admin_token `midturn serve` "
        "wrote); visible to other users in `ps`: prefer --token-file or the variables",
    )
    ask.add_argument("--token-file", metavar="FILE", help="read the --gateway token from FILE")
    ask.set_defaults(run=_run_ask)

    answer = commands.add_parser(
        "answer", help="answer a gateway's questions in this terminal", **_help.texts("answer")
    )
    answer.add_argument(
        "url",
        nargs="?",
        help="a session's answer URL (http://host:port/#token=…), as `midturn ask` or the "
        "agent printed it; it names the gateway and the token",
    )
    answer.add_argument(
        "--gateway",
        metavar="URL",
        help="the gateway (default: the one the answer URL names, else http://127.0.0.1:8765)",
    )
    answer.add_argument(
        "--token",
        help="an answer or admin token (default: MIDTURN_ANSWER_TOKEN, MIDTURN_TOKEN, else, "
        "for a gateway on this machine, the admin_token `midturn serve` wrote); visible to "
        "other users in `ps`: prefer --token-file or the variables",
    )
    answer.add_argument(
        "--token-file", metavar="FILE", help="read the token, or the whole answer URL, from FILE"
    )
    answer.set_defaults(run=_run_answer)

    demo = commands.add_parser(
        "demo", help="an agent turn that asks you mid-turn", **_help.texts("demo")
    )
    demo.set_defaults(run=_run_demo)

    hook = commands.add_parser(
        "hook", help="answer an agent's own hooks through a gateway", **_help.texts("hook")
    )
    hooks = hook.add_subparsers(dest="agent", required=True, metavar="AGENT")
    claude = hooks.add_parser(
        "claude-code",
        help="Claude Code's PreToolUse / PermissionRequest hook (payload on stdin)",
        description="Answer Claude Code's PreToolUse and PermissionRequest hooks (the "
        "payload on stdin, the decision on stdout) through a midturn gateway; registered "
        "for UserPromptSubmit and Stop too, it ends 'allow for this turn' with the turn.",
        epilog=_help.EPILOGS["claude-code"],
        formatter_class=_help.texts("claude-code")["formatter_class"],
    )
    claude.add_argument(
        "--gateway",
        metavar="URL",
        help="the gateway (default: MIDTURN_GATEWAY, else http://127.0.0.1:8765)",
    )
    claude.add_argument(
        "--token",
        help="the admin or an agent token (default: MIDTURN_AGENT_TOKEN, MIDTURN_TOKEN); "
        "visible to other users in `ps`: prefer --token-file or the variables",
    )
    claude.add_argument("--token-file", metavar="FILE", help="read the token from FILE")
    claude.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="after S seconds without an answer, withdraw it and let Claude Code ask "
        "(default: wait until Claude Code's own hook timeout ends it)",
    )
    claude.add_argument(
        "--unattended",
        action="store_true",
        help="no one answers this run (MIDTURN_HOOK_UNATTENDED=1): questions are "
        "unavailable at once, permissions go to Claude Code's own rules",
    )
    claude.set_defaults(run=_run_hook)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit code."""
    args = _parser().parse_args(argv)
    if getattr(args, "agent", None):  # `midturn hook claude-code: …`
        args.command = f"{args.command} {args.agent}"
    try:
        code: int = args.run(args)
        return code
    except _Usage as error:
        _say(f"midturn {args.command}: {error}")
        return EXIT_CODES["usage"]
    except InvalidAsk as error:
        _say(f"midturn {args.command}: {for_a_person(error, source=getattr(args, 'file', None))}")
        return EXIT_CODES["usage"]
    except GatewayError as error:
        _say(f"midturn {args.command}: the gateway refused: {error}")
        return EXIT_CODES["unavailable"]
    except (UsageError, MidturnError) as error:
        _say(f"midturn {args.command}: {error}")
        return EXIT_CODES["usage"]
    except KeyboardInterrupt:
        return EXIT_CODES["cancelled"]


if __name__ == "__main__":
    sys.exit(main())
