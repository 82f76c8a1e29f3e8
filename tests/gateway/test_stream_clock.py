"""The stream clock: a live write that waits past the write timeout ends its stream, and
keepalives of streams that fall due together are spread over several ticks.

A real runtime and event hub on the memory store; the stream writes to a fake ASGI
`send` that can hold a write the way a connection whose client reads nothing does.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, cast

import pytest

from midturn.contract._interactions import Event
from midturn.gateway import _sse, _stream_clock
from midturn.gateway._hub import EventHub
from midturn.gateway._stream_clock import StreamClock
from midturn.runtime import Runtime
from midturn.store import Store, open_store
from midturn.store._codec import event_from
from midturn.testing.conformance._data import note

SAFETY_S = 20.0


@pytest.fixture
async def store() -> AsyncIterator[Store]:
    async with open_store("memory://") as opened:
        yield opened


def _event(event_id: int) -> Event:
    return event_from(note("s1", f"t{event_id}"), event_id)


@dataclass
class _State:
    """What a stream needs of the gateway's state."""

    hub: EventHub
    store: Store
    stream_clock: StreamClock
    metrics: Any = field(default_factory=lambda: SimpleNamespace(open_streams=0))
    replay_slots: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(4))
    closing: asyncio.Event = field(default_factory=asyncio.Event)


class _Request:
    """A request whose client stays until `leave()`."""

    def __init__(self) -> None:
        self.gone = asyncio.Event()

    async def receive(self) -> dict[str, str]:
        await self.gone.wait()
        return {"type": "http.disconnect"}

    def leave(self) -> None:
        self.gone.set()


class _Connection:
    """A fake `send`: keeps every body written; while `held`, a write of a frame waits
    until `release()` (a client that reads nothing)."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.held = False
        self._gate = asyncio.Event()

    async def send(self, message: dict[str, Any]) -> None:
        body = message.get("body", b"")
        if self.held and body.startswith(b"id: "):
            await self._gate.wait()
        if body:
            self.bodies.append(body)

    def release(self) -> None:
        self.held = False
        self._gate.set()

    def ids(self) -> list[int]:
        return [
            int(line[4:])
            for body in self.bodies
            for line in body.decode().splitlines()
            if line.startswith("id: ")
        ]


async def _until(condition: Callable[[], bool], pause: float = 0.0) -> None:
    """Turns of the loop (`pause` apart) until `condition()` holds, for `SAFETY_S` at most."""
    async with asyncio.timeout(SAFETY_S):
        for _ in itertools.count():
            if condition():
                return
            await asyncio.sleep(pause)


async def _following(stream: _sse._Stream) -> None:
    """Until the stream waits for live frames with nothing to write."""
    await _until(lambda: stream.following and stream.writing_since is None)
    for _ in range(5):  # its task reaches the wait for the next frame
        await asyncio.sleep(0)


async def _open(
    store: Store, runtime: Runtime, clock: StreamClock
) -> tuple[_sse._Stream, _Connection, _Request, EventHub]:
    hub = EventHub(runtime, store)
    stream = _sse._Stream(cast(Any, _State(hub, store, clock)), 0, None)
    return stream, _Connection(), _Request(), hub


async def test_a_live_write_that_waits_past_the_write_timeout_ends_the_stream(
    store: Store,
) -> None:
    clock = StreamClock(0.2)
    released: list[bool] = []
    async with Runtime(store) as runtime:
        stream, connection, request, hub = await _open(store, runtime, clock)
        response = _sse._StreamResponse(stream, cast(Any, request), lambda: released.append(True))
        scope: dict[str, Any] = {"type": "http"}
        serving = asyncio.create_task(response(scope, cast(Any, None), connection.send))
        try:
            await _following(stream)
            connection.held = True  # and never released: a client that reads nothing
            hub._heard(_event(1))
            await asyncio.wait_for(serving, SAFETY_S)  # ended by the clock, not by the test
            assert stream.stalled and released == [True]
            assert connection.ids() == []
        finally:
            request.leave()
            await hub.aclose()
            await clock.aclose()


class _Quiet:
    """A stream the clock watches that only notes when it got its keepalives (one is a
    write: it moves `last_write`)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, heard: list[float]) -> None:
        self.writing_since: float | None = None
        self.last_write = loop.time() - 3600.0  # long due
        self.keepalives = 0
        self._loop = loop
        self._heard = heard

    def stall(self) -> None:
        raise AssertionError("no write of this stream is waiting")

    def keepalive(self) -> None:
        self.keepalives += 1
        self.last_write = self._loop.time()
        self._heard.append(self.last_write)


async def test_streams_due_together_get_their_keepalives_over_several_ticks() -> None:
    clock = StreamClock(0.2, keepalive_s=60.0)  # a tick of 0.05 s
    loop = asyncio.get_running_loop()
    heard: list[float] = []
    streams = [_Quiet(loop, heard) for _ in range(500)]
    try:
        for stream in streams:
            clock.add(stream)
        await _until(lambda: len(heard) >= len(streams), pause=clock.tick_s)
        await asyncio.sleep(3 * clock.tick_s)
    finally:
        for stream in streams:
            clock.discard(stream)
        await clock.aclose()
    assert all(stream.keepalives == 1 for stream in streams)  # each got one, once
    # one tick's keepalives are written in one go; ticks are a tick apart
    bursts = [1]
    for before, after in itertools.pairwise(heard):
        if after - before >= clock.tick_s / 2:
            bursts.append(0)
        bursts[-1] += 1
    assert max(bursts) <= _stream_clock.KEEPALIVE_BURST  # never all 500 at once
