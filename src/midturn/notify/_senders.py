"""How a delivery leaves: one `Sender` per destination `format`.

A destination's `format` picks its sender: `"standard"` (the default) is a signed
Standard Webhooks POST; a channel module registers its own (`"slack"`, `"discord"`,
`"teams"`, an email sender for `mailto:` URLs) with `register_sender(name, sender)`. The
admin API refuses a destination whose format no sender is registered for (422), and asks
the sender whether the URL suits it (`check_url`).

A sender is given the destination, the delivery's stable id (the `webhook-id`: the same
on every attempt of one delivery) and the payload, and either returns (delivered) or
raises `DeliveryFailed`: `retryable=True` for a failure worth trying again (the receiver
was down, answered 5xx, 429), `False` for one that will not change (a 4xx that refuses the
message); `disable=True` when the receiver asked never to be called again (HTTP 410);
`retry_after` (seconds) when the receiver said when to come back. Anything else a sender
raises counts as a retryable failure, its type as the detail. A sender must never put a
secret in `detail` (it is shown by `GET /v1/webhooks/{id}/deliveries`).

The registry is per process; `aclose()` of a sender (when it has one) runs when the
notifier stops.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from midturn.errors import UsageError
from midturn.notify._payload import Notification
from midturn.store._outbox import WebhookDestination

__all__ = [
    "DeliveryFailed",
    "Destination",
    "Sender",
    "get_sender",
    "register_sender",
    "sender_formats",
    "unregister_sender",
]

Destination = WebhookDestination
"""What a sender is handed about where to send: its `id`, `url`, `format`, and
`signing_secrets(at)` for a sender that signs."""


class DeliveryFailed(Exception):
    """A delivery attempt did not get through (see the module docstring)."""

    def __init__(
        self,
        detail: str,
        *,
        retryable: bool = True,
        disable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.retryable = retryable
        self.disable = disable
        self.retry_after = retry_after


@runtime_checkable
class Sender(Protocol):
    def check_url(self, url: str) -> str | None:
        """What is wrong with `url` for this format, worded for the person who typed
        it (the 422's message), or None when it will do."""

    async def send(self, destination: Destination, delivery_id: str, payload: Notification) -> None:
        """Deliver `payload` once; raise `DeliveryFailed` when it did not get through."""


_SENDERS: dict[str, Sender] = {}
_DEFAULTS_LOADED = False


def _load_defaults() -> None:
    global _DEFAULTS_LOADED
    if not _DEFAULTS_LOADED:
        _DEFAULTS_LOADED = True
        from midturn.notify._webhook import StandardWebhookSender

        _SENDERS.setdefault("standard", StandardWebhookSender())
        from midturn.notify._channels import channel_senders  # slack, discord, teams, email

        for name, sender in channel_senders().items():
            _SENDERS.setdefault(name, sender)


def register_sender(format_name: str, sender: Sender) -> None:
    """Send the destinations of `format_name` with `sender` (replacing one registered
    before under that name)."""
    if not format_name or not format_name.replace("-", "").replace("_", "").isalnum():
        raise UsageError(f"a format name is letters, digits, '-' and '_' (got {format_name!r})")
    if not isinstance(sender, Sender):
        raise UsageError(
            f"{sender!r} is not a notification sender: it needs check_url(url) and "
            "async send(destination, delivery_id, payload)"
        )
    _load_defaults()
    _SENDERS[format_name] = sender


def unregister_sender(format_name: str) -> None:
    """Forget the sender of `format_name` (for tests); unknown names are ignored."""
    _load_defaults()
    _SENDERS.pop(format_name, None)


def get_sender(format_name: str) -> Sender:
    """The sender of `format_name`; raises `UsageError` naming the known formats."""
    _load_defaults()
    sender = _SENDERS.get(format_name)
    if sender is None:
        known = ", ".join(repr(name) for name in sorted(_SENDERS))
        raise UsageError(f"no sender for format {format_name!r}; the formats are {known}")
    return sender


def sender_formats() -> tuple[str, ...]:
    """The registered format names, sorted."""
    _load_defaults()
    return tuple(sorted(_SENDERS))


def registered_senders() -> tuple[Sender, ...]:
    _load_defaults()
    return tuple(_SENDERS.values())
