"""A turn as a handle: its `waiting_user_input` state, a hook, an awaitable, and a scope
that stops the turn when it ends (docs/runtime.md#states).

A turn is waiting while at least one interaction it parked is pending. The runtime
publishes `turn_waiting` when the first one parks and `turn_resumed` when the last one
settles; the handle follows those events, so it also sees settles made by another
process on the same store.

A wrapper over the runtime's public methods (`TurnHost`: the asker port, `watch` and
`store`); the runtime module imports this one, never the other way round.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, Protocol, Self

from midturn.contract._context import ContextInput
from midturn.contract._interactions import Event, Interaction, Risk
from midturn.contract._models import ToolOutput
from midturn.contract._ports import Asker, Parked
from midturn.store._base import Store

__all__ = ["Turn", "TurnHost", "WaitingHook"]

log = logging.getLogger("midturn.runtime")

WaitingHook = Callable[[bool], None]
"""Called with the new state each time the turn starts or stops waiting."""


class TurnHost(Asker, Protocol):
    """What a `Turn` uses of its runtime (all public on `midturn.Runtime`)."""

    store: Store

    @property
    def closed(self) -> bool: ...

    def watch(self, watcher: Callable[[Event], None]) -> Callable[[], None]: ...

    async def stop_turn(
        self, session_id: str, turn_id: str, *, by: str | None = None
    ) -> list[Interaction]: ...

    async def end_turn(
        self, session_id: str, turn_id: str, *, by: str | None = None
    ) -> list[Interaction]: ...

    async def handle_tool_call(
        self,
        session_id: str,
        *,
        name: str,
        tool_call_id: str,
        tool_input: Mapping[str, Any] | str,
        turn_id: str | None = None,
        dialect: str = "midturn",
        context: ContextInput | None = None,
    ) -> ToolOutput: ...


class Turn:
    """One turn of one session. Use `async with runtime.turn(session_id, turn_id) as
    turn:`; leaving the block ends the turn — `end()` when the block completes, `stop()`
    when it raises (or is cancelled) — unless made with `stop_on_exit=False`, which only
    observes. Either way every interaction it parked that is still pending settles
    `cancelled`, its `allow_for_turn` grants end, and it parks nothing more."""

    def __init__(
        self, runtime: TurnHost, session_id: str, turn_id: str, *, stop_on_exit: bool = True
    ) -> None:
        self.runtime = runtime
        self.session_id = session_id
        self.turn_id = turn_id
        self.stop_on_exit = stop_on_exit
        self._waiting = False
        self._seen = 0
        self._hooks: list[WaitingHook] = []
        self._flipped = asyncio.Event()
        self._unwatch: Callable[[], None] | None = None

    # -- scope -----------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        self._unwatch = self.runtime.watch(self._on_event)
        seen = await self.runtime.store.last_event_id()
        pending = await self.runtime.store.list_interactions(
            session_id=self.session_id, turn_id=self.turn_id, status="pending", limit=1
        )
        self._seen = max(self._seen, seen)
        self._set(bool(pending))  # read after `seen`: at least as new as any event up to it
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self.stop_on_exit and not self.runtime.closed:
                ending = self.stop() if exc_type is not None else self.end()
                await asyncio.shield(ending)
        finally:
            if self._unwatch is not None:
                self._unwatch()
                self._unwatch = None

    # -- state -----------------------------------------------------------------------

    @property
    def waiting(self) -> bool:
        """True while the turn waits for a person (`waiting_user_input`)."""
        return self._waiting

    def on_waiting(self, hook: WaitingHook) -> Callable[[], None]:
        """Call `hook(waiting)` on every change; returns a function that removes it."""
        self._hooks.append(hook)

        def remove() -> None:
            if hook in self._hooks:
                self._hooks.remove(hook)

        return remove

    async def wait_until(self, *, waiting: bool) -> None:
        """Return once `turn.waiting == waiting` (at once if it already is)."""
        while self._waiting != waiting:
            await self._flipped.wait()

    def _on_event(self, event: Event) -> None:
        if (
            event.id <= self._seen
            or event.session_id != self.session_id
            or event.turn_id != self.turn_id
            or event.type not in ("turn_waiting", "turn_resumed")
        ):
            return
        self._seen = event.id
        self._set(event.type == "turn_waiting")

    def _set(self, waiting: bool) -> None:
        if waiting == self._waiting:
            return
        self._waiting = waiting
        flipped, self._flipped = self._flipped, asyncio.Event()
        flipped.set()
        for hook in list(self._hooks):
            try:
                hook(waiting)
            except Exception:  # a host's hook must not break the runtime
                log.exception("an on_waiting hook of turn %s failed", self.turn_id)

    # -- acting in the turn ----------------------------------------------------------

    async def ask(
        self,
        tool_input: Any,
        *,
        dialect: str = "midturn",
        tool_call_id: str | None = None,
        context: ContextInput | None = None,
    ) -> Parked:
        return await self.runtime.ask(
            self.session_id,
            tool_input,
            turn_id=self.turn_id,
            dialect=dialect,
            tool_call_id=tool_call_id,
            context=context,
        )

    async def request_permission(
        self,
        *,
        tool: str,
        summary: str,
        risk: Risk = "medium",
        details: str | None = None,
        tool_call_id: str | None = None,
        timeout_s: float | None = None,
        context: ContextInput | None = None,
    ) -> Parked:
        return await self.runtime.request_permission(
            self.session_id,
            tool=tool,
            summary=summary,
            turn_id=self.turn_id,
            risk=risk,
            details=details,
            tool_call_id=tool_call_id,
            timeout_s=timeout_s,
            context=context,
        )

    async def handle_tool_call(
        self,
        *,
        name: str,
        tool_call_id: str,
        tool_input: Mapping[str, Any] | str,
        dialect: str = "midturn",
        context: ContextInput | None = None,
    ) -> ToolOutput:
        return await self.runtime.handle_tool_call(
            self.session_id,
            name=name,
            tool_call_id=tool_call_id,
            tool_input=tool_input,
            turn_id=self.turn_id,
            dialect=dialect,
            context=context,
        )

    async def stop(self, *, by: str | None = "host") -> list[Interaction]:
        """Stop the turn now: end it and cancel everything it parked that is still
        pending (`Runtime.stop_turn`)."""
        return await self.runtime.stop_turn(self.session_id, self.turn_id, by=by)

    async def end(self, *, by: str | None = "host") -> list[Interaction]:
        """The turn finished: end it (`Runtime.end_turn`)."""
        return await self.runtime.end_turn(self.session_id, self.turn_id, by=by)
