"""Fixtures for the notification tests: a real receiver, a live gateway with fast
retries, and the admin and agent calls they share."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.notify._receiver import Receiver

from midturn.notify import NotifyOptions
from midturn.testing import LiveGateway, start_gateway

FAST = NotifyOptions(
    retry_initial=timedelta(seconds=0.1),
    retry_max=timedelta(seconds=0.5),
    lease=timedelta(seconds=5),
    poll_s=0.1,
)

StartGateway = Callable[..., LiveGateway]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    started = Receiver().start()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def start() -> Iterator[StartGateway]:
    running: list[LiveGateway] = []

    def launch(db_url: str, port: int = 0, **options: Any) -> LiveGateway:
        options.setdefault("notify_options", FAST)
        token = options.pop("token", "admin-" + secrets.token_urlsafe(8))
        gateway = start_gateway(db_url, token, port, **options)
        running.append(gateway)
        return gateway

    yield launch
    for gateway in running:
        if gateway._thread.is_alive():
            gateway.stop()


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'midturn.db'}"


async def add_webhook(gateway: LiveGateway, receiver: Receiver, **body: Any) -> dict[str, Any]:
    """POST /v1/webhooks for the receiver; teaches the receiver the secret."""
    async with gateway.client() as admin:
        response = await admin.post("/v1/webhooks", json={"url": receiver.url, **body})
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    receiver.secrets.append(created["secret"])
    return created


async def new_session(gateway: LiveGateway, title: str = "Billing refactor") -> dict[str, Any]:
    async with gateway.client() as admin:
        response = await admin.post("/v1/sessions", json={"meta": {"title": title}})
    assert response.status_code == 201, response.text
    session: dict[str, Any] = response.json()
    return session


async def ask(
    gateway: LiveGateway, session: dict[str, Any], tool_input: dict[str, Any]
) -> dict[str, Any]:
    async with gateway.client(session["agent_token"]) as agent:
        response = await agent.post(
            f"/v1/sessions/{session['session_id']}/asks", json={"tool_input": tool_input}
        )
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()["interaction"]
    return created


async def answer(
    gateway: LiveGateway, session: dict[str, Any], ask_id: str, payload: Any
) -> httpx.Response:
    async with gateway.client(session["answer_token"]) as person:
        return await person.post(f"/v1/asks/{ask_id}/answer", json=payload)


CHOICE = {
    "questions": [
        {"question": "Which database?", "header": "DB", "options": ["SQLite", "Postgres"]}
    ]
}
