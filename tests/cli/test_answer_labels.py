"""`midturn answer` with the admin token says which session each question comes from
(its title and id) and who is asking (the host's context), sanitized for the terminal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests._servers import serve_process

from midturn.client import Client

from ._pty import CTRL_C, ENTER, Pty, child_env

ADMIN = "admin-token-for-label-tests-0123456789"
ASK = {"questions": [{"question": "Which region?", "options": ["eu-west", "us-east"]}]}


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[str]:
    with serve_process(
        f"sqlite:///{tmp_path}/m.db", ADMIN, tmp_path / "serve.log", env=child_env()
    ) as url:
        yield url


def test_the_admin_answerer_names_the_session_and_who_is_asking(gateway: str) -> None:
    with Client(gateway, ADMIN) as admin:
        billing = admin.create_session({"title": "Billing\x1b]0;pwned\x07 service"})
        untitled = admin.create_session()
    with Client(gateway, billing.agent_token) as one, Client(gateway, untitled.agent_token) as two:
        first, _ = one.ask(
            billing.session_id,
            ASK,
            context={
                "agent": "infra-bot",
                "doing": "Provisioning the database\u202e; which region first?",
                "tool": {"name": "ask_user_question", "input": {"n": 1}},
            },
        )
        term = Pty(["answer", "--gateway", gateway, "--token", ADMIN])
        term.shows(
            f"Session “Billing service” ({billing.session_id}) · infra-bot asks",
            "doing: Provisioning the database; which region first?",
            'tool call: ask_user_question {"n":1}',
            "Which region?",
        )
        term.press(ENTER)
        assert one.wait(first.id, timeout=20).interaction.status == "answered"
        second, _ = two.request_permission(untitled.session_id, tool="bash", summary="make db")
        term.shows(f"Session {untitled.session_id}", "make db")
        term.press(CTRL_C)
        term.finish()
    assert "pwned" not in term.raw and "\u202e" not in term.raw
    assert "\x1b]0;" not in term.raw
    assert second.pending
