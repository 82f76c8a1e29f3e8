"""What a sender is: the `Sender` protocol, the `Destination` it is handed and the
`DeliveryFailed` it raises (the registry that picks one per format: `_senders.py`).

A sender is given the destination, the delivery's stable id (the `webhook-id`: the same
on every attempt of one delivery) and the payload, and either returns (delivered) or
raises `DeliveryFailed`: `retryable=True` for a failure worth trying again (the receiver
was down, answered 5xx, 429), `False` for one that will not change (a 4xx that refuses the
message); `disable=True` when the receiver asked never to be called again (HTTP 410);
`retry_after` (seconds) when the receiver said when to come back. Anything else a sender
raises counts as a retryable failure, its type as the detail. A sender must never put a
secret in `detail` (it is shown by `GET /v1/webhooks/{id}/deliveries`).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from midturn.notify._payload import Notification
from midturn.store._outbox import WebhookDestination

__all__ = ["DeliveryFailed", "Destination", "Sender"]

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
