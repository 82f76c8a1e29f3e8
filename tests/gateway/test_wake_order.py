"""The order in which a settle's responses leave: the long-poll an answer wakes is
answered before the answer itself, so the waiting agent's response is not held behind
the answer's own (its body built, its write, its log line), nor behind the core that
write hands to the answerer's process."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.types import Message, Receive, Scope, Send
from tests.gateway.conftest import ADMIN_TOKEN, ANSWER, ASK

from midturn import Runtime, open_store
from midturn.gateway._app import create_app


class _Sends:
    """The app, with the path of every response body it sends noted in order."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.bodies: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def noted(message: Message) -> None:
            if message["type"] == "http.response.body":
                self.bodies.append(scope["path"])
            await send(message)

        await self.app(scope, receive, noted)


@pytest.mark.parametrize("store", ["memory", "sqlite"])
@pytest.mark.parametrize("poll", ["create", "get"])
async def test_the_woken_long_poll_is_answered_before_the_answer(
    tmp_path: Path, store: str, poll: str
) -> None:
    url = "memory://" if store == "memory" else f"sqlite:///{tmp_path / 'midturn.db'}"
    async with open_store(url) as opened, Runtime(opened) as runtime:
        app = create_app(runtime, store=opened, admin_token=ADMIN_TOKEN)
        sends = _Sends(app)
        transport = httpx.ASGITransport(app=sends)
        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            made = (await client.post("/v1/sessions", json={}, headers=admin)).json()
            agent = {"Authorization": f"Bearer {made['agent_token']}"}
            asks = f"/v1/sessions/{made['session_id']}/asks"
            body = {"tool_input": ASK, "turn_id": "t1"}
            if poll == "create":
                waiting = asyncio.create_task(
                    client.post(asks, json=body, params={"wait": 60}, headers=agent)
                )
            else:
                created = (await client.post(asks, json=body, headers=agent)).json()
                ask_id = created["interaction"]["id"]
                waiting = asyncio.create_task(
                    client.get(f"/v1/asks/{ask_id}", params={"wait": 60}, headers=agent)
                )
            metrics = app.state.gateway.metrics
            for _ in range(1000):
                if metrics.waiting_requests == 1:
                    break
                await asyncio.sleep(0.001)
            assert metrics.waiting_requests == 1
            (pending,) = await runtime.queue(made["session_id"])
            ask_id = pending.id
            sends.bodies.clear()
            answered = await client.post(f"/v1/asks/{ask_id}/answer", json=ANSWER, headers=admin)
            waited = await asyncio.wait_for(waiting, 10)
    assert answered.status_code == 200
    assert waited.json()["interaction"]["status"] == "answered"
    assert waited.json()["interaction"]["result"] == answered.json()["result"]
    polled = asks if poll == "create" else f"/v1/asks/{ask_id}"
    assert sends.bodies == [polled, f"/v1/asks/{ask_id}/answer"]
