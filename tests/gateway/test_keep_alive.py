"""The keep-alive timeout on both HTTP protocols (`gateway/_keep_alive.py`): one timer per
connection, not one per response, and an idle connection still closed
`timeout_keep_alive` after its last response, never while a request is in progress.

Each protocol runs on a transport that records its writes, fed the bytes of requests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
import uvicorn
from tests._servers import SAFETY_S
from tests.gateway.test_protocol_writes import PROTOCOLS, App, _plain, _request, _settle, _Transport
from uvicorn.server import ServerState

TIMEOUT_S = 0.2


class _Closing(_Transport):
    """Records when the server last wrote and when it closed the connection."""

    def __init__(self) -> None:
        super().__init__()
        self.written_at = 0.0
        self.closed_at: float | None = None
        self.done = asyncio.Event()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written_at = asyncio.get_running_loop().time()
        super().write(data)

    def close(self) -> None:
        if not self.closed:
            self.closed_at = asyncio.get_running_loop().time()
            self.done.set()
        super().close()


def _connect(name: str, app: App) -> tuple[Any, _Closing]:
    config = uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False)
    config.timeout_keep_alive = TIMEOUT_S  # type: ignore[assignment]
    config.load()
    protocol = PROTOCOLS[name](config=config, server_state=ServerState(), app_state={})
    transport = _Closing()
    protocol.connection_made(transport)
    return protocol, transport


async def _serve(protocol: Any, transport: _Closing) -> float:
    """One request on the connection; the loop time its response was written."""
    answered = len(transport.writes)
    protocol.data_received(_request())
    await _settle()
    assert len(transport.writes) > answered and not transport.closed
    return transport.written_at


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
async def test_a_kept_connection_arms_one_timer_for_all_its_responses(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop = asyncio.get_running_loop()
    protocol, transport = _connect(name, _plain)
    armed = 0
    call_at = loop.call_at

    def counting(when: float, callback: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        nonlocal armed
        armed += getattr(callback, "__self__", None) is protocol
        return call_at(when, callback, *args, **kw)

    monkeypatch.setattr(loop, "call_at", counting)
    for _ in range(5):
        await _serve(protocol, transport)
    assert armed == 1  # uvicorn's own arms one per response: 5
    protocol.connection_lost(None)
    assert protocol._keep_alive_timer is None  # nothing left holding the connection


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
async def test_an_idle_connection_closes_the_timeout_after_its_last_response(name: str) -> None:
    protocol, transport = _connect(name, _plain)
    await _serve(protocol, transport)
    await asyncio.sleep(TIMEOUT_S / 2)  # a second request halfway: the close moves
    last = await _serve(protocol, transport)
    await asyncio.wait_for(transport.done.wait(), SAFETY_S)
    assert transport.closed_at is not None and transport.closed_at >= last + TIMEOUT_S
    protocol.connection_lost(None)


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
async def test_a_request_in_progress_when_the_timeout_falls_is_not_cut_off(name: str) -> None:
    release = asyncio.Event()
    requests = 0

    async def app(scope: Any, receive: Any, send: Any) -> None:
        nonlocal requests
        requests += 1
        if requests == 2:
            await release.wait()  # the second request outlasts the first one's timeout
        await _plain(scope, receive, send)

    protocol, transport = _connect(name, app)
    first = await _serve(protocol, transport)
    protocol.data_received(_request())
    await asyncio.sleep(TIMEOUT_S * 1.5)
    assert not transport.closed and asyncio.get_running_loop().time() > first + TIMEOUT_S
    release.set()
    await _settle()
    assert len(transport.writes) == 2
    last = transport.written_at
    await asyncio.wait_for(transport.done.wait(), SAFETY_S)
    assert transport.closed_at is not None and transport.closed_at >= last + TIMEOUT_S
    protocol.connection_lost(None)
