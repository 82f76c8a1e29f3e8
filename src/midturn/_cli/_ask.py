"""`midturn ask`: build the ask from the flags or a file, ask in this terminal or through
a gateway, and print the answer (docs/terminal.md#midturn-ask)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from midturn._cli._common import EXIT_CODES
from midturn._cli._common import Usage as _Usage
from midturn._cli._common import local as _local
from midturn._cli._common import looked as _looked
from midturn._cli._common import refused as _refused
from midturn._cli._common import say as _say
from midturn._cli._common import token as _token
from midturn._cli._common import transport_failure as _transport_failure
from midturn.contract._models import Ask, AskResult
from midturn.errors import Forbidden, Unauthorized

__all__ = ["run_ask"]

_SESSION_TURN = "cli"


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
            raise _Usage(f"--timeout {args.timeout:g} is no time to answer; give seconds above 0")
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
        _say(f"midturn ask: {notes[result.outcome]}")
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
            _say("midturn ask: no terminal here to ask in; give --gateway URL to ask through one")
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

    found = _token(args, ("MIDTURN_AGENT_TOKEN", "MIDTURN_TOKEN")) or _local(args.gateway)
    if found is None:
        raise _Usage(
            "asking through a gateway needs a token, and none was found. Give the admin "
            "token or a session's agent token with --token-file FILE, or set "
            f"MIDTURN_AGENT_TOKEN or MIDTURN_TOKEN{_looked(args.gateway)}."
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
            "midturn ask: " + _transport_failure(args.gateway, error) + "; start it with "
            "`midturn serve` or check --gateway"
        )
        return EXIT_CODES["unavailable"]
    except Unauthorized as error:
        if isinstance(error, Forbidden):
            raise
        raise _Usage(_refused(args.gateway, found)) from error
    return _report(settled.result or AskResult(outcome="cancelled"), args.json)


def run_ask(args: argparse.Namespace) -> int:
    ask, tool_input, dialect = _tool_input(args)
    if args.gateway:
        return asyncio.run(_ask_gateway(tool_input, dialect, args))
    timeout_s = args.timeout if args.timeout is not None else ask.timeout_s
    return asyncio.run(_ask_here(ask, timeout_s, args.json))
