"""A real local SMTP server for the email tests: aiosmtpd's Controller on a free port of
127.0.0.1, keeping what it receives; it can refuse recipients and checks a login
(`bot` / `s3cret-pass`)."""

from __future__ import annotations

import contextlib
import email
import email.policy
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword, Session

SAFETY_S = 20.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Mailbox:
    port: int
    messages: list[tuple[Envelope, EmailMessage]] = field(default_factory=list)
    refuse_rcpt: str | None = None
    logins: list[tuple[bytes, bytes]] = field(default_factory=list)
    _arrived: threading.Condition = field(default_factory=threading.Condition)

    async def handle_RCPT(
        self, server: Any, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        if self.refuse_rcpt is not None:
            return self.refuse_rcpt
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        parsed = email.message_from_bytes(raw, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        with self._arrived:
            self.messages.append((envelope, parsed))
            self._arrived.notify_all()
        return "250 Message accepted"

    def wait_for(self, count: int) -> list[tuple[Envelope, EmailMessage]]:
        """Block until `count` messages arrived (bounded by SAFETY_S); all of them."""
        deadline = time.monotonic() + SAFETY_S
        with self._arrived:
            while len(self.messages) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"{len(self.messages)} emails arrived, not {count}")
                self._arrived.wait(remaining)
            return list(self.messages)


@contextlib.contextmanager
def mailbox_server() -> Iterator[Mailbox]:
    box = Mailbox(free_port())

    def authenticate(
        server: Any, session: Any, envelope: Any, mechanism: str, data: Any
    ) -> AuthResult:
        assert isinstance(data, LoginPassword)
        box.logins.append((data.login, data.password))
        if data.login == b"bot" and data.password == b"s3cret-pass":
            return AuthResult(success=True)
        return AuthResult(success=False, handled=False, message="535 5.7.8 credentials invalid")

    controller = Controller(
        box,
        hostname="127.0.0.1",
        port=box.port,
        authenticator=authenticate,
        auth_require_tls=False,
    )
    controller.start()
    try:
        yield box
    finally:
        controller.stop()
