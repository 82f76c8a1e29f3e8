"""Server-sent event streams with `Last-Event-ID` replay (docs/protocol.md#events-server-sent).

A stream replays the stored events after the resume point, then follows live ones, from
the process's one event hub (`_hub.py`), without polling. A pump task moves events into a queue so
the response can send keep-alive comments while nothing happens, and end promptly when
the client goes away or the server shuts down."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import StreamingResponse

from midturn.contract._interactions import Event
from midturn.gateway._state import GatewayState, StreamCall, client_gone

__all__ = ["format_event", "router"]

router = APIRouter(prefix="/v1", tags=["events"])

KEEPALIVE_S = 15.0
RETRY_MS = 2000
_QUEUE_MAX = 1000
MAX_EVENT_ID = 2**63 - 1
"""The largest event id a store can hold (a signed 64-bit integer): a resume point past
it is refused, not streamed as an empty log that ends at once (which an EventSource
would reconnect to forever)."""
_END = object()


def format_event(event: Event) -> str:
    """One SSE frame: `id`, `event` (the type) and the whole event as one JSON line."""
    return f"id: {event.id}\nevent: {event.type}\ndata: {event.model_dump_json()}\n\n"


def _resume_point(last_event_id: str | None, after: int | None) -> int:
    if last_event_id is not None and last_event_id.strip():
        try:
            value = int(last_event_id.strip())
        except ValueError:
            raise _bad_resume(last_event_id) from None
        if not 0 <= value <= MAX_EVENT_ID:
            raise _bad_resume(last_event_id)
        return value
    return after or 0


def _bad_resume(value: str) -> RequestValidationError:
    return RequestValidationError(
        [
            {
                "loc": ("header", "Last-Event-ID"),
                "msg": f"{value[:40]!r} is not an event id; send the integer id of the last "
                "event received, or leave the header out to start from the beginning",
                "type": "value_error",
            }
        ]
    )


async def _stream(
    state: GatewayState, after: int, session_id: str | None, request: Request
) -> AsyncIterator[str]:
    queue: asyncio.Queue[object] = asyncio.Queue(maxsize=_QUEUE_MAX)

    async def pump() -> None:
        events = state.hub.follow(after, session_id)
        try:
            async for event in events:
                await queue.put(event)
        finally:
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(_END)
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()

    async def closing() -> None:
        # the server stops, or the client goes away (found at once, not at the next write)
        ending = [
            asyncio.ensure_future(state.closing.wait()),
            asyncio.ensure_future(client_gone(request)),
        ]
        try:
            await asyncio.wait(ending, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in ending:
                waiter.cancel()
        with contextlib.suppress(asyncio.QueueFull):
            queue.put_nowait(_END)

    state.metrics.open_streams += 1
    tasks = [asyncio.create_task(pump()), asyncio.create_task(closing())]
    try:
        yield f"retry: {RETRY_MS}\n\n"
        while True:
            if queue.empty():
                try:
                    async with asyncio.timeout(KEEPALIVE_S):
                        item = await queue.get()
                except TimeoutError:
                    yield ": keepalive\n\n"
                    continue
            else:
                item = queue.get_nowait()
            frames: list[str] = []  # everything already queued goes out as one write
            while isinstance(item, Event):
                frames.append(format_event(item))
                if queue.empty():
                    break
                item = queue.get_nowait()
            if frames:
                yield "".join(frames)
            if item is _END:
                return
    finally:
        state.metrics.open_streams -= 1
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}

LastEventId = Annotated[
    str | None,
    Header(alias="Last-Event-ID", description="resume after this event id", max_length=40),
]
After = Annotated[
    int | None, Query(ge=0, le=MAX_EVENT_ID, description="resume after this event id")
]
AccessToken = Annotated[
    str | None,
    Query(description="the token, for EventSource clients that cannot send headers"),
]


@router.get(
    "/sessions/{session_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def session_events(
    call: StreamCall,
    session_id: Annotated[str, Path(max_length=200)],
    request: Request,
    last_event_id: LastEventId = None,
    after: After = None,
    access_token: AccessToken = None,
) -> StreamingResponse:
    """One session's events as server-sent events, replayed from `Last-Event-ID`."""
    state, caller = call
    caller.require({"answer"}, "follow this session's events", session_id)
    await state.authority.session(session_id)
    start = _resume_point(last_event_id, after)
    return StreamingResponse(
        _stream(state, start, session_id, request), media_type="text/event-stream", headers=_HEADERS
    )


@router.get(
    "/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def all_events(
    call: StreamCall,
    request: Request,
    last_event_id: LastEventId = None,
    after: After = None,
    access_token: AccessToken = None,
) -> StreamingResponse:
    """Every session's events (admin only), replayed from `Last-Event-ID`."""
    state, caller = call
    caller.require(set(), "follow every session's events")
    start = _resume_point(last_event_id, after)
    return StreamingResponse(
        _stream(state, start, None, request), media_type="text/event-stream", headers=_HEADERS
    )
