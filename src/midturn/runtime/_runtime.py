"""The runtime: park a turn, settle each interaction exactly once (docs/runtime.md).

`Runtime` implements the asker and answerer ports (`midturn.Asker`, `midturn.Answerer`,
docs/ports.md) with exactly `AsyncClient`'s signatures; surfaces code against the ports.
Nothing here knows about HTTP. The work is done in small modules beside this one:
`_parking.py` (persist-then-publish, compare-and-set, waiting, secrets, deadlines),
`_permissions.py`, `_turns.py` (the `Turn` handle), `_tool.py` (`handle_tool_call`),
`_events.py` and `_audit.py` (the decision export).
"""

from __future__ import annotations

import time
from binascii import b2a_base64
from collections.abc import AsyncIterator, Callable, Mapping
from os import urandom
from pathlib import Path
from time import time_ns
from types import TracebackType
from typing import IO, Any, Self

from pydantic import ValidationError

from midturn.contract._answers import uniform_result
from midturn.contract._api import parse_answer, parse_ask
from midturn.contract._context import ContextInput, InteractionContext, context_of
from midturn.contract._history import HistoryPage
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
from midturn.contract._models import (
    MAX_TIMEOUT_S,
    Ask,
    AskResult,
    Limits,
    ToolOutput,
    from_fields,
)
from midturn.contract._ports import Parked, Settled
from midturn.contract._tool_spec import tool_spec
from midturn.contract.dialects import get_dialect
from midturn.errors import (
    AlreadySettled,
    InvalidAnswer,
    InvalidAsk,
    NotFound,
    ToolCallConflict,
    UsageError,
)
from midturn.runtime._audit import export_decisions
from midturn.runtime._events import follow_events
from midturn.runtime._history import read_history
from midturn.runtime._parking import EventWatcher, Parking, deadline_after
from midturn.runtime._permissions import (
    OWN_TURN,
    decision_for,
    is_own_turn,
    own_turn,
    same_decision,
    tool_allowed_for_turn,
)
from midturn.runtime._subscribe import Subscription
from midturn.runtime._tool import handle_tool_call
from midturn.runtime._turns import Turn
from midturn.store._base import Store

__all__ = ["Parked", "Runtime", "Settled"]

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
_AUTO = PermissionDecision(outcome="allowed", decision="allow", auto=True)


def _holds_secret(settled: Interaction) -> bool:
    """Whether a settled ask's result answers a secret question."""
    if settled.ask is None or settled.result is None:
        return False
    secret = {question.id for question in settled.ask.questions if question.secret}
    return any(a.id in secret and a.status == "answered" for a in settled.result.answers)


def _context(value: ContextInput | None) -> InteractionContext | None:
    try:
        return context_of(value)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in item['loc']) or 'context'}: {item['msg']}"
            for item in error.errors()
        )
        raise UsageError(
            f"the context is invalid ({problems}); give {{agent, doing, tool: {{name, input}}}}"
        ) from None


_IN_ORDER = bytes.maketrans(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
    b"-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz",
)
"""Base64's digits, 0 to 63, to the URL-safe ones in ASCII order: text order is number order."""
_last_stamp = 0
"""The stamp of the last id this process made (microseconds since the epoch)."""


def new_interaction_id() -> str:
    """An unguessable id that sorts by creation time: `ia_`, then 31 URL-safe characters
    of 184 bits, 56 bits of a stamp (microseconds since the epoch, to the year 4253)
    before 128 random bits from `os.urandom`. Each index keyed by the id then takes its
    inserts at one end, where the writes of a group commit share a leaf, instead of on a
    random page each (docs/benchmarks.md, stop 29).

    The stamp is the wall clock's, but never at or below the last id's of this process:
    a second id in the same microsecond, or after the clock stepped back, takes the last
    stamp plus one, so the ids one process makes always sort in the order it made them
    (they are distinct by their random bits alone; two threads racing here may share a
    stamp, and their random bits still tell them apart). Ids made before this format (`ia_` and
    22 characters of random bits) stay valid: an id is an opaque string everywhere."""
    global _last_stamp
    stamp = time_ns() // 1000
    if stamp <= _last_stamp:
        stamp = _last_stamp + 1
    _last_stamp = stamp
    raw = stamp.to_bytes(7, "big") + urandom(16)
    return "ia_" + b2a_base64(raw, newline=False)[:31].translate(_IN_ORDER).decode()


