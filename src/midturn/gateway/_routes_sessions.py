"""Sessions, identity, queues and turns."""

from __future__ import annotations

from typing import Annotated, Literal
from urllib.parse import quote

from fastapi import APIRouter, Body, Path, Query

from midturn.contract._interactions import Interaction
from midturn.gateway._state import Call, GatewayState
from midturn.gateway._views import (
    InteractionList,
    ModelResponse,
    SessionIn,
    SessionOut,
    StopOut,
    WhoAmI,
)

__all__ = ["router"]

router = APIRouter(prefix="/v1")

SessionId = Annotated[str, Path(max_length=200)]


@router.post("/sessions", status_code=201, response_model=SessionOut, tags=["sessions"])
async def create_session(
    call: Call, body: Annotated[SessionIn | None, Body()] = None
) -> ModelResponse:
    """Create a session and its agent and answer tokens (admin only)."""
    state, caller = call
    caller.require(set(), "create sessions")
    record, agent_token, answer_token = await state.authority.create_session(
        (body or SessionIn()).meta
    )
    answer_url = (
        f"{state.public_url}/#token={quote(answer_token, safe='')}"
        f"&session={quote(record.id, safe='')}"
    )
    credentials = SessionOut(
        session_id=record.id,
        agent_token=agent_token,
        answer_token=answer_token,
        answer_url=answer_url,
    )
    return ModelResponse(credentials, 201)


@router.get("/whoami", response_model=WhoAmI, tags=["sessions"])
async def whoami(call: Call) -> ModelResponse:
    """The role of the token and the session it reaches (null for admin)."""
    caller = call.caller
    return ModelResponse(WhoAmI(role=caller.role, session_id=caller.session_id))


DEFAULT_PAGE = 100
MAX_PAGE = 1000

Limit = Annotated[
    int, Query(ge=1, le=MAX_PAGE, description="at most this many interactions (a page)")
]
Cursor = Annotated[
    str | None,
    Query(max_length=200, description="the `next_cursor` of the previous page"),
]


def _page(state: GatewayState, found: list[Interaction], limit: int) -> ModelResponse:
    """`found` holds up to `limit + 1` interactions: one more than the page says
    whether another page follows."""
    page = found[:limit]
    for interaction in page:
        state.remember(interaction)
    more = len(found) > limit
    return ModelResponse(
        InteractionList(interactions=page, next_cursor=page[-1].id if more else None)
    )


@router.get(
    "/sessions/{session_id}/interactions", response_model=InteractionList, tags=["sessions"]
)
async def session_queue(
    call: Call,
    session_id: SessionId,
    status: Annotated[Literal["pending"], Query()] = "pending",
    limit: Limit = DEFAULT_PAGE,
    cursor: Cursor = None,
) -> ModelResponse:
    """The session's pending interactions, head first, a page at a time."""
    state, caller = call
    caller.require({"agent", "answer"}, "read this session's queue", session_id)
    await state.authority.session(session_id)
    found = await state.runtime.queue(session_id, limit=limit + 1, after=cursor)
    return _page(state, found, limit)


@router.get("/inbox", response_model=InteractionList, tags=["sessions"])
async def inbox(call: Call, limit: Limit = DEFAULT_PAGE, cursor: Cursor = None) -> ModelResponse:
    """Every pending interaction of every session, oldest first, a page at a time
    (admin only)."""
    state, caller = call
    caller.require(set(), "read the inbox of every session")
    found = await state.runtime.inbox(limit=limit + 1, after=cursor)
    return _page(state, found, limit)


@router.post(
    "/sessions/{session_id}/turns/{turn_id}/stop", response_model=StopOut, tags=["sessions"]
)
async def stop_turn(
    call: Call,
    session_id: SessionId,
    turn_id: Annotated[str, Path(max_length=200)],
) -> ModelResponse:
    """Stop a turn: end it (its grants end, it parks nothing more) and cancel everything
    it has parked."""
    state, caller = call
    caller.require({"agent", "answer"}, "stop this session's turns", session_id)
    await state.authority.session(session_id)
    cancelled = await state.runtime.stop_turn(session_id, turn_id, by=caller.role)
    for interaction in cancelled:
        state.metrics.observe_settle(interaction.created_at, interaction.settled_at)
    return ModelResponse(StopOut(cancelled=cancelled))


@router.post(
    "/sessions/{session_id}/turns/{turn_id}/end", response_model=StopOut, tags=["sessions"]
)
async def end_turn(
    call: Call,
    session_id: SessionId,
    turn_id: Annotated[str, Path(max_length=200)],
) -> ModelResponse:
    """The turn finished: end it (its grants end, it parks nothing more) and cancel
    whatever of it is still pending (normally nothing)."""
    state, caller = call
    caller.require({"agent"}, "end this session's turns", session_id)
    await state.authority.session(session_id)
    cancelled = await state.runtime.end_turn(session_id, turn_id, by=caller.role)
    for interaction in cancelled:
        state.metrics.observe_settle(interaction.created_at, interaction.settled_at)
    return ModelResponse(StopOut(cancelled=cancelled))
