"""The ports every surface codes against (docs/ports.md): the **asker** (an agent's side:
park an ask or a permission, wait, cancel, stop a turn) and the **answerer** (a
person's side: the pending queue, events from a position, answer, decide, stop a turn),
and the values they return.

`midturn.Runtime` (in this process) and `midturn.AsyncClient` (a remote gateway)
implement both ports with the same method names, signatures and return types, so an
adapter written against `Asker` or `Answerer` runs in-process or against a gateway
unchanged. `midturn.Client` implements `SyncAsker` and `SyncAnswerer`, the blocking
forms. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, NamedTuple, Protocol, runtime_checkable

from midturn.contract._api import render
from midturn.contract._context import ContextInput
from midturn.contract._interactions import (
    Decision,
    Event,
    Interaction,
    PermissionDecision,
    Risk,
)
from midturn.contract._models import AskResult, ToolOutput

__all__ = [
    "Answerer",
    "Asker",
    "Parked",
    "Settled",
    "SyncAnswerer",
    "SyncAsker",
]


class Parked(NamedTuple):
    """What creating an ask or a permission did: the interaction as stored, and whether
    this call created it (`False` for a repeated `tool_call_id`: the existing one)."""

    interaction: Interaction
    created: bool


RENDERS_KEPT = 16
"""How many results' tool outputs are kept for the next `Settled` of the same result
(the answerer's and the waiting agent's, a loop step apart); emptied when full. Few: the
objects kept count toward the garbage collector's young generation until the clear, and
64 results' worth started 14 young collections in 2,000 in-process cycles (16: none)."""

# A plain dict: a get, a set and a clear are each atomic, so runtimes in two threads may
# render at once.
_renders: dict[int, tuple[AskResult, str, ToolOutput]] = {}


def _rendered(result: AskResult, dialect: str) -> ToolOutput:
    """`render(result, dialect)`, made once for the same result object: a settle's
    answer and its waiter each come back as a `Settled` of the same interaction, and the
    tool output of an immutable result in one dialect is the same value (a frozen model;
    as every `ToolOutput`, a value not to be changed in place)."""
    kept = _renders.get(id(result))
    if kept is not None and kept[0] is result and kept[1] == dialect:
        return kept[2]
    output = render(result, dialect)
    if len(_renders) >= RENDERS_KEPT:
        _renders.clear()
    _renders[id(result)] = (result, dialect, output)  # holds `result`: its id stays its own
    return output


