"""A terminal answerer: follow a queue of interactions and answer its head, one at a time.

It codes against the answerer port (`midturn.Answerer`), so the same loop serves
`midturn answer` (a gateway's queue, through `AsyncClient`) and `midturn demo` (an
in-process `Runtime`). Only the head is shown (docs/runtime.md#one-queue-per-session); when the
head is settled somewhere else (the web inbox, another terminal) the picker closes and
the next one opens.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from midturn.contract._interactions import Event, Interaction, utcnow
from midturn.contract._ports import Answerer
from midturn.errors import AlreadySettled, InvalidAnswer, UsageError
from midturn.tui._permission import PermissionChoice, pick_permission
from midturn.tui._picker import DEFAULT_REPEAT_WINDOW_S, PickerResult, pick
from midturn.tui._sanitize import sanitize
from midturn.tui._terminal import TerminalIO

__all__ = ["STOPPED", "SessionTitle", "answer_loop", "asked_by"]

SessionTitle = Callable[[str], Awaitable[str | None]]
"""`title(session_id)`: the session's title, or None (see `answer_loop`)."""

STOPPED = 130
"""What `answer_loop` returns when the person pressed Ctrl-C (the shell's code for it)."""

_REQUESTED = {"user_question_requested", "permission_requested"}
_NOT_SETTLING = _REQUESTED | {"turn_waiting", "turn_resumed"}


async def _pending(answerer: Answerer, session_id: str | None) -> list[Interaction]:
    if session_id is None:
        return await answerer.inbox()
    return await answerer.queue(session_id)


async def _pump(answerer: Answerer, session_id: str | None, inbox: asyncio.Queue[Event]) -> None:
    async for event in answerer.events(session_id):
        inbox.put_nowait(event)


async def _settled_elsewhere(inbox: asyncio.Queue[Event], interaction_id: str) -> Event:
    while True:
        event = await inbox.get()
        if event.interaction_id == interaction_id and event.type not in _NOT_SETTLING:
            return event


async def _something_new(inbox: asyncio.Queue[Event]) -> None:
    while True:
        event = await inbox.get()
        if event.type in _REQUESTED:
            while not inbox.empty():  # a burst (or a replay) needs one refresh only
                inbox.get_nowait()
            return


async def _show(
    item: Interaction, term: TerminalIO, window: float
) -> PickerResult | PermissionChoice:
    if item.kind == "ask" and item.ask is not None:
        left = None
        if item.deadline is not None:
            left = max(0.0, (item.deadline - utcnow()).total_seconds())
        return await pick(
            item.ask,
            input=term.input,
            output=term.output,
            repeat_window_s=window,
            time_left_s=left,
        )
    if item.permission is None:
        raise UsageError(f"interaction {item.id} carries neither an ask nor a permission")
    return await pick_permission(
        item.permission, input=term.input, output=term.output, repeat_window_s=window
    )


def _line(text: str, limit: int) -> str:
    clean = " ".join(sanitize(text, multiline=False).split())
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"


def asked_by(item: Interaction, title: str | None, *, name_session: bool = True) -> str | None:
    """Who is asking, for the lines above the picker: the session (its title, with its
    id) and the host's context (the agent, what it was doing, the tool call), model
    text sanitized and cut. None when there is nothing to say."""
    lines: list[str] = []
    context = item.context
    head = ""
    if name_session:
        head = (
            f"Session “{_line(title, 80)}” ({item.session_id})"
            if title
            else (f"Session {item.session_id}")
        )
    if context is not None and context.agent:
        agent = f"{_line(context.agent, 60)} asks"
        head = f"{head} · {agent}" if head else agent
    if head:
        lines.append(head)
    if context is not None and context.doing:
        lines.append(f"  doing: {_line(context.doing, 200)}")
    if context is not None and context.tool is not None:
        call = context.tool.name + (f" {context.tool.input}" if context.tool.input else "")
        lines.append(f"  tool call: {_line(call, 160)}")
    return "\n".join(lines) or None


async def answer_loop(
    answerer: Answerer,
    term: TerminalIO,
    *,
    session_id: str | None = None,
    repeat_window_s: float = DEFAULT_REPEAT_WINDOW_S,
    idle_message: str | None = "Waiting for questions… (Ctrl-C to quit)",
    session_title: SessionTitle | None = None,
) -> int:
    """Answer the head of one session's queue (or, with no `session_id`, of every
    session's: the inbox) in the picker, again and again. Returns `STOPPED` after
    Ctrl-C in a picker (the head's turn is stopped first); runs until then, or until
    the task is cancelled. With `session_title`, each head is introduced by its session
    (title and id) and who is asking; without it, by who is asking when the host said."""
    inbox: asyncio.Queue[Event] = asyncio.Queue()
    pump = asyncio.create_task(_pump(answerer, session_id, inbox))
    try:
        idle_said = False
        while True:
            if pump.done():
                pump.result()  # the stream failed: let the error out
                return 0
            pending = await _pending(answerer, session_id)
            if not pending:
                if idle_message and not idle_said:
                    term.say(idle_message)
                    idle_said = True
                await _race(_something_new(inbox), pump)
                continue
            idle_said = False
            head = pending[0]
            title = await session_title(head.session_id) if session_title else None
            intro = asked_by(head, title, name_session=session_title is not None)
            if intro:
                term.say(intro)
            code = await _handle(head, answerer, term, inbox, repeat_window_s)
            if code is not None:
                return code
    finally:
        pump.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await pump


async def _race(work: Any, pump: asyncio.Task[None]) -> None:
    task = asyncio.ensure_future(work)
    try:
        await asyncio.wait({task, pump}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _handle(
    head: Interaction,
    answerer: Answerer,
    term: TerminalIO,
    inbox: asyncio.Queue[Event],
    window: float,
) -> int | None:
    picker = asyncio.create_task(_show(head, term, window))
    watcher = asyncio.create_task(_settled_elsewhere(inbox, head.id))
    try:
        await asyncio.wait({picker, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (picker, watcher):
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
    if not picker.done() or picker.cancelled():
        term.say("That one was settled elsewhere; moving on.")
        return None
    outcome = picker.result()
    if (isinstance(outcome, PickerResult) and outcome.stopped) or (
        isinstance(outcome, PermissionChoice) and outcome.stopped
    ):
        await answerer.stop_turn(head.session_id, head.turn_id)
        return STOPPED
    try:
        if isinstance(outcome, PickerResult):
            await answerer.answer(head.id, outcome.payload)
        elif outcome.decision is not None:
            await answerer.decide(head.id, outcome.decision, message=outcome.message)
    except AlreadySettled as settled:
        status = getattr(settled.interaction, "status", "settled")
        term.say(f"Already {status} elsewhere; your response changed nothing.")
    except InvalidAnswer as error:
        term.say(f"The answer was refused ({error}); it is shown again.")
    return None