def _turn_of(turn_id: str | None, interaction_id: str) -> str:
    """The turn an interaction belongs to: the one given, else a turn of its own."""
    if not turn_id:
        return own_turn(interaction_id)
    if turn_id.startswith(OWN_TURN):
        raise UsageError(
            f"turn_id {turn_id!r} starts with {OWN_TURN!r}, which marks the turn of an "
            "interaction made without a turn_id; choose another turn id"
        )
    return turn_id


class Runtime:
    """One runtime per process, over one store. An async context manager.

    - `interactive=False` declares that no person can answer here: `ask` then settles
      `unavailable` at once (docs/runtime.md#where-nobody-can-answer).
    - `permission_timeout_s` is the default permission timeout (after it the permission
      settles `timed_out`, which never lets the tool run); `None` for no default timeout.
    - `limits` bounds every ask (docs/contract.md#the-canonical-ask), every answer's typed text and
      the schema `tool_spec()` shows the model; None uses each dialect's own.
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
        if permission_timeout_s is not None and not 0 < permission_timeout_s <= MAX_TIMEOUT_S:
            raise UsageError(
                f"permission_timeout_s must be above 0 and at most {MAX_TIMEOUT_S} (a year; "
                f"got {permission_timeout_s}); pass None for no timeout"
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

    # -- limits -----------------------------------------------------------------------

    def tool_spec(self, dialect: str = "midturn", format: str = "openai") -> dict[str, Any]:
        """`midturn.tool_spec` under this runtime's limits: the schema the model sees
        allows exactly what `ask` accepts."""
        return tool_spec(dialect, format, limits=self.limits)

    def _limits_for(self, dialect: str) -> Limits:
        """The limits an ask of `dialect` was parsed under, for reading its answer."""
        if self.limits is not None:
            return self.limits
        try:
            return get_dialect(dialect).limits
        except UsageError:  # a stored ask of a dialect no longer registered
            return Limits()

    # -- creating ---------------------------------------------------------------------

    async def ask(
        self,
        session_id: str,
        tool_input: Any,
        *,
        turn_id: str | None = None,
        dialect: str = "midturn",
        tool_call_id: str | None = None,
        context: ContextInput | None = None,
    ) -> Parked:
        """Validate (raises `InvalidAsk` before anything is stored or shown), persist,
        publish `user_question_requested`. Returns `Parked(interaction, created)`; a
        repeated `tool_call_id` in the session returns the existing one with `created=False`.

        Without a `turn_id` (None or "") the ask is a turn of its own (`~<its id>`). In a
        turn that has ended (stopped or finished) it settles `cancelled` at once, shown
        to nobody. `context` (the host's, never the model's: who is asking, what it was
        doing) is kept with the ask and shown to the person; a malformed one raises
        `UsageError`."""
        self._check_open()
        asker = _context(context)
        interaction_id = new_interaction_id()
        turn_id = _turn_of(turn_id, interaction_id)
        try:
            ask = parse_ask(tool_input, dialect, limits=self.limits)
        except InvalidAsk:
            existing = await self._existing(session_id, tool_call_id, "ask")
            if existing is not None:  # a resumed call whose input no longer validates
                return Parked(existing, False)
            raise
        now = utcnow()
        deadline = deadline_after(ask.timeout_s, now) if self.interactive else None
        fields: dict[str, Any] = {
            "id": interaction_id,
            "kind": "ask",
            "session_id": session_id,
            "turn_id": turn_id,
            "tool_call_id": tool_call_id,
            "status": "pending",
            "created_at": now,
            "settled_at": None,
            "deadline": deadline,
            "settled_by": None,
            "context": asker,
            "dialect": ask.dialect,
            "ask": ask,
            "result": None,
            "permission": None,
            "decision": None,
        }
        if (
            type(session_id) is str
            and type(turn_id) is str
            and (tool_call_id is None or type(tool_call_id) is str)
        ):
            interaction = from_fields(Interaction, fields)  # every value checked or made here
        else:  # pydantic's own error for what is not a string
            interaction = Interaction(**fields)
        if self.interactive and not is_own_turn(turn_id):
            # The turn's end is read in the park's own transaction (`park_unless_ended`),
            # and once more after it only when the store cannot read it there. Nothing was
            # awaited since `now`: the stamp stands when the session's lock is free.
            parked = await self._parking.park_unless_ended(interaction, fresh=True)
            if parked is None:
                return await self._cancelled_at_once(interaction, ask)
            stored, created = parked
            if not created:
                self._same_kind(stored, tool_call_id, "ask")
            if self.store.park_sees_turn_end:
                return Parked(stored, created)
            return Parked(await self._unless_ended(stored), created)
        if await self._ended(session_id, turn_id):
            return await self._cancelled_at_once(interaction, ask)
        if self.interactive:
            stored, created = await self._parking.park(interaction)
        else:
            stored, created = await self._parking.park(interaction, announce=False)
        if not created:
            self._same_kind(stored, tool_call_id, "ask")
        if self.interactive:
            return Parked(await self._unless_ended(stored), created)
        if not created or not stored.pending or stored.ask is None:
            return Parked(stored, created)
        outcome = await self._parking.settle(
            stored,
            "unavailable",
            result=uniform_result(stored.ask, "unavailable"),
            by=SYSTEM,
            announce=False,
            resumes=False,
        )
        return Parked(outcome.interaction, True)

    async def request_permission(
        self,
        session_id: str,
        *,
        tool: str,
        summary: str,
        turn_id: str | None = None,
        risk: Risk = "medium",
        details: str | None = None,
        tool_call_id: str | None = None,
        timeout_s: float | None = None,
        context: ContextInput | None = None,
    ) -> Parked:
        """Park a permission request (or settle it `allowed` at once when the tool was
        allowed for this turn, `cancelled` at once when the turn has ended). Returns
        `Parked(interaction, created)` like `ask`; without a `turn_id` it is a turn of its own,
        which no grant covers. `context` as for `ask`."""
        self._check_open()
        asker = _context(context)
        interaction_id = new_interaction_id()
        turn_id = _turn_of(turn_id, interaction_id)
        existing = await self._existing(session_id, tool_call_id, "permission")
        if existing is not None:
            return Parked(existing, False)
        if timeout_s is not None and not 0 < timeout_s <= MAX_TIMEOUT_S:
            raise UsageError(
                f"timeout_s must be above 0 and at most {MAX_TIMEOUT_S} (a year; got "
                f"{timeout_s:g}), or None"
            )
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
            id=interaction_id,
            kind="permission",
            session_id=session_id,
            turn_id=turn_id,
            tool_call_id=tool_call_id,
            created_at=now,
            deadline=deadline_after(timeout, now),
            permission=request,
            context=asker,
        )
        if await self._ended(session_id, turn_id):
            decision = PermissionDecision(outcome="cancelled")
            return await self._settle_at_once(interaction, "cancelled", False, decision=decision)
        if not self.interactive:
            decision = PermissionDecision(outcome="unavailable")
            return await self._settle_at_once(interaction, "unavailable", False, decision=decision)
        if await tool_allowed_for_turn(self.store, session_id, turn_id, tool):
            return await self._settle_at_once(interaction, "allowed", True, decision=_AUTO)
        stored, created = await self._parking.park(interaction)
        if not created:
            self._same_kind(stored, tool_call_id, "permission")
            return Parked(stored, created)
        stored = await self._unless_ended(stored)
        if stored.pending and await tool_allowed_for_turn(self.store, session_id, turn_id, tool):
            # A grant settled while this one parked: `decide` may have listed the turn's
            # waiting permissions before this one was stored, so allow it here.
            outcome = await self._parking.settle(stored, "allowed", decision=_AUTO, by=SYSTEM)
            stored = outcome.interaction
        return Parked(stored, created)

    async def _cancelled_at_once(self, interaction: Interaction, ask: Ask) -> Parked:
        """An ask in a turn that has ended: settled `cancelled` at once, shown to nobody."""
        result = uniform_result(ask, "cancelled")
        return await self._settle_at_once(
            interaction, "cancelled", False, result=result, kind="ask"
        )

    async def _settle_at_once(
        self,
        interaction: Interaction,
        status: InteractionStatus,
        announce: bool,
        *,
        decision: PermissionDecision | None = None,
        result: AskResult | None = None,
        kind: str = "permission",
    ) -> Parked:
        stored, created = await self._parking.park(
            interaction.model_copy(update={"deadline": None}), announce=False
        )
        if not created:
            self._same_kind(stored, interaction.tool_call_id, kind)
        if not created or not stored.pending:
            return Parked(stored, created)
        outcome = await self._parking.settle(
            stored,
            status,
            decision=decision,
            result=result,
            by=SYSTEM,
            announce=announce,
            resumes=False,
        )
        return Parked(outcome.interaction, True)

    async def _ended(self, session_id: str, turn_id: str) -> bool:
        """Whether the turn ended. A turn of its own (no turn id given) is new at park
        and can be stopped only by its id, which exists once it is parked: never read."""
        return not is_own_turn(turn_id) and await self.store.turn_ended(session_id, turn_id)

    async def _unless_ended(self, parked: Interaction) -> Interaction:
        """`parked` as it stands once checked against its turn's end: a stop that
        listed the turn's pending interactions just before this one was stored has
        missed it, so it is cancelled here (the compare-and-set settles it once)."""
        if not parked.pending or not await self._ended(parked.session_id, parked.turn_id):
            return parked
        settled = await self._cancel(parked, SYSTEM)
        return settled if settled is not None else await self.get(parked.id)

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
            raise ToolCallConflict(
                f"tool_call_id {tool_call_id!r} in session {found.session_id!r} already "
                f"belongs to a {found.kind} ({found.id}), not a {kind}; give each tool "
                "call its own id",
                found,
            )

    # -- responding -------------------------------------------------------------------

    async def answer(self, interaction_id: str, payload: Any, *, by: str | None = None) -> Settled:
        """Settle an ask from a lenient answer payload (docs/contract.md#answers), including skip
        and redirect shapes. Raises `InvalidAnswer` (nothing changes), `AlreadySettled` (a
        different response after settling), `NotFound`, `UsageError` (not an ask).

        An ask settled with a secret answer is never compared with a later response:
        every one gets `AlreadySettled`, the same answer too, so that re-posting cannot
        confirm a guess of the secret."""
        self._check_open()
        current = await self._parking.read(interaction_id)
        if current.kind != "ask" or current.ask is None:
            raise UsageError(
                f"interaction {interaction_id} is a permission; decide it with decide()"
            )
        if current.pending:
            result = parse_answer(current.ask, payload, limits=self._limits_for(current.dialect))
            outcome = await self._parking.settle(
                current, _STATUS_OF[result.outcome], result=result, by=by
            )
            if outcome.won:
                return Settled.of(outcome.interaction)
            settled = outcome.interaction
        else:
            settled = current
            if _holds_secret(settled):
                raise AlreadySettled(settled)
            try:
                result = parse_answer(
                    current.ask, payload, limits=self._limits_for(current.dialect)
                )
            except InvalidAnswer:
                raise AlreadySettled(settled) from None
        if _holds_secret(settled):
            raise AlreadySettled(settled)
        if self._same_result(settled, result):
            return Settled.of(settled, duplicate=True)
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
        status, record = decision_for(decision, message, turn_id=current.turn_id)
        settled = current
        if current.pending:
            outcome = await self._parking.settle(current, status, decision=record, by=by)
            if outcome.won:
                if record.decision == "allow_for_turn":
                    await self._allow_rest_of_turn(outcome.interaction)
                return Settled.of(outcome.interaction)
            settled = outcome.interaction
        if same_decision(settled, status, record):
            return Settled.of(settled, duplicate=True)
        raise AlreadySettled(settled)

    async def _allow_rest_of_turn(self, granted: Interaction) -> None:
        """Permissions for the same tool already waiting in the turn are allowed too
        (those parked after this listing allow themselves: see `request_permission`)."""
        assert granted.permission is not None
        if await self._ended(granted.session_id, granted.turn_id):
            return
        waiting = await self.store.list_interactions(
            session_id=granted.session_id,
            turn_id=granted.turn_id,
            kind="permission",
            status="pending",
        )
        for item in waiting:
            if item.permission is not None and item.permission.tool == granted.permission.tool:
                await self._parking.settle(item, "allowed", decision=_AUTO, by=SYSTEM)

    async def cancel(self, interaction_id: str, *, by: str | None = None) -> Settled:
        """Cancel one interaction. Cancelling a cancelled one is a duplicate; cancelling
        one settled otherwise raises `AlreadySettled`."""
        self._check_open()
        current = await self.get(interaction_id)
        settled = current
        if current.pending:
            outcome = await self._cancel(current, by)
            if outcome is not None:
                return Settled.of(outcome)
            settled = await self.get(interaction_id)
        if settled.status == "cancelled":
            return Settled.of(settled, duplicate=True)
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
        """Stop the turn: end it (its grants end; whatever it asks or requests later
        settles `cancelled` at once, in every process on the store) and cancel every
        pending interaction of it. Returns those it settled."""
        return await self._end(session_id, turn_id, "stopped", by)

    async def end_turn(
        self, session_id: str, turn_id: str, *, by: str | None = None
    ) -> list[Interaction]:
        """The turn finished normally: end it as `stop_turn` does (recorded as
        `finished`). Anything of it still pending is cancelled (normally nothing);
        returns those it settled."""
        return await self._end(session_id, turn_id, "finished", by)

    async def _end(
        self, session_id: str, turn_id: str, how: str, by: str | None
    ) -> list[Interaction]:
        self._check_open()
        # Recorded before the listing: a park this listing misses sees the record.
        await self.store.end_turn(session_id, turn_id, how=how)
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

    async def wait(self, interaction_id: str, timeout: float | None = None) -> Settled:
        """Wait until the interaction settles, or `timeout` seconds pass (then it comes
        back pending). For an ask, `Settled.output` is the tool output in the ask's
        dialect. A secret answered in this process comes back with its `secret_value`
        set; nowhere else does it exist."""
        self._check_open()
        return Settled.of(await self._parking.wait(interaction_id, timeout))

    async def queue(
        self, session_id: str, *, limit: int | None = None, after: str | None = None
    ) -> list[Interaction]:
        """The session's pending interactions, head first
        (docs/runtime.md#one-queue-per-session): at most `limit`,
        and with `after` (an interaction id) only those after it — a keyset page,
        stable while others are parked or settled (`UsageError` for an unknown id)."""
        return await self.store.list_interactions(
            session_id=session_id, status="pending", limit=limit, after=after
        )

    async def inbox(
        self, *, limit: int | None = None, after: str | None = None
    ) -> list[Interaction]:
        """Every pending interaction, oldest first; `limit` and `after` page it as in
        `queue`."""
        return await self.store.list_interactions(status="pending", limit=limit, after=after)

    async def history(
        self,
        session_id: str,
        *,
        query: str = "",
        limit: int = 100,
        after: str | None = None,
    ) -> HistoryPage:
        """The session's settled interactions as history entries (what was asked, what
        was answered or decided, by whom, when; never a secret), oldest first, those
        matching every word of `query`: a page of at most `limit` after the interaction
        `after` (`next_cursor` goes on; `UsageError` for an unknown one)."""
        self._check_open()
        if limit < 1:
            raise UsageError(f"limit must be at least 1 (got {limit})")
        return await read_history(self.store, session_id, query=query, limit=limit, after=after)

    def events(
        self, session_id: str | None = None, *, after: int = 0, follow: bool = True
    ) -> AsyncIterator[Event]:
        """Events after id `after` from the log, then (with `follow`) live ones as they
        are appended, in id order, without polling."""
        return follow_events(self.store, after=after, session_id=session_id, follow=follow)

    def watch(self, watcher: EventWatcher) -> Callable[[], None]:
        """Call `watcher(event)` synchronously with every event this process learns of:
        its own as they are published, other processes' as the store announces them
        (an event may come twice: dedupe by `event.id`). Returns a function that stops
        watching. For an ordered log with replay, iterate `events()` instead."""
        return self._parking.watch(watcher)

    def subscribe(
        self,
        on_event: Callable[[Event], None] | None = None,
        *,
        session_id: str | None = None,
        buffer: int = 1000,
    ) -> Subscription:
        """A tap on the events this runtime publishes, live, without reading the store:
        this process's own at once, other processes' as the store announces them (see
        `_subscribe.py` and docs/runtime.md). With `on_event`, each event is handed to
        it synchronously; without, iterate the subscription (`async with
        runtime.subscribe() as events: async for event in events`), which holds at most
        `buffer` events and raises `SubscriptionLagged` past that. No replay: for the
        stored log, use `events()`."""
        self._check_open()
        return Subscription(
            self._parking.watch, on_event=on_event, session_id=session_id, buffer=buffer
        )

    # -- turns and tools --------------------------------------------------------------

    def turn(self, session_id: str, turn_id: str, *, stop_on_exit: bool = True) -> Turn:
        """A handle on one turn: `async with runtime.turn(sid, tid) as turn:` — its
        `waiting` state (`waiting_user_input`, docs/runtime.md#turns), `on_waiting` hook and
        `wait_until`; leaving the block stops the turn (cancelling what it parked)."""
        return Turn(self, session_id, turn_id, stop_on_exit=stop_on_exit)

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
    ) -> ToolOutput:
        """The whole tool for a host: validate, park, wait, render in the dialect. An
        `InvalidAsk` becomes an `is_error` output the model can act on. `context` says
        who is asking (the agent, the turn's last assistant text; docs/contract.md)."""
        self._check_open()
        return await handle_tool_call(
            self,
            session_id,
            name=name,
            tool_call_id=tool_call_id,
            tool_input=tool_input,
            turn_id=turn_id,
            dialect=dialect,
            cancel=self._host_cancel,
            context=context,
        )

    async def _host_cancel(self, interaction_id: str) -> Settled:
        return await self.cancel(interaction_id, by="host")

    async def export_decisions(
        self, target: str | Path | IO[str], *, session_id: str | None = None
    ) -> int:
        """Write one JSON line per settled interaction (what was asked, what was decided,
        by whom, when; never a secret) to a path or a text file. Returns the count."""
        return await export_decisions(self.store, target, session_id=session_id)