class Settled:
    """What an interaction came to, as `wait`, `answer`, `decide` and `cancel` return it.

    - `interaction`: as it now stands; still pending only when a `wait` timed out.
    - `output`: for a settled ask, the tool output for the model, rendered in the ask's
      dialect by whoever holds the runtime (a gateway's rendering comes back as it
      rendered it); `None` for a permission or a pending ask.
    - `duplicate`: the response repeated the accepted one (same result, no new event).

    Immutable; equal when all three are.
    """

    __slots__ = ("_output", "_pending_render", "duplicate", "interaction")

    interaction: Interaction
    duplicate: bool
    _output: ToolOutput | None
    _pending_render: bool

    def __init__(
        self, interaction: Interaction, duplicate: bool = False, output: ToolOutput | None = None
    ) -> None:
        _set_interaction(self, interaction)
        _set_duplicate(self, duplicate)
        _set_output(self, output)
        _set_pending_render(self, False)

    @classmethod
    def of(cls, interaction: Interaction, *, duplicate: bool = False) -> Settled:
        """The value for `interaction`, its output rendered here in its dialect (on
        first use of `output`: a caller that never reads it never pays for it)."""
        value = cls(interaction, duplicate)
        if interaction.kind == "ask" and interaction.result is not None:
            _set_pending_render(value, True)
        return value

    @property
    def output(self) -> ToolOutput | None:
        if self._pending_render:
            result = self.interaction.result
            assert result is not None
            _set_output(self, _rendered(result, self.interaction.dialect))
            _set_pending_render(self, False)
        return self._output

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Settled is immutable (cannot set {name!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Settled):
            return NotImplemented
        return (self.interaction, self.duplicate, self.output) == (
            other.interaction,
            other.duplicate,
            other.output,
        )

    def __hash__(self) -> int:
        return hash((self.interaction.id, self.interaction.status, self.duplicate))

    def __repr__(self) -> str:
        return (
            f"Settled(interaction={self.interaction!r}, duplicate={self.duplicate!r}, "
            f"output={self.output!r})"
        )

    @property
    def pending(self) -> bool:
        """True when a `wait` ran out before the interaction settled."""
        return self.interaction.pending

    @property
    def decision(self) -> PermissionDecision | None:
        """How a permission settled (`None` for an ask, or while pending)."""
        return self.interaction.decision

    @property
    def allowed(self) -> bool:
        """True only for a permission that settled `allowed`: the tool may run."""
        return self.interaction.status == "allowed"


# Settled's slots are set through their own descriptors: immutable to its users
# (`__setattr__` refuses), and half the cost of `object.__setattr__` by name.
_set_interaction = Settled.__dict__["interaction"].__set__
_set_duplicate = Settled.__dict__["duplicate"].__set__
_set_output = Settled.__dict__["_output"].__set__
_set_pending_render = Settled.__dict__["_pending_render"].__set__


@runtime_checkable
class Asker(Protocol):
    """The agent's side of midturn: what a tool, an adapter or an MCP server calls.

    A repeated `tool_call_id` in the session returns the existing interaction (a resumed
    turn asks nothing twice). `ask` raises `InvalidAsk` (nothing stored, nothing shown)
    with problems worded for the model. `wait` returns once the interaction settles, or
    with it still pending after `timeout` seconds (`None`: no limit). Without a
    `turn_id` an interaction is a turn of its own, which no grant outlives. `context` says
    who is asking (the agent, what it was doing, the tool call; docs/contract.md). `stop_turn`
    and `end_turn` end a turn (stopped, or finished): its grants end, and whatever it
    parks later settles `cancelled` at once (docs/runtime.md).
    """

    async def ask(
        self,
        session_id: str,
        tool_input: Any,
        *,
        dialect: str = "midturn",
        tool_call_id: str | None = None,
        turn_id: str | None = None,
        context: ContextInput | None = None,
    ) -> Parked: ...

    async def request_permission(
        self,
        session_id: str,
        *,
        tool: str,
        summary: str,
        risk: Risk = "medium",
        details: str | None = None,
        tool_call_id: str | None = None,
        turn_id: str | None = None,
        timeout_s: float | None = None,
        context: ContextInput | None = None,
    ) -> Parked: ...

    async def wait(self, interaction_id: str, timeout: float | None = None) -> Settled: ...

    async def cancel(self, interaction_id: str) -> Settled: ...

    async def stop_turn(self, session_id: str, turn_id: str) -> list[Interaction]: ...

    async def end_turn(self, session_id: str, turn_id: str) -> list[Interaction]: ...


@runtime_checkable
class Answerer(Protocol):
    """The person's side of midturn: what an inbox, a picker, a notifier or a scripted
    human calls.

    `queue` is one session's pending interactions, head first; `inbox` every session's,
    oldest first. `events` follows the event log from after id `after` (one session's,
    or every session's with `session_id=None`), forever; break out of the loop to stop.
    `answer` takes any answer shape (raises `InvalidAnswer`, nothing changes); a response
    that differs from the accepted one raises `AlreadySettled`.
    """

    async def queue(self, session_id: str) -> list[Interaction]: ...

    async def inbox(self) -> list[Interaction]: ...

    def events(self, session_id: str | None = None, *, after: int = 0) -> AsyncIterator[Event]: ...

    async def answer(self, interaction_id: str, payload: Any) -> Settled: ...

    async def decide(
        self, interaction_id: str, decision: Decision, *, message: str | None = None
    ) -> Settled: ...

    async def stop_turn(self, session_id: str, turn_id: str) -> list[Interaction]: ...


@runtime_checkable
class SyncAsker(Protocol):
    """`Asker` for blocking code (`midturn.Client`): the same methods, not awaited."""

    def ask(
        self,
        session_id: str,
        tool_input: Any,
        *,
        dialect: str = "midturn",
        tool_call_id: str | None = None,
        turn_id: str | None = None,
        context: ContextInput | None = None,
    ) -> Parked: ...

    def request_permission(
        self,
        session_id: str,
        *,
        tool: str,
        summary: str,
        risk: Risk = "medium",
        details: str | None = None,
        tool_call_id: str | None = None,
        turn_id: str | None = None,
        timeout_s: float | None = None,
        context: ContextInput | None = None,
    ) -> Parked: ...

    def wait(self, interaction_id: str, timeout: float | None = None) -> Settled: ...

    def cancel(self, interaction_id: str) -> Settled: ...

    def stop_turn(self, session_id: str, turn_id: str) -> list[Interaction]: ...

    def end_turn(self, session_id: str, turn_id: str) -> list[Interaction]: ...


@runtime_checkable
class SyncAnswerer(Protocol):
    """`Answerer` for blocking code (`midturn.Client`): the same methods, not awaited."""

    def queue(self, session_id: str) -> list[Interaction]: ...

    def inbox(self) -> list[Interaction]: ...

    def events(self, session_id: str | None = None, *, after: int = 0) -> Iterator[Event]: ...

    def answer(self, interaction_id: str, payload: Any) -> Settled: ...

    def decide(
        self, interaction_id: str, decision: Decision, *, message: str | None = None
    ) -> Settled: ...

    def stop_turn(self, session_id: str, turn_id: str) -> list[Interaction]: ...
