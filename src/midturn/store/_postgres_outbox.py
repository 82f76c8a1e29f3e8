"""The PostgreSQL store's notification outbox (migration 6). A claim is one statement
that picks the due rows `FOR UPDATE SKIP LOCKED` and leases them: replicas claiming at the
same moment skip each other's rows instead of waiting on them, and no delivery is leased
to two at once. The fan-out moves the cursor with a compare-and-set in the transaction
that inserts its rows."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from midturn.errors import UsageError
from midturn.store._codec import parse_time, sort_key_time
from midturn.store._outbox import Delivery, WebhookDestination

__all__ = ["PostgresOutbox"]

_COLUMNS = "seq, status, next_attempt_at, lease_owner, lease_until, body"
_INSERT = """
INSERT INTO midturn_deliveries (id, destination_id, key, interaction_id, type, status,
                                next_attempt_at, lease_owner, lease_until, body)
SELECT r.id, r.destination_id, r.key, r.interaction_id, r.type, r.status, r.next_at,
       r.owner, r.until, r.body
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
            $7::text[], $8::text[], $9::text[], $10::text[]) WITH ORDINALITY
     AS r(id, destination_id, key, interaction_id, type, status, next_at, owner, until,
          body, n)
WHERE EXISTS (SELECT 1 FROM midturn_webhooks w WHERE w.id = r.destination_id)
ORDER BY r.n
ON CONFLICT DO NOTHING
"""
_CLAIM = """
WITH due AS (
    SELECT seq FROM midturn_deliveries
    WHERE status = 'pending' AND next_attempt_at <= $3
      AND (lease_until IS NULL OR lease_until <= $3)
    ORDER BY next_attempt_at, seq
    LIMIT $4
    FOR UPDATE SKIP LOCKED
)
UPDATE midturn_deliveries d SET lease_owner = $1, lease_until = $2
FROM due WHERE d.seq = due.seq
RETURNING d.seq, d.status, d.next_attempt_at, d.lease_owner, d.lease_until, d.body
"""
_FINISH = """
UPDATE midturn_deliveries SET status = $1, next_attempt_at = $2, body = $3,
       lease_owner = NULL, lease_until = NULL
