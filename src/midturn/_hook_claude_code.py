"""`midturn hook claude-code` (docs/adapters/claude-code.md): Claude Code's questions and
permission prompts, answered by a person through a midturn gateway.

Claude Code runs the command for a `PreToolUse` or `PermissionRequest` hook with the hook
payload on stdin and reads the decision from stdout. `AskUserQuestion` becomes an ask in
the `claude` dialect, every other tool a permission request; the payload's `tool_use_id`
is the interaction's `tool_call_id`, so a hook that runs again for the same call finds
the interaction it made (pending: waits on it; settled: its decision at once) and never
asks twice.

Registered for `UserPromptSubmit` and `Stop` (and `StopFailure`) too, it gives the calls
of one Claude Code turn one midturn turn: the prompt starts it (its id derived from the
Claude Code session, the turn before and the prompt, and kept in the state folder where
the tool hooks find it), the end of the response ends it through the gateway, and with it
any "allow for this turn". Without those hooks each interaction is a turn of its own.

A question from a sub-agent (the payload's `agent_id`), or any question with
`--unattended` (a run no one answers), is `unavailable` at once: a deny whose reason says
no one can answer, nothing asked. Permissions from a sub-agent are asked as usual; with
`--unattended` they go back to Claude Code's own rules (`"ask"`), asked of no one.

What it never does: read a failure as consent. A gateway that cannot be reached, a token
that is missing or cannot ask, an outcome no one decided (`unavailable`) fall back to
Claude Code's own prompt (`permissionDecision: "ask"`; for `PermissionRequest`, no
output, which shows Claude Code's dialog). A question skipped, a permission denied or
timed out, a stopped turn: the tool does not run, and the model reads why.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from midturn._hook_claude_code_state import (
    Sessions,
    Turn,
    join_turn,
    locked,
    start_turn,
    state_dir,
    stop_turn,
)
from midturn.contract._api import parse_ask, render
from midturn.contract._interactions import Interaction
from midturn.contract._models import AskResult, QuestionAnswer
from midturn.contract._ports import Settled
from midturn.errors import InvalidAsk, MidturnError, NotFound
from midturn.types import Risk

if TYPE_CHECKING:
    from midturn.client import AsyncClient

__all__ = ["EVENTS", "HookFailure", "answer_hook", "fallback", "read_payload", "state_dir"]

TOOL_EVENTS = ("PreToolUse", "PermissionRequest")
TURN_EVENTS = ("UserPromptSubmit", "Stop", "StopFailure")
EVENTS = TOOL_EVENTS + TURN_EVENTS
QUESTION_TOOL = "AskUserQuestion"
_READING = {"Read", "Glob", "Grep", "LS", "WebSearch", "TodoWrite"}
_SUMMARY_CHARS = 500
_DETAILS_CHARS = 60_000


class HookFailure(Exception):
    """Something kept midturn from deciding: fall back to Claude Code's own prompt, and
    say this message to the person."""


@dataclass(frozen=True, slots=True)
class Payload:
    """What the hook reads of Claude Code's payload."""

    event: str
    session_id: str
    cwd: str
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    tool_use_id: str | None = None
    agent_id: str | None = None  # set inside a sub-agent
    agent_type: str | None = None  # the sub-agent's name, beside agent_id
    prompt: str = ""  # UserPromptSubmit
    transcript_path: str = ""  # the session's conversation, JSON Lines


