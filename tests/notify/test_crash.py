"""`midturn serve --webhook` as a child process: SIGKILLed while a delivery is in flight,
restarted on the same file, it delivers it (the same webhook-id); the destination and
its secret are the same across restarts, and the secret is printed only once."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from tests.notify._receiver import Receiver
from tests.notify.conftest import CHOICE

SAFETY_S = 20.0
TOKEN = "admin-crash-test-token"
ENV = {
    **os.environ,
    "MIDTURN_NOTIFY_LEASE_S": "2",
    "MIDTURN_NOTIFY_RETRY_INITIAL_S": "0.2",
    "MIDTURN_NOTIFY_POLL_S": "0.1",
}


def _read_announcements(process: subprocess.Popen[bytes]) -> tuple[str, list[str]]:
    """The child's stdout up to `midturn gateway on URL`: the URL and the lines before."""
    assert process.stdout is not None
    fd = process.stdout.fileno()
    deadline = time.monotonic() + SAFETY_S
    seen = b""
    while time.monotonic() < deadline:
        lines = seen.decode("utf-8", "replace").splitlines(keepends=True)
        for index, line in enumerate(lines):
            if line.startswith("midturn gateway on ") and line.endswith("\n"):
                url = line.removeprefix("midturn gateway on ").split()[0]
                return url, [text.rstrip("\n") for text in lines[:index]]
        readable, _, _ = select.select([fd], [], [], 0.2)
        if readable:
            chunk = os.read(fd, 4096)
            if not chunk:
                raise AssertionError(f"`midturn serve` exited: {seen.decode()}")
            seen += chunk
    raise AssertionError(f"`midturn serve` never announced itself: {seen.decode()}")


@contextmanager
def serve(
    db_url: str, log: Path, *options: str
) -> Iterator[tuple[str, list[str], subprocess.Popen[bytes]]]:
    with log.open("ab") as errors:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "midturn.cli",
                "serve",
                "--db",
                db_url,
                "--port",
                "0",
                "--token",
                TOKEN,
                *options,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=ENV,
        )
    try:
        url, lines = _read_announcements(process)
        yield url, lines, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(SAFETY_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        assert process.stdout is not None
        process.stdout.close()


async def test_a_delivery_in_flight_when_the_gateway_is_killed_is_sent_after_the_restart(
    receiver: Receiver, tmp_path: Path
) -> None:
    db_url = f"sqlite:///{tmp_path / 'midturn.db'}"
    log = tmp_path / "serve.log"
    held = threading.Event()
    receiver.hold = held  # the first delivery reaches the receiver and waits there
    with serve(db_url, log, "--webhook", receiver.url) as (url, lines, process):
        [announced] = [line for line in lines if line.startswith("webhook ")]
        secret = announced.split("new signing secret: ")[1].rstrip(")")
        assert secret.startswith("whsec_")
        receiver.secrets.append(secret)
        async with httpx.AsyncClient(
            base_url=url, headers={"authorization": f"Bearer {TOKEN}"}
        ) as admin:
            session = (await admin.post("/v1/sessions", json={"meta": {"title": "crash"}})).json()
            agent = {"authorization": f"Bearer {session['agent_token']}"}
            created = await admin.post(
                f"/v1/sessions/{session['session_id']}/asks",
                json={"tool_input": CHOICE},
                headers=agent,
            )
            assert created.status_code == 201, created.text
        [in_flight] = await receiver.until_arrivals(1)
        process.kill()  # SIGKILL, mid-delivery
        process.wait(SAFETY_S)
    receiver.status = 500  # the orphaned request ends unaccepted
    held.set()
    await asyncio.sleep(0.1)
    receiver.hold = None
    receiver.status = 200
    assert receiver.received == []

    with serve(db_url, log, "--webhook", receiver.url) as (url, lines, _):
        [again] = [line for line in lines if line.startswith("webhook ")]
        assert secret not in again and "was shown when it was made" in again
        [got] = await receiver.until(lambda seen: len(seen) >= 1, "the delivery after restart")
        assert got.webhook_id == in_flight
        assert got.verified_with == (secret,)  # the same destination, the same secret
        assert got.payload["data"]["session"]["title"] == "crash"
        async with httpx.AsyncClient(
            base_url=url, headers={"authorization": f"Bearer {TOKEN}"}
        ) as admin:
            hooks = (await admin.get("/v1/webhooks")).json()["webhooks"]
            assert len(hooks) == 1
            for _ in range(200):
                page = (await admin.get(f"/v1/webhooks/{hooks[0]['id']}/deliveries")).json()
                if page["deliveries"][0]["status"] == "delivered":
                    break
                await asyncio.sleep(0.05)
        [delivery] = page["deliveries"]
        assert delivery["id"] == in_flight and delivery["status"] == "delivered"
    assert secret not in log.read_text()  # nor in the log


def test_a_bad_duration_is_a_usage_error(tmp_path: Path) -> None:
    """A bad duration is a usage error with its message, not a traceback."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "midturn.cli",
            "serve",
            "--db",
            f"sqlite:///{tmp_path / 'x.db'}",
            "--port",
            "0",
            "--remind-after",
            "soon",
        ],
        capture_output=True,
        text=True,
        timeout=SAFETY_S,
        env=ENV,
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "not a duration" in done.stderr
    assert "Traceback" not in done.stderr


def test_serve_webhook_without_the_extra_says_how_to_install_it(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['standardwebhooks'] = None\n"
        "from midturn.cli import main\n"
        f"sys.exit(main(['serve', '--db', 'sqlite:///{tmp_path / 'x.db'}', '--port', '0',"
        " '--webhook', 'https://example.com/hook']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=SAFETY_S, env=ENV
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "pip install 'midturn[notify]'" in done.stderr
    assert "Traceback" not in done.stderr
