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
(the settled `allow_for_turn` permissions of that turn, while the store has no record of
the turn's end), so it holds across processes and restarts, and ends with the turn —
stopped or finished — in every process. An interaction without a turn id has no turn:
`allow_for_turn` on it allows that one call and is recorded as `allow`.
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

__all__ = [
    "OWN_TURN",
    "decision_for",
    "is_allowed",
    "is_own_turn",
    "own_turn",
    "same_decision",
    "tool_allowed_for_turn",
]

OWN_TURN = "~"
"""How the `turn_id` of an interaction made without one starts: `~<its id>`, a turn of
its own that nothing else can join (`~` is outside the ids the gateway accepts, and the
runtime refuses it in a given `turn_id`). No grant covers it or comes from it."""


def own_turn(interaction_id: str) -> str:
    """The turn of an interaction made without a `turn_id`."""
    return OWN_TURN + interaction_id


def is_own_turn(turn_id: str) -> bool:
    return turn_id.startswith(OWN_TURN)


_DECISIONS = get_args(Decision)


def decision_for(
    decision: Decision, message: str | None, *, turn_id: str
) -> tuple[InteractionStatus, PermissionDecision]:
    """The status and decision record for a person's choice on a permission of turn
    `turn_id`. Without a turn, `allow_for_turn` has nothing more to cover: it allows this
    call and is recorded as the `allow` it was."""
    if decision not in _DECISIONS:
        raise UsageError(
            f"unknown permission decision {decision!r}; use one of {', '.join(_DECISIONS)}"
        )
    if decision == "allow_for_turn" and is_own_turn(turn_id):
        decision = "allow"
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
    """Whether a person chose `allow_for_turn` for `tool` earlier in this turn, and the
    turn has not ended. An interaction made without a turn id has none."""
    if is_own_turn(turn_id):
        return False
    allowed = await store.list_interactions(
        session_id=session_id, turn_id=turn_id, kind="permission", status="allowed"
    )
    granted = any(
        item.decision is not None
        and item.decision.decision == "allow_for_turn"
        and item.permission is not None
        and item.permission.tool == tool
        for item in allowed
    )
    return granted and not await store.turn_ended(session_id, turn_id)
