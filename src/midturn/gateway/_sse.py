"""Server-sent event streams with `Last-Event-ID` replay (docs/protocol.md#events-server-sent).

A stream replays the stored events after the resume point, a page at a time and only as
fast as the client reads, then follows live ones from the process's one event hub
(`_hub.py`), without polling. A stream may ask for some event types only (`?types=`):
both the replay and the live events are then only those, with the log's own ids, so
`Last-Event-ID` resumes it as any other. Memory per stream is bounded: one page while replaying,
at most the hub's `buffer_bytes` of frames while live, and one chunk (at most
`CHUNK_BYTES`) in the server's write buffer, since a write to a client that does not
read waits (ASGI backpressure) before the next is made. That wait comes once the
kernel's send buffer of the stream's socket is full, so it is bounded too
(`SEND_BUFFER_BYTES`): left to the kernel's own sizing it grows to megabytes for a
client that never reads (about 3 MB on Linux's defaults), which a stream whose events
come one at a time, its task handing each on as it comes, had to fill before it could
fall behind at all. A live stream that falls further behind is dropped by the hub and
ends with a `stream_dropped` frame naming the last event sent: the client reconnects
with `Last-Event-ID` and misses nothing.

The number of streams open at once per token is bounded too (`max_per_token`): past it,
a new stream gets a 429 `too_many_streams`. And one write may wait at most
`write_timeout_s` for a client to take what was written before: a client that reads
nothing for that long (stalled, or gone without a word) has its connection closed, its
stream ended and its slot given back; it resumes, if it comes back, with
`Last-Event-ID`. That bound and the keepalives are kept by one clock for all the
streams (`_stream_clock.py`), not a timer per write."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import Callable, Iterable
from typing import Annotated, get_args

from fastapi import APIRouter, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from midturn.contract._interactions import EventType
from midturn.gateway._auth import Principal
from midturn.gateway._http_refusal import ABORT_CONNECTION
from midturn.gateway._hub import Subscriber, format_event
from midturn.gateway._protocol_state import CONNECTION_TRANSPORT
from midturn.gateway._state import GatewayState, StreamCall, client_gone

__all__ = ["format_event", "router"]

router = APIRouter(prefix="/v1", tags=["events"])
log = logging.getLogger("midturn.gateway")

RETRY_MS = 2000
REPLAY_PAGE = 50
CHUNK_BYTES = 64 * 1024
SEND_BUFFER_BYTES = CHUNK_BYTES
"""The send buffer asked for a stream's socket (Linux keeps twice that, for its own
bookkeeping as well as the bytes)."""
MAX_EVENT_ID = 2**63 - 1
"""The largest event id a store can hold (a signed 64-bit integer): a resume point past
it is refused, not streamed as an empty log that ends at once (which an EventSource
would reconnect to forever)."""


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


EVENT_TYPES: tuple[str, ...] = get_args(EventType)


def _wanted_types(values: list[str] | None) -> frozenset[str] | None:
    """The event types a stream asks for, `?types=a,b` or `?types=a&types=b` (the two
    may mix); None for every type (none named, or all of them)."""
    if not values:
        return None
    named = [name.strip() for value in values for name in value.split(",") if name.strip()]
    unknown = [name for name in named if name not in EVENT_TYPES]
    if unknown:
        raise RequestValidationError(
            [
                {
                    "loc": ("query", "types"),
                    "msg": f"unknown event type {unknown[0][:60]!r}; "
                    f"the types are {', '.join(EVENT_TYPES)}",
                    "type": "value_error",
                }
            ]
        )
    wanted = frozenset(named)
    return wanted if wanted and len(wanted) < len(EVENT_TYPES) else None


def _chunks(frames: list[bytes]) -> Iterable[bytes]:
    """Frames joined into writes of about `CHUNK_BYTES` (one frame may be larger)."""
    batch: list[bytes] = []
    size = 0
    for frame in frames:
        if batch and size + len(frame) > CHUNK_BYTES:
            yield b"".join(batch)
            batch, size = [], 0
        batch.append(frame)
        size += len(frame)
    if batch:
        yield b"".join(batch)


def dropped_frame(last_event_id: int, buffer_bytes: int | None) -> bytes:
    """The frame that ends a stream dropped for falling `buffer_bytes` behind (None: the
    event hub stopped). It has no `id`, so an `EventSource` keeps `last_event_id` as its
    `Last-Event-ID` when it reconnects."""
    why = (
        f"this stream fell more than {buffer_bytes} bytes of events behind"
        if buffer_bytes is not None
        else "the server's event hub restarted"
    )
    data = {
        "type": "stream_dropped",
        "last_event_id": last_event_id,
        "message": f"{why} and the stream was closed; reconnect with Last-Event-ID: "
        f"{last_event_id} to resume without missing an event",
    }
    return f"event: stream_dropped\ndata: {json.dumps(data)}\n\n".encode()


_RETRY = f"retry: {RETRY_MS}\n\n".encode()
_KEEPALIVE = b": keepalive\n\n"


class _Stream:
    """One client's stream: replay from the log, then live frames from the hub, each
    chunk written straight to the connection (`_write`). The gateway's stream clock
    (`_stream_clock.py`) wakes it for a keepalive and ends it when a write stalls."""

    def __init__(
        self,
        state: GatewayState,
        after: int,
        session_id: str | None,
        types: frozenset[str] | None = None,
    ) -> None:
        self.state = state
        self.cursor = after
        self.session_id = session_id
        self.types = types
        self.ended = False
        self.stalled = False
        self.following = False
        self.subscriber: Subscriber | None = None
        self.writing_since: float | None = None
        self.last_write = 0.0
        self._send: Send | None = None
        self._abort: Callable[[], None] | None = None
        self._task: asyncio.Task[object] | None = None

    async def run(self, request: Request, send: Send, abort: Callable[[], None] | None) -> None:
        """Write the stream through `send` until it ends. `abort` (the connection's,
        when the server offers it) ends a stalled write at once; without it the task
        writing is cancelled."""
        state = self.state
        self._send, self._abort, self._task = send, abort, asyncio.current_task()
        self.last_write = asyncio.get_running_loop().time()
        watcher = asyncio.create_task(self._watch(request))
        state.metrics.open_streams += 1
        state.stream_clock.add(self)
        try:
            await self._write(_RETRY)
            await self._replay()
            if not self.ended:
                await self._follow()
        finally:
            state.stream_clock.discard(self)
            state.metrics.open_streams -= 1
            if self.subscriber is not None:
                state.hub.unsubscribe(self.subscriber)
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    async def _write(self, body: bytes) -> None:
        assert self._send is not None
        self.writing_since = started = asyncio.get_running_loop().time()
        await self._send({"type": "http.response.body", "body": body, "more_body": True})
        self.writing_since = None
        self.last_write = started

    def stall(self) -> None:
        """The clock's call: a write has waited past the timeout. The stream ends and its
        connection is closed."""
        if self.stalled:
            return
        self.stalled = self.ended = True
        if self._abort is not None:
            self._abort()  # the write waiting returns, and so does every later one
        elif self._task is not None:
            self._task.cancel()

    def keepalive(self) -> None:
        """The clock's call: nothing written for `KEEPALIVE_S`."""
        if self.following and self.subscriber is not None:
            self.subscriber.wake.set()  # woken with nothing to write: a keepalive

    async def _watch(self, request: Request) -> None:
        """End the stream when the server stops or the client goes away (found at once,
        not at the next write)."""
        ending = [
            asyncio.ensure_future(self.state.closing.wait()),
            asyncio.ensure_future(client_gone(request)),
        ]
        try:
            await asyncio.wait(ending, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in ending:
                waiter.cancel()
        self.ended = True
        if self.subscriber is not None:
            self.subscriber.wake.set()

    async def _replay(self) -> None:
        hub, store = self.state.hub, self.state.store
        self.subscriber = await hub.subscribe(self.session_id, self.types)
        while not self.ended:
            # A few replays read and format a page at once, however many streams
            # replay, and each gives the loop a turn after every page, holding its slot
            # (a read may not suspend, nor a write the kernel takes whole: without this
            # one stream's whole replay would run in one step). A slot is never held
            # across a write that waits for the client.
            async with self.state.replay_slots:
                page = await store.read_events_of_types(
                    self.types or (), self.cursor, session_id=self.session_id, limit=REPLAY_PAGE
                )
                read = len(page)
                frames = [format_event(event) for event in page]
                await asyncio.sleep(0)
            if page:
                self.cursor = page[-1].id
                del page  # while a write waits, only the frames are held
                for chunk in _chunks(frames):
                    await self._write(chunk)
                del frames
            if read < REPLAY_PAGE:
                if not self.subscriber.dropped:
                    return
                # it fell behind while replaying: the log holds all it missed
                hub.unsubscribe(self.subscriber)
                self.subscriber = await hub.subscribe(self.session_id, self.types)

    async def _follow(self) -> None:
        subscriber = self.subscriber
        assert subscriber is not None
        self.following = True
        while not self.ended:
            if not subscriber.frames and not subscriber.dropped:
                subscriber.wake.clear()
                await subscriber.wake.wait()
                if self.ended:
                    return
                if not subscriber.frames and not subscriber.dropped:
                    await self._write(_KEEPALIVE)  # the clock woke it
                    continue
            fresh = [item for item in subscriber.take() if item[0] > self.cursor]
            if fresh:
                self.cursor = fresh[-1][0]
                for chunk in _chunks([frame for _, frame in fresh]):
                    await self._write(chunk)
            if subscriber.dropped:
                bound = self.state.hub.buffer_bytes if subscriber.lagging else None
                await self._write(dropped_frame(self.cursor, bound))
                return


def _bound_send_buffer(transport: asyncio.BaseTransport | None) -> None:
    """Ask the kernel to hold at most `SEND_BUFFER_BYTES` of the stream not yet taken
    by its client (the module doc); without a socket (another server), nothing."""
    sock = None if transport is None else transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):  # the kernel's own sizing stays
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)


