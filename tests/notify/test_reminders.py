"""Reminders and escalation: planned with each request, durable, and stopped by the
settle — here, after a restart, and when another process settled it."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta

import pytest
from tests.notify._receiver import Receiver
from tests.notify.conftest import (
    CHOICE,
    FAST,
    StartGateway,
    add_webhook,
    answer,
    ask,
    new_session,
)

pytestmark = pytest.mark.asyncio

REMINDING = replace(
    FAST,
    remind_after=timedelta(seconds=0.4),
    reminders=2,
    escalate_after=timedelta(seconds=1.0),
)


def types(receiver: Receiver) -> list[str]:
    return [r.payload["type"] for r in receiver.received]


async def test_reminders_then_an_escalation_while_pending(start: StartGateway, db_url: str) -> None:
    person, manager = Receiver().start(), Receiver().start()
    try:
        gateway = start(db_url, notify_options=REMINDING)
        await add_webhook(gateway, person)
        escalation = await add_webhook(gateway, manager, escalation=True)
        assert escalation["events"] == ["interaction.escalation"]
        session = await new_session(gateway)
        interaction = await ask(gateway, session, CHOICE)

        await person.until(lambda seen: len(seen) >= 3, "the request and two reminders")
        [escalated] = await manager.until(lambda seen: len(seen) >= 1, "the escalation")
        assert types(person) == [
            "user_question_requested",
            "interaction.reminder",
            "interaction.reminder",
        ]
        assert [r.payload["data"]["reminder"] for r in person.received] == [None, 1, 2]
        assert len({r.webhook_id for r in person.received}) == 3
        assert all(r.verified_with for r in [*person.received, escalated])
        assert escalated.payload["type"] == "interaction.escalation"
        data = escalated.payload["data"]
        assert data["interaction"]["id"] == interaction["id"]
        assert data["answer_url"].endswith(f"/#interaction={interaction['id']}")
        await asyncio.sleep(0.5)
        assert len(person.received) == 3 and len(manager.received) == 1
    finally:
        person.stop()
        manager.stop()


async def test_a_settle_stops_the_reminders_and_the_escalation(
    start: StartGateway, receiver: Receiver, db_url: str
) -> None:
    gateway = start(db_url, notify_options=REMINDING)
    created = await add_webhook(
        gateway,
        receiver,
        events=["user_question_requested", "interaction.reminder", "interaction.escalation"],
    )
    session = await new_session(gateway)
    interaction = await ask(gateway, session, CHOICE)
    await receiver.until(lambda seen: len(seen) >= 1, "the request")
    response = await answer(gateway, session, interaction["id"], {"answers": {"q1": "SQLite"}})
    assert response.status_code == 200, response.text
    await asyncio.sleep(1.5)  # past every reminder's and the escalation's time
    assert types(receiver) == ["user_question_requested"]
    async with gateway.client() as admin:
        page = (await admin.get(f"/v1/webhooks/{created['id']}/deliveries")).json()
    statuses = sorted((d["type"], d["status"]) for d in page["deliveries"])
    assert statuses == [
        ("interaction.escalation", "cancelled"),
        ("interaction.reminder", "cancelled"),
        ("interaction.reminder", "cancelled"),
        ("user_question_requested", "delivered"),
    ]


async def test_a_reminder_planned_before_a_restart_is_sent_after_it(
    start: StartGateway, receiver: Receiver, db_url: str
) -> None:
    once = replace(FAST, remind_after=timedelta(seconds=0.8))
    gateway = start(db_url, notify_options=once)
    await add_webhook(gateway, receiver)
    session = await new_session(gateway)
    await ask(gateway, session, CHOICE)
    await receiver.until(lambda seen: len(seen) >= 1, "the request")
    gateway.stop()
    await asyncio.sleep(1.0)  # the reminder came due while nothing ran
    assert types(receiver) == ["user_question_requested"]

    start(db_url, port=gateway.port, token=gateway.admin_token, notify_options=once)
    await receiver.until(lambda seen: len(seen) >= 2, "the reminder after the restart")
    assert types(receiver) == ["user_question_requested", "interaction.reminder"]


async def test_a_settle_in_another_process_stops_the_reminder(
    start: StartGateway, receiver: Receiver, db_url: str
) -> None:
    """Two gateways on one SQLite file: the person answers through the second; neither
    sends the reminder."""
    once = replace(FAST, remind_after=timedelta(seconds=0.8))
    first = start(db_url, notify_options=once)
    second = start(db_url, token=first.admin_token, notify_options=once)
    await add_webhook(first, receiver)
    session = await new_session(first)
    interaction = await ask(first, session, CHOICE)
    await receiver.until(lambda seen: len(seen) >= 1, "the request")
    response = await answer(second, session, interaction["id"], {"answers": {"q1": "SQLite"}})
    assert response.status_code == 200, response.text
    await asyncio.sleep(1.5)
    assert types(receiver) == ["user_question_requested"]
