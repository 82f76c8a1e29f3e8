"""Slack's option buttons answered through the real gateway: `POST /v1/slack/interactions`
signed the way Slack signs (`v0=` HMAC-SHA256 of `v0:{timestamp}:{body}`), settling the ask
by `slack:<user id>` exactly once; a bad or stale signature is 401 and a malformed request
400, and neither changes anything. The updated message goes to a real local receiver
standing in for Slack's `response_url`."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

import httpx
import pytest
from tests._servers import SAFETY_S, serve_process
from tests.notify._chat_receiver import Receiver, receiver

from midturn import Runtime, open_store
from midturn.client import AsyncClient, SessionCredentials
from midturn.contract import Interaction
from midturn.notify._chat import slack_message
from midturn.notify._notice import Notice, NoticeOption, NoticeQuestion
from midturn.notify._slack import SlackInteractions, sign_slack_request
from midturn.testing import LiveGateway, start_gateway

SIGNING = "8f742231b10e8888abcd99yyyzzz85a5"
USER = "U0123ABCD"
ASK = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use?",
            "options": ["PostgreSQL", "SQLite"],
        }
    ]
}


@dataclass
class World:
    gateway: LiveGateway
    slack: Receiver
    session: SessionCredentials
    interaction: Interaction

    def buttons(self) -> list[dict[str, Any]]:
        """The option buttons of the Slack message midturn sends for this ask."""
        question = self.interaction.ask.questions[0]  # type: ignore[union-attr]
        notice = Notice(
            event="user_question_requested",
            session_id=self.session.session_id,
            interaction_id=self.interaction.id,
            answer_url="http://inbox.test/#interaction=" + self.interaction.id,
            pending=True,
            questions=(
                NoticeQuestion(
                    id=question.id,
                    header=question.header,
                    question=question.question,
                    options=tuple(NoticeOption(o.label) for o in question.options),
                ),
            ),
        )
        elements: list[dict[str, Any]] = slack_message(notice)["blocks"][-1]["elements"]
        return elements

    def click_body(self, button: dict[str, Any], user: str = USER) -> bytes:
        """The form body Slack posts when `user` clicks `button`."""
        payload = {
            "type": "block_actions",
            "user": {"id": user, "username": "ada", "team_id": "T0001"},
            "api_app_id": "A0001",
            "team": {"id": "T0001", "domain": "example"},
            "channel": {"id": "C0001", "name": "agents"},
            "container": {"type": "message", "message_ts": "1733050000.000100"},
            "trigger_id": "1234.5678.abcd",
            "response_url": f"{self.slack.url}/actions/T0001/1/{secrets.token_hex(8)}",
            "actions": [
                {
                    "type": "button",
                    "block_id": "midturn",
                    "action_id": button["action_id"],
                    "text": button["text"],
                    **({"value": button["value"]} if "value" in button else {}),
                    "action_ts": "1733050001.000200",
                }
            ],
        }
        return urlencode({"payload": json.dumps(payload)}).encode()

    async def post(
        self,
        body: bytes,
        *,
        secret: str = SIGNING,
        timestamp: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        sent = {"content-type": "application/x-www-form-urlencoded"}
        sent.update(sign_slack_request(secret, body, timestamp) if headers is None else headers)
        async with self.gateway.client(None) as http:
            return await http.post("/v1/slack/interactions", content=body, headers=sent)

    async def current(self) -> Interaction:
        async with self.gateway.midturn_client() as admin:
            return await admin.get(self.interaction.id)


@pytest.fixture
def slack() -> Iterator[Receiver]:
    with receiver() as r:
        yield r


@pytest.fixture
def gateway(slack: Receiver) -> Iterator[LiveGateway]:
    running = start_gateway(
        "memory://",
        secrets.token_urlsafe(24),
        slack_signing_secret=SIGNING,
        slack_response_urls=(slack.url + "/actions/",),
    )
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
async def world(gateway: LiveGateway, slack: Receiver) -> AsyncIterator[World]:
    async with gateway.midturn_client() as admin:
        session = await admin.create_session()
    async with gateway.midturn_client(session.agent_token) as agent:
        interaction, _ = await agent.ask(session.session_id, ASK, tool_call_id="call_1")
    yield World(gateway, slack, session, interaction)


async def test_a_signed_click_settles_the_ask_by_the_slack_user(world: World) -> None:
    _, sqlite, _ = world.buttons()
    response = await world.post(world.click_body(sqlite))
    assert response.status_code == 200
    settled = await world.current()
    assert settled.status == "answered"
    assert settled.settled_by == f"slack:{USER}"
    assert settled.result is not None and settled.result.answers[0].selected == ("SQLite",)
    async with world.gateway.midturn_client(world.session.agent_token) as agent:
        done = await agent.wait(world.interaction.id, timeout=5)
    assert done.output is not None and "SQLite" in done.output.text

    (update,) = world.slack.wait_for(1)
    message = update.json()
    assert update.path.startswith("/actions/T0001/1/")
    assert message["replace_original"] is True
    assert response.json() == message  # the reply, also as the request's answer
    texts = json.dumps(message["blocks"])
    assert "Which database should the service use?" in texts
    assert "*SQLite*" in texts and f"<@{USER}>" in texts
    assert all(block["type"] != "actions" for block in message["blocks"])  # no more buttons


async def test_a_second_click_settles_nothing_and_says_already_answered(world: World) -> None:
    _, sqlite, _ = world.buttons()
    postgres = world.buttons()[0]
    assert (await world.post(world.click_body(sqlite))).status_code == 200
    first = await world.current()

    double = await world.post(world.click_body(sqlite))  # a double click
    late = await world.post(world.click_body(postgres, user="U0OTHER"))  # another person
    for reply in (double, late):
        assert reply.status_code == 200
        body = reply.json()
        assert body["response_type"] == "ephemeral" and body["replace_original"] is False
        assert body["text"].startswith("Already answered: *SQLite*, by <@U0123ABCD>")
    assert await world.current() == first  # same answer, same time, same person

    posts = world.slack.wait_for(5)  # 1 update, then (refresh + note) for each late click
    notes = [p.json() for p in posts if p.json().get("response_type") == "ephemeral"]
    assert len(notes) == 2


async def test_a_replay_of_a_settled_click_after_five_minutes_is_401(world: World) -> None:
    _, sqlite, _ = world.buttons()
    body = world.click_body(sqlite)
    stamp = int(time.time())
    assert (await world.post(body, timestamp=stamp)).status_code == 200
    settled = await world.current()
    replay = await world.post(body, timestamp=stamp - 301)
    assert replay.status_code == 401
    assert "five minutes" in replay.json()["message"]
    assert await world.current() == settled


async def test_a_bad_or_stale_or_missing_signature_is_401_and_changes_nothing(
    world: World,
) -> None:
    _, sqlite, _ = world.buttons()
    body = world.click_body(sqlite)
    now = int(time.time())
    tampered = world.click_body(world.buttons()[0])
    refused = [
        await world.post(body, secret="not-the-signing-secret"),
        await world.post(body, timestamp=now - 301),
        await world.post(body, timestamp=now + 400),  # from the future
        await world.post(body, headers={}),
        await world.post(body, headers={"X-Slack-Request-Timestamp": str(now)}),
        await world.post(
            body, headers={"X-Slack-Request-Timestamp": "soon", "X-Slack-Signature": "v0=00"}
        ),
        # a body changed after signing: the signature of one click on another's body
        await world.post(tampered, headers=sign_slack_request(SIGNING, body, now)),
    ]
    assert [r.status_code for r in refused] == [401] * len(refused)
    assert all(r.json()["error"] == "unauthorized" for r in refused)
    current = await world.current()
    assert current.status == "pending" and current.settled_by is None
    assert world.slack.received == []


@pytest.mark.parametrize(
    "form",
    [
        b"",
        b"text=hello",
        b"payload=not-json",
        b"payload=%5B1%2C2%5D",
        b"payload=%7B%7D&payload=%7B%7D",
    ],
)
async def test_a_malformed_body_is_400_never_500(world: World, form: bytes) -> None:
    response = await world.post(form)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"
    assert (await world.current()).status == "pending"


async def test_a_body_that_is_not_utf8_is_refused_never_500(world: World) -> None:
    body = b"payload=\xff\xfe"
    stamp = str(int(time.time()))
    digest = hmac.new(SIGNING.encode(), b"v0:" + stamp.encode() + b":" + body, hashlib.sha256)
    headers = {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": "v0=" + digest.hexdigest()}
    response = await world.post(body, headers=headers)
    assert response.status_code in (400, 422)  # the gateway's body check refuses it first
    assert response.json()["error"] == "invalid_request"
    assert (await world.current()).status == "pending"


async def test_a_payload_midturn_did_not_write_is_400(world: World) -> None:
    _, sqlite, _ = world.buttons()
    base = json.loads(_payload_of(world.click_body(sqlite)))

    def variant(**changes: Any) -> bytes:
        payload = json.loads(json.dumps(base))
        for key, value in changes.items():
            if key == "action":
                payload["actions"][0].update(value)
            elif value is None:
                payload.pop(key)
            else:
                payload[key] = value
        return urlencode({"payload": json.dumps(payload)}).encode()

    bodies = [
        variant(type="view_submission"),
        variant(user=None),
        variant(user={"id": "<!channel>"}),
        variant(actions=[]),
        variant(action={"action_id": 7}),
        variant(action={"action_id": "someone.else"}),
        variant(action={"value": "SQLite"}),
        variant(action={"value": json.dumps({"i": world.interaction.id, "q": "db", "o": 9})}),
        variant(action={"value": json.dumps({"i": world.interaction.id, "q": "x", "o": 0})}),
        variant(action={"value": json.dumps({"i": world.interaction.id, "q": "db", "o": True})}),
    ]
    for body in bodies:
        response = await world.post(body)
        assert response.status_code == 400, response.text
        assert response.json()["message"]
    assert (await world.current()).status == "pending"


def _payload_of(body: bytes) -> str:
    return parse_qs(body.decode())["payload"][0]


async def test_the_link_button_is_acknowledged_and_changes_nothing(world: World) -> None:
    link = world.buttons()[-1]
    response = await world.post(world.click_body(link))
    assert response.status_code == 200
    assert (await world.current()).status == "pending"


async def test_a_click_for_an_interaction_that_is_gone_gets_a_friendly_reply(
    world: World,
) -> None:
    _, sqlite, _ = world.buttons()
    value = json.loads(sqlite["value"])
    value["i"] = "ia_gone"
    response = await world.post(world.click_body({**sqlite, "value": json.dumps(value)}))
    assert response.status_code == 200
    assert "no longer in midturn" in response.json()["text"]


async def test_without_a_signing_secret_there_is_no_slack_endpoint() -> None:
    gateway = start_gateway("memory://", secrets.token_urlsafe(24))
    try:
        async with gateway.client(None) as http:
            response = await http.post("/v1/slack/interactions", content=b"payload=%7B%7D")
        assert response.status_code == 404
    finally:
        gateway.stop()


# -- `midturn serve --slack-signing-secret-file` and MIDTURN_SLACK_SIGNING_SECRET ----------


async def _click_through(url: str, admin_token: str, secret: str) -> int:
    """Ask on the gateway at `url`, click SQLite signed with `secret`; the status."""
    async with AsyncClient(url, admin_token) as admin:
        session = await admin.create_session()
    async with AsyncClient(url, session.agent_token) as agent:
        interaction, _ = await agent.ask(session.session_id, ASK, tool_call_id="c1")
    value = json.dumps({"i": interaction.id, "q": "db", "o": 1})
    payload = {
        "type": "block_actions",
        "user": {"id": USER},
        "actions": [{"action_id": "midturn.answer.1", "value": value}],
    }
    body = urlencode({"payload": json.dumps(payload)}).encode()
    async with httpx.AsyncClient(base_url=url) as http:
        response = await http.post(
            "/v1/slack/interactions",
            content=body,
            headers={
                "content-type": "application/x-www-form-urlencoded",
                **sign_slack_request(secret, body),
            },
        )
    async with AsyncClient(url, admin_token) as admin:
        settled = await admin.get(interaction.id)
    assert (settled.status == "answered") == (response.status_code == 200)
    assert settled.status != "answered" or settled.settled_by == f"slack:{USER}"
    return response.status_code


@pytest.mark.slow
async def test_serve_reads_the_signing_secret_from_a_file_or_the_environment(
    tmp_path: Path,
) -> None:
    token = secrets.token_urlsafe(24)
    secret_file = tmp_path / "slack-signing-secret"
    secret_file.write_text(SIGNING + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIDTURN_")}
    options = ("--slack-signing-secret-file", str(secret_file))
    with serve_process("memory://", token, tmp_path / "a.log", env=env, options=options) as url:
        assert await _click_through(url, token, SIGNING) == 200
        assert await _click_through(url, token, "another-secret") == 401
    with serve_process(
        "memory://", token, tmp_path / "b.log", env={**env, "MIDTURN_SLACK_SIGNING_SECRET": SIGNING}
    ) as url:
        assert await _click_through(url, token, SIGNING) == 200
    assert SIGNING not in (tmp_path / "a.log").read_text() + (tmp_path / "b.log").read_text()


def test_serve_refuses_an_empty_signing_secret_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "midturn.cli",
            "serve",
            "--db",
            "memory://",
            "--port",
            "0",
            "--slack-signing-secret-file",
            str(empty),
        ],
        capture_output=True,
        text=True,
        timeout=SAFETY_S,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "is empty" in done.stderr and "signing secret" in done.stderr


# -- the endpoint on its own, without the gateway's body check in front ----------------------


async def test_the_endpoint_alone_refuses_a_body_that_is_not_utf8_with_400() -> None:
    async with open_store("memory://") as store, Runtime(store) as runtime:
        endpoint = SlackInteractions(runtime, SIGNING)
        body = b"payload=\xff"
        stamp = str(int(time.time()))
        digest = hmac.new(
            SIGNING.encode(), b"v0:" + stamp.encode() + b":" + body, hashlib.sha256
        ).hexdigest()
        transport = httpx.ASGITransport(app=endpoint)
        async with httpx.AsyncClient(transport=transport, base_url="http://slack.test") as http:
            response = await http.post(
                "/",
                content=body,
                headers={"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": "v0=" + digest},
            )
    assert response.status_code == 400


async def test_a_click_on_a_cancelled_ask_says_so_and_changes_nothing(world: World) -> None:
    async with world.gateway.midturn_client(world.session.agent_token) as agent:
        await agent.cancel(world.interaction.id)
    cancelled = await world.current()
    _, sqlite, _ = world.buttons()
    response = await world.post(world.click_body(sqlite))
    assert response.status_code == 200
    assert response.json()["text"] == ("This question was cancelled; your click changed nothing.")
    assert await world.current() == cancelled
    refreshed = [p.json() for p in world.slack.wait_for(2) if p.json().get("replace_original")]
    assert "This question was cancelled" in json.dumps(refreshed[0])