class _StreamResponse(Response):
    """An event stream's response: the stream writes its chunks through the server's
    `send` itself (no body iterator between them, no task to listen for the client
    going away: the stream has its own watcher). The stream slot is given back however
    it ends; a stalled stream's connection is closed."""

    media_type = "text/event-stream"

    def __init__(self, stream: _Stream, request: Request, release: Callable[[], None]) -> None:
        self.status_code = 200
        self.background = None
        self.init_headers(_HEADERS)  # no body, so no content-length
        self._stream = stream
        self._request = request
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        stream = self._stream
        state = scope.get("state", {})
        try:
            _bound_send_buffer(state.get(CONNECTION_TRANSPORT))
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            try:
                await stream.run(self._request, send, state.get(ABORT_CONNECTION))
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not stream.stalled or task is None or task.uncancel() > 0:
                    raise  # not (only) the clock's cancellation of a stalled write
            if not stream.stalled:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            self._release()
            if stream.stalled:
                log.info(
                    "an event stream's client read nothing for %s s; its connection was closed",
                    self.stream_write_timeout_s,
                )

    @property
    def stream_write_timeout_s(self) -> float:
        return self._stream.state.stream_clock.write_timeout_s


def _open(
    state: GatewayState,
    caller: Principal,
    start: int,
    session_id: str | None,
    types: frozenset[str] | None,
    request: Request,
) -> _StreamResponse:
    release = state.streams.acquire(caller)  # raises TooManyStreams past the bound
    try:
        return _StreamResponse(_Stream(state, start, session_id, types), request, release)
    except BaseException:
        release()
        raise