def read_payload(text: str) -> Payload:
    """The payload Claude Code wrote on stdin; `HookFailure` when it is not one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise HookFailure(f"the hook input is not JSON ({error})") from None
    if not isinstance(data, dict):
        raise HookFailure("the hook input is not a JSON object")
    event = data.get("hook_event_name")
    if event not in EVENTS:
        raise HookFailure(
            f"midturn answers the {', '.join(EVENTS)} hooks, not {event!r}; "
            "register it under those events"
        )
    if event in TURN_EVENTS:
        prompt = data.get("prompt")
        return Payload(
            event=event,
            session_id=str(data.get("session_id") or ""),
            cwd=str(data.get("cwd") or ""),
            prompt=prompt if isinstance(prompt, str) else "",
        )
    tool_name, tool_input = data.get("tool_name"), data.get("tool_input")
    if not isinstance(tool_name, str) or not tool_name or not isinstance(tool_input, dict):
        raise HookFailure(f"the {event} hook input has no tool_name and tool_input object")
    tool_use_id, agent_id = data.get("tool_use_id"), data.get("agent_id")
    agent_type, transcript = data.get("agent_type"), data.get("transcript_path")
    return Payload(
        event=event,
        session_id=str(data.get("session_id") or ""),
        cwd=str(data.get("cwd") or ""),
        tool_name=tool_name,
        tool_input=tool_input,
        tool_use_id=tool_use_id if isinstance(tool_use_id, str) and tool_use_id else None,
        agent_id=agent_id if isinstance(agent_id, str) and agent_id else None,
        agent_type=agent_type if isinstance(agent_type, str) and agent_type else None,
        transcript_path=transcript if isinstance(transcript, str) else "",
    )


# -- what the hook writes on stdout ------------------------------------------------------


def _decision(
    event: str,
    decision: str,
    reason: str,
    *,
    updated_input: dict[str, Any] | None = None,
    stop: bool = False,
) -> dict[str, Any]:
    """The documented hook output for allow or deny."""
    specific: dict[str, Any] = {"hookEventName": event}
    if event == "PreToolUse":
        specific.update(permissionDecision=decision, permissionDecisionReason=reason)
        if updated_input is not None:
            specific["updatedInput"] = updated_input
    else:
        verdict: dict[str, Any] = {"behavior": decision}
        if updated_input is not None:
            verdict["updatedInput"] = updated_input
        if decision == "deny":
            verdict.update(message=reason, interrupt=stop)
        specific["decision"] = verdict
    output: dict[str, Any] = {"hookSpecificOutput": specific}
    if stop:
        output.update({"continue": False, "stopReason": "The turn was stopped in midturn."})
    return output


def fallback(event: str | None, why: str) -> dict[str, Any] | None:
    """Hand the decision back to Claude Code's own prompt, saying why."""
    if event == "PreToolUse":
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "ask",
                "permissionDecisionReason": f"midturn could not decide: {why}",
            },
            "systemMessage": f"midturn: {why}; asking here instead",
        }
    return None  # PermissionRequest (or unknown): no output shows Claude Code's dialog


def _ask_output(payload: Payload, settled: Settled) -> dict[str, Any] | None:
    result = settled.interaction.result
    output = settled.output
    if result is None or output is None:
        return fallback(payload.event, "the ask came back without a result")
    if result.outcome == "unavailable":
        return fallback(payload.event, "no one can answer in midturn")
    data = output.data if isinstance(output.data, dict) else {}
    answers = data.get("answers") or {}
    if result.outcome == "answered" and answers:
        updated = dict(payload.tool_input)
        updated["answers"] = answers
        if data.get("annotations"):
            updated["annotations"] = data["annotations"]
        return _decision(payload.event, "allow", output.text, updated_input=updated)
    # skipped, redirected, timed out, stopped, or nothing chosen: never consent
    return _decision(payload.event, "deny", output.text, stop=result.outcome == "cancelled")


def _permission_output(payload: Payload, interaction: Interaction) -> dict[str, Any] | None:
    status = interaction.status
    if status == "allowed":
        how = interaction.decision.decision if interaction.decision else "allow"
        return _decision(payload.event, "allow", f"The user allowed it in midturn ({how}).")
    if status == "unavailable":
        return fallback(payload.event, "no one can answer in midturn")
    if status == "denied":
        message = interaction.decision.message if interaction.decision else None
        return _decision(payload.event, "deny", message or "The user denied this tool call.")
    if status == "timed_out":
        return _decision(
            payload.event, "deny", "No one answered the permission request in time; not run."
        )
    return _decision(payload.event, "deny", "The user stopped the turn.", stop=True)


def _summary(tool: str, tool_input: dict[str, Any]) -> tuple[str, str]:
    """A one-line summary of the call and its full input as details."""
    key = next(
        (
            k
            for k in ("command", "file_path", "notebook_path", "url", "pattern", "query")
            if isinstance(tool_input.get(k), str) and tool_input[k].strip()
        ),
        None,
    )
    line = f"{tool}: {tool_input[key].strip()}" if key else f"Use {tool}"
    line = " ".join(line.split())
    if len(line) > _SUMMARY_CHARS:
        line = line[: _SUMMARY_CHARS - 1] + "…"
    details = json.dumps(tool_input, indent=2, ensure_ascii=False)
    if len(details) > _DETAILS_CHARS:
        details = details[: _DETAILS_CHARS - 1] + "…"
    return line, details


