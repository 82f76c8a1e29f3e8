"""The SQLite store's notification outbox (migration 6). Every write is one `BEGIN
IMMEDIATE` transaction, so a claim (one `UPDATE … RETURNING` over the due rows) leases
each delivery to one claimer, across processes sharing the file."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from midturn.contract._interactions import Event
from midturn.errors import UsageError
from midturn.store._codec import parse_time, sort_key_time
from midturn.store._outbox import Delivery, WebhookDestination

__all__ = ["SqliteOutbox"]

T = TypeVar("T")
Db = sqlite3.Connection

_COLUMNS = "seq, status, next_attempt_at, lease_owner, lease_until, body"
_INSERT = (
    "INSERT OR IGNORE INTO midturn_deliveries (id, destination_id, key, interaction_id, type,"
    " status, next_attempt_at, lease_owner, lease_until, body)"
    " SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?"
    " WHERE EXISTS (SELECT 1 FROM midturn_webhooks WHERE id = ?)"
)
_CLAIM = f"""
UPDATE midturn_deliveries SET lease_owner = ?1, lease_until = ?2
WHERE seq IN (
    SELECT seq FROM midturn_deliveries INDEXED BY midturn_deliveries_due
    WHERE status = 'pending' AND next_attempt_at <= ?3
      AND (lease_until IS NULL OR lease_until <= ?3)
    ORDER BY next_attempt_at, seq LIMIT ?4)
