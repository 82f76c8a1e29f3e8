"""The one place the MCP server calls midturn: every ask, wait and settle goes through
`Backend`, over the asker and answerer ports (docs/ports.md), so the same server runs on
the in-process `Runtime` and on a remote gateway's `AsyncClient` unchanged.

The ports carry no "who settled it": a gateway records the token's role. Only when the
answerer is a `Runtime` (an implementation that adds `by=`, docs/ports.md) does the
backend pass `by=`, so an in-process server records `mcp` and `mcp:dismissed`.
"""

from __future__ import annotations

from typing import Any, Protocol

from midturn.contract._context import ContextInput
from midturn.contract._interactions import Decision, Interaction, Risk
from midturn.contract._ports import Answerer, Asker, Parked, Settled
from midturn.runtime import Runtime

__all__ = ["AskerAnswerer", "Backend"]


class AskerAnswerer(Asker, Answerer, Protocol):
    """Both ports in one object: `Runtime` and `AsyncClient` (with an admin token)."""


class Backend:
    """Asks, permissions, waits and settles for the MCP tools.

    `asker` parks and waits (a `Runtime`, or an `AsyncClient` with an agent or admin
    token); `answerer` settles what the client's form answered (a `Runtime`, or an
    `AsyncClient` with the session's answer token or the admin token). Without an
    answerer the server cannot settle from a form: it never shows one, and every ask
    waits for another surface (the inbox, `midturn answer`)."""

    def __init__(self, asker: Asker, answerer: Answerer | None = None) -> None:
        self.asker = asker
        self.answerer = answerer
        self._runtime = answerer if isinstance(answerer, Runtime) else None

    @classmethod
    def over(cls, both: AskerAnswerer) -> Backend:
        """One object that is both the asker and the answerer."""
        return cls(both, both)

    @property
    def can_settle(self) -> bool:
        """Whether a form's answer can be settled here (there is an answerer)."""
        return self.answerer is not None

    @property
    def records_by(self) -> bool:
        """Whether `settled_by` is this server's own name (in-process), not a token's role."""
        return self._runtime is not None

    def _answering(self) -> Answerer:
        if self.answerer is None:  # pragma: no cover - the elicitor checks can_settle first
            raise RuntimeError("this MCP backend has no answerer")
        return self.answerer

    async def ask(
        self,
        session_id: str,
        tool_input: Any,
        *,
        turn_id: str,
        tool_call_id: str,
        context: ContextInput | None = None,
    ) -> Parked:
        """Validate (raises `InvalidAsk`) and park an ask; `(interaction, created)`."""
        return await self.asker.ask(
            session_id,
            tool_input,
            turn_id=turn_id,
            dialect="midturn",
            tool_call_id=tool_call_id,
            context=context,
        )

    async def request_permission(
        self,
        session_id: str,
        *,
        tool: str,
        summary: str,
        risk: Risk,
        details: str | None,
        turn_id: str,
        tool_call_id: str,
        context: ContextInput | None = None,
    ) -> Parked:
        return await self.asker.request_permission(
            session_id,
            tool=tool,
            summary=summary,
            risk=risk,
            details=details,
            turn_id=turn_id,
            tool_call_id=tool_call_id,
            context=context,
        )

    async def get(self, interaction_id: str) -> Interaction:
        """As it stands now (`wait` with no time). Raises `NotFound` (or `Forbidden`:
        another session's, on a gateway)."""
        return (await self.asker.wait(interaction_id, 0)).interaction

    async def wait(self, interaction_id: str, timeout: float | None) -> Interaction:
        """Once settled, or as it stands after `timeout` seconds."""
        return (await self.asker.wait(interaction_id, timeout)).interaction

    async def answer(self, interaction_id: str, payload: Any, *, by: str) -> Settled:
        """Raises `InvalidAnswer` (nothing changes) or `AlreadySettled`."""
        if self._runtime is not None:
            return await self._runtime.answer(interaction_id, payload, by=by)
        return await self._answering().answer(interaction_id, payload)

    async def decide(
        self, interaction_id: str, decision: Decision, *, message: str | None, by: str
    ) -> Settled:
        if self._runtime is not None:
            return await self._runtime.decide(interaction_id, decision, message=message, by=by)
        return await self._answering().decide(interaction_id, decision, message=message)

    async def cancel(self, interaction_id: str, *, by: str) -> Settled:
        """Cancel one pending interaction (the asker's: an agent token may cancel)."""
        if self._runtime is not None:
            return await self._runtime.cancel(interaction_id, by=by)
        return await self.asker.cancel(interaction_id)
