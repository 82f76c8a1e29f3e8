"""The one place the MCP server calls midturn: every ask, wait and settle goes through
`Backend`, so moving to the asker/answerer ports (docs/ports.md) is a change here only.

It uses the in-process `Runtime`'s public methods and nothing else.
"""

from __future__ import annotations

from typing import Any

from midturn.contract._interactions import Decision, Interaction, Risk
from midturn.contract._ports import Parked, Settled
from midturn.runtime import Runtime

__all__ = ["Backend"]


class Backend:
    """Asks, permissions, waits and settles for the MCP tools, over one open runtime."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def ask(
        self, session_id: str, tool_input: Any, *, turn_id: str, tool_call_id: str
    ) -> Parked:
        """Validate (raises `InvalidAsk`) and park an ask; `(interaction, created)`."""
        return await self.runtime.ask(
            session_id, tool_input, turn_id=turn_id, dialect="midturn", tool_call_id=tool_call_id
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
    ) -> Parked:
        return await self.runtime.request_permission(
            session_id,
            tool=tool,
            summary=summary,
            risk=risk,
            details=details,
            turn_id=turn_id,
            tool_call_id=tool_call_id,
        )

    async def get(self, interaction_id: str) -> Interaction:
        """Raises `NotFound`."""
        return await self.runtime.get(interaction_id)

    async def wait(self, interaction_id: str, timeout: float | None) -> Interaction:
        """The interaction once settled, or as it stands after `timeout` seconds."""
        return (await self.runtime.wait(interaction_id, timeout)).interaction

    async def answer(self, interaction_id: str, payload: Any, *, by: str) -> Settled:
        """Raises `InvalidAnswer` (nothing changes) or `AlreadySettled`."""
        return await self.runtime.answer(interaction_id, payload, by=by)

    async def decide(
        self, interaction_id: str, decision: Decision, *, message: str | None, by: str
    ) -> Settled:
        return await self.runtime.decide(interaction_id, decision, message=message, by=by)

    async def cancel(self, interaction_id: str, *, by: str) -> Settled:
        return await self.runtime.cancel(interaction_id, by=by)
