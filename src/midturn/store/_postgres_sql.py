"""The PostgreSQL store's writes, each one statement (one round trip, one implicit
transaction).

A park and a settle are each a call of a PL/pgSQL function of the schema (migration 8,
`_postgres_schema.py`), which does the whole write in the call's transaction: it takes
the session's lock (a transaction-level advisory lock, released at commit), reads what
the write depends on (each statement of a function sees what was committed before it
started, so after the lock: what the lock's previous holder committed), makes the change
and appends its events through `midturn_append`, which takes the append lock (the last
lock a write takes, held until commit, so event ids commit in the order drawn) and runs
`pg_notify` with the newest id, delivered at commit. A plain append calls
`midturn_append` alone.

Parameters of the events, in every statement below: the five event arrays (type,
session_id, turn_id, interaction_id, body), for `SETTLE` which of them wait for the turn
to be idle (`bool[]`), then the append lock's key and the notification payload's suffix
(`:<schema>`).
"""

from __future__ import annotations

__all__ = [
    "APPEND",
    "CHANNEL",
    "COUNT_PENDING",
    "END_TURN",
    "FIND_BY_TOOL_CALL",
    "GET",
    "PARK",
    "READ_EVENTS",
    "READ_EVENTS_OF_TYPES",
    "READ_SESSION_EVENTS",
    "READ_SESSION_EVENTS_OF_TYPES",
    "SETTLE",
    "list_query",
]

CHANNEL = "midturn_events"  # the channel midturn_append notifies (migration 8)

# The session's lock key, the nine columns of `interaction_columns`, the queue the events
# were chosen for (position, whether the turn waits; NULL for any), whether an ended turn
# parks nothing (migration 9), then the events. Returns `outcome` ('created', 'existing',
# 'missed', 'taken' or 'ended'), the queue it found (`queue_position`, `turn_waits`), the
# `existing` body of a repeated tool call and the `event_ids` drawn.
PARK = """SELECT * FROM midturn_park(
    $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
    $20
)"""
# The turn's end, under the session's lock (its key is $5), so that it commits before a
# park's read of it or after that park's commit (migration 9).
END_TURN = """
WITH locked AS (SELECT pg_advisory_xact_lock($5))
INSERT INTO midturn_turns_ended (session_id, turn_id, how, ended_at)
SELECT $1::text, $2::text, $3::text, $4::text FROM locked
ON CONFLICT DO NOTHING
RETURNING 1
"""
# The session's lock key, the interaction's id, its new status, settled_at and body, its
# session and turn, then the events. Returns `won`, the loser's `current_body`, and for
# the winner `turn_waits` (another of the turn is pending), `session_pending` (left in the
# session) and the `event_ids` drawn.
SETTLE = """SELECT * FROM midturn_settle(
    $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15
)"""
APPEND = "SELECT midturn_append($1, $2, $3, $4, $5, NULL, false, $6, $7)"

# -- reads (each served by an index; tests/store/test_postgres.py EXPLAINs them) ----------

GET = "SELECT body FROM midturn_interactions WHERE id = $1"
# The sum of the per-session counts (migrations 4 and 6: one row per session with
# something pending), not a count of every pending row.
COUNT_PENDING = "SELECT coalesce(sum(pending), 0) FROM midturn_queues"
FIND_BY_TOOL_CALL = (
    "SELECT body FROM midturn_interactions WHERE session_id = $1 AND tool_call_id = $2"
)
READ_EVENTS = "SELECT id, body FROM midturn_events WHERE id > $1 ORDER BY id LIMIT $2"
# `(session_id, id) > ($1, $2)` is `id > $2` here, written as the one range only the
# session's index (session_id, id) can serve: even a generic plan, made without knowing
# how few of the events are the session's, then reads that index, not every event after
# $2 filtered by session.
READ_SESSION_EVENTS = (
    "SELECT id, body FROM midturn_events"
    " WHERE session_id = $1 AND (session_id, id) > ($1, $2) ORDER BY id LIMIT $3"
)
# The same two reads kept to some event types ($1 / $2, a text[]): by the same key and
# index, the type checked on each row (no index on the type).
READ_EVENTS_OF_TYPES = (
    "SELECT id, body FROM midturn_events"
    " WHERE type = ANY($1::text[]) AND id > $2 ORDER BY id LIMIT $3"
)
READ_SESSION_EVENTS_OF_TYPES = (
    "SELECT id, body FROM midturn_events WHERE session_id = $1"
    " AND type = ANY($2::text[]) AND (session_id, id) > ($1, $3) ORDER BY id LIMIT $4"
)


def list_query(
    session_id: str | None,
    turn_id: str | None,
    status: str | None,
    kind: str | None,
    limit: int | None,
    after: tuple[object, object] | None = None,
) -> tuple[str, list[object]]:
    """`list_interactions`' statement and its arguments. `status = 'pending'` is written
    as a literal, not a parameter, so that the planner may use the partial indexes of
    the pending rows even in a generic plan (asyncpg prepares statements and reuses
    them): a session's queue, head first, then reads only its pending rows, in order.
    `after` is a keyset page's start: the `(created_at, seq)` of the row before it."""
    where: list[str] = []
    arguments: list[object] = []
    for column, value in (
        ("session_id", session_id),
        ("turn_id", turn_id),
        ("status", status),
        ("kind", kind),
    ):
        if value is None:
            continue
        if column == "status" and value == "pending":
            where.append("status = 'pending'")
            continue
        arguments.append(value)
        where.append(f"{column} = ${len(arguments)}")
    if after is not None:
        arguments += list(after)
        where.append(f"(created_at, seq) > (${len(arguments) - 1}, ${len(arguments)})")
    query = "SELECT body FROM midturn_interactions"
    if where:
        query += " WHERE " + " AND ".join(where)
    query += " ORDER BY created_at, seq"
    if limit is not None:
        arguments.append(limit)
        query += f" LIMIT ${len(arguments)}"
    return query, arguments
