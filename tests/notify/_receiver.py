"""A real webhook receiver for the notification tests: an HTTP server on a free port of
127.0.0.1 (the standard library's, in a thread), verifying every delivery it gets with
`standardwebhooks.Webhook(secret).verify(...)` under each secret it knows.

It can be stopped and started again on the same port (the receiver was down), answer
with another status, or hold requests open until released (a delivery in flight).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import standardwebhooks

SAFETY_S = 20.0


@dataclass(frozen=True)
class Received:
    webhook_id: str
    timestamp: str
    signature: str
    body: bytes
    verified_with: tuple[str, ...]
    """The secrets under which `standardwebhooks` verified this delivery."""

    @property
    def payload(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.body)
        return loaded


@dataclass
class Receiver:
    secrets: list[str] = field(default_factory=list)
    status: int = 200
    port: int = 0
    received: list[Received] = field(default_factory=list)
    arrivals: list[str] = field(default_factory=list)
    """The webhook-id of every request, in order, whatever was answered."""
    hold: threading.Event | None = None
    """When set to an Event, requests wait for it before answering."""
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                receiver._arrived(headers, body)
                hold = receiver.hold
                if hold is not None:
                    hold.wait(SAFETY_S)
                status = receiver.status
                if 200 <= status < 300:
                    receiver._accepted(headers, body)
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(SAFETY_S)

    def _arrived(self, headers: dict[str, str], body: bytes) -> None:
        with self._lock:
            self.arrivals.append(headers.get("webhook-id", ""))

    def _accepted(self, headers: dict[str, str], body: bytes) -> None:
        verified = []
        for secret in self.secrets:
            try:
                standardwebhooks.Webhook(secret).verify(body, headers)
            except standardwebhooks.WebhookVerificationError:
                continue
            verified.append(secret)
        with self._lock:
            self.received.append(
                Received(
                    webhook_id=headers.get("webhook-id", ""),
                    timestamp=headers.get("webhook-timestamp", ""),
                    signature=headers.get("webhook-signature", ""),
                    body=body,
                    verified_with=tuple(verified),
                )
            )

    def wait_for(self, check: Callable[[list[Received]], bool], what: str) -> list[Received]:
        """Block until `check(received)` holds (a bound of SAFETY_S, not a timing test)."""
        deadline = time.monotonic() + SAFETY_S
        while time.monotonic() < deadline:
            with self._lock:
                seen = list(self.received)
            if check(seen):
                return seen
            time.sleep(0.02)
        raise AssertionError(f"the receiver never got {what}; it got {len(self.received)}")

    def of_type(self, kind: str) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.payload.get("type") == kind]

    async def until(self, check: Callable[[list[Received]], bool], what: str) -> list[Received]:
        """`wait_for`, for a test on an event loop."""
        import asyncio

        deadline = time.monotonic() + SAFETY_S
        while time.monotonic() < deadline:
            with self._lock:
                seen = list(self.received)
            if check(seen):
                return seen
            await asyncio.sleep(0.02)
        raise AssertionError(f"the receiver never got {what}; it got {len(self.received)}")

    async def until_arrivals(self, count: int) -> list[str]:
        """Until `count` requests arrived, whatever they were answered; their ids."""
        import asyncio

        deadline = time.monotonic() + SAFETY_S
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.arrivals) >= count:
                    return list(self.arrivals)
            await asyncio.sleep(0.02)
        raise AssertionError(f"only {len(self.arrivals)} of {count} requests arrived")
