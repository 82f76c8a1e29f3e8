"""What every route needs, kept on `app.state.gateway`, and the FastAPI dependencies that
hand it (and the caller's identity) to the routes."""

from __future__ import annotations

import asyncio
import os
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, NamedTuple, TypeVar

from fastapi import Depends, Request

from midturn.contract._interactions import Event, Interaction, InteractionKind
from midturn.errors import NotFound, UsageError
from midturn.gateway._auth import Principal, TokenAuthority, bearer_token
from midturn.gateway._errors import TooManyStreams
from midturn.gateway._hub import DEFAULT_BUFFER_BYTES, EventHub
from midturn.gateway._metrics import Metrics
from midturn.gateway._protocol_state import CONNECTION_LOST
from midturn.gateway._stream_clock import StreamClock
from midturn.runtime import Runtime
from midturn.store import Store

__all__ = [
    "Call",
    "Caller",
    "Closing",
    "GatewayState",
    "State",
    "StreamCall",
    "StreamLimits",
    "client_gone",
]

T = TypeVar("T")

MAX_WAIT_S = 60.0
_OWNERS_KEPT = 100_000
_REQUESTED: dict[str, InteractionKind] = {
    "user_question_requested": "ask",
    "permission_requested": "permission",
}


DEFAULT_STREAMS_PER_TOKEN = 32
DEFAULT_WRITE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class StreamLimits:
    """The bounds on event streams (docs/protocol.md, "Event streams"): the bytes of
    frames one stream may fall behind by before it is dropped, how many streams one
    token may hold open at once, and how long one write may wait for a client that reads
    nothing before its connection is closed (its stream slot and buffers freed).
    `from_env` fills what is not given from `MIDTURN_STREAM_BUFFER_BYTES`,
    `MIDTURN_MAX_STREAMS_PER_TOKEN` and `MIDTURN_STREAM_WRITE_TIMEOUT_S`."""

    buffer_bytes: int = DEFAULT_BUFFER_BYTES
    per_token: int = DEFAULT_STREAMS_PER_TOKEN
    write_timeout_s: float = DEFAULT_WRITE_TIMEOUT_S

    def __post_init__(self) -> None:
        if self.buffer_bytes < 1024:
            raise UsageError(
                f"the stream buffer must be at least 1024 bytes (got {self.buffer_bytes})"
            )
        if self.per_token < 1:
            raise UsageError(
                f"the streams allowed per token must be at least 1 (got {self.per_token})"
            )
        if not self.write_timeout_s > 0:
            raise UsageError(
                f"the stream write timeout must be more than 0 seconds (got {self.write_timeout_s})"
            )

    @classmethod
    def from_env(
        cls,
        buffer_bytes: int | None = None,
        per_token: int | None = None,
        write_timeout_s: float | None = None,
    ) -> StreamLimits:
        return cls(
            buffer_bytes=_setting(
                buffer_bytes, "MIDTURN_STREAM_BUFFER_BYTES", DEFAULT_BUFFER_BYTES
            ),
            per_token=_setting(
                per_token, "MIDTURN_MAX_STREAMS_PER_TOKEN", DEFAULT_STREAMS_PER_TOKEN
            ),
            write_timeout_s=_seconds(
                write_timeout_s, "MIDTURN_STREAM_WRITE_TIMEOUT_S", DEFAULT_WRITE_TIMEOUT_S
            ),
        )


def _setting(given: int | None, variable: str, default: int) -> int:
    if given is not None:
        return given
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise UsageError(f"{variable} must be a whole number (got {raw[:40]!r})") from None


def _seconds(given: float | None, variable: str, default: float) -> float:
    if given is not None:
        return given
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise UsageError(f"{variable} must be a number of seconds (got {raw[:40]!r})") from None


class StreamSlots:
    """How many event streams each token holds open, bounded by `per_token`."""

    def __init__(self, per_token: int) -> None:
        self.per_token = per_token
        self._open: Counter[tuple[str, str | None]] = Counter()

    def acquire(self, principal: Principal) -> Callable[[], None]:
        """Take a slot for `principal`'s token (raises `TooManyStreams` when none is
        free); returns the function that gives it back (calling it again does nothing)."""
        key = (principal.role, principal.session_id)
        if self._open[key] >= self.per_token:
            raise TooManyStreams(self.per_token)
        self._open[key] += 1
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self._open[key] -= 1
                if self._open[key] <= 0:
                    del self._open[key]

        return release


class Closing(asyncio.Event):
    """The server is shutting down: an event, and the callbacks of the long-polls
    waiting on it (`watch`; rather than a task waiting on the event for each), each
    called in a loop step once it is set. They are kept in a dict, so a long-poll that
    ends takes its own back at a constant cost: a future every long-poll shared held
    them in a list, which each removal searched and copied, a cost that grew with the
    long-polls waiting at once (1 µs at 64, 16 µs at 1,000)."""

    def __init__(self) -> None:
        super().__init__()
        self._watchers: dict[Callable[[], object], None] = {}

    def set(self) -> None:
        super().set()
        watchers, self._watchers = self._watchers, {}
        if watchers:
            loop = asyncio.get_running_loop()
            for watcher in watchers:
                loop.call_soon(watcher)

    def watch(self, callback: Callable[[], object]) -> None:
        """Call `callback` in a loop step once the server closes (soon, if it has)."""
        if self.is_set():
            asyncio.get_running_loop().call_soon(callback)
        else:
            self._watchers[callback] = None

    def unwatch(self, callback: Callable[[], object]) -> None:
        """Take back a `watch` (nothing if the closing already called it)."""
        self._watchers.pop(callback, None)


