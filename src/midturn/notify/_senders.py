"""How a delivery leaves: one `Sender` per destination `format`.

A destination's `format` picks its sender: `"standard"` (the default) is a signed
Standard Webhooks POST; a channel module registers its own (`"slack"`, `"discord"`,
`"teams"`, an email sender for `mailto:` URLs) with `register_sender(name, sender)`. The
admin API refuses a destination whose format no sender is registered for (422), and asks
the sender whether the URL suits it (`check_url`).

What a sender is and what it raises: `_sender.py`.

The registry is per process; `aclose()` of a sender (when it has one) runs when the
notifier stops.
"""

from __future__ import annotations

from midturn.errors import UsageError
from midturn.notify._channels import channel_senders
from midturn.notify._sender import DeliveryFailed, Destination, Sender
from midturn.notify._webhook import StandardWebhookSender

__all__ = [
    "DeliveryFailed",
    "Destination",
    "Sender",
    "get_sender",
    "register_sender",
    "sender_formats",
    "unregister_sender",
]

_SENDERS: dict[str, Sender] = {}
_DEFAULTS_LOADED = False


def _load_defaults() -> None:
    global _DEFAULTS_LOADED
    if not _DEFAULTS_LOADED:
        _DEFAULTS_LOADED = True
        _SENDERS.setdefault("standard", StandardWebhookSender())
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
