"""A terminal answerer: follow a queue of interactions and answer its head, one at a time.

The same loop serves `midturn answer` (a gateway's queue, through `AsyncClient`) and
`midturn demo` (an in-process `Runtime`). Only the head is shown
(docs/runtime.md#one-queue-per-session); when the head is settled somewhere else (the web inbox,
another terminal) the picker closes and the next one opens.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any, Protocol

from midturn.contract._interactions import Decision, Event, Interaction, utcnow
from midturn.errors import AlreadySettled, InvalidAnswer, UsageError
from midturn.tui._permission import PermissionChoice, pick_permission
from midturn.tui._picker import DEFAULT_REPEAT_WINDOW_S, PickerResult, pick
from midturn.tui._terminal import TerminalIO

__all__ = ["STOPPED", "AnswerSource", "GatewaySource", "RuntimeSource", "answer_loop"]

STOPPED = 130
"""What `answer_loop` returns when the person pressed Ctrl-C (the shell's code for it)."""

_REQUESTED = {"user_question_requested", "permission_requested"}
_NOT_SETTLING = _REQUESTED | {"turn_waiting", "turn_resumed"}


class AnswerSource(Protocol):
    """Where interactions come from and where responses go."""

    async def pending(self) -> list[Interaction]: ...

    def events(self) -> AsyncIterator[Event]: ...

    async def answer(self, interaction_id: str, payload: Any) -> None: ...

    async def decide(
        self, interaction_id: str, decision: Decision, message: str | None
    ) -> None: ...

    async def stop_turn(self, session_id: str, turn_id: str) -> None: ...


class RuntimeSource:
    """An in-process `Runtime`: one session's queue, or (no session) every session's."""

    def __init__(self, runtime: Any, session_id: str | None = None) -> None:
        self.runtime = runtime
        self.session_id = session_id

    async def pending(self) -> list[Interaction]:
        if self.session_id is None:
            items: list[Interaction] = await self.runtime.inbox()
        else:
            items = await self.runtime.queue(self.session_id)
        return items

    def events(self) -> AsyncIterator[Event]:
        stream: AsyncIterator[Event] = self.runtime.events(session_id=self.session_id)
        return stream

    async def answer(self, interaction_id: str, payload: Any) -> None:
        await self.runtime.answer(interaction_id, payload, by="terminal")

    async def decide(self, interaction_id: str, decision: Decision, message: str | None) -> None:
        await self.runtime.decide(interaction_id, decision, message=message, by="terminal")

    async def stop_turn(self, session_id: str, turn_id: str) -> None:
        await self.runtime.stop_turn(session_id, turn_id, by="terminal")


class GatewaySource:
    """A gateway through `AsyncClient`: an answer token follows its session; the admin
    token (no session) follows every session's queue."""

    def __init__(self, client: Any, session_id: str | None = None) -> None:
        self.client = client
        self.session_id = session_id

    async def pending(self) -> list[Interaction]:
        if self.session_id is None:
            items: list[Interaction] = await self.client.inbox()
        else:
            items = await self.client.queue(self.session_id)
        return items

    def events(self) -> AsyncIterator[Event]:
        stream: AsyncIterator[Event] = self.client.events(self.session_id)
        return stream

    async def answer(self, interaction_id: str, payload: Any) -> None:
        await self.client.answer(interaction_id, payload)

    async def decide(self, interaction_id: str, decision: Decision, message: str | None) -> None:
        await self.client.decide(interaction_id, decision, message=message)

    async def stop_turn(self, session_id: str, turn_id: str) -> None:
        await self.client.stop_turn(session_id, turn_id)


async def _pump(source: AnswerSource, inbox: asyncio.Queue[Event]) -> None:
    async for event in source.events():
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


async def answer_loop(
    source: AnswerSource,
    term: TerminalIO,
    *,
    repeat_window_s: float = DEFAULT_REPEAT_WINDOW_S,
    idle_message: str | None = "Waiting for questions… (Ctrl-C to quit)",
) -> int:
    """Answer the queue's head in the picker, again and again. Returns `STOPPED` after
    Ctrl-C in a picker (the head's turn is stopped first); runs until then, or until
    the task is cancelled."""
    inbox: asyncio.Queue[Event] = asyncio.Queue()
    pump = asyncio.create_task(_pump(source, inbox))
    try:
        idle_said = False
        while True:
            if pump.done():
                pump.result()  # the stream failed: let the error out
                return 0
            pending = await source.pending()
            if not pending:
                if idle_message and not idle_said:
                    term.say(idle_message)
                    idle_said = True
                await _race(_something_new(inbox), pump)
                continue
            idle_said = False
            head = pending[0]
            code = await _handle(head, source, term, inbox, repeat_window_s)
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
    source: AnswerSource,
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
        await source.stop_turn(head.session_id, head.turn_id)
        return STOPPED
    try:
        if isinstance(outcome, PickerResult):
            await source.answer(head.id, outcome.payload)
        elif outcome.decision is not None:
            await source.decide(head.id, outcome.decision, outcome.message)
    except AlreadySettled as settled:
        status = getattr(settled.interaction, "status", "settled")
        term.say(f"Already {status} elsewhere; your response changed nothing.")
    except InvalidAnswer as error:
        term.say(f"The answer was refused ({error}); it is shown again.")
    return None
