"""Notifications (docs/notifications.md): the person learns an agent is waiting.

A surface over the runtime's events: signed webhooks (Standard Webhooks) and, through the
sender registry, chat and email formats, from a durable outbox in the store, with
retries, reminders and escalation. `standardwebhooks` (the `notify` extra,
`pip install 'midturn[notify]'`) is imported only when a delivery is signed.

The seam for channel formats: `register_sender(format_name, sender)` with a `Sender`
(`check_url(url)`, `async send(destination, delivery_id, payload)`, raising
`DeliveryFailed`); the payload is a `Notification`, built by `build_payload`.
"""

from __future__ import annotations

from midturn._public import publish as _publish
from midturn.notify._channels import ChatSender
from midturn.notify._chat import discord_message, slack_message, teams_message
from midturn.notify._email import EmailSender, SmtpSettings, email_message
from midturn.notify._extra import NOTIFY_INSTALL, standardwebhooks
from midturn.notify._manage import (
    create_destination,
    ensure_destinations,
    new_secret,
    rotate_secret,
)
from midturn.notify._notice import Notice, NoticeOption, NoticeQuestion, notice_of
from midturn.notify._notifier import Notifier
from midturn.notify._options import NotifyOptions, parse_duration
from midturn.notify._payload import (
    NOTIFY_EVENT_TYPES,
    Notification,
    NotificationData,
    NotifiedInteraction,
    NotifiedOption,
    NotifiedPermission,
    NotifiedQuestion,
    NotifiedSession,
    answer_url_for,
    build_payload,
    notification_from_json,
    payload_bytes,
)
from midturn.notify._senders import (
    DeliveryFailed,
    Destination,
    Sender,
    get_sender,
    register_sender,
    sender_formats,
    unregister_sender,
)
from midturn.notify._webhook import StandardWebhookSender, check_http_url, sign_headers

__all__ = [
    "NOTIFY_EVENT_TYPES",
    "NOTIFY_INSTALL",
    "ChatSender",
    "DeliveryFailed",
    "Destination",
    "EmailSender",
    "Notice",
    "NoticeOption",
    "NoticeQuestion",
    "Notification",
    "NotificationData",
    "NotifiedInteraction",
    "NotifiedOption",
    "NotifiedPermission",
    "NotifiedQuestion",
    "NotifiedSession",
    "Notifier",
    "NotifyOptions",
    "Sender",
    "SmtpSettings",
    "StandardWebhookSender",
    "answer_url_for",
    "build_payload",
    "check_http_url",
    "create_destination",
    "discord_message",
    "email_message",
    "ensure_destinations",
    "get_sender",
    "new_secret",
    "notice_of",
    "notification_from_json",
    "parse_duration",
    "payload_bytes",
    "register_sender",
    "rotate_secret",
    "sender_formats",
    "sign_headers",
    "slack_message",
    "standardwebhooks",
    "teams_message",
    "unregister_sender",
]

_publish("midturn.notify", globals(), __all__)
