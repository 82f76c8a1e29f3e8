"""`midturn serve` as a person starts it (docs/terminal.md#midturn-serve): a port already
in use is one clear paragraph with the fix, the screen stays quiet after the inbox link
unless `--access-log`, and `--help` explains every option of every command."""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests._servers import SAFETY_S

from midturn.cli import _parser

from ._pty import CTRL_C, Pty, child_env


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "midturn.cli", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=cwd,
        timeout=SAFETY_S,
        check=False,
    )


@contextmanager
def _occupied() -> Iterator[int]:
    """A port this test process listens on."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        yield held.getsockname()[1]


@contextmanager
def _serving(tmp_path: Path, *args: str) -> Iterator[tuple[str, subprocess.Popen[str], Path]]:
    """`midturn serve --port 0 ARGS` with stdout and stderr both into one file, as on a
    terminal; yields its base URL, the process and the file, once the inbox line is out."""
    out = tmp_path / "screen.txt"
    with out.open("w") as screen:
        process = subprocess.Popen(
            [sys.executable, "-m", "midturn.cli", "serve", "--port", "0", *args],
            stdin=subprocess.DEVNULL,
            stdout=screen,
            stderr=subprocess.STDOUT,
            env=child_env(),
            cwd=tmp_path,
            text=True,
        )
    try:
        lines = _wait_for_inbox(out, process)
        first = next(line for line in lines if line.startswith("midturn gateway on "))
        yield first.removeprefix("midturn gateway on ").split()[0], process, out
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(SAFETY_S)


def _wait_for_inbox(out: Path, process: subprocess.Popen[str]) -> list[str]:
    import time

    deadline = time.monotonic() + SAFETY_S
    while time.monotonic() < deadline:
        lines = out.read_text().splitlines()
        if any(line.startswith("web inbox: ") for line in lines):
            return lines
        assert process.poll() is None, f"serve exited early:\n{out.read_text()}"
        time.sleep(0.05)
    raise AssertionError(f"serve never printed the inbox line:\n{out.read_text()}")


def _stop(process: subprocess.Popen[str]) -> int:
    process.send_signal(signal.SIGTERM)
    return process.wait(SAFETY_S)


# -- a port in use ---------------------------------------------------------------------


def test_a_port_in_use_is_one_paragraph_with_the_fix(tmp_path: Path) -> None:
    with _occupied() as port:
        done = _run("serve", "--port", str(port), cwd=tmp_path)
    assert done.returncode == 2
    message = done.stderr.strip()
    assert message.startswith(f"midturn serve: port {port} on 127.0.0.1 is already in use")
    assert f"pid {os.getpid()}" in message  # what holds it: this test process
    assert "midturn serve --port " in message and "--port 0" in message
    assert "\n" not in message  # one paragraph
    for raw in ("Errno", "Traceback", "ERROR:", "uvicorn"):
        assert raw not in done.stderr
    assert done.stdout == ""
    assert not (tmp_path / ".midturn" / "admin_token").exists()  # nothing was started


def test_the_suggested_port_is_free(tmp_path: Path) -> None:
    with _occupied() as port:
        message = _run("serve", "--port", str(port), cwd=tmp_path).stderr
    suggested = int(message.split("`midturn serve --port ")[1].split("`")[0])
    assert suggested != port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", suggested))  # free: the suggestion can be taken as given


def test_a_port_held_by_another_midturn_says_so_with_its_inbox(tmp_path: Path) -> None:
    first = tmp_path / "first"
    first.mkdir()
    with _serving(first) as (url, _, _):
        port = url.rsplit(":", 1)[1]
        done = _run("serve", "--port", port, cwd=tmp_path)
    assert done.returncode == 2
    assert "another midturn gateway is listening there" in done.stderr
    assert f"its inbox is at http://127.0.0.1:{port}/" in done.stderr


@pytest.mark.parametrize(
    ("host", "says"),
    [
        ("10.254.254.254", "is not an address of this machine"),
        ("no-such-host.invalid", "is not an address or a name this machine can resolve"),
    ],
)
def test_a_host_that_cannot_be_listened_on_says_what_to_give(
    tmp_path: Path, host: str, says: str
) -> None:
    done = _run("serve", "--host", host, "--port", "8765", cwd=tmp_path)
    assert done.returncode == 2
    assert says in done.stderr and "127.0.0.1" in done.stderr
    assert "Traceback" not in done.stderr


# -- quiet by default ------------------------------------------------------------------


def test_the_inbox_link_stays_the_last_thing_printed(tmp_path: Path) -> None:
    with _serving(tmp_path) as (url, process, out):
        token = (tmp_path / ".midturn" / "admin_token").read_text().strip()
        headers = {"Authorization": f"Bearer {token}"}
        assert httpx.get(f"{url}/healthz", timeout=SAFETY_S).status_code == 200
        assert httpx.get(f"{url}/v1/inbox", headers=headers, timeout=SAFETY_S).status_code == 200
        assert httpx.get(f"{url}/v1/inbox", timeout=SAFETY_S).status_code == 401
        assert _stop(process) == 0
    lines = [line for line in out.read_text().splitlines() if line.strip()]
    assert len(lines) == 2, lines
    assert lines[0].startswith("midturn gateway on ")
    assert lines[-1] == f"web inbox: {url}/#token={token}"


def test_access_log_prints_one_json_line_per_request(tmp_path: Path) -> None:
    with _serving(tmp_path, "--access-log") as (url, process, out):
        assert httpx.get(f"{url}/healthz", timeout=SAFETY_S).status_code == 200
        assert _stop(process) == 0
    logged = [json.loads(line) for line in out.read_text().splitlines() if line.startswith("{")]
    assert [(line["method"], line["path"], line["status"]) for line in logged] == [
        ("GET", "/healthz", 200)
    ]


def test_log_level_info_lets_uvicorns_lines_through_but_not_requests(tmp_path: Path) -> None:
    with _serving(tmp_path, "--log-level", "info") as (url, process, out):
        assert httpx.get(f"{url}/healthz", timeout=SAFETY_S).status_code == 200
        assert _stop(process) == 0
    text = out.read_text()
    assert "Uvicorn running" in text or "Application startup" in text or "Started" in text
    assert "/healthz" not in text  # requests only with --access-log


def test_a_log_level_that_does_not_exist_lists_the_levels(tmp_path: Path) -> None:
    done = _run("serve", "--log-level", "loud", cwd=tmp_path)
    assert done.returncode == 2
    assert "invalid choice: 'loud'" in done.stderr
    assert all(f"'{level}'" in done.stderr for level in ("critical", "info", "debug"))


# -- --help ----------------------------------------------------------------------------


def _commands(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix}{name}", sub
                yield from _commands(sub, f"{prefix}{name} ")


def test_every_option_of_every_command_is_explained_with_an_example() -> None:
    commands = dict(_commands(_parser()))
    assert set(commands) >= {"serve", "mcp", "prune", "ask", "answer", "demo", "hook"}
    for name, parser in commands.items():
        shown = parser.format_help()
        assert parser.description, f"{name} has no description"
        assert "example" in (parser.epilog or ""), f"{name} --help has no example"
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            label = action.option_strings[-1] if action.option_strings else action.dest
            assert action.help and action.help != argparse.SUPPRESS, f"{name} {label}"
            assert label in shown, f"{name} --help does not show {label}"
            if action.help != "show this help message and exit":
                assert action.help[0].islower() or action.help[0] in "`'", f"{name} {label}"


def test_serve_help_on_screen_names_the_new_options_and_examples(tmp_path: Path) -> None:
    done = _run("serve", "--help", cwd=tmp_path)
    assert done.returncode == 0
    for text in ("--access-log", "--log-level LEVEL", "--port PORT", "examples:", "0 picks a"):
        assert text in done.stdout
    assert "--stream-buffer-bytes BYTES" in done.stdout  # a metavar a person can read


# -- `midturn answer` finds the token serve wrote -----------------------------------------


def test_answer_in_serves_folder_uses_the_admin_token_serve_wrote(tmp_path: Path) -> None:
    from midturn.client import Client

    with _serving(tmp_path) as (url, _, _):
        token = (tmp_path / ".midturn" / "admin_token").read_text().strip()
        term = Pty(["answer", "--gateway", url], cwd=str(tmp_path))
        term.shows("Waiting for questions")
        with Client(url, token) as admin:
            creds = admin.create_session()
        with Client(url, creds.agent_token) as agent:
            question = {"question": "Which database?", "options": ["PostgreSQL", "SQLite"]}
            parked, _ = agent.ask(creds.session_id, {"questions": [question]})
            term.shows("Which database?", "❯ 1. PostgreSQL")
            term.press("2")
            settled = agent.wait(parked.id, timeout=SAFETY_S).interaction
        assert settled.result is not None and settled.result.answers[0].answer == "SQLite"
        term.press(CTRL_C)
        assert term.finish() == 130


def test_a_stale_admin_token_file_is_refused_in_words(tmp_path: Path) -> None:
    serving, elsewhere = tmp_path / "serving", tmp_path / "elsewhere"
    serving.mkdir()
    (elsewhere / ".midturn").mkdir(parents=True)
    (elsewhere / ".midturn" / "admin_token").write_text("admin.an-old-token-of-another-one\n")
    with _serving(serving) as (url, _, _):
        term = Pty(["answer", "--gateway", url], cwd=str(elsewhere))
        assert term.finish() == 2
    said = term.text.replace("\n", "")  # the message wraps on the terminal
    assert f"the gateway at {url} refused the token in .midturn/admin_token" in said
    assert "Traceback" not in said


def test_the_local_admin_token_is_not_sent_to_another_machine(tmp_path: Path) -> None:
    (tmp_path / ".midturn").mkdir()
    (tmp_path / ".midturn" / "admin_token").write_text("admin.local-only\n")
    done = _run("answer", "--gateway", "http://192.0.2.1:8765", cwd=tmp_path)
    assert done.returncode == 2
    assert "is not sent to http://192.0.2.1:8765" in done.stderr


def test_a_port_taken_on_every_interface_points_to_an_inbox_a_browser_opens(
    tmp_path: Path,
) -> None:
    first = tmp_path / "first"
    first.mkdir()
    with _serving(first, "--host", "0.0.0.0") as (url, _, _):
        port = url.rsplit(":", 1)[1]
        done = _run("serve", "--host", "0.0.0.0", "--port", port, cwd=tmp_path)
    assert done.returncode == 2
    assert f"its inbox is at http://127.0.0.1:{port}/" in done.stderr


# -- a store that cannot be opened -----------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _refusal(tmp_path: Path, db: str) -> str:
    """What `midturn serve --db DB` says when it cannot open the store: one paragraph,
    exit 2, no raw errno or traceback, nothing started, and no secret left behind in the
    data folder (the SQLite file's folder, else ./.midturn): the store is opened first."""
    path = db.partition("sqlite:///")[2]
    data_dir = Path(path).parent if path else tmp_path / ".midturn"
    before = {p for p in (data_dir / "admin_token", data_dir / "mcp_state_key") if p.exists()}
    done = _run("serve", "--port", "0", "--db", db, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    left = {p for p in (data_dir / "admin_token", data_dir / "mcp_state_key") if p.exists()}
    assert left <= before, f"a failed start wrote {sorted(map(str, left - before))}"
    message = done.stderr.strip()
    assert message.startswith("midturn serve: ") and "\n" not in message  # one paragraph
    for raw in ("Errno", "Traceback", "Error:", "[", "midturn gateway on"):
        assert raw not in message, message
    assert done.stdout == ""
    return message


def test_a_postgres_host_that_does_not_exist_says_so(tmp_path: Path) -> None:
    message = _refusal(tmp_path, "postgres://nope")
    assert "postgres://nope" in message and 'no host called "nope"' in message
    assert "check the host name" in message.lower()


def test_a_postgres_port_nobody_listens_on_says_so(tmp_path: Path) -> None:
    port = _free_port()
    message = _refusal(tmp_path, f"postgresql://postgres@127.0.0.1:{port}/test")
    assert f"nothing accepts connections at 127.0.0.1:{port}" in message
    assert "running" in message


@pytest.mark.postgres
def test_a_postgres_role_that_is_refused_says_so_without_the_password(tmp_path: Path) -> None:
    message = _refusal(tmp_path, "postgresql://nobody:s3cret@127.0.0.1:5432/test")
    assert "s3cret" not in message and "nobody:***@" in message
    assert 'refused the user "nobody"' in message and "password" in message


@pytest.mark.postgres
def test_a_postgres_database_that_does_not_exist_says_so(tmp_path: Path) -> None:
    message = _refusal(tmp_path, "postgresql://postgres@127.0.0.1:5432/no_such_db")
    assert 'has no database called "no_such_db"' in message and "createdb" in message


def test_a_sqlite_path_under_a_file_says_so(tmp_path: Path) -> None:
    (tmp_path / "notes").write_text("a file, not a folder\n")
    message = _refusal(tmp_path, f"sqlite:///{tmp_path}/notes/midturn.db")
    assert f"{tmp_path}/notes/midturn.db" in message
    assert f"{tmp_path}/notes is a file, not a folder" in message


def test_a_sqlite_path_that_is_a_folder_says_so(tmp_path: Path) -> None:
    message = _refusal(tmp_path, f"sqlite:///{tmp_path}")
    assert f"{tmp_path} is a folder" in message


def test_a_file_that_is_not_a_database_says_so(tmp_path: Path) -> None:
    (tmp_path / "midturn.db").write_bytes(b"not a database " * 100)
    message = _refusal(tmp_path, f"sqlite:///{tmp_path}/midturn.db")
    assert "is not a SQLite database" in message
