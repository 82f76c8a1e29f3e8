"""The memory store's notification outbox (see `Store`'s outbox methods). Like the rest
of the memory store, no method awaits between reading and writing, so each is atomic:
a claim leases a delivery to one caller."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from midturn.errors import UsageError
from midturn.store._codec import as_utc
from midturn.store._outbox import Delivery, WebhookDestination

__all__ = ["MemoryOutbox"]


class MemoryOutbox:
    """Mixed into `MemoryStore`: destinations, deliveries and the cursor, in dicts."""

    def _init_outbox(self) -> None:
        self._webhooks: dict[str, WebhookDestination] = {}
        self._deliveries: dict[str, Delivery] = {}
        self._delivery_keys: dict[tuple[str, str], str] = {}
        self._delivery_seq = 0
        self._cursor = 0

    def _check_open(self) -> None:
        raise NotImplementedError  # MemoryStore's

    async def create_webhook(self, destination: WebhookDestination) -> None:
        self._check_open()
        if destination.id in self._webhooks:
            raise UsageError(f"a webhook with id {destination.id!r} exists already")
        self._webhooks[destination.id] = destination

    async def get_webhook(self, webhook_id: str) -> WebhookDestination | None:
        self._check_open()
        return self._webhooks.get(webhook_id)

    async def list_webhooks(self) -> list[WebhookDestination]:
        self._check_open()
        return list(self._webhooks.values())

    async def update_webhook(self, destination: WebhookDestination) -> bool:
        self._check_open()
        if destination.id not in self._webhooks:
            return False
        self._webhooks[destination.id] = destination
        return True

    async def delete_webhook(self, webhook_id: str) -> bool:
        self._check_open()
        if self._webhooks.pop(webhook_id, None) is None:
            return False
        for key, delivery in list(self._deliveries.items()):
            if delivery.destination_id == webhook_id:
                del self._deliveries[key]
                del self._delivery_keys[(webhook_id, delivery.key)]
        return True

    async def outbox_cursor(self) -> int:
        self._check_open()
        return self._cursor

    async def enqueue_deliveries(
        self, deliveries: Sequence[Delivery], *, cursor: tuple[int, int] | None = None
    ) -> int | None:
        self._check_open()
        if cursor is not None:
            seen, new = cursor
            if self._cursor != seen:
                return None
            self._cursor = new
        inserted = 0
        for delivery in deliveries:
            slot = (delivery.destination_id, delivery.key)
            if slot in self._delivery_keys or delivery.destination_id not in self._webhooks:
                continue
            self._delivery_seq += 1
            self._deliveries[delivery.id] = delivery.model_copy(update={"seq": self._delivery_seq})
            self._delivery_keys[slot] = delivery.id
            inserted += 1
        return inserted

    def _claimable(self, delivery: Delivery, now: datetime) -> bool:
        return (
            delivery.status == "pending"
            and as_utc(delivery.next_attempt_at) <= now
            and (delivery.lease_until is None or as_utc(delivery.lease_until) <= now)
        )

    async def claim_deliveries(
        self, owner: str, *, now: datetime, lease_until: datetime, limit: int = 100
    ) -> list[Delivery]:
        self._check_open()
        now = as_utc(now)
        due = sorted(
            (d for d in self._deliveries.values() if self._claimable(d, now)),
            key=lambda d: (as_utc(d.next_attempt_at), d.seq),
        )[: max(limit, 0)]
        claimed = []
        for delivery in due:
            leased = delivery.model_copy(update={"lease_owner": owner, "lease_until": lease_until})
            self._deliveries[delivery.id] = leased
            claimed.append(leased)
        return claimed

    async def finish_delivery(self, delivery: Delivery, owner: str) -> bool:
        self._check_open()
        stored = self._deliveries.get(delivery.id)
        if stored is None or stored.lease_owner != owner or stored.status != "pending":
            return False
        self._deliveries[delivery.id] = stored.model_copy(
            update={
                "status": delivery.status,
                "attempts": delivery.attempts,
                "next_attempt_at": delivery.next_attempt_at,
                "last_error": delivery.last_error,
                "delivered_at": delivery.delivered_at,
                "lease_owner": None,
                "lease_until": None,
            }
        )
        return True

    async def cancel_deliveries(self, interaction_id: str, types: Sequence[str]) -> int:
        self._check_open()
        wanted = set(types)
        count = 0
        for key, delivery in self._deliveries.items():
            if (
                delivery.interaction_id == interaction_id
                and delivery.type in wanted
                and delivery.status == "pending"
            ):
                self._deliveries[key] = delivery.model_copy(update={"status": "cancelled"})
                count += 1
        return count

    async def get_delivery(self, delivery_id: str) -> Delivery | None:
        self._check_open()
        return self._deliveries.get(delivery_id)

    async def list_deliveries(
        self, destination_id: str, *, limit: int = 100, before: int | None = None
    ) -> list[Delivery]:
        self._check_open()
        found = [
            d
            for d in self._deliveries.values()
            if d.destination_id == destination_id and (before is None or d.seq < before)
        ]
        found.sort(key=lambda d: d.seq, reverse=True)
        return found[: max(limit, 0)]

    async def replay_delivery(
        self, delivery_id: str, *, now: datetime, expires_at: datetime
    ) -> Delivery | None:
        self._check_open()
        stored = self._deliveries.get(delivery_id)
        if stored is None:
            return None
        replayed = stored.replayed(now, expires_at)
        self._deliveries[delivery_id] = replayed
        return replayed

    async def next_delivery_due(self) -> datetime | None:
        self._check_open()
        times = [
            max(as_utc(d.next_attempt_at), as_utc(d.lease_until or d.next_attempt_at))
            for d in self._deliveries.values()
            if d.status == "pending"
        ]
        return min(times, default=None)

    async def count_deliveries(self, destination_id: str | None = None) -> dict[str, int]:
        self._check_open()
        counts: dict[str, int] = {}
        for d in self._deliveries.values():
            if destination_id is None or d.destination_id == destination_id:
                counts[d.status] = counts.get(d.status, 0) + 1
        return counts
