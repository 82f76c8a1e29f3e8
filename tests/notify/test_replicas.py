"""Two gateway replicas on one PostgreSQL schema share the deliveries: each delivery is
sent by exactly one of them (counted by webhook-id at the receiver), reminders stop
when the other replica settles."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta

import pytest
import pytest_asyncio
from tests._postgres import fresh_schema
from tests.notify._receiver import Receiver
from tests.notify.conftest import FAST, StartGateway, add_webhook, answer, ask, new_session

pytestmark = [pytest.mark.asyncio, pytest.mark.postgres]

ASKS = 40


@pytest_asyncio.fixture
async def pg_url() -> AsyncIterator[str]:
    async with fresh_schema("notify", "two replicas must share the outbox") as url:
        yield url


async def test_each_delivery_is_sent_by_exactly_one_replica(
    start: StartGateway, receiver: Receiver, pg_url: str
) -> None:
    options = replace(FAST, remind_after=timedelta(seconds=0.6), concurrency=4, batch=3)
    first = start(pg_url, notify_options=options)
    second = start(pg_url, token=first.admin_token, notify_options=options)
    await add_webhook(first, receiver, events=["user_question_requested"])
    session = await new_session(first)
    replicas = (first, second)
    asks = [
        {"questions": [{"question": f"Question {n}?", "header": "Q", "options": ["A", "B"]}]}
        for n in range(ASKS)
    ]
    await asyncio.gather(
        *(ask(replicas[n % 2], session, tool_input) for n, tool_input in enumerate(asks))
    )
    seen = await receiver.until(lambda got: len(got) >= ASKS, f"{ASKS} deliveries")
    await asyncio.sleep(0.5)  # anything sent twice would have arrived by now

    per_id = Counter(receiver.arrivals)
    assert len(per_id) == ASKS
    assert set(per_id.values()) == {1}, per_id.most_common(3)
    assert all(r.verified_with for r in seen)
    questions = sorted(r.payload["data"]["interaction"]["questions"][0]["question"] for r in seen)
    assert questions == sorted(f"Question {n}?" for n in range(ASKS))


async def test_a_settle_on_one_replica_stops_the_reminder_on_both(
    start: StartGateway, receiver: Receiver, pg_url: str
) -> None:
    options = replace(FAST, remind_after=timedelta(seconds=0.8))
    first = start(pg_url, notify_options=options)
    second = start(pg_url, token=first.admin_token, notify_options=options)
    await add_webhook(first, receiver)
    session = await new_session(first)
    interaction = await ask(
        first, session, {"questions": [{"question": "Now?", "options": ["y", "n"]}]}
    )
    await receiver.until(lambda got: len(got) >= 1, "the request")
    response = await answer(second, session, interaction["id"], {"answers": {"q1": "y"}})
    assert response.status_code == 200, response.text
    await asyncio.sleep(1.5)
    assert [r.payload["type"] for r in receiver.received] == ["user_question_requested"]