@dataclass
class GatewayState:
    runtime: Runtime
    store: Store
    authority: TokenAuthority
    public_url: str = "http://127.0.0.1:8765"
    metrics: Metrics = field(default_factory=Metrics)
    closing: Closing = field(default_factory=lambda: Closing())
    stream_limits: StreamLimits = field(default_factory=StreamLimits)
    hub: EventHub = field(init=False)
    streams: StreamSlots = field(init=False)
    stream_clock: StreamClock = field(init=False)
    replay_slots: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(4))
    _owners: OrderedDict[str, tuple[InteractionKind, str]] = field(
        init=False, default_factory=OrderedDict
    )
    polls: Counter[str] = field(init=False, default_factory=Counter)
    """The long-polls this gateway holds, by interaction id (`_routes_asks`)."""

    def __post_init__(self) -> None:
        self.hub = EventHub(
            self.runtime,
            self.store,
            on_event=self._heard,
            buffer_bytes=self.stream_limits.buffer_bytes,
        )
        self.streams = StreamSlots(self.stream_limits.per_token)
        self.stream_clock = StreamClock(self.stream_limits.write_timeout_s)

    def _heard(self, event: Event) -> None:
        kind = _REQUESTED.get(event.type)
        if kind is not None and event.interaction_id is not None:
            self._owners[event.interaction_id] = (kind, event.session_id)
            while len(self._owners) > _OWNERS_KEPT:
                self._owners.popitem(last=False)

    async def aclose(self) -> None:
        """End every stream and long-poll, and stop the event hub."""
        self.closing.set()
        await self.hub.aclose()
        await self.stream_clock.aclose()

    def remember(self, interaction: Interaction) -> None:
        """Note whose an interaction is. Its kind and session never change, so routes
        can check a caller against this without reading the store again."""
        self._owners[interaction.id] = (interaction.kind, interaction.session_id)
        self._owners.move_to_end(interaction.id)
        while len(self._owners) > _OWNERS_KEPT:
            self._owners.popitem(last=False)

    async def check(
        self, interaction_id: str, kind: InteractionKind, principal: Principal, action: str
    ) -> None:
        """Raise `NotFound` unless `interaction_id` is a `kind`, and `Forbidden` unless
        it is in a session the caller reaches."""
        owner = self._owners.get(interaction_id)
        if owner is None:
            try:
                found = await self.runtime.get(interaction_id)
            except NotFound:
                raise NotFound(
                    f"no {kind} with id {interaction_id!r}; check the id returned when it "
                    "was created"
                ) from None
            self.remember(found)
            owner = (found.kind, found.session_id)
        found_kind, session_id = owner
        if found_kind != kind:
            raise NotFound(
                f"no {kind} with id {interaction_id!r} (it is a {found_kind}: use "
                f"/v1/{found_kind}s/{interaction_id})"
            )
        principal.require({"agent", "answer"}, action, session_id)

    async def until_closing(self, work: Awaitable[T], request: Request) -> T | None:
        """Run `work` unless the server starts shutting down or the client goes away
        first (then None, `work` cancelled).

        `work` runs in the calling task, not a task of its own: the server's closing
        and the client's going away each cancel this task, and that cancellation (only
        that one) ends here as None. One task fewer per long-poll, and no
        `asyncio.wait`: the request's task wakes once, when `work` is done. The client's
        going away is the connection's lost future where the gateway's own protocol
        gives one (`_protocol_state.py`), else a task that waits for `http.disconnect`."""
        task = asyncio.current_task()
        assert task is not None, "until_closing runs in a task"
        stopped = False
        waiting = True  # a `stop` already queued when the work ends must do nothing

        def stop(_: object = None) -> None:
            nonlocal stopped
            if waiting and not stopped:
                stopped = True
                task.cancel()

        closing = self.closing
        lost = request.scope.get("state", {}).get(CONNECTION_LOST)
        watched = lost is not None
        gone: asyncio.Future[Any] = lost if watched else asyncio.ensure_future(client_gone(request))
        closing.watch(stop)
        gone.add_done_callback(stop)
        try:
            return await work
        except asyncio.CancelledError:
            if stopped and task.uncancel() == 0:  # ours, and nobody else's: stopped
                return None
            raise
        finally:
            waiting = False
            closing.unwatch(stop)
            gone.remove_done_callback(stop)
            if not watched:
                gone.cancel()


async def client_gone(request: Request) -> None:
    """Return when the client disconnects. (Call once the request body has been read:
    the server's next message is then the disconnect.)"""
    while (await request.receive())["type"] != "http.disconnect":
        pass


def _gateway(request: Request) -> GatewayState:
    state: GatewayState = request.app.state.gateway
    return state


async def _state(request: Request) -> GatewayState:
    """(async: FastAPI would run a plain function in a worker thread, one hop per call)"""
    return _gateway(request)


class Caller(NamedTuple):
    """What a route needs: the gateway and who is calling. One dependency with no
    sub-dependencies (FastAPI's per-request cost grows with every dependency level); the
    OpenAPI document still declares the bearer scheme (see `_app.py`)."""

    state: GatewayState
    caller: Principal


async def _call(request: Request) -> Caller:
    state = _gateway(request)
    principal = await state.authority.resolve(bearer_token(request))
    request.state.role = principal.role
    return Caller(state, principal)


async def _stream_call(request: Request) -> Caller:
    state = _gateway(request)
    principal = await state.authority.resolve(bearer_token(request, allow_query=True))
    request.state.role = principal.role
    return Caller(state, principal)


State = Annotated[GatewayState, Depends(_state)]
Call = Annotated[Caller, Depends(_call)]
StreamCall = Annotated[Caller, Depends(_stream_call)]
