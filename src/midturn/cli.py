"""The `midturn` command (docs/terminal.md#the-midturn-command): `serve`, `mcp`, `ask`,
`answer`, `prune`, `demo` and `hook claude-code` (docs/adapters/claude-code.md).

`midturn ask` exit codes: 0 answered, 1 skipped (or redirected), 2 usage error,
3 timed out, 4 unavailable (no terminal here and no gateway), 130 stopped.

Each command lives in `_cli/` (`_ask.py`, `_answer.py` with `demo`, `_serve.py`,
`_mcp.py`, `_prune.py`, `_hook.py`), what they share (exit codes, the usage error, token
messages) in `_cli/_common.py`, the help texts in `_cli/_help.py`; here are the parser
and `main`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from midturn._cli import _help
from midturn._cli._answer import run_answer as _run_answer
from midturn._cli._answer import run_demo as _run_demo
from midturn._cli._ask import run_ask as _run_ask
from midturn._cli._common import EXIT_CODES
from midturn._cli._common import Usage as _Usage
from midturn._cli._common import say as _say
from midturn._cli._hook import run_hook as _run_hook
from midturn._cli._mcp import MCP_INBOX as _MCP_INBOX
from midturn._cli._mcp import run_mcp as _run_mcp
from midturn._cli._prune import run_prune as _run_prune
from midturn._cli._serve import run_serve as _run_serve
from midturn._cli._wording import for_a_person
from midturn.errors import GatewayError, InvalidAsk, MidturnError, UsageError

__all__ = ["EXIT_CODES", "main"]


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
