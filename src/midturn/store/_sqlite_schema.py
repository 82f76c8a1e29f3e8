"""The SQLite schema as numbered migrations (docs/storage.md).

`MIGRATIONS[n - 1]` is migration number `n`. Each is applied once, in order, inside one
transaction with its row in `midturn_migrations`; a migration is never edited after it
ships — a change is a new, higher number.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MIGRATIONS", "MIGRATIONS_TABLE", "Migration"]


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS midturn_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
)
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "interactions, sessions and the event log",
        (
            # `seq` is the rowid: insertion order, the tie-break after created_at. Times
            # are fixed-width UTC text, so text order is time order. `body` is the whole
            # interaction as compact JSON; the other columns exist to filter and sort.
            """
            CREATE TABLE midturn_interactions (
                seq          INTEGER PRIMARY KEY,
                id           TEXT NOT NULL UNIQUE,
                kind         TEXT NOT NULL CHECK (kind IN ('ask', 'permission')),
                session_id   TEXT NOT NULL,
                turn_id      TEXT NOT NULL,
                tool_call_id TEXT,
                status       TEXT NOT NULL,
                created_at   TEXT NOT NULL,
                settled_at   TEXT,
                body         TEXT NOT NULL,
                UNIQUE (session_id, tool_call_id)
            )
            """,
            "CREATE INDEX midturn_interactions_by_time ON midturn_interactions (created_at, seq)",
            """
            CREATE INDEX midturn_interactions_by_session
                ON midturn_interactions (session_id, created_at, seq)
            """,
            """
            CREATE INDEX midturn_interactions_by_status
                ON midturn_interactions (status, created_at, seq)
            """,
            "CREATE INDEX midturn_interactions_by_turn ON midturn_interactions (turn_id)",
            # AUTOINCREMENT: ids only grow and are never reused, even after the deletion
            # of the newest row (migration 9 drops it: a prune keeps the newest row).
            """
            CREATE TABLE midturn_events (
                id             INTEGER PRIMARY KEY AUTOINCREMENT,
                type           TEXT NOT NULL,
                session_id     TEXT NOT NULL,
                turn_id        TEXT NOT NULL,
                interaction_id TEXT,
                at             TEXT NOT NULL,
                body           TEXT NOT NULL
            )
            """,
            "CREATE INDEX midturn_events_by_session ON midturn_events (session_id, id)",
            "CREATE INDEX midturn_events_by_interaction ON midturn_events (interaction_id)",
            """
            CREATE TABLE midturn_sessions (
                seq               INTEGER PRIMARY KEY,
                id                TEXT NOT NULL UNIQUE,
                agent_token_hash  TEXT NOT NULL,
                answer_token_hash TEXT NOT NULL,
                created_at        TEXT NOT NULL,
                body              TEXT NOT NULL
            )
            """,
            "CREATE INDEX midturn_sessions_by_time ON midturn_sessions (created_at, seq)",
            "CREATE INDEX midturn_sessions_by_agent_token ON midturn_sessions (agent_token_hash)",
            "CREATE INDEX midturn_sessions_by_answer_token ON midturn_sessions (answer_token_hash)",
        ),
    ),
    Migration(
        2,
        "a partial index of pending interactions by session and turn",
        (
            # The queue position when parking and "is the turn still waiting" when
            # settling read only pending rows, however many settled ones a session has.
            """
            CREATE INDEX midturn_interactions_pending
                ON midturn_interactions (session_id, turn_id) WHERE status = 'pending'
            """,
        ),
    ),
    Migration(
        3,
        "ended turns: a stopped or finished turn parks nothing and its grants end",
        (
            # One row per turn that ended (stopped, or finished normally); the first
            # record stays. Read before every park and every allow-for-turn check.
            """
            CREATE TABLE midturn_turns_ended (
                session_id TEXT NOT NULL,
                turn_id    TEXT NOT NULL,
                how        TEXT NOT NULL,
                ended_at   TEXT NOT NULL,
                PRIMARY KEY (session_id, turn_id)
            )
            """,
        ),
    ),
    Migration(
        4,
        "pending counts per session",
        (
            # A session's queue position is its number of pending interactions: kept in
            # `midturn_queues` by the triggers below, whatever statement changes a row,
            # and read in constant time however long the queue is (counting the
            # partial index cost a park 20 ms at 20,000 pending).
            """
            CREATE TABLE midturn_queues (
                session_id TEXT PRIMARY KEY,
                pending    INTEGER NOT NULL CHECK (pending >= 0)
            ) WITHOUT ROWID
            """,
            """
            CREATE TRIGGER midturn_count_inserted AFTER INSERT ON midturn_interactions
            WHEN NEW.status = 'pending'
            BEGIN
                INSERT INTO midturn_queues (session_id, pending) VALUES (NEW.session_id, 1)
                ON CONFLICT (session_id) DO UPDATE SET pending = pending + 1;
            END
            """,
            """
            CREATE TRIGGER midturn_count_updated
            AFTER UPDATE OF status, session_id ON midturn_interactions
            WHEN (OLD.status = 'pending') <> (NEW.status = 'pending')
                OR (NEW.status = 'pending' AND OLD.session_id <> NEW.session_id)
            BEGIN
                UPDATE midturn_queues SET pending = pending - 1
                WHERE OLD.status = 'pending' AND session_id = OLD.session_id;
                INSERT INTO midturn_queues (session_id, pending)
                SELECT NEW.session_id, 1 WHERE NEW.status = 'pending'
                ON CONFLICT (session_id) DO UPDATE SET pending = pending + 1;
            END
            """,
            """
            CREATE TRIGGER midturn_count_deleted AFTER DELETE ON midturn_interactions
            WHEN OLD.status = 'pending'
            BEGIN
                UPDATE midturn_queues SET pending = pending - 1
                WHERE session_id = OLD.session_id;
            END
            """,
            # In the migration's write transaction: no write falls between the count and
            # the triggers.
            """
            INSERT INTO midturn_queues (session_id, pending)
            SELECT session_id, count(*) FROM midturn_interactions
            WHERE status = 'pending' GROUP BY session_id
            """,
        ),
    ),
    Migration(
        5,
        "a partial index of pending interactions by deadline",
        (
            # A start arms the deadlines of pending interactions soonest first, a page at
            # a time, reading only the id and the deadline (`pending_deadlines`).
            """
            CREATE INDEX midturn_interactions_pending_deadline
                ON midturn_interactions (json_extract(body, '$.deadline'), id)
                WHERE status = 'pending'
            """,
        ),
    ),
    Migration(
        6,
        "the notification outbox: webhook destinations, deliveries and the fan-out cursor",
        (
            # docs/notifications.md. A destination is its whole record as JSON.
            """
            CREATE TABLE midturn_webhooks (
                seq  INTEGER PRIMARY KEY,
                id   TEXT NOT NULL UNIQUE,
                body TEXT NOT NULL
            )
            """,
            # A delivery: `body` is the whole record as JSON; the columns beside it are
            # what claims, pages and cancels filter on, and they win over the body's
            # copy (a claim writes only the lease columns).
            """
            CREATE TABLE midturn_deliveries (
                seq             INTEGER PRIMARY KEY,
                id              TEXT NOT NULL UNIQUE,
                destination_id  TEXT NOT NULL,
                key             TEXT NOT NULL,
                interaction_id  TEXT,
                type            TEXT NOT NULL,
                status          TEXT NOT NULL,
                next_attempt_at TEXT NOT NULL,
                lease_owner     TEXT,
                lease_until     TEXT,
                body            TEXT NOT NULL,
                UNIQUE (destination_id, key)
            )
            """,
            """
            CREATE INDEX midturn_deliveries_due
                ON midturn_deliveries (next_attempt_at, seq) WHERE status = 'pending'
            """,
            """
            CREATE INDEX midturn_deliveries_by_destination
                ON midturn_deliveries (destination_id, seq)
            """,
            """
            CREATE INDEX midturn_deliveries_by_interaction
                ON midturn_deliveries (interaction_id) WHERE status = 'pending'
            """,
            """
            CREATE TABLE midturn_outbox_cursor (
                name     TEXT PRIMARY KEY,
                position INTEGER NOT NULL
            )
            """,
            "INSERT INTO midturn_outbox_cursor (name, position) VALUES ('events', 0)",
        ),
    ),
    Migration(
        7,
        "pending counts keep a row only for a session with something pending",
        (
            # A session's row goes once its last pending interaction settles (it comes
            # back with its next park), so the table holds the sessions that wait, not
            # every session ever: the server-wide pending count (`count_pending`, read by
            # /metrics) sums these rows instead of counting every pending interaction.
            "DROP TRIGGER midturn_count_updated",
            "DROP TRIGGER midturn_count_deleted",
            """
            CREATE TRIGGER midturn_count_updated
            AFTER UPDATE OF status, session_id ON midturn_interactions
            WHEN (OLD.status = 'pending') <> (NEW.status = 'pending')
                OR (NEW.status = 'pending' AND OLD.session_id <> NEW.session_id)
            BEGIN
                DELETE FROM midturn_queues
                WHERE OLD.status = 'pending' AND session_id = OLD.session_id AND pending <= 1;
                UPDATE midturn_queues SET pending = pending - 1
                WHERE OLD.status = 'pending' AND session_id = OLD.session_id;
                INSERT INTO midturn_queues (session_id, pending)
                SELECT NEW.session_id, 1 WHERE NEW.status = 'pending'
                ON CONFLICT (session_id) DO UPDATE SET pending = pending + 1;
            END
            """,
            """
            CREATE TRIGGER midturn_count_deleted AFTER DELETE ON midturn_interactions
            WHEN OLD.status = 'pending'
            BEGIN
                DELETE FROM midturn_queues WHERE session_id = OLD.session_id AND pending <= 1;
                UPDATE midturn_queues SET pending = pending - 1
                WHERE session_id = OLD.session_id;
            END
            """,
            "DELETE FROM midturn_queues WHERE pending = 0",
        ),
    ),
    Migration(
        8,
        "fewer index pages per park and settle",
        (
            # A write appends one WAL frame per b-tree page it touches, so every index is
            # paid on every park and settle (docs/benchmarks.md, "SQLite write path").
            # The turn's index holds the status too: "does the turn wait" (a park's
            # queue read), "is anything of the turn still pending" (a settle) and a
            # turn's allowed permissions are one probe each, and a settle moves the row
            # within one leaf, (s, t, 'pending') to (s, t, 'answered'). It replaces the
            # turn_id index, which no query used alone, and the partial index of pending
            # rows by (session_id, turn_id).
            "DROP INDEX midturn_interactions_by_turn",
            "DROP INDEX midturn_interactions_pending",
            """
            CREATE INDEX midturn_interactions_by_turn_status
                ON midturn_interactions (session_id, turn_id, status)
            """,
            # Only pending rows are listed by status without a session (the inbox, a
            # start's recovery); the index of every row by status moved a settled row
            # to another leaf on each settle. Other statuses are a filter on the time
            # index, as on PostgreSQL.
            "DROP INDEX midturn_interactions_by_status",
            """
            CREATE INDEX midturn_interactions_pending_by_time
                ON midturn_interactions (created_at, seq) WHERE status = 'pending'
            """,
            # Deadlines: only the pending rows that have one (an ask without a timeout
            # no longer writes this index at all).
            "DROP INDEX midturn_interactions_pending_deadline",
            """
            CREATE INDEX midturn_interactions_deadlines
                ON midturn_interactions (json_extract(body, '$.deadline'), id)
                WHERE status = 'pending' AND json_extract(body, '$.deadline') IS NOT NULL
            """,
            # Events by interaction (read only by a prune): a turn's own events have none,
            # and their NULL keys all went to the index's first leaf, one more page for
            # every write that appends one.
            "DROP INDEX midturn_events_by_interaction",
            """
            CREATE INDEX midturn_events_of_interaction
                ON midturn_events (interaction_id) WHERE interaction_id IS NOT NULL
            """,
        ),
    ),
    Migration(
        9,
        "event ids without a sequence table",
        (
            # AUTOINCREMENT wrote `sqlite_sequence` on every append, one WAL frame of a
            # dozen per park and per settle. Without it an id is the largest in the
            # table plus one, which never goes back: a prune never deletes the newest
            # event, and an append that rolls back takes its ids (never read by anyone)
            # with it, as it took its `sqlite_sequence` update. Only a newest event
            # deleted outside midturn leaves the sequence above the largest id; the
            # rebuild would hand those ids out again, so it refuses.
            """
            CREATE TEMP TABLE midturn_event_ids (
                gap INTEGER,
                CONSTRAINT "the newest event ids were deleted outside midturn; to let them be
 handed out again, run UPDATE sqlite_sequence SET seq = (SELECT max(id) FROM
 midturn_events) WHERE name = 'midturn_events' and open the file again" CHECK (gap <= 0)
            )
            """,
            """
            INSERT INTO temp.midturn_event_ids (gap)
            SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'midturn_events'), 0)
                - coalesce((SELECT max(id) FROM midturn_events), 0)
            """,
            "DROP TABLE temp.midturn_event_ids",
            """
            CREATE TABLE midturn_events_rebuilt (
                id             INTEGER PRIMARY KEY,
                type           TEXT NOT NULL,
                session_id     TEXT NOT NULL,
                turn_id        TEXT NOT NULL,
                interaction_id TEXT,
                at             TEXT NOT NULL,
                body           TEXT NOT NULL
            )
            """,
            """
            INSERT INTO midturn_events_rebuilt
                (id, type, session_id, turn_id, interaction_id, at, body)
            SELECT id, type, session_id, turn_id, interaction_id, at, body
            FROM midturn_events ORDER BY id
            """,
            # Its indexes and its `sqlite_sequence` row go with it.
            "DROP TABLE midturn_events",
            "ALTER TABLE midturn_events_rebuilt RENAME TO midturn_events",
            "CREATE INDEX midturn_events_by_session ON midturn_events (session_id, id)",
            """
            CREATE INDEX midturn_events_of_interaction
                ON midturn_events (interaction_id) WHERE interaction_id IS NOT NULL
            """,
        ),
    ),
    Migration(
        10,
        "only asks with a tool call in the tool call index",
        (
            # The table's UNIQUE (session_id, tool_call_id) put every row in its index,
            # those without a tool call too (NULLs never conflict): one more b-tree page
            # for every park without one (a gateway ask often has none). A constraint
            # cannot be dropped, so the table is rebuilt with the same rows and seq, and
            # a partial unique index takes its place (`tool_call_id = ?` implies the
            # index's condition, so the lookups still use it). Its indexes and triggers
            # go with the old table and are made again, as migrations 4, 7 and 8 left
            # them; `midturn_queues` is untouched (the copy fires no trigger).
            """
            CREATE TABLE midturn_interactions_rebuilt (
                seq          INTEGER PRIMARY KEY,
                id           TEXT NOT NULL UNIQUE,
                kind         TEXT NOT NULL CHECK (kind IN ('ask', 'permission')),
                session_id   TEXT NOT NULL,
                turn_id      TEXT NOT NULL,
                tool_call_id TEXT,
                status       TEXT NOT NULL,
                created_at   TEXT NOT NULL,
                settled_at   TEXT,
                body         TEXT NOT NULL
            )
            """,
            """
            INSERT INTO midturn_interactions_rebuilt (seq, id, kind, session_id, turn_id,
                tool_call_id, status, created_at, settled_at, body)
            SELECT seq, id, kind, session_id, turn_id, tool_call_id, status, created_at,
                settled_at, body
            FROM midturn_interactions ORDER BY seq
            """,
            "DROP TABLE midturn_interactions",
            "ALTER TABLE midturn_interactions_rebuilt RENAME TO midturn_interactions",
            """
            CREATE UNIQUE INDEX midturn_interactions_by_tool_call
                ON midturn_interactions (session_id, tool_call_id) WHERE tool_call_id IS NOT NULL
            """,
            "CREATE INDEX midturn_interactions_by_time ON midturn_interactions (created_at, seq)",
            """
            CREATE INDEX midturn_interactions_by_session
                ON midturn_interactions (session_id, created_at, seq)
            """,
            """
            CREATE INDEX midturn_interactions_by_turn_status
                ON midturn_interactions (session_id, turn_id, status)
            """,
            """
            CREATE INDEX midturn_interactions_pending_by_time
                ON midturn_interactions (created_at, seq) WHERE status = 'pending'
            """,
            """
            CREATE INDEX midturn_interactions_deadlines
                ON midturn_interactions (json_extract(body, '$.deadline'), id)
                WHERE status = 'pending' AND json_extract(body, '$.deadline') IS NOT NULL
            """,
            """
            CREATE TRIGGER midturn_count_inserted AFTER INSERT ON midturn_interactions
            WHEN NEW.status = 'pending'
            BEGIN
                INSERT INTO midturn_queues (session_id, pending) VALUES (NEW.session_id, 1)
                ON CONFLICT (session_id) DO UPDATE SET pending = pending + 1;
            END
            """,
            """
            CREATE TRIGGER midturn_count_updated
            AFTER UPDATE OF status, session_id ON midturn_interactions
            WHEN (OLD.status = 'pending') <> (NEW.status = 'pending')
                OR (NEW.status = 'pending' AND OLD.session_id <> NEW.session_id)
            BEGIN
                DELETE FROM midturn_queues
                WHERE OLD.status = 'pending' AND session_id = OLD.session_id AND pending <= 1;
                UPDATE midturn_queues SET pending = pending - 1
                WHERE OLD.status = 'pending' AND session_id = OLD.session_id;
                INSERT INTO midturn_queues (session_id, pending)
                SELECT NEW.session_id, 1 WHERE NEW.status = 'pending'
                ON CONFLICT (session_id) DO UPDATE SET pending = pending + 1;
            END
            """,
            """
            CREATE TRIGGER midturn_count_deleted AFTER DELETE ON midturn_interactions
            WHEN OLD.status = 'pending'
            BEGIN
                DELETE FROM midturn_queues WHERE session_id = OLD.session_id AND pending <= 1;
                UPDATE midturn_queues SET pending = pending - 1
                WHERE session_id = OLD.session_id;
            END
            """,
        ),
    ),
    Migration(
        11,
        "no index of events by interaction",
        (
            # Every event of an interaction wrote a page of this index (keyed by a random
            # id, so a leaf of its own even in a shared group commit): 1.2-1.3 WAL frames
            # of the ~21 a park and settle write (docs/benchmarks.md, stop 28's WAL lane),
            # for one reader, the retention prune. A prune finds an interaction's events
            # among its session's instead (`midturn_events_by_session`), one statement
            # per session of a batch (`_PRUNE_SESSION_EVENTS` in `_sqlite.py`).
            "DROP INDEX midturn_events_of_interaction",
        ),
    ),
)
