"""`midturn answer` against a live gateway (`midturn serve`): it shows the head of the
session's queue in the picker and posts what the person chose, one interaction at a time."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests._servers import serve_process

from midturn.client import Client

from ._pty import CTRL_C, DOWN, ENTER, Pty, child_env

ADMIN = "admin-token-for-tests-0123456789"


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[str]:
    """`midturn serve` on a fresh SQLite file; its access log goes to a file (a pipe or
    terminal nobody reads would fill up and stall the server)."""
    with serve_process(
        f"sqlite:///{tmp_path}/m.db", ADMIN, tmp_path / "serve.log", env=child_env()
    ) as url:
        yield url


def test_answers_an_ask_and_a_permission_an_agent_made(gateway: str) -> None:
    with Client(gateway, ADMIN) as admin:
        creds = admin.create_session()
    with Client(gateway, creds.agent_token) as agent:
        parked, _ = agent.ask(
            creds.session_id,
            {
                "questions": [
                    {
                        "header": "Database",
                        "question": "Which database?",
                        "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}],
                    }
                ]
            },
            tool_call_id="call_1",
        )
        term = Pty(["answer", creds.answer_url])
        term.shows("Database", "Which database?", "❯ 1. PostgreSQL")
        term.press(DOWN, ENTER)
        settled = agent.wait(parked.id, timeout=20).interaction
        assert settled.status == "answered"
        assert settled.result is not None
        assert settled.result.answers[0].answer == "SQLite"
        assert settled.settled_by is not None
        term.shows("✔ Database: SQLite", "Waiting for questions")

        permission, _ = agent.request_permission(
            creds.session_id,
            tool="Bash",
            summary="Run rm -rf build/",
            risk="high",
            turn_id="turn-1",
        )
        term.shows("Permission", "Run rm -rf build/", "risk: high")
        term.press(DOWN, ENTER)
        decided = agent.wait(permission.id, timeout=20).interaction
        assert decided.status == "allowed"
        assert decided.decision is not None and decided.decision.decision == "allow_for_turn"

        term.shows("✔ Allowed for this turn: Bash")
        term.press(CTRL_C)  # while waiting: just quit
        assert term.finish() == 130


def test_a_head_answered_elsewhere_closes_the_picker(gateway: str) -> None:
    with Client(gateway, ADMIN) as admin:
        creds = admin.create_session()
        with Client(gateway, creds.agent_token) as agent:
            first, _ = agent.ask(
                creds.session_id, {"questions": [{"question": "First one?", "kind": "text"}]}
            )
            agent.ask(
                creds.session_id, {"questions": [{"question": "Second one?", "kind": "text"}]}
            )
        term = Pty(["answer", "--gateway", gateway, "--token", ADMIN])
        term.shows("First one?")
        with Client(gateway, creds.answer_token) as web:
            web.answer(first.id, "from the browser")
        term.shows("Second one?")
        assert "settled elsewhere" in term.text
        term.press(CTRL_C)  # in the picker: stops that turn
        assert term.finish() == 130
        with Client(gateway, creds.agent_token) as agent:
            assert agent.queue(creds.session_id) == []


def test_ask_through_a_gateway_answered_by_another_terminal(gateway: str) -> None:
    asker = Pty(
        [
            "ask",
            "Ship it today?",
            "-o",
            "Yes",
            "-o",
            "No",
            "--gateway",
            gateway,
            "--token",
            ADMIN,
            "--json",
        ]
    )
    asker.shows("Waiting for an answer at", "midturn answer")
    url = re.search(r"(http://\S+#token=\S+)'", asker.raw)
    assert url is not None
    answerer = Pty(["answer", url.group(1)])
    answerer.shows("Ship it today?", "❯ 1. Yes")
    answerer.press(DOWN, ENTER)
    assert asker.finish() == 0
    result = json.loads(asker.raw[asker.raw.index("{") : asker.raw.rindex("}") + 1])
    assert result["outcome"] == "answered"
    assert result["answers"][0]["answer"] == "No"
    answerer.shows("Waiting for questions")
    answerer.press(CTRL_C)
    assert answerer.finish() == 130


def test_an_unreachable_gateway_is_unavailable() -> None:
    term = Pty(
        ["ask", "Q?", "-o", "A", "-o", "B", "--gateway", "http://127.0.0.1:9", "--token", "t"]
    )
    assert term.finish() == 4
    assert "cannot reach the gateway" in term.text


def test_ctrl_c_while_waiting_on_a_gateway_stops_the_ask(gateway: str) -> None:
    asker = Pty(
        ["ask", "Ship it today?", "-o", "Yes", "-o", "No", "--gateway", gateway, "--token", ADMIN]
    )
    asker.shows("Waiting for an answer at")
    asker.press(CTRL_C)
    assert asker.finish() == 130
    with Client(gateway, ADMIN) as admin:
        assert admin.inbox() == []  # the ask was cancelled, not left pending


def test_a_gateway_ask_times_out_with_exit_3(gateway: str, tmp_path: Path) -> None:
    ask = {
        "questions": [
            {
                "question": "Which region?",
                "header": "Region",
                "recommended": 1,
                "options": [
                    {"label": "eu-west", "description": "Dublin"},
                    {"label": "us-east", "description": "Virginia"},
                ],
            }
        ],
        "on_timeout": "recommended",
    }
    path = tmp_path / "ask.json"
    path.write_text(json.dumps(ask))
    asker = Pty(
        [
            "ask",
            "--file",
            str(path),
            "--timeout",
            "0.5",
            "--gateway",
            gateway,
            "--token",
            ADMIN,
            "--json",
        ]
    )
    assert asker.finish() == 3
    result = json.loads(asker.raw[asker.raw.index("{") : asker.raw.rindex("}") + 1])
    assert result["outcome"] == "timed_out"
    (region,) = result["answers"]
    assert region["answer"] == "us-east" and region["auto_selected"] is True
