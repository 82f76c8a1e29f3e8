"""Tokens without the command line (`ps` shows every argument to every user): `midturn
ask --gateway` and `midturn answer` read them from a file or the environment, and ask
with a session's agent token as well as with the admin token."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests._servers import SAFETY_S, serve_process

from midturn.client import Client

from ._pty import DOWN, ENTER, Pty, child_env

ADMIN = "admin-token-for-token-tests-0123456789"
ASK = ["ask", "Ship it today?", "-o", "Yes", "-o", "No", "--json"]
QUESTION = {"questions": [{"question": "Which database?", "options": ["PostgreSQL", "SQLite"]}]}


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[str]:
    with serve_process(
        f"sqlite:///{tmp_path}/m.db", ADMIN, tmp_path / "serve.log", env=child_env()
    ) as url:
        yield url


def _secret_file(path: Path, text: str) -> str:
    path.write_text(text + "\n")
    path.chmod(0o600)
    return str(path)


def _answer_head(gateway: str, choice: str) -> str:
    """Answer the oldest pending ask of the gateway (polled with a bound) with `choice`;
    its session id."""
    with Client(gateway, ADMIN) as admin:
        deadline = time.monotonic() + SAFETY_S
        while not (inbox := admin.inbox()):
            assert time.monotonic() < deadline, "the ask never reached the gateway"
        head = inbox[0]
        assert head.ask is not None
        admin.answer(head.id, {"answers": {head.ask.questions[0].id: choice}})
        return head.session_id


def _command_line(term: Pty) -> str:
    """What `ps` shows of the running command."""
    return Path(f"/proc/{term.child.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def _result(term: Pty) -> dict[str, object]:
    parsed: dict[str, object] = json.loads(term.raw[term.raw.index("{") : term.raw.rindex("}") + 1])
    return parsed


def test_ask_reads_the_admin_token_from_a_file(gateway: str, tmp_path: Path) -> None:
    token_file = _secret_file(tmp_path / "admin", ADMIN)
    asker = Pty([*ASK, "--gateway", gateway, "--token-file", token_file])
    asker.shows("Waiting for an answer at")
    assert ADMIN not in _command_line(asker)
    _answer_head(gateway, "No")
    assert asker.finish() == 0
    assert _result(asker)["outcome"] == "answered"


def test_ask_with_a_sessions_agent_token_asks_in_that_session(gateway: str) -> None:
    with Client(gateway, ADMIN) as admin:
        creds = admin.create_session()
    env = child_env(MIDTURN_AGENT_TOKEN=creds.agent_token)
    asker = Pty([*ASK, "--gateway", gateway], env=env)
    asker.shows(f"Waiting for an answer in session {creds.session_id}")
    assert _answer_head(gateway, "Yes") == creds.session_id  # no session was created
    assert asker.finish() == 0
    assert _result(asker)["outcome"] == "answered"


def test_ask_refuses_an_answer_token_with_a_usage_error(gateway: str) -> None:
    with Client(gateway, ADMIN) as admin:
        creds = admin.create_session()
    asker = Pty([*ASK, "--gateway", gateway], env=child_env(MIDTURN_TOKEN=creds.answer_token))
    assert asker.finish() == 2
    assert "answer token, which cannot ask" in asker.text
    assert "from MIDTURN_TOKEN" in asker.text and creds.answer_token not in asker.raw


def test_ask_without_any_token_says_where_one_can_come_from(gateway: str, tmp_path: Path) -> None:
    asker = Pty([*ASK, "--gateway", gateway], cwd=str(tmp_path))
    assert asker.finish() == 2
    said = asker.text.replace("\n", "")  # the message wraps on the terminal
    assert "--token-file" in said and "MIDTURN_AGENT_TOKEN" in said
    assert "There is no .midturn/admin_token here either" in said


def test_a_missing_token_file_is_a_usage_error(gateway: str, tmp_path: Path) -> None:
    asker = Pty([*ASK, "--gateway", gateway, "--token-file", str(tmp_path / "nope")])
    assert asker.finish() == 2
    assert "cannot read the token file" in asker.text


@pytest.mark.parametrize("source", ["file", "environment"])
def test_answer_reads_the_answer_url_from_a_file_or_the_environment(
    gateway: str, tmp_path: Path, source: str
) -> None:
    with Client(gateway, ADMIN) as admin:
        creds = admin.create_session()
    with Client(gateway, creds.agent_token) as agent:
        parked, _ = agent.ask(creds.session_id, QUESTION, tool_call_id="call_1")
        if source == "file":
            url_file = _secret_file(tmp_path / "answer-url", creds.answer_url)
            term = Pty(["answer", "--token-file", url_file])
        else:
            term = Pty(["answer"], env=child_env(MIDTURN_ANSWER_TOKEN=creds.answer_url))
        assert creds.answer_token not in _command_line(term)
        term.shows("Which database?", "❯ 1. PostgreSQL")
        term.press(DOWN, ENTER)
        settled = agent.wait(parked.id, timeout=SAFETY_S).interaction
    assert settled.status == "answered"
    assert settled.result is not None and settled.result.answers[0].answer == "SQLite"
    term.child.terminate(force=True)


def test_answer_takes_a_bare_answer_token_from_the_environment(gateway: str) -> None:
    with Client(gateway, ADMIN) as admin:
        creds = admin.create_session()
    with Client(gateway, creds.agent_token) as agent:
        parked, _ = agent.ask(creds.session_id, QUESTION, tool_call_id="call_1")
        env = child_env(MIDTURN_ANSWER_TOKEN=creds.answer_token)
        term = Pty(["answer", "--gateway", gateway], env=env)
        term.shows("Which database?")
        term.press(ENTER)
        settled = agent.wait(parked.id, timeout=SAFETY_S).interaction
    assert settled.result is not None and settled.result.answers[0].answer == "PostgreSQL"
    term.child.terminate(force=True)