async def _session(client: AsyncClient, payload: Payload, gateway: str, folder: Path) -> str:
    """The midturn session this call asks in: the agent token's own, or (admin token)
    the one opened for this Claude Code session, opened now if there is none."""
    who = await client.whoami()
    role = who.get("role")
    if role == "agent":
        return str(who["session_id"])
    if role != "admin":
        raise HookFailure("the token is an answer token, which cannot ask; use the admin token")
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)  # noqa: ASYNC240 - a one-shot command
    sessions = Sessions(folder, gateway, _key(payload))
    with locked(sessions.path.with_suffix(".lock")):
        known = sessions.read()
        if known is not None:
            return known
        title = Path(payload.cwd).name or payload.cwd or "Claude Code"
        meta = {
            "client": "claude-code",
            "title": title,
            "cwd": payload.cwd,
            "claude_session_id": payload.session_id,
        }
        created = await client.create_session(meta)
        sessions.write({"session_id": created.session_id, "title": title, "cwd": payload.cwd})
        print(f"midturn: answer {title!r} at {created.answer_url}", file=sys.stderr)
        return str(created.session_id)


# -- the hook ----------------------------------------------------------------------------


async def _decide(
    client: AsyncClient,
    session_id: str,
    payload: Payload,
    timeout: float | None,
    where: tuple[str, Path],
) -> dict[str, Any] | None:
    gateway, folder = where
    turn_id = join_turn(Turn(folder, gateway, _key(payload)), session_id)
    if payload.tool_name == QUESTION_TOOL:
        parked, _ = await client.ask(
            session_id,
            payload.tool_input,
            dialect="claude",
            tool_call_id=payload.tool_use_id,
            turn_id=turn_id,
            context=_context(payload),
        )
    else:
        summary, details = _summary(payload.tool_name, payload.tool_input)
        risk: Risk = "low" if payload.tool_name in _READING else "medium"
        parked, _ = await client.request_permission(
            session_id,
            tool=payload.tool_name,
            summary=summary,
            details=details,
            risk=risk,
            tool_call_id=payload.tool_use_id,
            turn_id=turn_id,
            context=_context(payload),
        )
    settled = await client.wait(parked.id, timeout, kind=parked.kind)
    if settled.pending:
        with contextlib.suppress(MidturnError):
            await client.cancel(parked.id)
        raise HookFailure(f"no answer in midturn within {timeout:g} s")
    if payload.tool_name == QUESTION_TOOL:
        return _ask_output(payload, settled)
    return _permission_output(payload, settled.interaction)


# -- who is asking: the context shown beside the interaction ------------------------------

_TRANSCRIPT_TAIL = 256 * 1024  # read this much of the conversation's end, at most


def _context(payload: Payload) -> dict[str, Any]:
    """Who asks (Claude Code, or which of its sub-agents), what it was doing (the last
    assistant text of its transcript, when the file can be read) and, for a permission,
    the tool call (docs/contract.md#who-is-asking; the gateway bounds each field)."""
    agent = "Claude Code" if payload.agent_type is None else f"Claude Code · {payload.agent_type}"
    context: dict[str, Any] = {"agent": agent}
    doing = last_assistant_text(payload.transcript_path)
    if doing:
        context["doing"] = doing
    if payload.tool_name != QUESTION_TOOL:
        context["tool"] = {"name": payload.tool_name, "input": payload.tool_input}
    return context


def last_assistant_text(transcript_path: str) -> str | None:
    """The text of the newest assistant message in a Claude Code transcript (one JSON
    object per line; an assistant line holds `message.content` blocks), or None when
    there is no such file or line. Only the file's end is read."""
    if not transcript_path:
        return None
    try:
        with open(transcript_path, "rb") as file:
            file.seek(0, 2)
            size = file.tell()
            file.seek(max(0, size - _TRANSCRIPT_TAIL))
            tail = file.read()
    except OSError:
        return None
    for line in reversed(tail.decode("utf-8", "replace").splitlines()):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue  # the first, cut line, or one being written
        if not isinstance(entry, dict) or entry.get("type") != "assistant":
            continue
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            texts = [content]
        elif isinstance(content, list):
            texts = [
                block["text"]
                for block in content
                if isinstance(block, dict)
                and block.get("type") == "text"
                and isinstance(block.get("text"), str)
            ]
        else:
            texts = []
        text = "\n".join(t.strip() for t in texts if t.strip())
        if text:
            return text
    return None


# -- turns: UserPromptSubmit starts one, Stop ends it -------------------------------------


def _key(payload: Payload) -> str:
    """What names the Claude Code session in the state folder."""
    return payload.session_id or payload.cwd


