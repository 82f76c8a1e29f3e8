"""A scripted human for your tests: `ScriptedResponder` follows an answerer's events
(`midturn.Answerer`: the in-process `Runtime`, or an `AsyncClient` on a gateway with an
answer or admin token) and responds to each new interaction with the next step of its
script.

    async with ScriptedResponder(runtime, [answer({"db": "SQLite"}), deny("not now"),
                                           stall(), skip()]) as human:
        output = await runtime.handle_tool_call(...)
        await human.finished()

Steps: `answer(payload)` (any §2.4 shape, or a function of the interaction returning
one), `skip()`, `redirect(message)`, `allow()`, `deny(message)`, `allow_for_turn()`,
`stall()` (leave it pending), `cancel()` and `stop_turn()`. Every response is recorded on
`responses`; a response the runtime refuses is recorded with its error, and the script
goes on. An interaction that arrives after the script ran out is left pending and noted
on `unscripted`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, Self

from midturn.contract._interactions import Decision, Interaction
from midturn.contract._ports import Answerer, Asker, Settled
from midturn.errors import MidturnError, UsageError

__all__ = [
    "Response",
    "ScriptedResponder",
    "Step",
    "allow",
    "allow_for_turn",
    "answer",
    "cancel",
    "deny",
    "redirect",
    "skip",
    "stall",
    "stop_turn",
]

StepKind = Literal["answer", "decide", "stall", "cancel", "stop_turn"]
_REQUESTED = frozenset({"user_question_requested", "permission_requested"})


@dataclass(frozen=True, slots=True)
class Step:
    """One scripted response. Build it with the helpers (`answer`, `deny`, ...)."""

    kind: StepKind
    payload: Any = None
    decision: Decision | None = None
    message: str | None = None


def answer(payload: Any | Callable[[Interaction], Any]) -> Step:
    """Answer an ask with `payload` (or with `payload(interaction)` when callable)."""
    return Step("answer", payload=payload)


def skip() -> Step:
    return Step("answer", payload={"skip": True})


def redirect(message: str) -> Step:
    return Step("answer", payload={"redirect": message})


def allow() -> Step:
    return Step("decide", decision="allow")


def deny(message: str | None = None) -> Step:
    return Step("decide", decision="deny", message=message)


def allow_for_turn() -> Step:
    return Step("decide", decision="allow_for_turn")


def stall() -> Step:
    """Leave this interaction pending (to test timeouts, queues and stops)."""
    return Step("stall")


def cancel() -> Step:
    return Step("cancel")


def stop_turn() -> Step:
    """Stop the interaction's whole turn, as a person pressing Stop."""
    return Step("stop_turn")


@dataclass(frozen=True, slots=True)
class Response:
    """What the responder did with one interaction."""

    interaction: Interaction
    step: Step
    settled: Settled | None = None
    stopped: tuple[Interaction, ...] = ()
    error: MidturnError | None = None


@dataclass
class ScriptedResponder:
    """Follow `answerer.events` (of one session, or all) and respond to each new
    interaction, in the order they were requested, with the next step of `script`.
    The settles are recorded as the answerer records them (a gateway: the token's
    role; the runtime: no `settled_by`)."""

    answerer: Answerer
    script: Sequence[Step]
    session_id: str | None = None
    responses: list[Response] = field(default_factory=list)
    unscripted: list[Interaction] = field(default_factory=list)
    _next: int = 0
    _task: asyncio.Task[None] | None = None
    _done: asyncio.Event = field(default_factory=asyncio.Event)

    async def __aenter__(self) -> Self:
        if self._task is not None:
            raise UsageError("this ScriptedResponder is already running; make a new one")
        if not self.script:
            self._done.set()
        self._task = asyncio.create_task(self._follow(), name="midturn-scripted-responder")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    @property
    def remaining(self) -> int:
        return len(self.script) - self._next

    async def finished(self) -> None:
        """Return once every step of the script has been used."""
        await self._done.wait()

    async def _follow(self) -> None:
        async for event in self.answerer.events(self.session_id):
            if event.type not in _REQUESTED or event.interaction_id is None:
                continue
            current = await self._pending(event.session_id, event.interaction_id)
            if current is None:
                continue
            if self._next >= len(self.script):
                self.unscripted.append(current)
                continue
            step = self.script[self._next]
            self._next += 1
            self.responses.append(await self._perform(current, step))
            if self._next >= len(self.script):
                self._done.set()

    async def _pending(self, session_id: str, interaction_id: str) -> Interaction | None:
        """The interaction if it is still pending (it is in its session's queue)."""
        for item in await self.answerer.queue(session_id):
            if item.id == interaction_id:
                return item
        return None

    async def _perform(self, interaction: Interaction, step: Step) -> Response:
        answerer = self.answerer
        try:
            if step.kind == "answer":
                payload = step.payload(interaction) if callable(step.payload) else step.payload
                settled = await answerer.answer(interaction.id, payload)
                return Response(interaction, step, settled=settled)
            if step.kind == "decide" and step.decision is not None:
                settled = await answerer.decide(interaction.id, step.decision, message=step.message)
                return Response(interaction, step, settled=settled)
            if step.kind == "cancel":
                settled = await _cancel(answerer, interaction.id)
                return Response(interaction, step, settled=settled)
            if step.kind == "stop_turn":
                stopped = await answerer.stop_turn(interaction.session_id, interaction.turn_id)
                return Response(interaction, step, stopped=tuple(stopped))
        except MidturnError as error:
            return Response(interaction, step, error=error)
        return Response(interaction, step)  # stall


async def _cancel(answerer: Answerer, interaction_id: str) -> Settled:
    """Cancelling one interaction is the asking side's act: it needs an answerer that is
    also an asker (the runtime; a client whose token may cancel)."""
    if not isinstance(answerer, Asker):
        raise UsageError("the cancel() step needs an answerer that is also an Asker")
    return await answerer.cancel(interaction_id)
