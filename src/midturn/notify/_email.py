"""Email over SMTP: the `"email"` sender, for destinations whose url is
`mailto:person@example.com` (several addresses: `mailto:a@example.com,b@example.com`).

Settings come from the environment, read when a message is sent (so a change needs no
restart of anything but the process's environment):

| variable | meaning | default |
|---|---|---|
| `MIDTURN_SMTP_HOST` | the SMTP server | (required) |
| `MIDTURN_SMTP_PORT` | its port | 587 with STARTTLS, else 25 |
| `MIDTURN_SMTP_STARTTLS` | `1`/`0`: upgrade the connection with STARTTLS | `1` |
| `MIDTURN_SMTP_USER`, `_PASSWORD` | log in (over TLS, or to a loopback server) | none |
| `MIDTURN_SMTP_FROM` | the From address | (required) |

The message is plain text with an HTML alternative: the question(s), the session's title,
where it waits in the queue and the answer link (no credential in it). Everything the
model wrote is escaped in the HTML and kept out of the headers but for the one-line
subject.

Sending uses the standard library's `smtplib` in a worker thread: one short SMTP
conversation per delivery, rare next to everything else a gateway does, so a thread costs
nothing that matters and no dependency is added (`aiosmtplib` would only save the thread).
A connection refused, a timeout or a 4xx reply is retryable; a 5xx reply (the server
refused the message or the recipients) and a login the server refused are not.
"""

from __future__ import annotations

import asyncio
import html
import ipaddress
import os
import smtplib
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid, parseaddr
from urllib.parse import unquote, urlsplit

from midturn.errors import UsageError
from midturn.notify._notice import Notice, cut, notice_of, one_line
from midturn.notify._payload import Notification
from midturn.notify._sender import DeliveryFailed, Destination

__all__ = ["EmailSender", "SmtpSettings", "email_message", "mailto_addresses"]

DEFAULT_TIMEOUT_S = 15.0
"""Per SMTP step; well inside the notifier's lease, so no two replicas send one email."""
_SUBJECT = 140


