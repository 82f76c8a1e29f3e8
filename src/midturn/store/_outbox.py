"""The notification outbox's values (docs/notifications.md): webhook destinations and
their deliveries, kept by every store beside the event log.

Why a cursor over the log rather than an outbox row written with each event: the event
log is already written in the transaction of the change it announces (persist, then
publish), and read in id order with no gap (PostgreSQL appends under one lock, SQLite and
memory serialize writes). So the notifier keeps one durable cursor, the id of the last
event it fanned out, and turns the events after it into delivery rows in one transaction
that also moves the cursor (a compare-and-set, so of two replicas one does it and the
other's rows, keyed by `(destination_id, key)`, are not written twice). A crash before
that commit leaves the cursor where it was: the events are read again, none is lost, and
no write path of the interactions needed to learn about notifications.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from midturn.contract._interactions import utcnow

__all__ = ["Delivery", "DeliveryStatus", "WebhookDestination"]

DeliveryStatus = Literal["pending", "delivered", "failed", "cancelled"]
"""`pending`: waiting for its (next) attempt; `delivered`: a 2xx came back; `failed`: it
gave up (the retry window passed, or the receiver refused for good); `cancelled`: a
reminder or escalation whose interaction settled before it was due."""


class WebhookDestination(BaseModel):
    """Where notifications go. `secret` signs every delivery (`whsec_…`); after a
    rotation `previous_secret` signs too until `previous_until`, so a receiver can
    switch keys without dropping a message. The admin API never shows either after the
    call that made it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    url: str
    format: str = "standard"
    events: tuple[str, ...] = ()
    session_id: str | None = None
    escalation: bool = False
    enabled: bool = True
    secret: str = Field(repr=False)
    previous_secret: str | None = Field(default=None, repr=False)
    previous_until: datetime | None = None
    origin: str | None = None
    """Who made it: None for the admin API, `"cli"` for `midturn serve --webhook`."""
    since_event_id: int = 0
    """The newest event id of the log when it was made: it is told of later events only."""
    created_at: datetime = Field(default_factory=utcnow)

    def signing_secrets(self, at: datetime) -> tuple[str, ...]:
        """The secrets that sign a delivery made at `at`: the current one, and the
        previous one while its grace lasts."""
        if self.previous_secret and self.previous_until and at < self.previous_until:
            return (self.secret, self.previous_secret)
        return (self.secret,)


class Delivery(BaseModel):
    """One notification to one destination, its attempts and its state. `id` is the
    `webhook-id` header: the same on every attempt, so a receiver dedupes on it. `key`
    makes it unique per destination (`event:<id>`, `reminder:<interaction>:<n>`,
    `escalation:<interaction>`), so a fan-out done twice writes it once."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    destination_id: str
    key: str
    type: str
    payload: str
    """The notification as the exact JSON text that is sent and signed."""
    interaction_id: str | None = None
    event_id: int | None = None
    status: DeliveryStatus = "pending"
    attempts: int = 0
    created_at: datetime = Field(default_factory=utcnow)
    next_attempt_at: datetime = Field(default_factory=utcnow)
    expires_at: datetime
    """No attempt starts after this: the delivery is `failed` (the retry window)."""
    last_error: str | None = None
    delivered_at: datetime | None = None
    lease_owner: str | None = None
    lease_until: datetime | None = None
    seq: int = 0
    """Insertion order, given by the store (0 before it is stored): the deliveries page
    newest first by it."""

    def replayed(self, now: datetime, expires_at: datetime) -> Delivery:
        """This delivery due again at `now`, unleased, with a new retry window (what
        `replay_delivery` stores, on every store)."""
        return self.model_copy(
            update={
                "status": "pending",
                "next_attempt_at": now,
                "expires_at": expires_at,
                "lease_owner": None,
                "lease_until": None,
            }
        )
