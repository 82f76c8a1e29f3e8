"""The store conformance suite: the notification outbox (docs/notifications.md).

What it holds a backend to: destinations kept and replaced whole; deliveries written
once per `(destination, key)` whatever the retries of a fan-out; the fan-out cursor
moved by compare-and-set together with its rows (a lost race writes nothing); a claim
that leases only what is due and unleased, to one claimer, also across two store objects
on one database racing; an outcome recorded only by the lease's holder; cancels,
replays, keyset pages newest first, and all of it still there after a reopen.
"""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest

from midturn.errors import UsageError
from midturn.store import Store
from midturn.store._outbox import Delivery, WebhookDestination
from midturn.testing.conformance._backend import Backend
from midturn.testing.conformance._data import T0

SECRET = "whsec_" + "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0"


def destination(webhook_id: str = "wh_1", **changes: object) -> WebhookDestination:
    fields: dict[str, object] = {
        "id": webhook_id,
        "url": f"https://example.com/{webhook_id}",
        "events": ("user_question_requested",),
        "secret": SECRET,
        "created_at": T0,
    }
    fields.update(changes)
    return WebhookDestination.model_validate(fields)


def delivery(
    delivery_id: str,
    *,
    webhook_id: str = "wh_1",
    key: str | None = None,
    due: timedelta = timedelta(0),
    kind: str = "user_question_requested",
    interaction_id: str | None = "ia_1",
) -> Delivery:
    return Delivery(
        id=delivery_id,
        destination_id=webhook_id,
        key=key or f"event:{delivery_id}",
        type=kind,
        payload=json.dumps({"type": kind}, separators=(",", ":")),
        interaction_id=interaction_id,
        created_at=T0,
        next_attempt_at=T0 + due,
        expires_at=T0 + timedelta(days=1),
    )


LEASE = timedelta(seconds=30)


