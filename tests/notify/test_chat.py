"""The Slack, Discord and Teams senders against a real local HTTP receiver: the message
shapes each incoming webhook documents, the model's text neutralized for each format,
the length limits, and how a receiver's refusal is read (retryable or not, Retry-After)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest
from tests.notify._chat_receiver import Receiver, Reply, receiver

from midturn.contract._api import parse_ask
from midturn.contract._interactions import Interaction, PermissionRequest
from midturn.notify import DeliveryFailed, Notification, build_payload, get_sender
from midturn.notify._channels import SLACK_BUTTONS
from midturn.notify._payload import (
    NotificationData,
    NotifiedInteraction,
    NotifiedQuestion,
    NotifiedSession,
)
from midturn.store._outbox import WebhookDestination

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
SECRET = "whsec_" + "c2VjcmV0LXNpZ25pbmcta2V5LWZvci10ZXN0cw=="
HOSTILE = (
    "Ping <!channel> @here & @everyone, see <https://evil.example|this> [x](https://evil.example)"
)


@pytest.fixture
def buttons() -> Iterator[None]:
    before = SLACK_BUTTONS.on
    SLACK_BUTTONS.on = True
    yield
    SLACK_BUTTONS.on = before


@pytest.fixture
def no_buttons() -> Iterator[None]:
    before = SLACK_BUTTONS.on
    SLACK_BUTTONS.on = False
    yield
    SLACK_BUTTONS.on = before


@pytest.fixture
def inbox() -> Iterator[Receiver]:
    with receiver() as r:
        yield r


def _destination(url: str, format: str) -> WebhookDestination:
    return WebhookDestination(id="wh_1", url=url, format=format, secret=SECRET)


def _notification(
    tool_input: dict[str, Any], *, title: str = "Billing refactor", position: int = 1
) -> Notification:
    interaction = Interaction(
        id="ia_42", kind="ask", session_id="s_1", turn_id="t1", ask=parse_ask(tool_input)
    )
    return build_payload(
        "user_question_requested",
        at=AT,
        session_id="s_1",
        session_title=title,
        interaction=interaction,
        public_url="http://inbox.test:8765",
        position=position,
    )


ONE_CHOICE = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use?",
            "options": [
                {"label": "PostgreSQL", "description": "the shared cluster"},
                {"label": "SQLite", "description": "a file next to the service"},
            ],
        }
    ]
}


async def _send(inbox: Receiver, format: str, notification: Notification) -> dict[str, Any]:
    sender = get_sender(format)
    await sender.send(
        _destination(inbox.url + "/hook/T000/B000/XXXX", format), "dl_1", notification
    )
    received = inbox.wait_for(1)[-1]
    assert received.headers["content-type"] == "application/json"
    assert SECRET not in received.body.decode() and SECRET not in json.dumps(received.headers)
    shaped: dict[str, Any] = received.json()
    return shaped


def _mrkdwn_objects(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        if value.get("type") == "mrkdwn":
            yield value
        for item in value.values():
            yield from _mrkdwn_objects(item)
    elif isinstance(value, list):
        for item in value:
            yield from _mrkdwn_objects(item)


# -- Slack ---------------------------------------------------------------------------------


async def test_slack_gets_blocks_a_fallback_and_one_button_per_option(
    inbox: Receiver, buttons: None
) -> None:
    message = await _send(inbox, "slack", _notification(ONE_CHOICE))
    assert message["text"].startswith("An agent is waiting for your answer: Which database")
    blocks = message["blocks"]
    assert blocks[0] == {
        "type": "header",
        "text": {"type": "plain_text", "text": "An agent is waiting for your answer"},
    }
    context = blocks[1]["elements"][0]["text"]
    assert "Session: *Billing refactor*" in context and "2nd in this session's queue" in context
    section = blocks[2]["text"]["text"]
    assert section.startswith("*Database*\nWhich database should the service use?")
    assert "• *PostgreSQL* — the shared cluster" in section
    actions = blocks[-1]
    assert actions["type"] == "actions"
    pg, lite, link = actions["elements"]
    assert [pg["text"]["text"], lite["text"]["text"]] == ["PostgreSQL", "SQLite"]
    assert json.loads(lite["value"]) == {"i": "ia_42", "q": "db", "o": 1}
    assert pg["action_id"] != lite["action_id"]
    assert link["url"] == "http://inbox.test:8765/#interaction=ia_42"
    assert "token" not in link["url"]


async def test_slack_buttons_only_for_one_single_select_question(
    inbox: Receiver, buttons: None
) -> None:
    two = {
        "questions": [
            *ONE_CHOICE["questions"],
            {"id": "n", "question": "Its name?", "kind": "text"},
        ]
    }
    message = await _send(inbox, "slack", _notification(two))
    elements = message["blocks"][-1]["elements"]
    assert [e["text"]["text"] for e in elements] == ["Answer in midturn"]
    assert "url" in elements[0] and "value" not in elements[0]


async def test_slack_has_no_option_buttons_until_the_gateway_takes_the_clicks(
    inbox: Receiver, no_buttons: None
) -> None:
    message = await _send(inbox, "slack", _notification(ONE_CHOICE))
    elements = message["blocks"][-1]["elements"]
    assert [e["action_id"] for e in elements] == ["midturn.open"]


async def test_slack_text_from_the_model_cannot_mention_link_or_format_markup(
    inbox: Receiver, buttons: None
) -> None:
    hostile = {
        "questions": [
            {
                "id": "q",
                "header": "<@U1>",
                "question": HOSTILE,
                "options": ["<!here> yes", "no & maybe"],
            }
        ]
    }
    message = await _send(inbox, "slack", _notification(hostile, title="@channel <b>"))
    texts = [obj["text"] for obj in _mrkdwn_objects(message["blocks"])]
    assert texts and all(obj["verbatim"] is True for obj in _mrkdwn_objects(message["blocks"]))
    for text in [*texts, message["text"]]:
        assert "<" not in text and ">" not in text  # no <!channel>, <@U…>, <url|text>
        assert "@here" not in text and "@channel" not in text and "@everyone" not in text
    section = message["blocks"][2]["text"]["text"]
    assert "&lt;!channel&gt;" in section and "&amp;" in section
    assert "@\u2060here" in section
    buttons_text = [e["text"]["text"] for e in message["blocks"][-1]["elements"][:2]]
    assert buttons_text == ["<!here> yes", "no & maybe"]  # plain_text: shown, never parsed


async def test_slack_cuts_what_is_too_long_with_an_ellipsis(inbox: Receiver) -> None:
    notification = Notification(
        type="user_question_requested",
        timestamp=AT,
        data=NotificationData(
            event_id=None,
            session=NotifiedSession(id="s", title="t" * 5000),
            interaction=NotifiedInteraction(
                id="ia",
                kind="ask",
                status="pending",
                turn_id="t",
                created_at=AT,
                questions=(NotifiedQuestion(id="q", header="H", question="q" * 9000, kind="text"),),
            ),
            position=0,
            answer_url="http://inbox.test/#interaction=ia",
        ),
    )
    message = await _send(inbox, "slack", notification)
    section = message["blocks"][2]["text"]["text"]
    assert len(section) == 3000 and section.endswith("…")
    assert len(message["text"]) <= 3000 and message["text"].endswith("…")
    assert len(message["blocks"][1]["elements"][0]["text"]) <= 2000


async def test_slack_shows_a_permission_with_its_tool_and_risk(inbox: Receiver) -> None:
    interaction = Interaction(
        id="ia_p",
        kind="permission",
        session_id="s_1",
        turn_id="t1",
        permission=PermissionRequest(tool="Bash", summary="rm -rf build/", risk="high"),
    )
    notification = build_payload(
        "permission_requested",
        at=AT,
        session_id="s_1",
        session_title=None,
        interaction=interaction,
        public_url="http://inbox.test",
        position=0,
    )
    message = await _send(inbox, "slack", notification)
    assert message["blocks"][0]["text"]["text"] == "An agent asks for permission"
    section = message["blocks"][2]["text"]["text"]
    assert "*Tool:* `Bash`" in section and "rm -rf build/" in section and "*Risk:* high" in section
    assert [e["action_id"] for e in message["blocks"][-1]["elements"]] == ["midturn.open"]


# -- Discord -------------------------------------------------------------------------------


async def test_discord_gets_content_an_embed_and_pings_nobody(inbox: Receiver) -> None:
    message = await _send(inbox, "discord", _notification(ONE_CHOICE, position=0))
    assert message["allowed_mentions"] == {"parse": []}
    assert message["content"].startswith("**An agent is waiting for your answer:** Which database")
    (embed,) = message["embeds"]
    assert embed["title"] == "An agent is waiting for your answer"
    assert embed["url"] == "http://inbox.test:8765/#interaction=ia_42"
    assert "**Database**\nWhich database should the service use?" in embed["description"]
    assert "• **SQLite** — a file next to the service" in embed["description"]
    assert embed["description"].endswith(
        "[Answer in midturn](http://inbox.test:8765/#interaction=ia_42)"
    )
    assert embed["fields"] == [
        {"name": "Session", "value": "Billing refactor", "inline": True},
        {"name": "Queue", "value": "Next in this session's queue", "inline": True},
    ]


async def test_discord_escapes_markdown_links_and_mentions(inbox: Receiver) -> None:
    hostile = {"questions": [{"id": "q", "question": HOSTILE, "options": ["**bold**", "b"]}]}
    message = await _send(inbox, "discord", _notification(hostile, title="@everyone"))
    description = message["embeds"][0]["description"]
    body = description.rsplit("\n\n[Answer in midturn]", 1)[0]
    assert "\\[x\\]\\(https://evil.example\\)" in body  # no masked link
    assert "\\<!channel\\>" in body and "\\*\\*bold\\*\\*" in body
    for text in (body, message["content"], message["embeds"][0]["fields"][0]["value"]):
        assert "@everyone" not in text and "@here" not in text
    assert message["allowed_mentions"] == {"parse": []}


async def test_discord_respects_its_limits(inbox: Receiver) -> None:
    options = [{"label": f"option {i}", "description": "d" * 240} for i in range(4)]
    long = {
        "questions": [{"id": f"q{i}", "question": "w" * 500, "options": options} for i in range(4)]
    }
    message = await _send(inbox, "discord", _notification(long, title="x" * 3000))
    embed = message["embeds"][0]
    assert len(message["content"]) <= 2000
    assert len(embed["description"]) <= 4096 and "…\n\n[Answer in midturn]" in embed["description"]
    assert len(embed["fields"][0]["value"]) <= 1024
    total = (
        len(embed["title"])
        + len(embed["description"])
        + sum(len(f["name"]) + len(f["value"]) for f in embed["fields"])
        + len(embed["footer"]["text"])
    )
    assert total <= 6000


# -- Microsoft Teams -----------------------------------------------------------------------


async def test_teams_gets_an_adaptive_card_in_a_workflows_message(inbox: Receiver) -> None:
    message = await _send(inbox, "teams", _notification(ONE_CHOICE))
    assert message["type"] == "message"
    (attachment,) = message["attachments"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    card = attachment["content"]
    assert card["type"] == "AdaptiveCard" and card["version"] == "1.4"
    assert card["$schema"] == "http://adaptivecards.io/schemas/adaptive-card.json"
    assert card["actions"] == [
        {
            "type": "Action.OpenUrl",
            "title": "Answer in midturn",
            "url": "http://inbox.test:8765/#interaction=ia_42",
        }
    ]
    runs = [
        run["text"]
        for block in card["body"]
        if block["type"] == "RichTextBlock"
        for run in block["inlines"]
    ]
    assert "Which database should the service use?" in runs
    assert "Billing refactor" in runs and "PostgreSQL" in runs
    assert "2nd in this session's queue" in runs


async def test_teams_puts_the_models_text_only_where_markdown_is_not_read(
    inbox: Receiver,
) -> None:
    hostile = {
        "questions": [
            {
                "id": "q",
                "header": "**H**",
                "question": HOSTILE,
                "options": ["[a](https://evil.example)", "b"],
            }
        ]
    }
    message = await _send(inbox, "teams", _notification(hostile, title="[t](https://evil)"))
    card = message["attachments"][0]["content"]
    text_blocks = [block["text"] for block in card["body"] if block["type"] == "TextBlock"]
    assert text_blocks == ["An agent is waiting for your answer"]  # midturn's words only
    assert all(block["type"] in ("TextBlock", "RichTextBlock") for block in card["body"])
    runs = [
        run
        for block in card["body"]
        if block["type"] == "RichTextBlock"
        for run in block["inlines"]
    ]
    assert all(run["type"] == "TextRun" for run in runs)
    assert HOSTILE in [run["text"] for run in runs]


# -- how a refusal is read -----------------------------------------------------------------


@pytest.mark.parametrize("format", ["slack", "discord", "teams"])
async def test_429_and_5xx_are_retryable_with_retry_after(inbox: Receiver, format: str) -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    inbox.replies += [
        Reply(429, b"rate_limited", {"Retry-After": "7"}),
        Reply(503, b"", {"Retry-After": later}),
        Reply(429, b'{"retry_after": 1.5, "global": false}', {"content-type": "application/json"}),
        Reply(502, b"bad gateway"),
    ]
    sender = get_sender(format)
    destination = _destination(inbox.url + "/hook/T/B/SECRETPATH", format)
    seen = []
    for _ in range(4):
        with pytest.raises(DeliveryFailed) as failed:
            await sender.send(destination, "dl_1", _notification(ONE_CHOICE))
        seen.append(failed.value)
    assert all(f.retryable and not f.disable for f in seen)
    assert seen[0].retry_after == 7.0
    assert seen[1].retry_after is not None and 60 < seen[1].retry_after <= 120
    assert seen[2].retry_after == 1.5
    assert seen[3].retry_after is None and "HTTP 502: bad gateway" in seen[3].detail
    assert all("SECRETPATH" not in f.detail and inbox.url not in f.detail for f in seen)


async def test_other_4xx_are_refused_for_good_and_410_disables(inbox: Receiver) -> None:
    inbox.replies += [
        Reply(400, b"invalid_blocks"),
        Reply(404, b"no_service"),
        Reply(410, b"channel_is_archived"),
    ]
    sender = get_sender("slack")
    destination = _destination(inbox.url + "/services/T/B/SECRETPATH", "slack")
    failures = []
    for _ in range(3):
        with pytest.raises(DeliveryFailed) as failed:
            await sender.send(destination, "dl_1", _notification(ONE_CHOICE))
        failures.append(failed.value)
    assert [(f.retryable, f.disable) for f in failures] == [
        (False, False),
        (False, False),
        (False, True),
    ]
    assert failures[0].detail == "slack: HTTP 400: invalid_blocks"
    assert all(f.retry_after is None and "SECRETPATH" not in f.detail for f in failures)


async def test_a_receiver_that_is_down_is_retryable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(DeliveryFailed) as failed:
        await get_sender("discord").send(
            _destination(f"http://127.0.0.1:{port}/api/webhooks/1/TOKEN", "discord"),
            "dl_1",
            _notification(ONE_CHOICE),
        )
    assert failed.value.retryable
    assert "TOKEN" not in failed.value.detail and str(port) not in failed.value.detail


def test_the_chat_formats_take_http_urls_only() -> None:
    for format in ("slack", "discord", "teams"):
        sender = get_sender(format)
        assert sender.check_url("https://hooks.slack.com/services/T/B/X") is None
        assert sender.check_url("mailto:a@example.com") is not None
