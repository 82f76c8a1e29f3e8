"""The `midturn` command (docs/terminal.md#the-midturn-command): `serve`, `mcp`, `ask`,
`answer`, `prune`, `demo` and `hook claude-code` (docs/adapters/claude-code.md).

`midturn ask` exit codes: 0 answered, 1 skipped (or redirected), 2 usage error,
3 timed out, 4 unavailable (no terminal here and no gateway), 130 stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from midturn._cli_tokens import Found, TokenProblem, find_token, from_answer_url
from midturn.contract._models import Ask, AskResult
from midturn.errors import GatewayError, InvalidAsk, MidturnError, UsageError

__all__ = ["EXIT_CODES", "main"]

EXIT_CODES = {
    "answered": 0,
    "skipped": 1,
    "redirected": 1,
    "usage": 2,
    "timed_out": 3,
    "unavailable": 4,
    "cancelled": 130,
}
_SESSION_TURN = "cli"


class _Usage(Exception):
    """A usage error found after argument parsing: exit 2 with this message."""


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# -- building the ask ------------------------------------------------------------------


def _canonical(ask: Ask) -> dict[str, Any]:
    """A validated ask written back as canonical (`midturn` dialect) tool input."""
    questions: list[dict[str, Any]] = []
    for q in ask.questions:
        item: dict[str, Any] = {"id": q.id, "header": q.header, "question": q.question}
        item["kind"] = q.kind
        if q.kind == "choice":
            item["options"] = [
                {k: v for k, v in option.model_dump().items() if v is not None}
                for option in q.options
            ]
            item["allow_other"] = q.allow_other
            if q.multi:
                item.update(multi=True, min_choices=q.min_choices)
                if q.max_choices is not None:
                    item["max_choices"] = q.max_choices
            if q.recommended is not None:
                item["recommended"] = q.recommended
        else:
            if q.secret:
                item["secret"] = True
            if q.placeholder:
                item["placeholder"] = q.placeholder
        questions.append(item)
    return {"questions": questions, "timeout_s": ask.timeout_s, "on_timeout": ask.on_timeout}


def _tool_input(args: argparse.Namespace) -> tuple[Ask, Any, str]:
    """The validated ask, and the tool input and dialect to send to a gateway. A bad ask
    is a usage error before anything is shown or sent."""
    from midturn.contract import parse_ask

    if args.file:
        inline = [args.question, args.option, args.multi, args.header, args.text, args.secret]
        if any(inline):
            raise _Usage(
                "--file holds the whole ask; drop the question and -o/--multi/"
                "--header/--text/--secret, or drop --file"
            )
        try:
            raw = sys.stdin.read() if args.file == "-" else Path(args.file).read_text("utf-8")
            data = json.loads(raw)
        except OSError as error:
            raise _Usage(f"cannot read {args.file}: {error.strerror}") from error
        except json.JSONDecodeError as error:
            raise _Usage(
                f"{args.file} is not JSON ({error}); give the tool input object"
            ) from error
        dialect = args.dialect
    else:
        if not args.question:
            raise _Usage('give a question (midturn ask "Which one?" -o A -o B) or --file ask.json')
        if args.option and (args.text or args.secret):
            raise _Usage("--text and --secret ask for typed text; drop them or the -o options")
        if args.multi and not args.option:
            raise _Usage("--multi needs options: add -o for each choice")
        question: dict[str, Any] = {"question": args.question}
        if args.header:
            question["header"] = args.header
        if args.option:
            question["options"] = [{"label": label} for label in args.option]
            question["multi"] = bool(args.multi)
        else:
            question["kind"] = "text"
            if args.secret:
                question["secret"] = True
        data, dialect = {"questions": [question]}, "midturn"
    ask = parse_ask(data, dialect)
    if args.timeout is not None:
        if args.timeout <= 0:
            raise _Usage(f"--timeout {args.timeout} must be more than 0 seconds")
        return ask, _canonical(ask) | {"timeout_s": args.timeout}, "midturn"
    return ask, data, ask.dialect


# -- reporting the result --------------------------------------------------------------


def _report(result: AskResult, as_json: bool) -> int:
    code = EXIT_CODES.get(result.outcome, 1)
    if as_json:
        print(json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False))
        return code
    if result.outcome == "redirected":
        _say("the person answered with a message instead:")
        print(result.message or "")
        return code
    shown = [a for a in result.answers if a.status == "answered"]
    for answer in shown:
        value = (
            answer.secret_value.get_secret_value()
            if answer.secret_value is not None
            else answer.answer or ""
        )
        print(value if len(result.answers) == 1 else f"{answer.header}: {value}")
    notes = {
        "skipped": "skipped: no answer was given",
        "timed_out": "timed out before an answer",
        "unavailable": "unavailable: no one can answer here",
        "cancelled": "stopped",
    }
    if result.outcome in notes:
        _say(f"midturn: {notes[result.outcome]}")
    return code


# -- midturn ask -----------------------------------------------------------------------


async def _ask_here(ask: Ask, timeout_s: float | None, as_json: bool) -> int:
    """Ask in this terminal: the parsed ask goes straight to the picker and its payload
    through `parse_answer`, the same reading every other surface gets."""
    from midturn.contract import parse_answer
    from midturn.contract._answers import timeout_result, uniform_result
    from midturn.errors import InvalidAnswer
    from midturn.tui import pick
    from midturn.tui._terminal import open_terminal, repeat_window_from_env

    window = repeat_window_from_env(0.5)
    with open_terminal() as term:
        if term is None:
            _say("midturn: no terminal here to ask in; use --gateway URL to ask through a gateway")
            return _report(uniform_result(ask, "unavailable"), as_json)
        loop = asyncio.get_running_loop()
        deadline = None if timeout_s is None else loop.time() + timeout_s
        while True:
            left = None if deadline is None else max(0.0, deadline - loop.time())
            try:
                shown = pick(
                    ask,
                    input=term.input,
                    output=term.output,
                    repeat_window_s=window,
                    time_left_s=left,
                )
                picked = await asyncio.wait_for(shown, left)
            except TimeoutError:
                term.say("⏱ Timed out.")
                return _report(timeout_result(ask), as_json)
            if picked.stopped:
                return _report(uniform_result(ask, "cancelled"), as_json)
            try:
                return _report(parse_answer(ask, picked.payload), as_json)
            except InvalidAnswer as error:
                term.say(f"That answer was refused ({error}); try again.")


async def _ask_gateway(tool_input: Any, dialect: str, args: argparse.Namespace) -> int:
    import secrets

    import httpx

    from midturn.client import AsyncClient

    found = _token(args, ("MIDTURN_AGENT_TOKEN", "MIDTURN_TOKEN"))
    if found is None:
        raise _Usage(
            "asking through a gateway needs a token: the admin token or a session's agent "
            "token in MIDTURN_TOKEN / MIDTURN_AGENT_TOKEN or a file (--token-file FILE)"
        )
    try:
        async with AsyncClient(args.gateway, found.token) as caller:
            who = await caller.whoami()
            if who.get("role") == "admin":
                creds = await caller.create_session({"client": "midturn ask"})
                session_id, agent_token = creds.session_id, creds.agent_token
                turn_id = _SESSION_TURN
                where = f"Waiting for an answer at {creds.answer_url}"
                hint = f"  (or in a terminal: midturn answer '{creds.answer_url}')"
            elif who.get("role") == "agent":
                # The session is the agent's own; a turn of this command's own, so that
                # Ctrl-C stops this ask and nothing else of the session.
                session_id, agent_token = str(who["session_id"]), found.token
                turn_id = f"{_SESSION_TURN}-{secrets.token_hex(4)}"
                where = f"Waiting for an answer in session {session_id}"
                hint = "  (its answer URL, the web inbox or `midturn answer` can answer it)"
            else:
                raise _Usage(
                    f"the token {found.origin} is an answer token, which cannot ask; use the "
                    "admin token or the session's agent token"
                )
        async with AsyncClient(args.gateway, agent_token) as agent:
            parked, _ = await agent.ask(session_id, tool_input, dialect=dialect, turn_id=turn_id)
            _say(where)
            _say(hint)
            try:
                settled = (await agent.wait(parked.id)).interaction
            except asyncio.CancelledError:
                await agent.stop_turn(session_id, turn_id)
                raise
    except httpx.TransportError as error:
        _say(
            _transport_failure(args.gateway, error) + "; start it with `midturn serve` "
            "or check --gateway"
        )
        return EXIT_CODES["unavailable"]
    return _report(settled.result or AskResult(outcome="cancelled"), args.json)


def _token(args: argparse.Namespace, variables: tuple[str, ...]) -> Found | None:
    """The token from --token, --token-file or the environment (see _cli_tokens.py)."""
    try:
        return find_token(args.token, args.token_file, variables)
    except TokenProblem as error:
        raise _Usage(str(error)) from error


def _run_ask(args: argparse.Namespace) -> int:
    ask, tool_input, dialect = _tool_input(args)
    if args.gateway:
        return asyncio.run(_ask_gateway(tool_input, dialect, args))
    timeout_s = args.timeout if args.timeout is not None else ask.timeout_s
    return asyncio.run(_ask_here(ask, timeout_s, args.json))


# -- midturn answer, demo, serve -------------------------------------------------------


async def _answer(base_url: str, token: str) -> int:
    from midturn.client import AsyncClient
    from midturn.tui._answerer import answer_loop
    from midturn.tui._terminal import open_terminal, repeat_window_from_env

    with open_terminal() as term:
        if term is None:
            _say("midturn: `midturn answer` needs a terminal; open the web inbox instead")
            return EXIT_CODES["unavailable"]
        async with AsyncClient(base_url, token) as client:
            who = await client.whoami()
            session = None if who.get("role") == "admin" else who.get("session_id")
            return await answer_loop(
                client, term, session_id=session, repeat_window_s=repeat_window_from_env(0.5)
            )


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
    if found is None:
        raise _Usage(
            "give the answer URL, or a token (an answer or admin token, or the answer URL) "
            "in MIDTURN_ANSWER_TOKEN / MIDTURN_TOKEN or a file (--token-file FILE)"
        )
    named = args.url and from_answer_url(args.url)[0]
    base_url = args.gateway or named or found.gateway or DEFAULT_GATEWAY_URL
    try:
        return asyncio.run(_answer(base_url, found.token))
    except httpx.TransportError as error:
        _say(_transport_failure(base_url, error))
        return EXIT_CODES["unavailable"]


def _transport_failure(url: str, error: Exception) -> str:
    """Say what went wrong with the connection: a timeout is not an unreachable gateway."""
    import httpx

    detail = str(error) or type(error).__name__
    if isinstance(error, httpx.TimeoutException):
        return f"midturn: the gateway at {url} did not answer in time ({detail})"
    return f"midturn: cannot reach the gateway at {url} ({detail})"


def _run_demo(args: argparse.Namespace) -> int:
    from midturn._demo import run_demo
    from midturn.tui._terminal import open_terminal, repeat_window_from_env

    with open_terminal() as term:
        if term is None:
            _say("midturn: the demo asks in a terminal, and there is none here")
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
    serve(
        db_url=args.db or DEFAULT_DB_URL,
        host=args.host,
        port=args.port,
        token=None if found is None else found.token,
        token_origin=None if found is None else found.origin,
        retention=retention,
        retention_records=None if args.retention_export is None else Path(args.retention_export),
        stream_buffer_bytes=args.stream_buffer_bytes,
        max_streams_per_token=args.max_streams_per_token,
        webhooks=tuple(args.webhook or ()),
        notify_options=notify,
        slack_signing_secret=slack_secret,
    )
    return 0


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
    if args.store or not args.gateway:  # in this process, on the store
        if args.token or args.token_file or args.answer_token_file:
            raise _Usage("tokens are for a remote gateway: give --gateway URL without --store")
        asyncio.run(run_stdio(args.store or DEFAULT_DB_URL, options))
        return 0
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
        _say(_transport_failure(args.gateway, error))
        return EXIT_CODES["unavailable"]
    return 0


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

    return asyncio.run(run())


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
        raise _Usage(f"--timeout {args.timeout} must be more than 0 seconds")
    return run(
        text, gateway=gateway, token=None if found is None else found.token, timeout=args.timeout
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="midturn",
        description="Let an agent stop mid-turn, ask a few bounded questions, and go on.",
    )
    from midturn import __version__

    parser.add_argument("--version", action="version", version=f"midturn {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the gateway and the web inbox")
    serve.add_argument(
        "--db", metavar="URL", help="store URL (default sqlite:///.midturn/midturn.db)"
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--token", help="admin token (default: MIDTURN_TOKEN, else generated)")
    serve.add_argument(
        "--stream-buffer-bytes",
        type=int,
        help="how far (bytes of events) an event stream may fall behind before it is "
        "dropped for its client to resume (default: MIDTURN_STREAM_BUFFER_BYTES, else 1 MiB)",
    )
    serve.add_argument(
        "--max-streams-per-token",
        type=int,
        help="event streams one token may hold open at once "
        "(default: MIDTURN_MAX_STREAMS_PER_TOKEN, else 32)",
    )
    serve.add_argument("--token-file", metavar="FILE", help="read the admin token from FILE")
    serve.add_argument(
        "--retention",
        metavar="AGE",
        help="prune settled interactions older than AGE (30d, 12h, …) in the background "
        "(default: off, nothing is deleted)",
    )
    serve.add_argument(
        "--retention-export",
        metavar="FILE",
        help="append the pruned decision records to FILE (default <data>/pruned-decisions.jsonl)",
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

    mcp = commands.add_parser("mcp", help="run the MCP server over stdio (for MCP clients)")
    mcp.add_argument(
        "--store", metavar="URL", help="store URL (default sqlite:///.midturn/midturn.db)"
    )
    mcp.add_argument(
        "--gateway",
        metavar="URL",
        help="run on this `midturn serve` (a token in MIDTURN_TOKEN / MIDTURN_AGENT_TOKEN or "
        "--token-file); with --store, only the inbox the links point to "
        f"(default {_MCP_INBOX})",
    )
    mcp.add_argument(
        "--session",
        help="the midturn session (default: mcp; on a gateway with the admin token, a "
        "session id or a name to create and reuse)",
    )
    mcp.add_argument(
        "--token",
        help="the admin or an agent token for --gateway (prefer --token-file or the variables)",
    )
    mcp.add_argument("--token-file", metavar="FILE", help="read the --gateway token from FILE")
    mcp.add_argument(
        "--answer-token-file",
        metavar="FILE",
        help="with an agent token: the session's answer token (default MIDTURN_ANSWER_TOKEN), "
        "so the client's forms can settle",
    )
    mcp.add_argument(
        "--wait-bound",
        type=float,
        default=45.0,
        metavar="S",
        help="return 'still open' after S seconds without an answer (default 45)",
    )
    mcp.set_defaults(run=_run_mcp)

    prune = commands.add_parser(
        "prune",
        help="delete settled interactions older than an age, after exporting their records",
    )
    prune.add_argument("--older-than", required=True, metavar="AGE", help="30d, 12h, 90m, 45s")
    prune.add_argument(
        "--store", "--db", metavar="URL", help="store URL (default sqlite:///.midturn/midturn.db)"
    )
    prune.add_argument(
        "--export",
        metavar="FILE",
        help="append the decision records (JSON Lines) to FILE before deleting "
        "(default <data>/pruned-decisions.jsonl)",
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
        epilog="exit codes: 0 answered, 1 skipped, 2 usage error, 3 timed out, "
        "4 unavailable, 130 stopped",
    )
    ask.add_argument("question", nargs="?", help="the question to ask")
    ask.add_argument("-o", "--option", action="append", metavar="LABEL", help="a choice (2–4)")
    ask.add_argument("--multi", action="store_true", help="allow several choices")
    ask.add_argument("--header", help="a short label (≤ 12 characters)")
    ask.add_argument("--text", action="store_true", help="ask for typed text (no options)")
    ask.add_argument("--secret", action="store_true", help="typed text, masked on screen")
    ask.add_argument(
        "--file", metavar="ASK.json", help="the whole tool input as JSON (- reads stdin)"
    )
    ask.add_argument("--dialect", default="auto", help="the --file's dialect (default: auto)")
    ask.add_argument("--timeout", type=float, metavar="S", help="give up after S seconds (exit 3)")
    ask.add_argument("--json", action="store_true", help="print the canonical result JSON")
    ask.add_argument("--gateway", metavar="URL", help="ask through this gateway instead")
    ask.add_argument(
        "--token",
        help="the admin or an agent token (default: MIDTURN_AGENT_TOKEN, MIDTURN_TOKEN); "
        "visible to other users in `ps`: prefer --token-file or the variables",
    )
    ask.add_argument("--token-file", metavar="FILE", help="read the token from FILE")
    ask.set_defaults(run=_run_ask)

    answer = commands.add_parser("answer", help="answer a gateway's questions in this terminal")
    answer.add_argument("url", nargs="?", help="an answer URL (http://host:port/#token=…)")
    answer.add_argument("--gateway", metavar="URL", help="the gateway (default 127.0.0.1:8765)")
    answer.add_argument(
        "--token",
        help="an answer or admin token (default: MIDTURN_ANSWER_TOKEN, MIDTURN_TOKEN); "
        "visible to other users in `ps`: prefer --token-file or the variables",
    )
    answer.add_argument(
        "--token-file", metavar="FILE", help="read the token, or the whole answer URL, from FILE"
    )
    answer.set_defaults(run=_run_answer)

    demo = commands.add_parser("demo", help="an agent turn that asks you mid-turn")
    demo.set_defaults(run=_run_demo)

    hook = commands.add_parser("hook", help="answer an agent's own hooks through a gateway")
    hooks = hook.add_subparsers(dest="agent", required=True, metavar="AGENT")
    claude = hooks.add_parser(
        "claude-code",
        help="Claude Code's PreToolUse / PermissionRequest hook (payload on stdin)",
        description="Answer Claude Code's PreToolUse and PermissionRequest hooks (the "
        "payload on stdin, the decision on stdout) through a midturn gateway.",
        epilog="settings.json: docs/adapters/claude-code.md",
    )
    claude.add_argument(
        "--gateway",
        metavar="URL",
        help="the gateway (default: MIDTURN_GATEWAY, else 127.0.0.1:8765)",
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
        help="after S seconds without an answer, withdraw it and let Claude Code ask",
    )
    claude.set_defaults(run=_run_hook)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        code: int = args.run(args)
        return code
    except _Usage as error:
        _say(f"midturn {args.command}: {error}")
        return EXIT_CODES["usage"]
    except InvalidAsk as error:
        _say(f"midturn {args.command}: the ask is not valid:\n{error}")
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
