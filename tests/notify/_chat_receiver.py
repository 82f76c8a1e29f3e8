"""A real local HTTP receiver standing in for Slack, Discord or Teams: a threading HTTP
server on 127.0.0.1 that records every POST (path, headers, body) and answers with the
next scripted reply (200 when none is left)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SAFETY_S = 20.0


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    status: int = 200
    body: bytes = b"ok"
    headers: dict[str, str] = field(default_factory=dict)


class Receiver:
    def __init__(self, server: ThreadingHTTPServer) -> None:
        self._server = server
        self._lock = threading.Condition()
        self.received: list[Received] = []
        self.replies: list[Reply] = []

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def record(self, item: Received) -> Reply:
        with self._lock:
            self.received.append(item)
            self._lock.notify_all()
            return self.replies.pop(0) if self.replies else Reply()

    def wait_for(self, count: int) -> list[Received]:
        """Block until `count` requests arrived (bounded by SAFETY_S); all of them."""
        deadline = time.monotonic() + SAFETY_S
        with self._lock:
            while len(self.received) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(
                        f"the receiver got {len(self.received)} requests, not {count}"
                    )
                self._lock.wait(remaining)
            return list(self.received)


@contextlib.contextmanager
def receiver() -> Iterator[Receiver]:
    holder: dict[str, Receiver] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length)
            reply = holder["r"].record(
                Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder["r"] = Receiver(server)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield holder["r"]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(SAFETY_S)
