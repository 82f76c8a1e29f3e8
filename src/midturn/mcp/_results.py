"""What each MCP tool returns to the model: settled asks in the midturn dialect, permission
decisions, and the "still open" note that points at the wait tool."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from midturn.contract._api import render
from midturn.contract._interactions import Interaction

__all__ = ["error_result", "pending_result", "settled_result", "started_result"]

WAIT_TOOL = "wait_for_answer"

_PERMISSION_TEXT = {
    "allowed": "Allowed: go ahead.",
    "denied": "Denied: do not run it.",
    "timed_out": "No decision in time: treat it as denied and do not run it.",
    "cancelled": "Cancelled: do not run it.",
    "unavailable": "Nobody can decide here: do not run it.",
}


def _text_result(text: str, data: Any = None, *, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=data if isinstance(data, dict) else None,
        is_error=is_error,
    )


def error_result(text: str) -> types.CallToolResult:
    return _text_result(text, is_error=True)


def settled_result(interaction: Interaction) -> types.CallToolResult:
    """A settled ask rendered in the midturn dialect, or a permission's decision."""
    if interaction.kind == "ask" and interaction.result is not None:
        output = render(interaction.result, interaction.dialect)
        return _text_result(output.text, output.data, is_error=output.is_error)
    decision = interaction.decision
    if decision is None:  # pragma: no cover - a settled permission always has one
        return error_result(f"permission {interaction.id} settled without a decision")
    text = _PERMISSION_TEXT[decision.outcome]
    if decision.outcome == "allowed" and (decision.decision == "allow_for_turn" or decision.auto):
        text = "Allowed for the rest of this turn: go ahead."
    if decision.outcome == "denied" and decision.message:
        text += f" The user says: {decision.message}"
    data = {"interaction_id": interaction.id, **decision.model_dump(mode="json")}
    return _text_result(text, data)


def pending_result(interaction: Interaction, *, secret: bool = False) -> types.CallToolResult:
    """The interaction is still open: how the model collects the answer later."""
    what = "question" if interaction.kind == "ask" else "permission request"
    where = (
        "The answer is a secret: the user gives it in the midturn inbox, never in chat. "
        if secret
        else "The user can answer it in the midturn inbox, the terminal or a notification. "
    )
    text = (
        f"The {what} is still open (interaction_id {interaction.id}); the user has not "
        f"answered yet. {where}Call {WAIT_TOOL} with interaction_id={interaction.id!r} to "
        "wait for the answer (repeat while it is still open). Do not ask again."
    )
    data = {"interaction_id": interaction.id, "status": "pending"}
    return _text_result(text, data)


def started_result(interaction: Interaction) -> types.CallToolResult:
    text = (
        f"Asked (interaction_id {interaction.id}). Call {WAIT_TOOL} with "
        f"interaction_id={interaction.id!r} to wait for the answer; repeat while it is "
        "still open. Do not ask again."
    )
    if not interaction.pending:
        return settled_result(interaction)
    return _text_result(text, {"interaction_id": interaction.id, "status": "pending"})
