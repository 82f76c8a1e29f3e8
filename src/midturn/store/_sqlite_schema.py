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
            # AUTOINCREMENT: ids only grow and are never reused, even after a rollback
            # or the deletion of the newest row.
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
)
