"""End to end: an agent asks on a real gateway, the notifier's outbox delivers to chat
destinations made through `/v1/webhooks` (a real local receiver standing in for Slack,
Discord and Teams) and to an email destination (a real local SMTP server); the person
clicks a Slack button, signed as Slack signs, and the ask settles. No secret, token or
secret answer is in anything delivered."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from tests.notify._chat_receiver import Receiver as ChatReceiver
from tests.notify._chat_receiver import receiver as chat_receiver
from tests.notify._mailbox import Mailbox, mailbox_server
from tests.notify.conftest import StartGateway, ask, new_session

from midturn.notify._slack import sign_slack_request
from midturn.testing import LiveGateway

SIGNING = "e2e-slack-signing-secret-0123456789"


@pytest.fixture
def chat() -> Iterator[ChatReceiver]:
    with chat_receiver() as r:
        yield r


@pytest.fixture
def mailbox(monkeypatch: pytest.MonkeyPatch) -> Iterator[Mailbox]:
    with mailbox_server() as box:
        monkeypatch.setenv("MIDTURN_SMTP_HOST", "127.0.0.1")
        monkeypatch.setenv("MIDTURN_SMTP_PORT", str(box.port))
        monkeypatch.setenv("MIDTURN_SMTP_STARTTLS", "0")
        monkeypatch.setenv("MIDTURN_SMTP_FROM", "midturn@agents.example")
        yield box


async def _destination(gateway: LiveGateway, **body: Any) -> dict[str, Any]:
    async with gateway.client() as admin:
        response = await admin.post("/v1/webhooks", json=body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    assert created["secret"].startswith("whsec_")
    return created


def _by_path(received: list[Any], prefix: str) -> list[Any]:
    return [item for item in received if item.path.startswith(prefix)]


async def test_an_ask_reaches_slack_discord_teams_and_email_and_a_slack_click_settles_it(
    start: StartGateway, db_url: str, chat: ChatReceiver, mailbox: Mailbox
) -> None:
    gateway = start(
        db_url,
        slack_signing_secret=SIGNING,
        slack_response_urls=(chat.url + "/actions/",),
    )
    made = [
        await _destination(gateway, format="slack", url=chat.url + "/services/T1/B1/hook"),
        await _destination(gateway, format="discord", url=chat.url + "/api/webhooks/1/tok"),
        await _destination(gateway, format="teams", url=chat.url + "/workflows/run"),
        await _destination(gateway, format="email", url="mailto:ada@example.com"),
    ]
    session = await new_session(gateway, title="Billing refactor")
    choice = {
        "questions": [
            {
                "id": "db",
                "header": "Database",
                "question": "Which database?",
                "options": ["PostgreSQL", "SQLite"],
            }
        ]
    }
    asked = await ask(gateway, session, choice)
    link = f"{gateway.url}/#interaction={asked['id']}"

    received = chat.wait_for(3)
    ((slack,),) = [_by_path(received, "/services/")]
    ((discord,),) = [_by_path(received, "/api/webhooks/")]
    ((teams,),) = [_by_path(received, "/workflows/")]
    ((_, email_message),) = mailbox.wait_for(1)

    slack_body = slack.json()
    buttons = slack_body["blocks"][-1]["elements"]
    assert [b["text"]["text"] for b in buttons] == ["PostgreSQL", "SQLite", "Answer in midturn"]
    assert buttons[-1]["url"] == link
    assert "Session: *Billing refactor*" in json.dumps(slack_body)
    assert discord.json()["embeds"][0]["url"] == link
    assert discord.json()["allowed_mentions"] == {"parse": []}
    card = teams.json()["attachments"][0]["content"]
    assert card["actions"][0]["url"] == link
    text = email_message.get_body(("plain",))
    assert text is not None and f"Answer in midturn: {link}" in text.get_content()
    assert email_message["Subject"] == (
        "[midturn] An agent is waiting for your answer: Which database?"
    )

    everything = b"".join(item.body for item in received) + email_message.as_bytes()
    for secret in [d["secret"] for d in made] + [
        session["agent_token"],
        session["answer_token"],
        gateway.admin_token,
    ]:
        assert secret.encode() not in everything

    # the person clicks SQLite in Slack
    payload = {
        "type": "block_actions",
        "user": {"id": "U0ADA"},
        "response_url": chat.url + "/actions/T1/1/xyz",
        "actions": [
            {"type": "button", "action_id": buttons[1]["action_id"], "value": buttons[1]["value"]}
        ],
    }
    body = urlencode({"payload": json.dumps(payload)}).encode()
    async with gateway.client(None) as http:
        clicked = await http.post(
            "/v1/slack/interactions",
            content=body,
            headers={
                "content-type": "application/x-www-form-urlencoded",
                **sign_slack_request(SIGNING, body),
            },
        )
    assert clicked.status_code == 200
    async with gateway.midturn_client(session["agent_token"]) as agent:
        done = await agent.wait(asked["id"], timeout=10)
    assert done.interaction.status == "answered"
    assert done.interaction.settled_by == "slack:U0ADA"
    assert done.output is not None and "SQLite" in done.output.text
    (update,) = _by_path(chat.wait_for(4), "/actions/")
    assert update.json()["replace_original"] is True


async def test_a_secret_answer_reaches_no_chat_or_email_destination(
    start: StartGateway, db_url: str, chat: ChatReceiver, mailbox: Mailbox
) -> None:
    gateway = start(db_url)
    every = ["user_question_requested", "user_question_answered"]
    await _destination(gateway, format="slack", url=chat.url + "/s", events=every)
    await _destination(gateway, format="discord", url=chat.url + "/d", events=every)
    await _destination(gateway, format="teams", url=chat.url + "/t", events=every)
    await _destination(gateway, format="email", url="mailto:ada@example.com", events=every)
    session = await new_session(gateway)
    secret_ask = {
        "questions": [
            {
                "id": "key",
                "header": "Key",
                "question": "The deploy key?",
                "kind": "text",
                "secret": True,
            }
        ]
    }
    asked = await ask(gateway, session, secret_ask)
    value = "sk-live-" + secrets.token_hex(12)
    async with gateway.client(session["answer_token"]) as person:
        response = await person.post(
            f"/v1/asks/{asked['id']}/answer", json={"answers": {"key": value}}
        )
    assert response.status_code == 200, response.text

    received = chat.wait_for(6)  # requested and answered, to each of three
    mails = mailbox.wait_for(2)
    assert sorted(item.path for item in received) == ["/d", "/d", "/s", "/s", "/t", "/t"]
    everything = b"".join(item.body for item in received) + b"".join(
        message.as_bytes() for _, message in mails
    )
    assert value.encode() not in everything
    assert b"The deploy key?" in everything  # the question is shown, never its answer
    slack_bodies = [json.loads(item.body) for item in received if item.path == "/s"]
    titles = sorted(body["blocks"][0]["text"]["text"] for body in slack_bodies)
    assert titles == ["A question was answered", "An agent is waiting for your answer"]
    assert all("never in chat" in json.dumps(body) for body in slack_bodies)
