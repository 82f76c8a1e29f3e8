"""The payload builder and the signed-webhook headers (midturn.notify's seam)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import standardwebhooks

from midturn.contract._api import parse_ask
from midturn.contract._interactions import Interaction, PermissionRequest
from midturn.notify import (
    build_payload,
    check_http_url,
    get_sender,
    payload_bytes,
    sender_formats,
    sign_headers,
)
from midturn.store._outbox import WebhookDestination

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _ask() -> Interaction:
    ask = parse_ask(
        {
            "questions": [
                {"question": "Which database?", "header": "DB", "options": ["SQLite", "Postgres"]},
                {"question": "The deploy key?", "header": "Key", "kind": "text", "secret": True},
            ]
        }
    )
    return Interaction(id="ia_1", kind="ask", session_id="s_1", turn_id="t1", ask=ask)


def test_a_payload_carries_the_questions_title_position_and_a_bare_link() -> None:
    notification = build_payload(
        "user_question_requested",
        at=AT,
        session_id="s_1",
        session_title="Refactor the billing module",
        interaction=_ask(),
        public_url="https://inbox.example/",
        event_id=7,
        position=2,
    )
    body = json.loads(payload_bytes(notification))
    assert body["type"] == "user_question_requested"
    assert body["timestamp"].startswith("2026-12-01T12:00:00")
    data = body["data"]
    assert data["event_id"] == 7
    assert data["session"] == {"id": "s_1", "title": "Refactor the billing module"}
    assert data["position"] == 2
    assert data["answer_url"] == "https://inbox.example/#interaction=ia_1"
    questions = data["interaction"]["questions"]
    assert [q["question"] for q in questions] == ["Which database?", "The deploy key?"]
    assert [o["label"] for o in questions[0]["options"]] == ["SQLite", "Postgres"]
    assert questions[1]["secret"] is True
    assert "token" not in data["answer_url"]


def test_a_permission_payload_carries_the_request_with_details_capped() -> None:
    permission = Interaction(
        id="ia_2",
        kind="permission",
        session_id="s_1",
        turn_id="t1",
        permission=PermissionRequest(
            tool="Bash", summary="rm -rf build", risk="high", details="x" * 5000
        ),
    )
    body = json.loads(
        payload_bytes(
            build_payload(
                "permission_requested",
                at=AT,
                session_id="s_1",
                session_title=None,
                interaction=permission,
                public_url="http://127.0.0.1:8765",
            )
        )
    )
    shown = body["data"]["interaction"]["permission"]
    assert (shown["tool"], shown["summary"], shown["risk"]) == ("Bash", "rm -rf build", "high")
    assert len(shown["details"]) == 2001


def test_the_headers_verify_with_standardwebhooks_under_each_secret() -> None:
    old = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    new = "whsec_" + "C2FVsBQIhrscChlQIMV+b5sSYspob7oD"
    destination = WebhookDestination(
        id="wh_1",
        url="http://127.0.0.1:9/x",
        secret=new,
        previous_secret=old,
        previous_until=datetime.now(UTC) + timedelta(hours=1),
    )
    now = datetime.now(UTC)
    body = b'{"type":"x"}'
    headers = sign_headers(destination.signing_secrets(now), "msg_1", now, body)
    assert len(headers["webhook-signature"].split(" ")) == 2
    for secret in (old, new):
        assert standardwebhooks.Webhook(secret).verify(body, headers) == {"type": "x"}
    later = now + timedelta(hours=2)
    assert destination.signing_secrets(later) == (new,)


def test_the_standard_sender_is_registered_and_checks_urls() -> None:
    assert "standard" in sender_formats()
    sender = get_sender("standard")
    assert sender.check_url("https://example.com/hook") is None
    assert check_http_url("ftp://example.com") is not None
    assert check_http_url("https://user:pw@example.com/") is not None
    assert check_http_url("https:///nohost") is not None


def test_nothing_imports_standardwebhooks_until_a_delivery_is_signed() -> None:
    import subprocess
    import sys

    code = (
        "import sys, midturn, midturn.notify, midturn.gateway, midturn.cli\n"
        "from midturn.gateway._app import create_app\n"
        "assert 'standardwebhooks' not in sys.modules, 'imported at import time'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
