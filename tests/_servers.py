"""Real gateways for tests, started and stopped the same way everywhere.

- `start_gateway(db_url, admin_token)`: the shipped live-gateway helper
  (`midturn.testing.start_gateway`): `midturn.gateway.run_server` on uvicorn, on a free
  port (or a given one, for restarts), in a thread of the test process. Used by the
  gateway and web-inbox tests.
- `serve_process(db_url, admin_token, log)`: `midturn serve` as a child process, its
  access log written to a file. Used where a test drives other `midturn` processes;
  `serve_child` also yields the process (to read its memory).

A server whose output nobody reads must never write it to a pipe or a pseudo-terminal:
once that buffer fills, its next log line blocks the server's event loop and every
request after it hangs. So the child's log goes to a file, and only its one
announcement line is read from stdout.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from midturn.testing import LiveGateway, start_gateway
from midturn.testing._gateway import HUNG_S

__all__ = ["SAFETY_S", "LiveGateway", "serve_process", "start_gateway"]

SAFETY_S = 20.0
"""How long starting or stopping a server may take before the test fails (a bound, not
a timing assertion)."""

_ANNOUNCEMENT = "midturn gateway on "


# -- `midturn serve` as a child process -------------------------------------------------


def _announced_url(process: subprocess.Popen[bytes], log: Path) -> str:
    """Read the child's stdout up to its announcement line; its URL. A loaded machine can
    take longer than SAFETY_S to import and start it, so only a child silent for HUNG_S
    counts as hung; a child that fails ends its stdout (then this says so, with its log)."""
    assert process.stdout is not None
    fd = process.stdout.fileno()
    seen = b""
    while True:
        for line in seen.decode("utf-8", "replace").splitlines(keepends=True):
            if line.startswith(_ANNOUNCEMENT) and line.endswith("\n"):
                return line.removeprefix(_ANNOUNCEMENT).split()[0]
        readable, _, _ = select.select([fd], [], [], HUNG_S)
        if not readable:
            raise AssertionError(f"`midturn serve` hung before it listened:\n{log.read_text()}")
        chunk = os.read(fd, 4096)
        if not chunk:
            raise AssertionError(f"`midturn serve` exited before it listened:\n{log.read_text()}")
        seen += chunk


@contextlib.contextmanager
def serve_process(
    db_url: str,
    admin_token: str,
    log: Path,
    env: dict[str, str] | None = None,
    options: tuple[str, ...] = (),
) -> Iterator[str]:
    """`midturn serve --port 0 [options]` on `db_url` as a child process; yields its base
    URL and stops it (SIGTERM) when the block ends. Its stderr (the access log) goes to
    `log`."""
    with serve_child(db_url, admin_token, log, env, options) as (url, _):
        yield url


@contextlib.contextmanager
def serve_child(
    db_url: str,
    admin_token: str,
    log: Path,
    env: dict[str, str] | None = None,
    options: tuple[str, ...] = (),
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`serve_process`, yielding the child process too (to read its memory in /proc)."""
    with log.open("wb") as errors:
        # `--token=...` in one word: a random token may begin with "-", which argparse
        # would take for an option of its own if it came as a word after `--token`
        argv = ["serve", "--db", db_url, "--port", "0", f"--token={admin_token}", *options]
        process = subprocess.Popen(
            [sys.executable, "-m", "midturn.cli", *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=env,
        )
    try:
        yield _announced_url(process, log), process
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(SAFETY_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise AssertionError(f"`midturn serve` did not stop:\n{log.read_text()}") from None
        finally:
            assert process.stdout is not None
            process.stdout.close()
