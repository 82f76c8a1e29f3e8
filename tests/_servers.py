"""Real gateways for tests, started and stopped the same way everywhere.

- `start_gateway(db_url, admin_token)`: `midturn.gateway.run_server` on uvicorn, on a
  free port (or a given one, for restarts), in a thread of the test process. Used by the
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

import asyncio
import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from midturn.gateway import run_server

SAFETY_S = 20.0
"""How long starting or stopping a server may take before the test fails (a bound, not
a timing assertion)."""

_ANNOUNCEMENT = "midturn gateway on "
_ADMIN: Any = object()  # LiveGateway.client's default token: the gateway's admin token


@dataclass
class LiveGateway:
    """One gateway running in a thread: its base URL, its store URL, and how to stop it."""

    url: str
    db_url: str
    admin_token: str
    _thread: threading.Thread
    _loop: asyncio.AbstractEventLoop
    _server: Any
    _errors: list[BaseException] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def client(self, token: Any = _ADMIN, **options: Any) -> httpx.AsyncClient:
        """An HTTP client on this gateway with `token` (the admin token when not given;
        None sends no Authorization header)."""
        token = self.admin_token if token is _ADMIN else token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.AsyncClient(
            base_url=self.url, headers=headers, timeout=SAFETY_S + 65, **options
        )

    def stop(self) -> None:
        """Stop the server and wait for its thread; re-raise anything it failed with."""
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._server.stop)
            self._thread.join(SAFETY_S)
        assert not self._thread.is_alive(), "the gateway did not stop"
        if self._errors:
            raise self._errors[0]


def start_gateway(db_url: str, admin_token: str, port: int = 0, **options: Any) -> LiveGateway:
    """Start a gateway in a thread and return once it listens (or fail). `options` go
    to `run_server` (e.g. `stream_buffer_bytes`)."""
    ready = threading.Event()
    box: dict[str, Any] = {}
    errors: list[BaseException] = []

    def on_ready(url: str) -> None:
        box["url"] = url
        box["loop"] = asyncio.get_running_loop()
        ready.set()

    def run() -> None:
        try:
            asyncio.run(
                run_server(
                    db_url,
                    "127.0.0.1",
                    port,
                    admin_token,
                    on_ready=on_ready,
                    on_server=lambda server: box.__setitem__("server", server),
                    announce=None,
                    access_log=False,
                    install_signal_handlers=False,
                    **options,
                )
            )
        except BaseException as error:
            errors.append(error)
        finally:
            ready.set()

    thread = threading.Thread(target=run, name=f"gateway:{port}", daemon=True)
    thread.start()
    ready.wait(SAFETY_S)
    if "url" not in box:
        thread.join(SAFETY_S)
        raise AssertionError(f"the gateway did not start: {errors!r}")
    return LiveGateway(box["url"], db_url, admin_token, thread, box["loop"], box["server"], errors)


# -- `midturn serve` as a child process -------------------------------------------------


def _announced_url(process: subprocess.Popen[bytes], log: Path) -> str:
    """Read the child's stdout up to its announcement line; its URL."""
    assert process.stdout is not None
    fd = process.stdout.fileno()
    deadline = time.monotonic() + SAFETY_S
    seen = b""
    while True:
        for line in seen.decode("utf-8", "replace").splitlines(keepends=True):
            if line.startswith(_ANNOUNCEMENT) and line.endswith("\n"):
                return line.removeprefix(_ANNOUNCEMENT).split()[0]
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"`midturn serve` never announced its address:\n{log.read_text()}")
        readable, _, _ = select.select([fd], [], [], remaining)
        if not readable:
            continue
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
        argv = ["serve", "--db", db_url, "--port", "0", "--token", admin_token, *options]
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
