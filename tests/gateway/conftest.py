"""A real gateway on uvicorn, on a free port, in a thread of the test process
(tests/_servers.py).

`gateway` is a started server on a fresh SQLite file; `start_gateway(db_url, port=0)`
starts more (for restarts). Every server started is stopped at the end of the test, and
the stop is awaited: no server outlives its test.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests._asks import ANSWER, ASK  # noqa: F401 - the suite's tests import them from here
from tests._servers import SAFETY_S, LiveGateway
from tests._servers import start_gateway as start_live_gateway

from midturn import Event

ADMIN_TOKEN = "test-admin-token-0123456789abcdef"


StartGateway = Callable[..., LiveGateway]


@pytest.fixture
def start_gateway() -> Iterator[StartGateway]:
    started: list[LiveGateway] = []

    def start(db_url: str, port: int = 0, **options: Any) -> LiveGateway:
        server = start_live_gateway(db_url, ADMIN_TOKEN, port, **options)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'midturn.db'}"


@pytest.fixture
def gateway(start_gateway: StartGateway, db_url: str) -> LiveGateway:
    return start_gateway(db_url)


@dataclass
class Session:
    session_id: str
    agent_token: str
    answer_token: str
    answer_url: str


NewSession = Callable[[], Awaitable[Session]]


@pytest.fixture
def new_session(gateway: LiveGateway) -> NewSession:
    async def create() -> Session:
        async with gateway.client() as admin:
            response = await admin.post("/v1/sessions", json={})
        assert response.status_code == 201, response.text
        return Session(**response.json())

    return create


@pytest.fixture
async def session(new_session: NewSession) -> Session:
    return await new_session()


async def create_ask(
    gateway: LiveGateway,
    session: Session,
    tool_call_id: str | None = "call-1",
    tool_input: Any = ASK,
    turn_id: str = "turn-1",
) -> dict[str, Any]:
    async with gateway.client(session.agent_token) as agent:
        response = await agent.post(
            f"/v1/sessions/{session.session_id}/asks",
            json={"tool_input": tool_input, "tool_call_id": tool_call_id, "turn_id": turn_id},
        )
    assert response.status_code in (200, 201), response.text
    interaction: dict[str, Any] = response.json()["interaction"]
    return interaction


async def until_waiting(gateway: LiveGateway, count: int) -> None:
    """Until the gateway holds `count` long polls (its metrics say so)."""
    async with httpx.AsyncClient(base_url=gateway.url) as client:
        for _ in range(5000):
            metrics = (await client.get("/metrics")).text
            if f"midturn_waiting_requests {count}" in metrics.splitlines():
                return
    raise AssertionError(f"the gateway never held {count} long poll(s)")


async def sse_lines(response: httpx.Response) -> AsyncIterator[str]:
    async for line in response.aiter_lines():
        yield line


async def next_event(stream: AsyncIterator[Event], *types: str) -> Event:
    """The next event of one of `types` on `stream` (others, such as `turn_waiting`, are
    passed over), within the safety timeout."""

    async def find() -> Event:
        async for event in stream:
            if event.type in types:
                return event
        raise AssertionError(f"the stream ended before a {types} event")

    return await asyncio.wait_for(find(), SAFETY_S)
