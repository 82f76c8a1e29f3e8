"""Asks: create (idempotent by tool_call_id), read and long-poll, answer, cancel.

Validation, queueing and settling are the runtime's; these routes check who may call
them and map the results to HTTP."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query, Request

from midturn.contract import Settled
from midturn.gateway._auth import Principal
from midturn.gateway._state import MAX_WAIT_S, Call, GatewayState
from midturn.gateway._views import (
    AnswerOut,
    AskIn,
    InteractionOut,
    ModelResponse,
    SettledOut,
    interaction_out,
)

__all__ = ["answer", "create", "read_interaction", "router"]

router = APIRouter(prefix="/v1", tags=["asks"])

InteractionId = Annotated[str, Path(max_length=200)]
Wait = Annotated[
    float,
    Query(ge=0, le=MAX_WAIT_S, description="seconds to hold the request until it settles"),
]


@router.post(
    "/sessions/{session_id}/asks",
    status_code=201,
    response_model=InteractionOut,
    responses={200: {"model": InteractionOut, "description": "the existing ask"}},
)
async def create_ask(
    call: Call,
    session_id: Annotated[str, Path(max_length=200)],
    body: AskIn,
    request: Request,
    wait: Wait = 0,
) -> ModelResponse:
    """Create an ask; a repeated `tool_call_id` returns the existing one with 200. With
    `wait`, the same request then long-polls for the ask to settle (up to 60 s)."""
    state, caller = call
    return await create(state, caller, session_id, body, request, wait)


async def create(
    state: GatewayState,
    caller: Principal,
    session_id: str,
    body: AskIn,
    request: Request,
    wait: float,
) -> ModelResponse:
    """`POST /v1/sessions/{session_id}/asks` once its inputs are read (here and in the
    express lane, `_express.py`)."""
    caller.require({"agent"}, "ask questions", session_id)
    await state.authority.session(session_id)
    interaction, created = await state.runtime.ask(
        session_id,
        body.tool_input,
        turn_id=body.turn_id,
        dialect=body.dialect,
        tool_call_id=body.tool_call_id,
        context=body.context,
    )
    state.remember(interaction)
    if interaction.pending and wait == 0:
        out = interaction_out(Settled(interaction), with_secrets=True)
    else:
        out = await read_interaction(state, caller, interaction.id, wait, request)
    return ModelResponse(out, 201 if created else 200)


async def read_interaction(
    state: GatewayState, caller: Principal, interaction_id: str, wait: float, request: Request
) -> InteractionOut:
    """The interaction, after waiting up to `wait` seconds for it to settle (cut short
    when the server shuts down). Read through the runtime's `wait`, so an ask answered in
    this process comes back with its secret values, which only the asking side gets."""
    if wait > 0:
        state.metrics.waiting_requests += 1
        polls = state.polls
        polls[interaction_id] += 1
        try:
            waited = await state.until_closing(
                state.runtime.wait(interaction_id, timeout=wait), request
            )
        finally:
            state.metrics.waiting_requests -= 1
            polls[interaction_id] -= 1
            if polls[interaction_id] <= 0:
                del polls[interaction_id]
        if waited is None:
            waited = Settled.of(await state.runtime.get(interaction_id))
    else:
        waited = await state.runtime.wait(interaction_id, timeout=0)
    return interaction_out(waited, with_secrets=caller.role != "answer")


@router.get("/asks/{interaction_id}", response_model=InteractionOut)
async def get_ask(
    call: Call, interaction_id: InteractionId, request: Request, wait: Wait = 0
) -> ModelResponse:
    """The ask, its status and result; `wait` long-polls up to 60 s for it to settle."""
    state, caller = call
    await state.check(interaction_id, "ask", caller, "read this ask")
    return ModelResponse(await read_interaction(state, caller, interaction_id, wait, request))


@router.post("/asks/{interaction_id}/answer", response_model=AnswerOut)
async def answer_ask(
    call: Call,
    interaction_id: InteractionId,
    payload: Annotated[Any, Body(description="an answer in any shape of docs/contract.md#answers")],
) -> ModelResponse:
    """Answer an ask leniently. 409 when already settled differently, 422 when the answer
    has no sound reading (the ask stays pending)."""
    state, caller = call
    return await answer(state, caller, interaction_id, payload)


async def answer(
    state: GatewayState, caller: Principal, interaction_id: str, payload: Any
) -> ModelResponse:
    """`POST /v1/asks/{interaction_id}/answer` once its inputs are read."""
    caller.require({"answer"}, "answer asks")
    await state.check(interaction_id, "ask", caller, "answer asks")
    settled = await state.runtime.answer(interaction_id, payload, by=caller.role)
    interaction = settled.interaction
    if not settled.duplicate:
        state.metrics.observe_settle(interaction.created_at, interaction.settled_at)
        if interaction_id in state.polls:
            # The settle woke a long-poll held here: its task runs in the loop's next
            # step. Step aside once, so that its response leaves first (the agent waits
            # on it; the answerer only on this one), not behind this one's body, write
            # and log line, nor behind the core this write hands to the answerer.
            await asyncio.sleep(0)
    return ModelResponse(
        AnswerOut(
            interaction=interaction,
            result=interaction.result,
            output=settled.output,
            duplicate=settled.duplicate,
        )
    )


@router.post("/asks/{interaction_id}/cancel", response_model=SettledOut)
async def cancel_ask(call: Call, interaction_id: InteractionId) -> ModelResponse:
    """Cancel one pending ask."""
    state, caller = call
    caller.require({"agent"}, "cancel a single ask (stop the turn instead)")
    await state.check(interaction_id, "ask", caller, "cancel asks")
    settled = await state.runtime.cancel(interaction_id, by=caller.role)
    interaction = settled.interaction
    if not settled.duplicate:
        state.metrics.observe_settle(interaction.created_at, interaction.settled_at)
    return ModelResponse(
        SettledOut(interaction=interaction, output=settled.output, duplicate=settled.duplicate)
    )
