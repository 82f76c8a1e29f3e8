"""Long-poll: `?wait=S` holds the request until the interaction settles or S seconds
pass, then answers with the interaction as it stands."""

from __future__ import annotations

import asyncio
import contextlib

from .conftest import ANSWER, SAFETY_S, LiveGateway, Session, create_ask, until_waiting


async def test_a_held_wait_returns_as_soon_as_the_ask_is_answered(
    gateway: LiveGateway, session: Session
) -> None:
    ask = await create_ask(gateway, session)
    async with (
        gateway.client(session.agent_token) as agent,
        gateway.client(session.answer_token) as answerer,
    ):
        waiter = asyncio.create_task(agent.get(f"/v1/asks/{ask['id']}", params={"wait": 60}))
        await until_waiting(gateway, 1)
        assert not waiter.done()
        answered = await answerer.post(f"/v1/asks/{ask['id']}/answer", json=ANSWER)
        waited = await asyncio.wait_for(waiter, SAFETY_S)
    assert waited.status_code == 200
    assert waited.json()["interaction"]["status"] == "answered"
    assert waited.json()["interaction"]["result"] == answered.json()["result"]
    await until_waiting(gateway, 0)


async def test_a_wait_that_runs_out_returns_the_ask_still_pending(
    gateway: LiveGateway, session: Session
) -> None:
    ask = await create_ask(gateway, session)
    async with gateway.client(session.agent_token) as agent:
        waited = await agent.get(f"/v1/asks/{ask['id']}", params={"wait": 0.2})
    assert waited.status_code == 200
    assert waited.json()["interaction"]["status"] == "pending"
    assert waited.json()["output"] is None


async def test_a_wait_on_a_settled_ask_returns_at_once(
    gateway: LiveGateway, session: Session
) -> None:
    ask = await create_ask(gateway, session)
    async with gateway.client(session.answer_token) as answerer:
        await answerer.post(f"/v1/asks/{ask['id']}/answer", json=ANSWER)
        waited = await asyncio.wait_for(
            answerer.get(f"/v1/asks/{ask['id']}", params={"wait": 60}), SAFETY_S
        )
    assert waited.json()["interaction"]["status"] == "answered"


async def test_many_waiters_on_one_ask_all_wake(gateway: LiveGateway, session: Session) -> None:
    ask = await create_ask(gateway, session)
    async with (
        gateway.client(session.agent_token) as agent,
        gateway.client(session.answer_token) as answerer,
    ):
        waiters = [
            asyncio.create_task(agent.get(f"/v1/asks/{ask['id']}", params={"wait": 60}))
            for _ in range(20)
        ]
        await until_waiting(gateway, 20)
        await answerer.post(f"/v1/asks/{ask['id']}/answer", json=ANSWER)
        results = await asyncio.wait_for(asyncio.gather(*waiters), SAFETY_S)
    assert {r.json()["interaction"]["status"] for r in results} == {"answered"}


async def test_a_held_wait_ends_when_the_server_stops(
    gateway: LiveGateway, session: Session
) -> None:
    ask = await create_ask(gateway, session)
    async with gateway.client(session.agent_token) as agent:
        waiter = asyncio.create_task(agent.get(f"/v1/asks/{ask['id']}", params={"wait": 60}))
        await until_waiting(gateway, 1)
        await asyncio.to_thread(gateway.stop)
        waited = await asyncio.wait_for(waiter, SAFETY_S)
    assert waited.status_code == 200
    assert waited.json()["interaction"]["status"] == "pending"


async def test_a_long_poll_the_client_abandons_is_released_on_the_server(
    gateway: LiveGateway, session: Session
) -> None:
    ask = await create_ask(gateway, session)
    async with gateway.client(session.agent_token) as agent:
        waiter = asyncio.create_task(agent.get(f"/v1/asks/{ask['id']}", params={"wait": 60}))
        await until_waiting(gateway, 1)
        waiter.cancel()  # the connection closes under the held request
        with contextlib.suppress(asyncio.CancelledError):
            await waiter
    await until_waiting(gateway, 0)