WHERE id = $4 AND lease_owner = $5 AND status = 'pending'
RETURNING seq
"""


def _dump(delivery: Delivery) -> str:
    return delivery.model_dump_json(exclude={"lease_owner", "lease_until", "seq"})


def _load(row: Any) -> Delivery:
    stored = Delivery.model_validate_json(row["body"])
    until = row["lease_until"]
    return stored.model_copy(
        update={
            "seq": int(row["seq"]),
            "status": row["status"],
            "next_attempt_at": parse_time(row["next_attempt_at"]),
            "lease_owner": row["lease_owner"],
            "lease_until": parse_time(until) if until else None,
        }
    )


class PostgresOutbox:
    """Mixed into `PostgresStore` (which provides `_db()`, the pool)."""

    def _db(self) -> Any:
        raise NotImplementedError  # PostgresStore's

    async def create_webhook(self, destination: WebhookDestination) -> None:
        import asyncpg

        try:
            await self._db().execute(
                "INSERT INTO midturn_webhooks (id, body) VALUES ($1, $2)",
                destination.id,
                destination.model_dump_json(),
            )
        except asyncpg.UniqueViolationError as error:
            raise UsageError(f"a webhook with id {destination.id!r} exists already") from error

    async def get_webhook(self, webhook_id: str) -> WebhookDestination | None:
        body = await self._db().fetchval(
            "SELECT body FROM midturn_webhooks WHERE id = $1", webhook_id
        )
        return WebhookDestination.model_validate_json(body) if body else None

    async def list_webhooks(self) -> list[WebhookDestination]:
        rows = await self._db().fetch("SELECT body FROM midturn_webhooks ORDER BY seq")
        return [WebhookDestination.model_validate_json(row["body"]) for row in rows]

    async def update_webhook(self, destination: WebhookDestination) -> bool:
        found = await self._db().fetchval(
            "UPDATE midturn_webhooks SET body = $1 WHERE id = $2 RETURNING seq",
            destination.model_dump_json(),
            destination.id,
        )
        return found is not None

    async def delete_webhook(self, webhook_id: str) -> bool:
        async with self._db().acquire() as connection, connection.transaction():
            await connection.execute(
                "DELETE FROM midturn_deliveries WHERE destination_id = $1", webhook_id
            )
            gone = await connection.fetchval(
                "DELETE FROM midturn_webhooks WHERE id = $1 RETURNING seq", webhook_id
            )
        return gone is not None

    async def outbox_cursor(self) -> int:
        position = await self._db().fetchval(
            "SELECT position FROM midturn_outbox_cursor WHERE name = 'events'"
        )
        return int(position or 0)

    async def enqueue_deliveries(
        self, deliveries: Sequence[Delivery], *, cursor: tuple[int, int] | None = None
    ) -> int | None:
        columns = (
            [d.id for d in deliveries],
            [d.destination_id for d in deliveries],
            [d.key for d in deliveries],
            [d.interaction_id for d in deliveries],
            [d.type for d in deliveries],
            [d.status for d in deliveries],
            [sort_key_time(d.next_attempt_at) for d in deliveries],
            [d.lease_owner for d in deliveries],
            [sort_key_time(d.lease_until) if d.lease_until else None for d in deliveries],
            [_dump(d) for d in deliveries],
        )
        async with self._db().acquire() as connection, connection.transaction():
            if cursor is not None:
                seen, new = cursor
                moved = await connection.fetchval(
                    "UPDATE midturn_outbox_cursor SET position = $1"
                    " WHERE name = 'events' AND position = $2 RETURNING position",
                    new,
                    seen,
                )
                if moved is None:
                    return None
            if not deliveries:
                return 0
            status = await connection.execute(_INSERT, *columns)
        return int(status.rsplit(" ", 1)[-1])

    async def claim_deliveries(
        self, owner: str, *, now: datetime, lease_until: datetime, limit: int = 100
    ) -> list[Delivery]:
        rows = await self._db().fetch(
            _CLAIM, owner, sort_key_time(lease_until), sort_key_time(now), max(limit, 0)
        )
        claimed = [_load(row) for row in rows]
        claimed.sort(key=lambda d: (d.next_attempt_at, d.seq))
        return claimed

    async def finish_delivery(self, delivery: Delivery, owner: str) -> bool:
        found = await self._db().fetchval(
            _FINISH,
            delivery.status,
            sort_key_time(delivery.next_attempt_at),
            _dump(delivery),
            delivery.id,
            owner,
        )
        return found is not None

    async def cancel_deliveries(self, interaction_id: str, types: Sequence[str]) -> int:
        async with self._db().acquire() as connection, connection.transaction():
            rows = await connection.fetch(
                f"SELECT {_COLUMNS} FROM midturn_deliveries WHERE interaction_id = $1"
                " AND status = 'pending' AND type = ANY($2::text[]) FOR UPDATE",
                interaction_id,
                list(types),
            )
            for row in rows:
                cancelled = _load(row).model_copy(update={"status": "cancelled"})
                await connection.execute(
                    "UPDATE midturn_deliveries SET status = 'cancelled', body = $1,"
                    " lease_owner = NULL, lease_until = NULL WHERE seq = $2",
                    _dump(cancelled),
                    cancelled.seq,
                )
        return len(rows)

    async def get_delivery(self, delivery_id: str) -> Delivery | None:
        row = await self._db().fetchrow(
            f"SELECT {_COLUMNS} FROM midturn_deliveries WHERE id = $1", delivery_id
        )
        return _load(row) if row else None

    async def list_deliveries(
        self, destination_id: str, *, limit: int = 100, before: int | None = None
    ) -> list[Delivery]:
        rows = await self._db().fetch(
            f"SELECT {_COLUMNS} FROM midturn_deliveries"
            " WHERE destination_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3",
            destination_id,
            before if before is not None else 1 << 62,
            max(limit, 0),
        )
        return [_load(row) for row in rows]

    async def replay_delivery(
        self, delivery_id: str, *, now: datetime, expires_at: datetime
    ) -> Delivery | None:
        async with self._db().acquire() as connection, connection.transaction():
            row = await connection.fetchrow(
                f"SELECT {_COLUMNS} FROM midturn_deliveries WHERE id = $1 FOR UPDATE",
                delivery_id,
            )
            if row is None:
                return None
            replayed = _load(row).replayed(now, expires_at)
            await connection.execute(
                "UPDATE midturn_deliveries SET status = 'pending', next_attempt_at = $1,"
                " body = $2, lease_owner = NULL, lease_until = NULL WHERE id = $3",
                sort_key_time(now),
                _dump(replayed),
                delivery_id,
            )
        return replayed

    async def next_delivery_due(self) -> datetime | None:
        soonest = await self._db().fetchval(
            "SELECT min(greatest(next_attempt_at, coalesce(lease_until, next_attempt_at)))"
            " FROM midturn_deliveries WHERE status = 'pending'"
        )
        return parse_time(soonest) if soonest else None

    async def count_deliveries(self, destination_id: str | None = None) -> dict[str, int]:
        if destination_id is None:
            rows = await self._db().fetch(
                "SELECT status, count(*) AS n FROM midturn_deliveries GROUP BY status"
            )
        else:
            rows = await self._db().fetch(
                "SELECT status, count(*) AS n FROM midturn_deliveries"
                " WHERE destination_id = $1 GROUP BY status",
                destination_id,
            )
        return {row["status"]: int(row["n"]) for row in rows}
