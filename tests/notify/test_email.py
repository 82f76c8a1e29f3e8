"""The `"email"` sender against a real local SMTP server (aiosmtpd's Controller): the
message with the question, the session's title and the answer link, in plain text and
HTML; settings from `MIDTURN_SMTP_*`; a server that is down is retryable, a refusal is
not."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from tests.notify._mailbox import Mailbox, free_port, mailbox_server

from midturn.contract._api import parse_ask
from midturn.contract._interactions import Interaction
from midturn.errors import UsageError
from midturn.notify import DeliveryFailed, Notification, build_payload, get_sender
from midturn.notify._email import EmailSender, SmtpSettings, mailto_addresses
from midturn.store._outbox import WebhookDestination

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
SECRET = "whsec_" + "c2VjcmV0LXNpZ25pbmcta2V5LWZvci10ZXN0cw=="


@pytest.fixture
def mailbox() -> Iterator[Mailbox]:
    with mailbox_server() as box:
        yield box


def _env(port: int, **extra: str) -> dict[str, str]:
    return {
        "MIDTURN_SMTP_HOST": "127.0.0.1",
        "MIDTURN_SMTP_PORT": str(port),
        "MIDTURN_SMTP_STARTTLS": "0",
        "MIDTURN_SMTP_FROM": "midturn@agents.example",
        **extra,
    }


def _notification() -> Notification:
    ask = parse_ask(
        {
            "questions": [
                {
                    "id": "db",
                    "header": "Database",
                    "question": "Which database? <script>alert(1)</script> & more",
                    "options": [
                        {"label": "PostgreSQL", "description": "the <shared> cluster"},
                        "SQLite",
                    ],
                },
                {"id": "key", "question": "The deploy key?", "kind": "text", "secret": True},
            ]
        }
    )
    interaction = Interaction(id="ia_7", kind="ask", session_id="s_1", turn_id="t1", ask=ask)
    return build_payload(
        "user_question_requested",
        at=AT,
        session_id="s_1",
        session_title="Billing\nrefactor",
        interaction=interaction,
        public_url="http://inbox.test:8765",
        position=0,
    )


def _destination(url: str) -> WebhookDestination:
    return WebhookDestination(id="wh_m", url=url, format="email", secret=SECRET)


async def test_the_email_arrives_with_the_question_the_title_and_the_link(
    mailbox: Mailbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in _env(mailbox.port).items():
        monkeypatch.setenv(name, value)
    sender = get_sender("email")
    await sender.send(
        _destination("mailto:ada@example.com,bob@example.com"), "dl_abc123", _notification()
    )
    ((envelope, message),) = mailbox.messages
    assert envelope.mail_from == "midturn@agents.example"
    assert envelope.rcpt_tos == ["ada@example.com", "bob@example.com"]
    assert message["Subject"] == (
        "[midturn] An agent is waiting for your answer: Which database? "
        "<script>alert(1)</script> & more"
    )
    assert message["To"] == "ada@example.com, bob@example.com"
    assert message["Message-ID"] == "<dl_abc123@agents.example>"  # the same on every retry
    assert message["Auto-Submitted"] == "auto-generated"

    text = message.get_body(("plain",))
    html = message.get_body(("html",))
    assert text is not None and html is not None
    plain = text.get_content().replace("\r\n", "\n")
    assert "Session: Billing refactor" in plain
    assert "Next in this session's queue" in plain
    assert "[Database]\nWhich database? <script>alert(1)</script> & more" in plain
    assert "  - PostgreSQL: the <shared> cluster" in plain
    assert "(A secret: answer it in midturn, never by email.)" in plain
    assert "Answer in midturn: http://inbox.test:8765/#interaction=ia_7" in plain

    markup = html.get_content()
    assert '<a href="http://inbox.test:8765/#interaction=ia_7">Answer in midturn</a>' in markup
    assert "<script>" not in markup and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in markup
    assert "the &lt;shared&gt; cluster" in markup
    raw = message.as_string()
    assert SECRET not in raw and "token" not in raw.lower()


async def test_a_login_is_used_when_configured(
    mailbox: Mailbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _env(mailbox.port, MIDTURN_SMTP_USER="bot", MIDTURN_SMTP_PASSWORD="s3cret-pass")
    settings = SmtpSettings.from_env(env)
    assert "s3cret-pass" not in repr(settings)
    await EmailSender(settings).send(
        _destination("mailto:ada@example.com"), "dl_1", _notification()
    )
    assert mailbox.logins == [(b"bot", b"s3cret-pass")]
    assert len(mailbox.messages) == 1

    wrong = SmtpSettings.from_env({**env, "MIDTURN_SMTP_PASSWORD": "nope"})
    with pytest.raises(DeliveryFailed) as failed:
        await EmailSender(wrong).send(
            _destination("mailto:ada@example.com"), "dl_2", _notification()
        )
    assert not failed.value.retryable
    assert "refused the login" in failed.value.detail and "nope" not in failed.value.detail


async def test_a_refused_recipient_is_not_retried_but_a_busy_server_is(mailbox: Mailbox) -> None:
    settings = SmtpSettings.from_env(_env(mailbox.port))
    sender = EmailSender(settings)
    mailbox.refuse_rcpt = "550 5.1.1 no such mailbox"
    with pytest.raises(DeliveryFailed) as refused:
        await sender.send(_destination("mailto:nobody@example.com"), "dl_1", _notification())
    assert not refused.value.retryable and "550" in refused.value.detail
    mailbox.refuse_rcpt = "451 4.3.0 try again later"
    with pytest.raises(DeliveryFailed) as busy:
        await sender.send(_destination("mailto:ada@example.com"), "dl_1", _notification())
    assert busy.value.retryable and "451" in busy.value.detail
    assert mailbox.messages == []


async def test_starttls_required_but_not_offered_is_refused_for_good(mailbox: Mailbox) -> None:
    settings = SmtpSettings.from_env({**_env(mailbox.port), "MIDTURN_SMTP_STARTTLS": "1"})
    with pytest.raises(DeliveryFailed) as failed:
        await EmailSender(settings).send(
            _destination("mailto:a@example.com"), "dl", _notification()
        )
    assert not failed.value.retryable and "STARTTLS" in failed.value.detail
    assert mailbox.messages == []


async def test_a_server_that_is_down_is_retryable() -> None:
    settings = SmtpSettings.from_env(_env(free_port()))
    with pytest.raises(DeliveryFailed) as failed:
        await EmailSender(settings).send(
            _destination("mailto:a@example.com"), "dl", _notification()
        )
    assert failed.value.retryable
    assert "could not reach the SMTP server" in failed.value.detail


async def test_missing_settings_fail_the_delivery_with_what_to_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MIDTURN_SMTP_HOST", raising=False)
    with pytest.raises(DeliveryFailed) as failed:
        await EmailSender().send(_destination("mailto:a@example.com"), "dl", _notification())
    assert not failed.value.retryable and "MIDTURN_SMTP_HOST" in failed.value.detail


def test_settings_are_checked_with_clear_messages() -> None:
    base = _env(25)
    assert SmtpSettings.from_env({**base, "MIDTURN_SMTP_PORT": ""}).port == 25
    assert (
        SmtpSettings.from_env(
            {"MIDTURN_SMTP_HOST": "smtp.example", "MIDTURN_SMTP_FROM": "m@example.com"}
        ).port
        == 587
    )
    problems = {
        "MIDTURN_SMTP_FROM": {**base, "MIDTURN_SMTP_FROM": ""},
        "must be a number": {**base, "MIDTURN_SMTP_PORT": "smtp"},
        "must be 1 or 0": {**base, "MIDTURN_SMTP_STARTTLS": "maybe"},
        "or neither": {**base, "MIDTURN_SMTP_USER": "bot"},
        "without TLS": {
            **base,
            "MIDTURN_SMTP_HOST": "smtp.example",
            "MIDTURN_SMTP_USER": "bot",
            "MIDTURN_SMTP_PASSWORD": "pw",
        },
    }
    for words, env in problems.items():
        with pytest.raises(UsageError, match=words):
            SmtpSettings.from_env(env)


def test_mailto_urls_are_checked() -> None:
    assert mailto_addresses("mailto:ada@example.com") == ("ada@example.com",)
    assert mailto_addresses("mailto:a@example.com,%20b@example.com") == (
        "a@example.com",
        "b@example.com",
    )
    sender = get_sender("email")
    assert sender.check_url("mailto:ada@example.com") is None
    for bad in (
        "https://example.com",
        "mailto:",
        "mailto:ada",
        "mailto:a@b@c\r\nBcc: x@y.z",
        "mailto:<a@example.com>",
    ):
        assert sender.check_url(bad) is not None, bad
