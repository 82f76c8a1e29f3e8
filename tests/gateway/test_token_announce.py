"""`midturn serve` prints the admin token once, when it generates it: never a token the
operator supplied (`MIDTURN_TOKEN`, `--token`), never the stored one on a later start.
Each case is a real `midturn serve` child process whose stdout is read to the inbox line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from tests._servers import SAFETY_S


@contextmanager
def _serve(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[list[str]]:
    """Start `midturn serve` on a SQLite file under `tmp_path`; yields its announcement
    lines (up to the web inbox line); stops it on exit."""
    base = {k: v for k, v in os.environ.items() if k != "MIDTURN_TOKEN"}
    argv = ["serve", "--db", f"sqlite:///{tmp_path / 'data' / 'm.db'}", "--port", "0", *args]
    with (tmp_path / "serve.log").open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "midturn.cli", *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            env={**base, "PYTHONUNBUFFERED": "1", **(env or {})},
            text=True,
        )
    assert process.stdout is not None
    lines: list[str] = []
    try:
        while not lines or not lines[-1].startswith("web inbox"):
            line = process.stdout.readline()
            assert line, f"serve exited early:\n{(tmp_path / 'serve.log').read_text()}"
            lines.append(line.rstrip("\n"))
        yield lines
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(SAFETY_S)
        process.stdout.close()


def _url(lines: list[str]) -> str:
    return lines[0].removeprefix("midturn gateway on ").split()[0]


def _works(url: str, token: str) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    assert httpx.get(f"{url}/v1/inbox", headers=headers, timeout=SAFETY_S).status_code == 200


def test_a_token_from_midturn_token_is_never_printed(tmp_path: Path) -> None:
    token = "admin-from-the-environment-0123456789"
    with _serve(tmp_path, env={"MIDTURN_TOKEN": token}) as lines:
        assert all(token not in line for line in lines), lines
        assert "MIDTURN_TOKEN" in lines[-1]
        _works(_url(lines), token)
    assert token not in (tmp_path / "serve.log").read_text()


def test_a_token_given_with_token_or_token_file_is_never_printed(tmp_path: Path) -> None:
    token = "admin-from-the-command-line-0123456789"
    with _serve(tmp_path, "--token", token) as lines:
        assert all(token not in line for line in lines), lines
        _works(_url(lines), token)
    file = tmp_path / "token.txt"
    file.write_text("admin-from-a-file-0123456789\n")
    with _serve(tmp_path, "--token-file", str(file)) as lines:
        assert all("admin-from-a-file" not in line for line in lines), lines
        assert str(file) in lines[-1]
        _works(_url(lines), "admin-from-a-file-0123456789")


def test_a_generated_token_is_printed_once_then_only_where_it_is(tmp_path: Path) -> None:
    with _serve(tmp_path) as first:
        stored = (tmp_path / "data" / "admin_token").read_text().strip()
        assert first[-1] == f"web inbox: {_url(first)}/#token={stored}"
        assert "new admin token" in first[0]
    with _serve(tmp_path) as second:
        assert all(stored not in line for line in second), second
        assert str(tmp_path / "data" / "admin_token") in second[-1]
        assert second[-1].startswith(f"web inbox: {_url(second)}/")
        _works(_url(second), stored)