_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}

LastEventId = Annotated[
    str | None,
    Header(alias="Last-Event-ID", description="resume after this event id", max_length=40),
]
After = Annotated[
    int | None, Query(ge=0, le=MAX_EVENT_ID, description="resume after this event id")
]
Tail = Annotated[
    int | None,
    Query(
        ge=0,
        le=10_000,
        description="with no resume point, start with only the newest this many events",
    ),
]
Types = Annotated[
    list[str] | None,
    Query(
        description="only events of these types, comma-separated or the parameter repeated "
        "(none: every type)",
    ),
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
    tail: Tail = None,
    types: Types = None,
    access_token: AccessToken = None,
) -> Response:
    """One session's events as server-sent events, replayed from `Last-Event-ID`."""
    state, caller = call
    caller.require({"answer"}, "follow this session's events", session_id)
    wanted = _wanted_types(types)
    await state.authority.session(session_id)
    start = await _start(state, _resume_point(last_event_id, after), tail, session_id, wanted)
    return _open(state, caller, start, session_id, wanted, request)


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
    tail: Tail = None,
    types: Types = None,
    access_token: AccessToken = None,
) -> Response:
    """Every session's events (admin only), replayed from `Last-Event-ID`."""
    state, caller = call
    caller.require(set(), "follow every session's events")
    wanted = _wanted_types(types)
    start = await _start(state, _resume_point(last_event_id, after), tail, None, wanted)
    return _open(state, caller, start, None, wanted, request)


async def _start(
    state: GatewayState,
    resume: int,
    tail: int | None,
    session_id: str | None,
    types: frozenset[str] | None,
) -> int:
    """Where the replay starts: a resume point given wins; else, with `tail`, just
    before the newest `tail` events (of `types`, when the stream asks for some)."""
    if resume or tail is None:
        return resume
    return await state.store.tail_start_of_types(types or (), tail, session_id=session_id)
