"""The PostgreSQL store's writes, each one statement (one round trip, one implicit
transaction).

A write that publishes events is a single statement with data-modifying CTEs, in this
order of dependence:

1. `changed` — the change itself (insert an interaction, settle one), `RETURNING` a row
   only when it happened;
2. `locked` — `pg_advisory_xact_lock(key)` once per row of `changed`, so only a write
   that changed something takes the append lock, and takes it after its row lock (the
   append lock is always the last lock taken: no deadlock);
3. `inserted` — the events, read from parallel arrays in their given order and joined to
   `locked`, so no event id is drawn before the lock is held;
4. `notified` — `pg_notify` with the newest id, delivered by PostgreSQL at commit.

The statement commits as a whole, and the advisory lock is released only after that
commit: event ids are committed in the order they were drawn (see _postgres.py).

Parameters: the change's own first, then the append's seven — the five event arrays
(type, session_id, turn_id, interaction_id, body), the lock key and the notification
payload's suffix (`:<schema>`) — and, for `SETTLE_APPENDING`, an eighth: which events
wait for the turn to be idle.
"""

from __future__ import annotations

__all__ = [
    "APPEND",
    "CHANNEL",
    "COUNT_PENDING",
    "CREATE",
    "CREATE_APPENDING",
    "FIND_BY_TOOL_CALL",
    "GET",
    "LOCK_SESSION",
    "LOCK_SESSION_READING",
    "QUEUE",
    "READ_EVENTS",
    "READ_SESSION_EVENTS",
    "SETTLE",
    "SETTLE_APPENDING",
    "UNLOCK_SESSION",
    "list_query",
]

CHANNEL = "midturn_events"


def _appending(change: str | None, first: int, idle: str | None = None) -> str:
    """A statement that makes `change` (a data-modifying statement RETURNING a row when
    it happened, or None for an unconditional append) and appends the events gated on
    it, with the append's parameters numbered from `first`.

    With `idle` (a boolean SQL expression) the append takes an eighth parameter, a
    `bool[]` parallel to the events: an event marked true is appended only when `idle`
    holds (the `turn_done` events of `settle_in_turn`)."""
    p = [f"${first + offset}" for offset in range(8)]
    gate = "changed" if change is not None else "(SELECT 1) AS always"
    head = f"WITH changed AS ({change}),\n" if change is not None else "WITH "
    changed = "(SELECT count(*) FROM changed)" if change is not None else "1"
    if idle is None:
        when, arrays, columns = "", "", ""
    else:
        when = f"\n    WHERE NOT e.when_idle OR ({idle})"
        arrays, columns = f", {p[7]}::bool[]", ", when_idle"
    return f"""{head}locked AS (
    SELECT pg_advisory_xact_lock({p[5]}::bigint) FROM {gate}
),
inserted AS (
    INSERT INTO midturn_events (type, session_id, turn_id, interaction_id, body)
    SELECT e.type, e.session_id, e.turn_id, e.interaction_id, e.body
    FROM locked,
        unnest({p[0]}::text[], {p[1]}::text[], {p[2]}::text[], {p[3]}::text[],
            {p[4]}::text[]{arrays})
        WITH ORDINALITY
            AS e (type, session_id, turn_id, interaction_id, body{columns}, position){when}
    ORDER BY e.position
    RETURNING id
),
notified AS (
    SELECT pg_notify('{CHANNEL}', max(id)::text || {p[6]}::text) FROM inserted
    HAVING count(*) > 0
)
SELECT {changed} AS changed,
    (SELECT array_agg(id ORDER BY id) FROM inserted) AS ids,
    (SELECT count(*) FROM notified) AS notified
"""


_INSERT_INTERACTION = """
INSERT INTO midturn_interactions
    (id, kind, session_id, turn_id, tool_call_id, status, created_at, settled_at, body)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT DO NOTHING
RETURNING seq
"""

_SETTLE_INTERACTION = """
UPDATE midturn_interactions SET status = $2, settled_at = $3, body = $4
WHERE id = $1 AND status = 'pending'
RETURNING seq
"""

# Whether nothing of the settled interaction's turn ($5, $6) but itself is pending. The
# statement runs under the session's lock (see below) and so sees every other settle of
# the session committed; its own update it cannot see, hence `id <> $1`.
_TURN_IDLE = """NOT EXISTS (
        SELECT 1 FROM midturn_interactions
        WHERE session_id = $5 AND turn_id = $6 AND status = 'pending' AND id <> $1
    )"""

# A session's queue before a park, read under the session's lock: the interaction its
# tool call ($3, may be null) already made, the number pending (the queue position) and
# whether one of them belongs to the turn ($2). Each an index probe (migration 4).
QUEUE = """
SELECT
    (SELECT body FROM midturn_interactions WHERE session_id = $1 AND tool_call_id = $3)
        AS existing,
    coalesce((SELECT pending FROM midturn_queues WHERE session_id = $1), 0) AS position,
    EXISTS (
        SELECT 1 FROM midturn_interactions
        WHERE session_id = $1 AND turn_id = $2 AND status = 'pending'
    ) AS waiting
"""

# Every write of a session's interactions holds this session-level advisory lock (one
# key per schema and session) from before its first read until after its commit, so
# those writes happen one at a time per session, across processes. It is taken before
# any row lock and the append lock, in every write: no deadlock.
LOCK_SESSION = "SELECT pg_advisory_lock($1::bigint)"
# The same, reading an interaction ($2) in the statement: what it reads is as of the
# statement's start, before the lock was waited for, like a read made just before it.
LOCK_SESSION_READING = (
    "SELECT body FROM (SELECT pg_advisory_lock($1::bigint)) AS locked"
    " LEFT JOIN midturn_interactions ON id = $2"
)
UNLOCK_SESSION = "SELECT pg_advisory_unlock($1::bigint)"

CREATE = _INSERT_INTERACTION
CREATE_APPENDING = _appending(_INSERT_INTERACTION, 10)
SETTLE = _SETTLE_INTERACTION
SETTLE_APPENDING = _appending(_SETTLE_INTERACTION, 7, idle=_TURN_IDLE)
APPEND = _appending(None, 1)

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