RETURNING {_COLUMNS}
"""
_FINISH = (
    "UPDATE midturn_deliveries SET status = ?, next_attempt_at = ?, body = ?,"
    " lease_owner = NULL, lease_until = NULL"
    " WHERE id = ? AND lease_owner = ? AND status = 'pending'"
)
_REPLAY = (
    "UPDATE midturn_deliveries SET status = 'pending', next_attempt_at = ?, body = ?,"
    " lease_owner = NULL, lease_until = NULL WHERE id = ?"
)


def _dump(delivery: Delivery) -> str:
    return delivery.model_dump_json(exclude={"lease_owner", "lease_until", "seq"})


def _load(row: Sequence[Any]) -> Delivery:
    seq, status, next_at, owner, until, body = row
    stored = Delivery.model_validate_json(body)
    return stored.model_copy(
        update={
            "seq": int(seq),
            "status": status,
            "next_attempt_at": parse_time(next_at),
            "lease_owner": owner,
            "lease_until": parse_time(until) if until else None,
        }
    )


class SqliteOutbox:
    """Mixed into `SqliteStore` (which provides `_run` and `_write`)."""

    async def _run(self, operation: Callable[[Db], T]) -> T:
        raise NotImplementedError  # SqliteStore's

    async def _write(self, operation: Callable[[Db], tuple[T, tuple[Event, ...]]]) -> T:
        raise NotImplementedError  # SqliteStore's

    async def create_webhook(self, destination: WebhookDestination) -> None:
        def insert(db: Db) -> tuple[None, tuple[Event, ...]]:
            try:
                db.execute(
                    "INSERT INTO midturn_webhooks (id, body) VALUES (?, ?)",
                    (destination.id, destination.model_dump_json()),
                )
            except sqlite3.IntegrityError as error:
                raise UsageError(f"a webhook with id {destination.id!r} exists already") from error
            return None, ()

        await self._write(insert)

    async def get_webhook(self, webhook_id: str) -> WebhookDestination | None:
        def get(db: Db) -> WebhookDestination | None:
            row = db.execute("SELECT body FROM midturn_webhooks WHERE id = ?", (webhook_id,))
            found = row.fetchone()
            return WebhookDestination.model_validate_json(found[0]) if found else None

        return await self._run(get)

    async def list_webhooks(self) -> list[WebhookDestination]:
        def every(db: Db) -> list[WebhookDestination]:
            rows = db.execute("SELECT body FROM midturn_webhooks ORDER BY seq").fetchall()
            return [WebhookDestination.model_validate_json(row[0]) for row in rows]

        return await self._run(every)

    async def update_webhook(self, destination: WebhookDestination) -> bool:
        def update(db: Db) -> tuple[bool, tuple[Event, ...]]:
            changed = db.execute(
                "UPDATE midturn_webhooks SET body = ? WHERE id = ?",
                (destination.model_dump_json(), destination.id),
            ).rowcount
            return changed > 0, ()

        return await self._write(update)

    async def delete_webhook(self, webhook_id: str) -> bool:
        def delete(db: Db) -> tuple[bool, tuple[Event, ...]]:
            db.execute("DELETE FROM midturn_deliveries WHERE destination_id = ?", (webhook_id,))
            gone = db.execute("DELETE FROM midturn_webhooks WHERE id = ?", (webhook_id,)).rowcount
            return gone > 0, ()

        return await self._write(delete)

    async def outbox_cursor(self) -> int:
        def read(db: Db) -> int:
            row = db.execute(
                "SELECT position FROM midturn_outbox_cursor WHERE name = 'events'"
            ).fetchone()
            return int(row[0]) if row else 0

        return await self._run(read)

    async def enqueue_deliveries(
        self, deliveries: Sequence[Delivery], *, cursor: tuple[int, int] | None = None
    ) -> int | None:
        rows = [
            (
                d.id,
                d.destination_id,
                d.key,
                d.interaction_id,
                d.type,
                d.status,
                sort_key_time(d.next_attempt_at),
                d.lease_owner,
                sort_key_time(d.lease_until) if d.lease_until else None,
                _dump(d),
                d.destination_id,
            )
            for d in deliveries
        ]

        def enqueue(db: Db) -> tuple[int | None, tuple[Event, ...]]:
            if cursor is not None:
                seen, new = cursor
                moved = db.execute(
                    "UPDATE midturn_outbox_cursor SET position = ? "
                    "WHERE name = 'events' AND position = ?",
                    (new, seen),
                ).rowcount
                if not moved:
                    return None, ()
            before = db.total_changes
            db.executemany(_INSERT, rows)
            return db.total_changes - before, ()

        return await self._write(enqueue)

    async def claim_deliveries(
        self, owner: str, *, now: datetime, lease_until: datetime, limit: int = 100
    ) -> list[Delivery]:
        params = (owner, sort_key_time(lease_until), sort_key_time(now), max(limit, 0))

        def claim(db: Db) -> tuple[list[Delivery], tuple[Event, ...]]:
            claimed = [_load(row) for row in db.execute(_CLAIM, params).fetchall()]
            claimed.sort(key=lambda d: (d.next_attempt_at, d.seq))
            return claimed, ()

        return await self._write(claim)

    async def finish_delivery(self, delivery: Delivery, owner: str) -> bool:
        params = (
            delivery.status,
            sort_key_time(delivery.next_attempt_at),
            _dump(delivery),
            delivery.id,
            owner,
        )

        def finish(db: Db) -> tuple[bool, tuple[Event, ...]]:
            return db.execute(_FINISH, params).rowcount > 0, ()

        return await self._write(finish)

    async def cancel_deliveries(self, interaction_id: str, types: Sequence[str]) -> int:
        wanted = list(types)
        marks = ", ".join("?" for _ in wanted) or "NULL"

        def cancel(db: Db) -> tuple[int, tuple[Event, ...]]:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM midturn_deliveries WHERE interaction_id = ?"
                f" AND status = 'pending' AND type IN ({marks})",
                (interaction_id, *wanted),
            ).fetchall()
            for row in rows:
                cancelled = _load(row).model_copy(update={"status": "cancelled"})
                db.execute(
                    "UPDATE midturn_deliveries SET status = 'cancelled', body = ?,"
                    " lease_owner = NULL, lease_until = NULL WHERE seq = ?",
                    (_dump(cancelled), cancelled.seq),
                )
            return len(rows), ()

        return await self._write(cancel)

    async def get_delivery(self, delivery_id: str) -> Delivery | None:
        def get(db: Db) -> Delivery | None:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM midturn_deliveries WHERE id = ?", (delivery_id,)
            ).fetchone()
            return _load(row) if row else None

        return await self._run(get)

    async def list_deliveries(
        self, destination_id: str, *, limit: int = 100, before: int | None = None
    ) -> list[Delivery]:
        bound = before if before is not None else 1 << 62

        def select(db: Db) -> list[Delivery]:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM midturn_deliveries"
                " WHERE destination_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?",
                (destination_id, bound, max(limit, 0)),
            ).fetchall()
            return [_load(row) for row in rows]

        return await self._run(select)

    async def replay_delivery(
        self, delivery_id: str, *, now: datetime, expires_at: datetime
    ) -> Delivery | None:
        def replay(db: Db) -> tuple[Delivery | None, tuple[Event, ...]]:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM midturn_deliveries WHERE id = ?", (delivery_id,)
            ).fetchone()
            if row is None:
                return None, ()
            replayed = _load(row).replayed(now, expires_at)
            db.execute(_REPLAY, (sort_key_time(now), _dump(replayed), delivery_id))
            return replayed, ()

        return await self._write(replay)

    async def next_delivery_due(self) -> datetime | None:
        def soonest(db: Db) -> datetime | None:
            row = db.execute(
                "SELECT min(max(next_attempt_at, coalesce(lease_until, next_attempt_at)))"
                " FROM midturn_deliveries WHERE status = 'pending'"
            ).fetchone()
            return parse_time(row[0]) if row and row[0] else None

        return await self._run(soonest)

    async def count_deliveries(self, destination_id: str | None = None) -> dict[str, int]:
        def count(db: Db) -> dict[str, int]:
            if destination_id is None:
                rows = db.execute(
                    "SELECT status, count(*) FROM midturn_deliveries GROUP BY status"
                ).fetchall()
            else:
                rows = db.execute(
                    "SELECT status, count(*) FROM midturn_deliveries"
                    " WHERE destination_id = ? GROUP BY status",
                    (destination_id,),
                ).fetchall()
            return {status: int(n) for status, n in rows}

        return await self._run(count)
