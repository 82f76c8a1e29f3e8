"""A session's label and its history: `GET /v1/sessions/{sid}` (the title and meta given
at creation) and `GET /v1/sessions/{sid}/history` (past questions and decisions, a page
at a time or as one JSON Lines download). Both read like the session's queue: the
admin token, or the session's own agent or answer token."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Literal
from urllib.parse import quote

from fastapi import APIRouter, Path, Query
from starlette.responses import StreamingResponse

from midturn.contract._history import MAX_QUERY, HistoryPage
from midturn.gateway._state import Call, GatewayState
from midturn.gateway._views import HistoryOut, ModelResponse, SessionInfo

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["sessions"])

SessionId = Annotated[str, Path(max_length=200)]
EXPORT_PAGE = 500


@router.get("/sessions/{session_id}", response_model=SessionInfo)
async def session_info(call: Call, session_id: SessionId) -> ModelResponse:
    """The session's label: its title (`meta.title`) and the meta given at creation."""
    state, caller = call
    caller.require({"agent", "answer"}, "read this session", session_id)
    record = await state.authority.session(session_id)
    return ModelResponse(
        SessionInfo(
            session_id=record.id,
            created_at=record.created_at,
            title=record.title,
            meta=record.meta,
        )
    )


@router.get(
    "/sessions/{session_id}/history",
    response_model=HistoryOut,
    responses={200: {"content": {"application/jsonl": {}}}},
)
async def session_history(
    call: Call,
    session_id: SessionId,
    q: Annotated[
        str, Query(max_length=MAX_QUERY, description="only entries holding every word of it")
    ] = "",
    limit: Annotated[int, Query(ge=1, le=1000, description="at most this many entries")] = 100,
    cursor: Annotated[
        str | None, Query(max_length=200, description="the `next_cursor` of the page before")
    ] = None,
    format: Annotated[
        Literal["json", "jsonl"],
        Query(description="`jsonl`: every matching entry, one JSON object a line, as a file"),
    ] = "json",
) -> ModelResponse | StreamingResponse:
    """The session's settled questions and decisions, oldest first: what was asked, what
    was answered or decided, by whom and when (never a secret value)."""
    state, caller = call
    caller.require({"agent", "answer"}, "read this session's history", session_id)
    await state.authority.session(session_id)
    if format == "jsonl":
        first = await state.runtime.history(session_id, query=q, limit=EXPORT_PAGE, after=cursor)
        filename = f"midturn-history-{session_id}.jsonl"
        return StreamingResponse(
            _lines(state, session_id, q, first),
            media_type="application/jsonl; charset=utf-8",
            headers={
                "Content-Disposition": f"attachment; filename*=UTF-8''{quote(filename, safe='')}",
                "Cache-Control": "no-store",
            },
        )
    page = await state.runtime.history(session_id, query=q, limit=limit, after=cursor)
    return ModelResponse(HistoryOut(entries=list(page.entries), next_cursor=page.next_cursor))


async def _lines(
    state: GatewayState, session_id: str, query: str, page: HistoryPage
) -> AsyncIterator[bytes]:
    while True:
        if page.entries:
            yield b"".join(entry.model_dump_json().encode() + b"\n" for entry in page.entries)
        if page.next_cursor is None:
            return
        page = await state.runtime.history(
            session_id, query=query, limit=EXPORT_PAGE, after=page.next_cursor
        )
