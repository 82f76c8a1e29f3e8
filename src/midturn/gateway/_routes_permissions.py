"""Permissions: request (idempotent by tool_call_id), read and long-poll, decide, cancel."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request

from midturn.gateway._routes_asks import read_interaction
from midturn.gateway._state import MAX_WAIT_S, Call
from midturn.gateway._views import (
    DecisionIn,
    InteractionOut,
    ModelResponse,
    PermissionIn,
    SettledOut,
)

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["permissions"])

InteractionId = Annotated[str, Path(max_length=200)]


@router.post(
    "/sessions/{session_id}/permissions",
    status_code=201,
    response_model=InteractionOut,
    responses={200: {"model": InteractionOut, "description": "the existing permission"}},
)
async def request_permission(
    call: Call,
    session_id: Annotated[str, Path(max_length=200)],
    body: PermissionIn,
    request: Request,
    wait: Annotated[float, Query(ge=0, le=MAX_WAIT_S)] = 0,
) -> ModelResponse:
    """Park a permission request; a repeated `tool_call_id` returns the existing one.
    With `wait`, the same request then long-polls for the decision (up to 60 s)."""
    state, caller = call
    caller.require({"agent"}, "request permissions", session_id)
    await state.authority.session(session_id)
    interaction, created = await state.runtime.request_permission(
        session_id,
        tool=body.tool,
        summary=body.summary,
        turn_id=body.turn_id,
        risk=body.risk,
        details=body.details,
        tool_call_id=body.tool_call_id,
        timeout_s=body.timeout_s,
        context=body.context,
    )
    state.remember(interaction)
    if interaction.pending and wait == 0:
        out = InteractionOut(interaction=interaction)
    else:
        out = await read_interaction(state, caller, interaction.id, wait, request)
    return ModelResponse(out, 201 if created else 200)


@router.get("/permissions/{interaction_id}", response_model=InteractionOut)
async def get_permission(
    call: Call,
    interaction_id: InteractionId,
    request: Request,
    wait: Annotated[float, Query(ge=0, le=MAX_WAIT_S)] = 0,
) -> ModelResponse:
    """The permission and its decision; `wait` long-polls up to 60 s for it to settle."""
    state, caller = call
    await state.check(interaction_id, "permission", caller, "read this permission")
    return ModelResponse(await read_interaction(state, caller, interaction_id, wait, request))


@router.post("/permissions/{interaction_id}/decision", response_model=SettledOut)
async def decide_permission(
    call: Call, interaction_id: InteractionId, body: DecisionIn
) -> ModelResponse:
    """Allow, deny (with a message for the model) or allow for the rest of the turn."""
    state, caller = call
    caller.require({"answer"}, "decide permissions")
    await state.check(interaction_id, "permission", caller, "decide permissions")
    settled = await state.runtime.decide(
        interaction_id, body.decision, message=body.message, by=caller.role
    )
    interaction = settled.interaction
    if not settled.duplicate:
        state.metrics.observe_settle(interaction.created_at, interaction.settled_at)
    return ModelResponse(
        SettledOut(interaction=interaction, output=settled.output, duplicate=settled.duplicate)
    )


@router.post("/permissions/{interaction_id}/cancel", response_model=SettledOut)
async def cancel_permission(call: Call, interaction_id: InteractionId) -> ModelResponse:
    """Cancel one pending permission (the host gave up on the tool call); it never lets
    the tool run."""
    state, caller = call
    caller.require({"agent"}, "cancel a single permission (stop the turn instead)")
    await state.check(interaction_id, "permission", caller, "cancel permissions")
    settled = await state.runtime.cancel(interaction_id, by=caller.role)
    interaction = settled.interaction
    if not settled.duplicate:
        state.metrics.observe_settle(interaction.created_at, interaction.settled_at)
    return ModelResponse(SettledOut(interaction=interaction, duplicate=settled.duplicate))
