"""Signed webhooks end to end: a live gateway, a real receiver verifying every delivery
with `standardwebhooks`, the admin API, retries, rotation, and no secret in any byte."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.notify._receiver import Receiver
from tests.notify.conftest import CHOICE, StartGateway, add_webhook, answer, ask, new_session

from midturn.testing import LiveGateway

pytestmark = pytest.mark.asyncio


async def test_a_request_is_delivered_signed_with_what_the_person_needs(
    start: StartGateway, receiver: Receiver, db_url: str
) -> None:
    gateway = start(db_url)
    created = await add_webhook(gateway, receiver)
    assert created["secret"].startswith("whsec_")
    assert created["events"] == [
        "user_question_requested",
        "permission_requested",
        "interaction.reminder",
    ]
    session = await new_session(gateway, "Billing refactor")
    interaction = await ask(gateway, session, CHOICE)

    [got] = await receiver.until(lambda seen: len(seen) >= 1, "the request")
    assert got.verified_with == (created["secret"],)
    body = got.payload
    assert body["type"] == "user_question_requested"
    data = body["data"]
    assert data["session"] == {"id": session["session_id"], "title": "Billing refactor"}
    assert data["position"] == 0
    assert data["interaction"]["id"] == interaction["id"]
    assert data["interaction"]["questions"][0]["question"] == "Which database?"
    assert data["answer_url"] == f"{gateway.url}/#interaction={interaction['id']}"
    # the link carries no credential of any kind
    for token in (gateway.admin_token, session["answer_token"], session["agent_token"]):
        assert token not in got.body.decode()
    assert got.webhook_id.startswith("msg_")

    async with gateway.client() as admin:
        listed = (await admin.get("/v1/webhooks")).json()["webhooks"]
        one = (await admin.get(f"/v1/webhooks/{created['id']}")).json()
        deliveries = (await admin.get(f"/v1/webhooks/{created['id']}/deliveries")).json()
    assert [w["id"] for w in listed] == [created["id"]]
    assert "secret" not in listed[0] and "secret" not in one
    assert created["secret"] not in str(listed) + str(one)
    [delivery] = deliveries["deliveries"]
    await _until_status(gateway, created["id"], delivery["id"], "delivered")


async def _until_status(
    gateway: LiveGateway, webhook_id: str, delivery_id: str, status: str
) -> dict[str, Any]:
    async with gateway.client() as admin:
        for _ in range(500):
            page = (await admin.get(f"/v1/webhooks/{webhook_id}/deliveries")).json()
            found = {d["id"]: d for d in page["deliveries"]}
            if found.get(delivery_id, {}).get("status") == status:
                return found[delivery_id]
            await asyncio.sleep(0.02)
    raise AssertionError(f"delivery {delivery_id} never became {status}: {found}")


async def test_a_secret_answer_is_in_no_payload_byte(
    start: StartGateway, receiver: Receiver, db_url: str
) -> None:
    gateway = start(db_url)
    every = [
        "user_question_requested",
        "user_question_answered",
        "turn_waiting",
        "turn_resumed",
    ]
    await add_webhook(gateway, receiver, events=every)
    session = await new_session(gateway)
    secret_ask = {
        "questions": [{"id": "key", "question": "API key?", "kind": "text", "secret": True}]
    }
    interaction = await ask(gateway, session, secret_ask)
    value = "sk-live-7f3a9c1d2e-never-sent"
    response = await answer(gateway, session, interaction["id"], {"answers": {"key": value}})
    assert response.status_code == 200, response.text

    seen = await receiver.until(
        lambda got: (
            {"user_question_requested", "user_question_answered"}
            <= {r.payload["type"] for r in got}
        ),
        "the request and the answer",
    )
    assert all(r.verified_with for r in seen)
    assert all(value.encode() not in r.body for r in seen)
    [answered] = [r for r in seen if r.payload["type"] == "user_question_answered"]
    assert answered.payload["data"]["interaction"]["status"] == "answered"
    assert answered.payload["data"]["interaction"]["questions"][0]["secret"] is True


async def test_a_receiver_that_was_down_gets_the_delivery_with_the_same_id(
    start: StartGateway, receiver: Receiver, db_url: str
) -> None:
    gateway = start(db_url)
    created = await add_webhook(gateway, receiver)
    receiver.status = 503  # up, but failing
    session = await new_session(gateway)
    await ask(gateway, session, CHOICE)
    arrivals = await receiver.until_arrivals(2)
    assert len(set(arrivals)) == 1, arrivals  # retried, one id
    first_id = arrivals[0]
    receiver.stop()  # now down altogether: connection refused
    async with gateway.client() as admin:
        page = (await admin.get(f"/v1/webhooks/{created['id']}/deliveries")).json()
    [failing] = page["deliveries"]
    assert failing["status"] == "pending" and failing["attempts"] >= 2
    assert failing["last_error"]
    receiver.status = 200
    receiver.start()  # back, on the same port

    [got] = await receiver.until(lambda seen: len(seen) >= 1, "the delivery once back")
    assert got.webhook_id == first_id
    assert got.verified_with
    done = await _until_status(gateway, created["id"], first_id, "delivered")
    assert done["last_error"] is None
    await asyncio.sleep(0.3)  # nothing more comes: it was delivered once
    assert len(receiver.received) == 1


async def test_a_rotated_secret_and_the_old_one_both_verify_during_the_grace(
    start: StartGateway, receiver: Receiver, db_url: str
) -> None:
    gateway = start(db_url)
    created = await add_webhook(gateway, receiver)
    old = created["secret"]
    async with gateway.client() as admin:
        rotated = (
            await admin.post(f"/v1/webhooks/{created['id']}/rotate", json={"grace_s": 3600})
        ).json()
        shown = (await admin.get(f"/v1/webhooks/{created['id']}")).json()
    new = rotated["secret"]
    assert new.startswith("whsec_") and new != old
    assert shown["previous_secret_until"] is not None and "secret" not in shown
    receiver.secrets[:] = [old, new]
    session = await new_session(gateway)
    await ask(gateway, session, CHOICE)
    [got] = await receiver.until(lambda seen: len(seen) >= 1, "the request")
    assert set(got.verified_with) == {old, new}
    assert len(got.signature.split(" ")) == 2

    # with no grace, the old secret stops at once
    async with gateway.client() as admin:
        again = (
            await admin.post(f"/v1/webhooks/{created['id']}/rotate", json={"grace_s": 0})
        ).json()
    receiver.secrets[:] = [old, new, again["secret"]]
    await ask(
        gateway, session, CHOICE | {"questions": [CHOICE["questions"][0] | {"question": "And?"}]}
    )
    seen = await receiver.until(lambda seen: len(seen) >= 2, "the second request")
    assert seen[1].verified_with == (again["secret"],)


async def test_bad_input_is_a_422_with_a_path_and_nothing_is_made(
    start: StartGateway, db_url: str
) -> None:
    gateway = start(db_url)
    cases = [
        ({"url": "ftp://example.com/x"}, "body.url"),
        ({"url": "not a url"}, "body.url"),
        (
            {"url": "https://example.com", "events": ["user_question_requested", "nope"]},
            "body.events",
        ),
        ({"url": "https://example.com", "format": "carrier-pigeon"}, "body.format"),
        ({"url": "https://example.com", "colour": "red"}, "body.colour"),
        ({}, "body.url"),
    ]
    async with gateway.client() as admin:
        for body, path in cases:
            response = await admin.post("/v1/webhooks", json=body)
            assert response.status_code == 422, (body, response.text)
            problems = response.json()["problems"]
            assert path in [p["path"] for p in problems], (body, problems)
        assert (await admin.get("/v1/webhooks")).json()["webhooks"] == []
        missing = await admin.post(
            "/v1/webhooks", json={"url": "https://example.com", "session_id": "s_none"}
        )
        assert missing.status_code == 404
        assert (await admin.get("/v1/webhooks/wh_nope")).status_code == 404
        assert (await admin.delete("/v1/webhooks/wh_nope")).status_code == 404
        assert (await admin.get("/v1/webhooks/wh_nope/deliveries")).status_code == 404
        bad_cursor = await admin.get("/v1/webhooks/wh_nope/deliveries?cursor=abc")
        assert bad_cursor.status_code == 422


async def test_only_the_admin_token_manages_webhooks(start: StartGateway, db_url: str) -> None:
    gateway = start(db_url)
    session = await new_session(gateway)
    for token in (session["agent_token"], session["answer_token"]):
        async with gateway.client(token) as other:
            response = await other.post("/v1/webhooks", json={"url": "https://example.com"})
            assert response.status_code == 403
            assert (await other.get("/v1/webhooks")).status_code == 403
    async with gateway.client(None) as nobody:
        assert (await nobody.get("/v1/webhooks")).status_code == 401


async def test_disable_enable_delete_and_replay(
    start: StartGateway, receiver: Receiver, db_url: str
) -> None:
    gateway = start(db_url)
    created = await add_webhook(gateway, receiver)
    hook = f"/v1/webhooks/{created['id']}"
    session = await new_session(gateway)
    await ask(gateway, session, CHOICE)
    [first] = await receiver.until(lambda seen: len(seen) >= 1, "the request")
    await _until_status(gateway, created["id"], first.webhook_id, "delivered")

    async with gateway.client() as admin:
        off = await admin.patch(hook, json={"enabled": False})
        assert off.status_code == 200 and off.json()["enabled"] is False
    await ask(gateway, session, {"questions": [CHOICE["questions"][0] | {"question": "Quiet?"}]})
    await asyncio.sleep(0.5)
    assert len(receiver.received) == 1  # nothing while disabled

    async with gateway.client() as admin:
        on = await admin.patch(hook, json={"enabled": True})
        assert on.json()["enabled"] is True
        replayed = await admin.post(f"{hook}/deliveries/{first.webhook_id}/replay")
        assert replayed.status_code == 200, replayed.text
        assert replayed.json()["status"] == "pending"
    seen = await receiver.until(lambda seen: len(seen) >= 2, "the replay")
    assert seen[1].webhook_id == first.webhook_id  # the same id: the receiver dedupes
    assert seen[1].verified_with

    async with gateway.client() as admin:
        assert (await admin.post(f"{hook}/deliveries/msg_nope/replay")).status_code == 404
        assert (await admin.delete(hook)).status_code == 204
        assert (await admin.get(hook)).status_code == 404
        assert (await admin.get("/v1/webhooks")).json()["webhooks"] == []


async def test_a_session_filter_and_an_events_filter(
    start: StartGateway, receiver: Receiver, db_url: str
) -> None:
    gateway = start(db_url)
    mine = await new_session(gateway, "mine")
    other = await new_session(gateway, "other")
    await add_webhook(
        gateway, receiver, session_id=mine["session_id"], events=["user_question_answered"]
    )
    theirs = await ask(gateway, other, CHOICE)
    ours = await ask(gateway, mine, CHOICE)
    for session, interaction in ((other, theirs), (mine, ours)):
        response = await answer(gateway, session, interaction["id"], {"answers": {"q1": "SQLite"}})
        assert response.status_code == 200, response.text
    [got] = await receiver.until(lambda seen: len(seen) >= 1, "the answer")
    await asyncio.sleep(0.3)
    assert len(receiver.received) == 1
    assert got.payload["type"] == "user_question_answered"
    assert got.payload["data"]["session"]["id"] == mine["session_id"]