class OutboxConformance:
    """Webhook destinations, deliveries, claims with a lease, the fan-out cursor."""

    async def test_destinations_are_kept_replaced_and_deleted(self, store: Store) -> None:
        await store.create_webhook(destination("wh_1"))
        await store.create_webhook(destination("wh_2", escalation=True))
        with pytest.raises(UsageError):
            await store.create_webhook(destination("wh_1"))
        assert [d.id for d in await store.list_webhooks()] == ["wh_1", "wh_2"]
        got = await store.get_webhook("wh_2")
        assert got is not None and got.escalation and got.secret == SECRET
        assert await store.update_webhook(destination("wh_1", enabled=False))
        again = await store.get_webhook("wh_1")
        assert again is not None and not again.enabled
        assert not await store.update_webhook(destination("wh_9"))
        assert await store.delete_webhook("wh_1")
        assert not await store.delete_webhook("wh_1")
        assert await store.get_webhook("wh_1") is None

    async def test_a_delivery_is_written_once_per_destination_and_key(self, store: Store) -> None:
        await store.create_webhook(destination("wh_1"))
        assert await store.enqueue_deliveries([delivery("d1"), delivery("d2")]) == 2
        # the same keys again (a fan-out retried), and one for a destination that is gone
        again = [delivery("d3", key="event:d1"), delivery("d4", webhook_id="wh_gone")]
        assert await store.enqueue_deliveries(again) == 0
        assert await store.get_delivery("d3") is None
        assert await store.get_delivery("d4") is None
        stored = await store.get_delivery("d1")
        assert stored is not None and stored.status == "pending" and stored.seq > 0
        assert stored.payload == '{"type":"user_question_requested"}'
        assert await store.count_deliveries() == {"pending": 2}

    async def test_the_cursor_moves_by_compare_and_set_with_its_rows(self, store: Store) -> None:
        await store.create_webhook(destination("wh_1"))
        assert await store.outbox_cursor() == 0
        assert await store.enqueue_deliveries([delivery("d1")], cursor=(0, 5)) == 1
        assert await store.outbox_cursor() == 5
        # a fan-out that read from a stale cursor writes nothing
        assert await store.enqueue_deliveries([delivery("d2")], cursor=(0, 7)) is None
        assert await store.get_delivery("d2") is None
        assert await store.outbox_cursor() == 5
        assert await store.enqueue_deliveries([], cursor=(5, 9)) == 0
        assert await store.outbox_cursor() == 9

    async def test_a_claim_leases_what_is_due_to_one_claimer(self, store: Store) -> None:
        await store.create_webhook(destination("wh_1"))
        await store.enqueue_deliveries(
            [
                delivery("d1"),
                delivery("d2", due=timedelta(seconds=1)),
                delivery("late", due=timedelta(hours=1)),
            ]
        )
        now = T0 + timedelta(seconds=2)
        first = await store.claim_deliveries("a", now=now, lease_until=now + LEASE, limit=10)
        assert [d.id for d in first] == ["d1", "d2"]
        assert all(d.lease_owner == "a" for d in first)
        assert await store.claim_deliveries("b", now=now, lease_until=now + LEASE) == []
        # the lease runs out: another claimer may take it
        later = now + LEASE
        taken = await store.claim_deliveries("b", now=later, lease_until=later + LEASE, limit=1)
        assert [d.id for d in taken] == ["d1"]
        # the first holder lost its lease on d1: its outcome is not recorded
        done = taken[0].model_copy(update={"status": "delivered", "attempts": 1})
        assert not await store.finish_delivery(done.model_copy(update={"lease_owner": "a"}), "a")
        assert await store.finish_delivery(done, "b")
        assert not await store.finish_delivery(done, "b")  # once only
        stored = await store.get_delivery("d1")
        assert stored is not None
        assert (stored.status, stored.attempts, stored.lease_owner) == ("delivered", 1, None)
        assert await store.next_delivery_due() == now + LEASE  # d2's lease
        assert await store.count_deliveries("wh_1") == {"delivered": 1, "pending": 2}

    async def test_a_retry_is_due_again_later(self, store: Store) -> None:
        await store.create_webhook(destination("wh_1"))
        await store.enqueue_deliveries([delivery("d1")])
        [claimed] = await store.claim_deliveries("a", now=T0, lease_until=T0 + LEASE)
        retry_at = T0 + timedelta(seconds=5)
        failed = claimed.model_copy(
            update={"attempts": 1, "next_attempt_at": retry_at, "last_error": "HTTP 503"}
        )
        assert await store.finish_delivery(failed, "a")
        assert await store.claim_deliveries("a", now=T0 + LEASE / 10, lease_until=T0 + LEASE) == []
        assert await store.next_delivery_due() == retry_at
        [again] = await store.claim_deliveries("b", now=retry_at, lease_until=retry_at + LEASE)
        assert (again.id, again.attempts, again.last_error) == ("d1", 1, "HTTP 503")

    async def test_cancel_replay_and_pages(self, store: Store) -> None:
        await store.create_webhook(destination("wh_1"))
        await store.enqueue_deliveries(
            [
                delivery("d1"),
                delivery("r1", kind="interaction.reminder", due=timedelta(minutes=5)),
                delivery("e1", kind="interaction.escalation", due=timedelta(hours=1)),
                delivery("r2", kind="interaction.reminder", interaction_id="ia_2"),
            ]
        )
        cancelled = await store.cancel_deliveries(
            "ia_1", ["interaction.reminder", "interaction.escalation"]
        )
        assert cancelled == 2
        statuses = {d.id: d.status for d in await store.list_deliveries("wh_1")}
        assert statuses == {"d1": "pending", "r1": "cancelled", "e1": "cancelled", "r2": "pending"}
        page = await store.list_deliveries("wh_1", limit=3)
        assert [d.id for d in page] == ["r2", "e1", "r1"]
        rest = await store.list_deliveries("wh_1", limit=3, before=page[-1].seq)
        assert [d.id for d in rest] == ["d1"]
        later = T0 + timedelta(hours=2)
        replayed = await store.replay_delivery(
            "r1", now=later, expires_at=later + timedelta(days=1)
        )
        assert replayed is not None and replayed.status == "pending"
        assert await store.replay_delivery("nope", now=later, expires_at=later) is None
        claimed = await store.claim_deliveries("a", now=later, lease_until=later + LEASE, limit=10)
        assert {d.id for d in claimed} == {"d1", "r1", "r2"}

    async def test_deleting_a_destination_deletes_its_deliveries(self, store: Store) -> None:
        await store.create_webhook(destination("wh_1"))
        await store.create_webhook(destination("wh_2"))
        await store.enqueue_deliveries([delivery("d1"), delivery("d2", webhook_id="wh_2")])
        assert await store.delete_webhook("wh_1")
        assert await store.get_delivery("d1") is None
        assert await store.get_delivery("d2") is not None

    async def test_the_outbox_survives_a_reopen(self, store: Store, backend: Backend) -> None:
        backend.require("survives_reopen", "a reopened store reads what the first wrote")
        await store.create_webhook(destination("wh_1"))
        await store.enqueue_deliveries([delivery("d1")], cursor=(0, 3))
        await store.aclose()
        async with backend.new_store() as reopened:
            assert [d.id for d in await reopened.list_webhooks()] == ["wh_1"]
            assert await reopened.outbox_cursor() == 3
            [claimed] = await reopened.claim_deliveries("a", now=T0, lease_until=T0 + LEASE)
            assert claimed.id == "d1"

    async def test_two_stores_claim_disjoint_deliveries(
        self, store: Store, backend: Backend
    ) -> None:
        backend.require("shares_database", "two store objects race their claims")
        await store.create_webhook(destination("wh_1"))
        await store.enqueue_deliveries([delivery(f"d{n}") for n in range(60)])
        async with backend.new_store() as other:

            async def drain(claimer: Store, owner: str) -> list[str]:
                got: list[str] = []
                while True:
                    batch = await claimer.claim_deliveries(
                        owner, now=T0, lease_until=T0 + LEASE, limit=7
                    )
                    if not batch:
                        return got
                    got.extend(d.id for d in batch)

            first, second = await asyncio.gather(drain(store, "a"), drain(other, "b"))
        assert not set(first) & set(second)
        assert sorted(first + second) == sorted(f"d{n}" for n in range(60))

    async def test_two_stores_move_the_cursor_once(self, store: Store, backend: Backend) -> None:
        backend.require("shares_database", "two store objects race the fan-out")
        await store.create_webhook(destination("wh_1"))
        async with backend.new_store() as other:
            outcomes = await asyncio.gather(
                store.enqueue_deliveries([delivery("a1", key="event:1")], cursor=(0, 1)),
                other.enqueue_deliveries([delivery("b1", key="event:1")], cursor=(0, 1)),
            )
        assert sorted(outcomes, key=lambda o: o is None) == [1, None]
        assert await store.outbox_cursor() == 1
        assert await store.count_deliveries() == {"pending": 1}
