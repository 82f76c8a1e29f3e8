"""The runtime: park a turn, settle each interaction exactly once (SPEC §3).

API CONTRACT (the gateway and the terminal surfaces code against these signatures; the
bodies are being filled in). Nothing here knows about HTTP.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

from midturn.contract._interactions import Decision, Event, Interaction, Risk
from midturn.contract._models import Limits, ToolOutput
from midturn.store._base import Store

__all__ = ["Runtime", "Settled"]


@dataclass(frozen=True, slots=True)
class Settled:
    """What a response did: the interaction as it now stands (settled), and whether the
    response was a duplicate of the accepted one (same result, no new event)."""

    interaction: Interaction
    duplicate: bool = False


class Runtime:
    """One runtime per process, over one store. An async context manager.

    - `interactive=False` declares that no person can answer here: `ask` then settles
      `unavailable` at once (SPEC §3.4).
    - `permission_timeout_s` is the default permission timeout (denied after it).
    - `limits` bounds every ask (SPEC §2.1).
    """

    def __init__(
        self,
        store: Store,
        *,
        limits: Limits | None = None,
        interactive: bool = True,
        permission_timeout_s: float = 300.0,
    ) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        raise NotImplementedError

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        raise NotImplementedError

    async def aclose(self) -> None:
        raise NotImplementedError

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
        raise NotImplementedError

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
        raise NotImplementedError

    # -- responding -------------------------------------------------------------------

    async def answer(self, interaction_id: str, payload: Any, *, by: str | None = None) -> Settled:
        """Settle an ask from a lenient answer payload (SPEC §2.4), including skip and
        redirect shapes. Raises `InvalidAnswer` (nothing changes), `AlreadySettled` (a
        different response after settling), `NotFound`, `UsageError` (not an ask)."""
        raise NotImplementedError

    async def decide(
        self,
        interaction_id: str,
        decision: Decision,
        *,
        message: str | None = None,
        by: str | None = None,
    ) -> Settled:
        """Settle a permission: allow, deny (message for the model) or allow_for_turn."""
        raise NotImplementedError

    async def cancel(self, interaction_id: str, *, by: str | None = None) -> Settled:
        """Cancel one interaction."""
        raise NotImplementedError

    async def stop_turn(
        self, session_id: str, turn_id: str, *, by: str | None = None
    ) -> list[Interaction]:
        """Cancel every pending interaction of the turn; returns those it settled."""
        raise NotImplementedError

    # -- reading ----------------------------------------------------------------------

    async def get(self, interaction_id: str) -> Interaction:
        """Raises `NotFound`."""
        raise NotImplementedError

    async def wait(self, interaction_id: str, timeout: float | None = None) -> Interaction:
        """Wait until the interaction settles, or `timeout` seconds pass (then the
        pending interaction is returned). A secret answered in this process comes back
        with its `secret_value` set; nowhere else does it exist."""
        raise NotImplementedError

    async def queue(self, session_id: str) -> list[Interaction]:
        """The session's pending interactions, head first (SPEC §3.2)."""
        raise NotImplementedError

    async def inbox(self) -> list[Interaction]:
        """Every pending interaction, oldest first."""
        raise NotImplementedError

    def events(
        self, *, after: int = 0, session_id: str | None = None, follow: bool = True
    ) -> AsyncIterator[Event]:
        """Events after id `after` from the log, then (with `follow`) live ones as they
        are appended, in id order, without polling."""
        raise NotImplementedError

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
        raise NotImplementedError