def _flag(raw: str | None, default: bool, name: str) -> bool:
    if raw is None or not raw.strip():
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise UsageError(f"{name} must be 1 or 0 (got {raw!r})")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class SmtpSettings:
    """Where and how to send (see the module docstring). `password` is never shown in a
    repr."""

    host: str
    sender: str
    port: int = 587
    starttls: bool = True
    user: str | None = None
    password: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S

    def __repr__(self) -> str:
        login = f", user={self.user!r}, password=***" if self.user else ""
        return (
            f"SmtpSettings(host={self.host!r}, port={self.port}, starttls={self.starttls}, "
            f"sender={self.sender!r}{login})"
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> SmtpSettings:
        """The settings in `MIDTURN_SMTP_*`; raises `UsageError` naming what is missing
        or wrong."""
        env = os.environ if environ is None else environ
        host = env.get("MIDTURN_SMTP_HOST", "").strip()
        sender = env.get("MIDTURN_SMTP_FROM", "").strip()
        if not host:
            raise UsageError("email needs MIDTURN_SMTP_HOST (the SMTP server to send through)")
        if not sender or "@" not in sender or any(c in sender for c in "\r\n"):
            raise UsageError("email needs MIDTURN_SMTP_FROM, the From address (bot@example.com)")
        starttls = _flag(env.get("MIDTURN_SMTP_STARTTLS"), True, "MIDTURN_SMTP_STARTTLS")
        raw_port = env.get("MIDTURN_SMTP_PORT", "").strip()
        try:
            port = int(raw_port) if raw_port else (587 if starttls else 25)
        except ValueError:
            raise UsageError(f"MIDTURN_SMTP_PORT must be a number (got {raw_port!r})") from None
        if not 0 < port < 65536:
            raise UsageError(f"MIDTURN_SMTP_PORT must be 1–65535 (got {port})")
        user = env.get("MIDTURN_SMTP_USER") or None
        password = env.get("MIDTURN_SMTP_PASSWORD") or None
        if (user is None) != (password is None):
            raise UsageError("set both MIDTURN_SMTP_USER and MIDTURN_SMTP_PASSWORD, or neither")
        if user is not None and not starttls and not _loopback(host):
            raise UsageError(
                "midturn will not send an SMTP password over a connection without TLS: "
                "set MIDTURN_SMTP_STARTTLS=1 (or use a server on this machine)"
            )
        return cls(host, sender, port, starttls, user, password)


def mailto_addresses(url: str) -> tuple[str, ...]:
    """The addresses of a `mailto:` url; raises `ValueError` worded for the person who
    typed it."""
    try:
        parts = urlsplit(url)
    except ValueError:
        raise ValueError("the url is not a valid URL") from None
    if parts.scheme.lower() != "mailto":
        raise ValueError("an email destination's url is mailto:person@example.com")
    addresses = []
    for raw in unquote(parts.path).split(","):
        address = raw.strip()
        if not address:
            continue
        local, at, domain = address.rpartition("@")
        if (
            not at
            or not local
            or not domain
            or any(c.isspace() or c in '<>"(),;:[]\\' for c in address)
            or "." not in domain
        ):
            raise ValueError(f"{address!r} is not an email address (person@example.com)")
        addresses.append(address)
    if not addresses:
        raise ValueError("the mailto: url names no address (mailto:person@example.com)")
    return tuple(addresses)


def _text_body(notice: Notice) -> str:
    lines = [notice.title, ""]
    if notice.session_title:
        lines.append(f"Session: {one_line(notice.session_title)}")
    if notice.place:
        lines.append(notice.place.capitalize())
    for question in notice.questions:
        lines.append("")
        if question.header:
            lines.append(f"[{one_line(question.header)}]")
        lines.append(question.question)
        if question.secret:
            lines.append("(A secret: answer it in midturn, never by email.)")
        for option in question.options:
            line = f"  - {one_line(option.label)}"
            if option.description:
                line += f": {one_line(option.description)}"
            lines.append(line)
    if notice.permission_tool or notice.permission_summary:
        lines.append("")
        if notice.permission_tool:
            lines.append(f"Tool: {one_line(notice.permission_tool)}")
        if notice.permission_summary:
            lines.append(notice.permission_summary)
        if notice.permission_risk:
            lines.append(f"Risk: {notice.permission_risk}")
    if notice.answer_url:
        lines += ["", f"Answer in midturn: {notice.answer_url}"]
    lines += [
        "",
        "-- ",
        "Sent by midturn. The link signs you in through the inbox; it holds no password.",
    ]
    return "\n".join(lines) + "\n"


def _html_body(notice: Notice) -> str:
    e = html.escape
    parts = [f"<h2>{e(notice.title)}</h2>"]
    meta = []
    if notice.session_title:
        meta.append(f"Session: <strong>{e(one_line(notice.session_title))}</strong>")
    if notice.place:
        meta.append(e(notice.place.capitalize()))
    if meta:
        parts.append(f"<p>{'<br>'.join(meta)}</p>")
    for question in notice.questions:
        if question.header:
            parts.append(f"<h3>{e(one_line(question.header))}</h3>")
        question_html = e(question.question).replace("\n", "<br>")
        parts.append(f"<p>{question_html}</p>")
        if question.secret:
            parts.append("<p><em>A secret: answer it in midturn, never by email.</em></p>")
        if question.options:
            items = []
            for option in question.options:
                item = f"<strong>{e(one_line(option.label))}</strong>"
                if option.description:
                    item += f": {e(one_line(option.description))}"
                items.append(f"<li>{item}</li>")
            parts.append(f"<ul>{''.join(items)}</ul>")
    if notice.permission_tool or notice.permission_summary:
        if notice.permission_tool:
            parts.append(f"<p>Tool: <code>{e(one_line(notice.permission_tool))}</code></p>")
        if notice.permission_summary:
            parts.append(f"<p>{e(notice.permission_summary)}</p>")
        if notice.permission_risk:
            parts.append(f"<p>Risk: <strong>{e(notice.permission_risk)}</strong></p>")
    if notice.answer_url:
        url = e(notice.answer_url, quote=True)
        parts.append(f'<p><a href="{url}">Answer in midturn</a></p>')
    return (
        '<!doctype html><html><body style="font-family: sans-serif">'
        + "".join(parts)
        + "</body></html>"
    )


def email_message(
    notice: Notice, *, sender: str, to: tuple[str, ...], delivery_id: str | None = None
) -> EmailMessage:
    """The email for `notice`: plain text with an HTML alternative. With `delivery_id`
    the Message-ID is derived from it, so every retry of one delivery is the same
    message to a mail client that dedupes."""
    message = EmailMessage()
    message["Subject"] = cut(one_line(f"[midturn] {notice.title}: {notice.summary}"), _SUBJECT)
    message["From"] = sender
    message["To"] = ", ".join(to)
    message["Date"] = formatdate(localtime=False, usegmt=True)
    domain = parseaddr(sender)[1].rpartition("@")[2] or "midturn.invalid"
    if delivery_id and all(c.isalnum() or c in "-_." for c in delivery_id):
        message["Message-ID"] = f"<{delivery_id}@{domain}>"
    else:
        message["Message-ID"] = make_msgid(domain=domain)
    message["Auto-Submitted"] = "auto-generated"
    message.set_content(_text_body(notice))
    message.add_alternative(_html_body(notice), subtype="html")
    return message


def _send_blocking(settings: SmtpSettings, message: EmailMessage) -> None:
    with smtplib.SMTP(settings.host, settings.port, timeout=settings.timeout_s) as smtp:
        smtp.ehlo()
        if settings.starttls:
            smtp.starttls(context=ssl.create_default_context())
            smtp.ehlo()
        if settings.user is not None and settings.password is not None:
            smtp.login(settings.user, settings.password)
        smtp.send_message(message)


def _failure(error: Exception) -> DeliveryFailed:
    """The delivery failure for an SMTP error: worded without the password or message."""
    if isinstance(error, smtplib.SMTPAuthenticationError):
        return DeliveryFailed(
            f"the SMTP server refused the login ({error.smtp_code}); check "
            "MIDTURN_SMTP_USER / MIDTURN_SMTP_PASSWORD",
            retryable=False,
        )
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        codes = [code for code, _ in error.recipients.values()]
        return DeliveryFailed(
            f"the SMTP server refused the recipients ({', '.join(map(str, codes))})",
            retryable=any(400 <= code < 500 for code in codes),
        )
    if isinstance(error, smtplib.SMTPResponseException):
        reply = (
            error.smtp_error.decode("utf-8", "replace")
            if isinstance(error.smtp_error, bytes)
            else str(error.smtp_error)
        )
        return DeliveryFailed(
            f"the SMTP server answered {error.smtp_code}: {cut(one_line(reply), 200)}",
            retryable=400 <= error.smtp_code < 500,
        )
    if isinstance(error, smtplib.SMTPNotSupportedError):
        return DeliveryFailed(
            "the SMTP server does not offer STARTTLS; set MIDTURN_SMTP_STARTTLS=0 only "
            "for a server on a trusted network",
            retryable=False,
        )
    if isinstance(error, ssl.SSLError):
        return DeliveryFailed(f"TLS with the SMTP server failed ({error.reason})", retryable=False)
    if isinstance(error, TimeoutError):
        return DeliveryFailed("the SMTP server did not answer in time")
    if isinstance(error, (OSError, smtplib.SMTPException)):
        return DeliveryFailed(f"could not reach the SMTP server ({type(error).__name__})")
    return DeliveryFailed(f"sending the email failed ({type(error).__name__})")


class EmailSender:
    """The `"email"` sender: one SMTP conversation per delivery, in a worker thread.
    `settings` are read from the environment at each send when not given."""

    def __init__(self, settings: SmtpSettings | None = None) -> None:
        self._settings = settings

    def check_url(self, url: str) -> str | None:
        try:
            mailto_addresses(url)
        except ValueError as error:
            return str(error)
        return None

    async def send(self, destination: Destination, delivery_id: str, payload: Notification) -> None:
        try:
            settings = self._settings or SmtpSettings.from_env()
            to = mailto_addresses(destination.url)
        except (UsageError, ValueError) as error:
            raise DeliveryFailed(str(error), retryable=False) from None
        message = email_message(
            notice_of(payload), sender=settings.sender, to=to, delivery_id=delivery_id
        )
        try:
            await asyncio.to_thread(_send_blocking, settings, message)
        except Exception as error:
            raise _failure(error) from None
