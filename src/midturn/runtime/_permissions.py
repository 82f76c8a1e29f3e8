"""Permissions (docs/runtime.md#permissions): what each decision settles to, and `allow_for_turn`.

| decision / event     | status      | `PermissionDecision`                                 |
|----------------------|-------------|------------------------------------------------------|
| `allow`              | `allowed`   | `outcome="allowed", decision="allow"`                |
| `allow_for_turn`     | `allowed`   | `outcome="allowed", decision="allow_for_turn"`       |
| later, same tool+turn| `allowed`   | `outcome="allowed", decision="allow", auto=True`     |
| `deny`               | `denied`    | `outcome="denied", decision="deny", message=...`     |
| timeout (300 s)      | `timed_out` | `outcome="timed_out"` (no person decided: not run)   |
| turn stopped         | `cancelled` | `outcome="cancelled"`                                |
| nobody can answer    | `unavailable` | `outcome="unavailable"`                            |

Only `allowed` lets the tool run. An allowance for the turn is read back from the store
(the settled `allow_for_turn` permissions of that turn), so it holds across processes
and restarts.
"""

from __future__ import annotations

from typing import get_args

from midturn.contract._interactions import (
    Decision,
    Interaction,
    InteractionStatus,
    PermissionDecision,
)
from midturn.errors import UsageError
from midturn.store._base import Store

__all__ = ["decision_for", "is_allowed", "same_decision", "tool_allowed_for_turn"]

_DECISIONS = get_args(Decision)


def decision_for(
    decision: Decision, message: str | None
) -> tuple[InteractionStatus, PermissionDecision]:
    """The status and decision record for a person's choice."""
    if decision not in _DECISIONS:
        raise UsageError(
            f"unknown permission decision {decision!r}; use one of {', '.join(_DECISIONS)}"
        )
    if decision == "deny":
        return "denied", PermissionDecision(outcome="denied", decision="deny", message=message)
    return "allowed", PermissionDecision(outcome="allowed", decision=decision, message=message)


def same_decision(
    settled: Interaction, status: InteractionStatus, decision: PermissionDecision
) -> bool:
    """Whether a repeated decision matches the accepted one (a duplicate, not a change)."""
    return settled.status == status and settled.decision == decision


def is_allowed(interaction: Interaction) -> bool:
    """Whether the permission lets its tool run: settled `allowed`, nothing else."""
    return interaction.kind == "permission" and interaction.status == "allowed"


async def tool_allowed_for_turn(store: Store, session_id: str, turn_id: str, tool: str) -> bool:
    """Whether a person chose `allow_for_turn` for `tool` earlier in this turn."""
    allowed = await store.list_interactions(
        session_id=session_id, turn_id=turn_id, kind="permission", status="allowed"
    )
    return any(
        item.decision is not None
        and item.decision.decision == "allow_for_turn"
        and item.permission is not None
        and item.permission.tool == tool
        for item in allowed
    )