async def end_turn(record: dict[str, Any], *, gateway: str, token: str) -> None:
    """End a turn at the gateway (its grants end, anything of it still pending is
    cancelled)."""
    import httpx

    from midturn.client import AsyncClient

    try:
        async with AsyncClient(gateway, token) as client:
            await client.end_turn(str(record["session_id"]), str(record["turn_id"]))
    except NotFound:
        return  # the gateway no longer knows the session: nothing of it to end
    except httpx.HTTPError as error:
        detail = str(error) or type(error).__name__
        raise HookFailure(f"cannot reach the gateway at {gateway} ({detail})") from None
    except MidturnError as error:
        raise HookFailure(f"the gateway refused: {error}") from None


def _turn_event(payload: Payload, *, gateway: str, token: str | None, folder: Path) -> None:
    """`UserPromptSubmit`, `Stop`, `StopFailure`: no output (the prompt goes on, Claude
    stops); a turn that cannot be ended at the gateway is said on stderr."""
    turn = Turn(folder, gateway, _key(payload))
    if payload.event == "UserPromptSubmit":
        ended = start_turn(turn, _key(payload), payload.prompt)
    else:
        ended = stop_turn(turn)
    if ended is None:
        return
    if token is None:
        raise HookFailure("no token: the turn's grants stay until it times out in midturn")
    asyncio.run(end_turn(ended, gateway=gateway, token=token))


# -- where no one answers -----------------------------------------------------------------


def _unavailable(payload: Payload) -> dict[str, Any]:
    """A question no one can answer here: the `unavailable` result, at once, asked of
    no one; a deny (the tool does not run), whose reason the model reads."""
    try:
        ask = parse_ask(payload.tool_input, "claude")
    except InvalidAsk as error:
        return _decision(payload.event, "deny", str(error))
    answers = tuple(
        QuestionAnswer(id=q.id, header=q.header, question=q.question, status="unavailable")
        for q in ask.questions
    )
    output = render(AskResult(outcome="unavailable", answers=answers), "claude")
    return _decision(payload.event, "deny", output.text)


async def answer_hook(
    payload: Payload,
    *,
    gateway: str,
    token: str,
    folder: Path,
    timeout: float | None = None,
) -> dict[str, Any] | None:
    """The hook's output for `payload`, decided through the gateway at `gateway`."""
    import httpx

    from midturn.client import AsyncClient

    try:
        async with AsyncClient(gateway, token) as client:
            session_id = await _session(client, payload, gateway, folder)
            try:
                return await _decide(client, session_id, payload, timeout, (gateway, folder))
            except NotFound:
                # the gateway lost the session we remembered (a new database): open another
                Sessions(folder, gateway, _key(payload)).path.unlink(missing_ok=True)
                session_id = await _session(client, payload, gateway, folder)
                return await _decide(client, session_id, payload, timeout, (gateway, folder))
    except InvalidAsk as error:
        # worded for the model: it reads why and can ask again, fixed
        return _decision(payload.event, "deny", str(error))
    except httpx.HTTPError as error:
        detail = str(error) or type(error).__name__
        raise HookFailure(f"cannot reach the gateway at {gateway} ({detail})") from None
    except MidturnError as error:
        raise HookFailure(f"the gateway refused: {error}") from None


def run(
    text: str,
    *,
    gateway: str,
    token: str | None,
    timeout: float | None,
    unattended: bool = False,
) -> int:
    """Read the payload in `text`, decide, print the output; the exit code for Claude
    Code (0 with JSON on stdout, or nothing; 1, a non-blocking error, when the input was
    no hook payload at all). `unattended`: no one answers this run (see the module)."""
    try:
        payload = read_payload(text)
    except HookFailure as error:
        print(f"midturn hook claude-code: {error}", file=sys.stderr)
        return 1
    output: dict[str, Any] | None
    if payload.event in TURN_EVENTS:
        try:
            _turn_event(payload, gateway=gateway, token=token, folder=state_dir())
        except HookFailure as error:
            print(f"midturn hook claude-code: {error}", file=sys.stderr)
        return 0
    if payload.tool_name == QUESTION_TOOL and (unattended or payload.agent_id):
        output = _unavailable(payload)
    elif unattended:
        output = fallback(payload.event, "no one answers this run (--unattended)")
    elif token is None:
        output = fallback(payload.event, "no token: set MIDTURN_TOKEN (the gateway's admin token)")
    else:
        try:
            output = asyncio.run(
                answer_hook(
                    payload, gateway=gateway, token=token, folder=state_dir(), timeout=timeout
                )
            )
        except HookFailure as error:
            print(f"midturn hook claude-code: {error}", file=sys.stderr)
            output = fallback(payload.event, str(error))
    if output is not None:
        print(json.dumps(output, ensure_ascii=False))
    return 0
