"""The runtime: park a turn, settle each interaction exactly once (SPEC §3).

API CONTRACT (the gateway and the terminal surfaces code against these signatures).
Nothing here knows about HTTP. The work is done in small modules beside this one:
`_parking.py` (persist-then-publish, compare-and-set, waiting, secrets, deadlines),
`_permissions.py`, `_turns.py` (the `Turn` handle), `_tool.py` (`handle_tool_call`),
`_events.py` and `_audit.py` (the decision export).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self

from pydantic import ValidationError

from midturn.contract._answers import uniform_result
from midturn.contract._api import parse_answer, parse_ask
from midturn.contract._interactions import (
    Decision,
    Event,
    Interaction,
    InteractionStatus,
    PermissionDecision,
    PermissionRequest,
    Risk,
    utcnow,
)
from midturn.contract._models import AskResult, Limits, ToolOutput
from midturn.errors import AlreadySettled, InvalidAnswer, InvalidAsk, NotFound, UsageError
from midturn.runtime._audit import export_decisions
from midturn.runtime._events import follow_events
from midturn.runtime._parking import Parking, deadline_after
from midturn.runtime._permissions import decision_for, same_decision, tool_allowed_for_turn
from midturn.runtime._tool import handle_tool_call
from midturn.runtime._turns import Turn
from midturn.store._base import Store

__all__ = ["Runtime", "Settled"]

_STATUS_OF: dict[str, InteractionStatus] = {
    "answered": "answered",
    "skipped": "skipped",
    "redirected": "redirected",
    "timed_out": "timed_out",
    "cancelled": "cancelled",
    "unavailable": "unavailable",
}
SYSTEM = "system"
"""`settled_by` of everything no person decided: timeouts, `unavailable`, auto-allows."""


@dataclass(frozen=True, slots=True)
class Settled:
    """What a response did: the interaction as it now stands (settled), and whether the
    response was a duplicate of the accepted one (same result, no new event)."""

    interaction: Interaction
    duplicate: bool = False


def new_interaction_id() -> str:
    """An unguessable id: 128 random bits."""
    return "ia_" + secrets.token_urlsafe(16)


class Runtime:
    """One runtime per process, over one store. An async context manager.

    - `interactive=False` declares that no person can answer here: `ask` then settles
      `unavailable` at once (SPEC §3.4).
    - `permission_timeout_s` is the default permission timeout (after it the permission
      settles `timed_out`, which never lets the tool run); `None` for no default timeout.
    - `limits` bounds every ask (SPEC §2.1); None uses each dialect's own.
    - `clock` gives the wall-clock time in seconds (for deadlines); tests may replace it.
    - `recover_in_background=True` returns from `open()` before the deadlines of pending
      interactions are armed (and the overdue ones settled): that runs in a task, a page
      at a time, so a gateway listens at once however many are pending (`midturn
      serve` uses it). By default `open()` returns once they are armed.

    The runtime opens the store if needed and never closes it: whoever made the store
    closes it. Closing the runtime leaves pending interactions pending (they survive a
    restart); stopping a turn is what cancels them.
    """

    def __init__(
        self,
        store: Store,
        *,
        limits: Limits | None = None,
        interactive: bool = True,
        permission_timeout_s: float | None = 300.0,
        clock: Callable[[], float] = time.time,
        recover_in_background: bool = False,
    ) -> None:
        if permission_timeout_s is not None and permission_timeout_s <= 0:
            raise UsageError(
                f"permission_timeout_s must be above 0 (got {permission_timeout_s}); "
                "pass None for no timeout"
            )
        self.store = store
        self.limits = limits
        self.interactive = interactive
        self.permission_timeout_s = permission_timeout_s
        self._parking = Parking(store, clock=clock)
        self._recover_in_background = recover_in_background
        self._state = "new"

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def open(self) -> None:
        """Start: settle interactions whose deadline passed while no runtime ran, and
        schedule the others (in the background with `recover_in_background`).
        Idempotent."""
        if self._state == "open":
            return
        if self._state == "closed":
            raise UsageError("this runtime was closed; make a new Runtime")
        await self.store.open()
        self._state = "open"
        await self._parking.open(recover_in_background=self._recover_in_background)

    async def aclose(self) -> None:
        """Stop timers and wake nobody; pending interactions stay pending. Idempotent."""
        if self._state == "open":
            self._state = "closed"
            await self._parking.aclose()
        self._state = "closed"

    @property
    def closed(self) -> bool:
        return self._state == "closed"

    def _check_open(self) -> None:
        if self._state != "open":
            raise UsageError(
                "the runtime is not open; use `async with Runtime(store) as runtime:` "
                "(or `await runtime.open()`)"
            )

    # -- creating ---------------------------------------------------------------------

    async def ask(
        self,
        session_id: str,
        tool_input: Any,
        *,
        turn_id: str = "turn",
        dialect: str = "midturn",
        tool_call_id: str | None = None,
    ) -> tuple[Interaction, bool]:
        """Validate (raises `InvalidAsk` before anything is stored or shown), persist,
        publish `user_question_requested`. Returns `(interaction, created)`; a repeated
        `tool_call_id` in the session returns the existing one with `created=False`."""
        self._check_open()
        try:
            ask = parse_ask(tool_input, dialect, limits=self.limits)
        except InvalidAsk:
            existing = await self._existing(session_id, tool_call_id, "ask")
            if existing is not None:  # a resumed call whose input no longer validates
                return existing, False
            raise
        now = utcnow()
        interaction = Interaction(
            id=new_interaction_id(),
            kind="ask",
            session_id=session_id,
            turn_id=turn_id,
            tool_call_id=tool_call_id,
            created_at=now,
            deadline=deadline_after(ask.timeout_s, now) if self.interactive else None,
            dialect=ask.dialect,
            ask=ask,
        )
        if self.interactive:
            stored, created = await self._parking.park(interaction)
        else:
            stored, created = await self._parking.park(interaction, announce=False)
        if not created:
            self._same_kind(stored, tool_call_id, "ask")
        if self.interactive:
            return stored, created
        if not created or not stored.pending or stored.ask is None:
            return stored, created
        outcome = await self._parking.settle(
            stored,
            "unavailable",
            result=uniform_result(stored.ask, "unavailable"),
            by=SYSTEM,
            announce=False,
            resumes=False,
        )
        return outcome.interaction, True

    async def request_permission(
        self,
        session_id: str,
        *,
        tool: str,
        summary: str,
        turn_id: str = "turn",
        risk: Risk = "medium",
        details: str | None = None,
        tool_call_id: str | None = None,
        timeout_s: float | None = None,
    ) -> tuple[Interaction, bool]:
        """Park a permission request (or settle it `allowed` at once when the tool was
        allowed for this turn). Returns `(interaction, created)` like `ask`."""
        self._check_open()
        existing = await self._existing(session_id, tool_call_id, "permission")
        if existing is not None:
            return existing, False
        if timeout_s is not None and timeout_s <= 0:
            raise UsageError(f"timeout_s must be above 0 (got {timeout_s}), or None")
        try:
            request = PermissionRequest(tool=tool, summary=summary, risk=risk, details=details)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in item['loc'])}: {item['msg']}"
                for item in error.errors()
            )
            raise UsageError(f"the permission request is invalid ({problems}); fix it") from None
        now = utcnow()
        timeout = timeout_s if timeout_s is not None else self.permission_timeout_s
        interaction = Interaction(
            id=new_interaction_id(),
            kind="permission",
            session_id=session_id,
            turn_id=turn_id,
            tool_call_id=tool_call_id,
            created_at=now,
            deadline=deadline_after(timeout, now),
            permission=request,
        )
        if not self.interactive:
            decision = PermissionDecision(outcome="unavailable")
            return await self._settle_at_once(interaction, "unavailable", decision, False)
        if await tool_allowed_for_turn(self.store, session_id, turn_id, tool):
            decision = PermissionDecision(outcome="allowed", decision="allow", auto=True)
            return await self._settle_at_once(interaction, "allowed", decision, True)
        return await self._parking.park(interaction)

    async def _settle_at_once(
        self,
        interaction: Interaction,
        status: InteractionStatus,
        decision: PermissionDecision,
        announce: bool,
    ) -> tuple[Interaction, bool]:
        stored, created = await self._parking.park(
            interaction.model_copy(update={"deadline": None}), announce=False
        )
        if not created or not stored.pending:
            return stored, created
        outcome = await self._parking.settle(
            stored, status, decision=decision, by=SYSTEM, announce=announce, resumes=False
        )
        return outcome.interaction, True

    async def _existing(
        self, session_id: str, tool_call_id: str | None, kind: str
    ) -> Interaction | None:
        if tool_call_id is None:
            return None
        found = await self.store.find_by_tool_call(session_id, tool_call_id)
        if found is not None:
            self._same_kind(found, tool_call_id, kind)
        return found

    @staticmethod
    def _same_kind(found: Interaction, tool_call_id: str | None, kind: str) -> None:
        if found.kind != kind:
            raise UsageError(
                f"tool_call_id {tool_call_id!r} in session {found.session_id!r} already "
                f"belongs to a {found.kind} ({found.id}); give each tool call its own id"
            )

    # -- responding -------------------------------------------------------------------

    async def answer(self, interaction_id: str, payload: Any, *, by: str | None = None) -> Settled:
        """Settle an ask from a lenient answer payload (SPEC §2.4), including skip and
        redirect shapes. Raises `InvalidAnswer` (nothing changes), `AlreadySettled` (a
        different response after settling), `NotFound`, `UsageError` (not an ask)."""
        self._check_open()
        current = await self._parking.read(interaction_id)
        if current.kind != "ask" or current.ask is None:
            raise UsageError(
                f"interaction {interaction_id} is a permission; decide it with decide()"
            )
        if current.pending:
            result = parse_answer(current.ask, payload)
            outcome = await self._parking.settle(
                current, _STATUS_OF[result.outcome], result=result, by=by
            )
            if outcome.won:
                return Settled(outcome.interaction)
            settled = outcome.interaction
        else:
            settled = current
            try:
                result = parse_answer(current.ask, payload)
            except InvalidAnswer:
                raise AlreadySettled(settled) from None
        if self._same_result(settled, result):
            return Settled(settled, duplicate=True)
        raise AlreadySettled(settled)

    def _same_result(self, settled: Interaction, result: AskResult) -> bool:
        if settled.result != result.without_secrets():
            return False
        live = self._parking.live_result(settled.id)
        return live is None or live == result

    async def decide(
        self,
        interaction_id: str,
        decision: Decision,
        *,
        message: str | None = None,
        by: str | None = None,
    ) -> Settled:
        """Settle a permission: allow, deny (message for the model) or allow_for_turn."""
        self._check_open()
        current = await self._parking.read(interaction_id)
        if current.kind != "permission" or current.permission is None:
            raise UsageError(f"interaction {interaction_id} is an ask; answer it with answer()")
        status, record = decision_for(decision, message)
        settled = current
        if current.pending:
            outcome = await self._parking.settle(current, status, decision=record, by=by)
            if outcome.won:
                if decision == "allow_for_turn":
                    await self._allow_rest_of_turn(outcome.interaction)
                return Settled(outcome.interaction)
            settled = outcome.interaction
        if same_decision(settled, status, record):
            return Settled(settled, duplicate=True)
        raise AlreadySettled(settled)

    async def _allow_rest_of_turn(self, granted: Interaction) -> None:
        """Permissions for the same tool already waiting in the turn are allowed too."""
        assert granted.permission is not None
        waiting = await self.store.list_interactions(
            session_id=granted.session_id,
            turn_id=granted.turn_id,
            kind="permission",
            status="pending",
        )
        auto = PermissionDecision(outcome="allowed", decision="allow", auto=True)
        for item in waiting:
            if item.permission is not None and item.permission.tool == granted.permission.tool:
                await self._parking.settle(item, "allowed", decision=auto, by=SYSTEM)

    async def cancel(self, interaction_id: str, *, by: str | None = None) -> Settled:
        """Cancel one interaction. Cancelling a cancelled one is a duplicate; cancelling
        one settled otherwise raises `AlreadySettled`."""
        self._check_open()
        current = await self.get(interaction_id)
        settled = current
        if current.pending:
            outcome = await self._cancel(current, by)
            if outcome is not None:
                return Settled(outcome)
            settled = await self.get(interaction_id)
        if settled.status == "cancelled":
            return Settled(settled, duplicate=True)
        raise AlreadySettled(settled)

    async def _cancel(self, current: Interaction, by: str | None) -> Interaction | None:
        """Settle `current` cancelled; the settled interaction, or None if it lost."""
        if current.kind == "ask" and current.ask is not None:
            result = uniform_result(current.ask, "cancelled")
            outcome = await self._parking.settle(current, "cancelled", result=result, by=by)
        else:
            decision = PermissionDecision(outcome="cancelled")
            outcome = await self._parking.settle(current, "cancelled", decision=decision, by=by)
        return outcome.interaction if outcome.won else None

    async def stop_turn(
        self, session_id: str, turn_id: str, *, by: str | None = None
    ) -> list[Interaction]:
        """Cancel every pending interaction of the turn; returns those it settled."""
        self._check_open()
        pending = await self.store.list_interactions(
            session_id=session_id, turn_id=turn_id, status="pending"
        )
        cancelled: list[Interaction] = []
        for current in pending:
            settled = await self._cancel(current, by)
            if settled is not None:
                cancelled.append(settled)
        return cancelled

    # -- reading ----------------------------------------------------------------------

    async def get(self, interaction_id: str) -> Interaction:
        """Raises `NotFound`."""
        found = await self.store.get_interaction(interaction_id)
        if found is None:
            raise NotFound(f"no interaction with id {interaction_id!r}; check the id")
        return found

    async def wait(self, interaction_id: str, timeout: float | None = None) -> Interaction:
        """Wait until the interaction settles, or `timeout` seconds pass (then the
        pending interaction is returned). A secret answered in this process comes back
        with its `secret_value` set; nowhere else does it exist."""
        self._check_open()
        return await self._parking.wait(interaction_id, timeout)

    async def queue(self, session_id: str) -> list[Interaction]:
        """The session's pending interactions, head first (SPEC §3.2)."""
        return await self.store.list_interactions(session_id=session_id, status="pending")

    async def inbox(self) -> list[Interaction]:
        """Every pending interaction, oldest first."""
        return await self.store.list_interactions(status="pending")

    def events(
        self, *, after: int = 0, session_id: str | None = None, follow: bool = True
    ) -> AsyncIterator[Event]:
        """Events after id `after` from the log, then (with `follow`) live ones as they
        are appended, in id order, without polling."""
        return follow_events(self.store, after=after, session_id=session_id, follow=follow)

    # -- turns and tools --------------------------------------------------------------

    def turn(self, session_id: str, turn_id: str, *, stop_on_exit: bool = True) -> Turn:
        """A handle on one turn: `async with runtime.turn(sid, tid) as turn:` — its
        `waiting` state (SPEC's `waiting_user_input`), `on_waiting` hook and
        `wait_until`; leaving the block stops the turn (cancelling what it parked)."""
        return Turn(self, session_id, turn_id, stop_on_exit=stop_on_exit)

    async def handle_tool_call(
        self,
        session_id: str,
        *,
        name: str,
        tool_call_id: str,
        tool_input: Mapping[str, Any],
        turn_id: str = "turn",
        dialect: str = "midturn",
    ) -> ToolOutput:
        """The whole tool for a host: validate, park, wait, render in the dialect. An
        `InvalidAsk` becomes an `is_error` output the model can act on."""
        self._check_open()
        return await handle_tool_call(
            self,
            session_id,
            name=name,
            tool_call_id=tool_call_id,
            tool_input=tool_input,
            turn_id=turn_id,
            dialect=dialect,
        )

    async def export_decisions(
        self, target: str | Path | IO[str], *, session_id: str | None = None
    ) -> int:
        """Write one JSON line per settled interaction (what was asked, what was decided,
        by whom, when; never a secret) to a path or a text file. Returns the count."""
        return await export_decisions(self.store, target, session_id=session_id)
