"""The PostgreSQL schema as numbered migrations, and the code that applies them.

`MIGRATIONS[n - 1]` is migration number `n`. Each is applied once, in order, in one
transaction together with its row in `midturn_migrations`; a migration is never edited
after it ships — a change is a new, higher number.

Several replicas may start at the same moment on one database. `migrate` therefore holds
a transaction-level advisory lock (one key per schema) from before it creates the schema
until its transaction commits: the first replica migrates, the others wait on the lock,
then find every version applied and do nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from midturn.errors import UsageError

__all__ = ["MIGRATIONS", "Migration", "advisory_key", "migrate", "quote_ident"]


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS midturn_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "interactions, sessions and the event log",
        (
            # `seq` is insertion order, the tie-break after created_at. Times are
            # fixed-width UTC text (`sort_key_time`), so text order is time order, as in
            # the SQLite store. `body` is the whole interaction as compact JSON; the other
            # columns exist to filter and sort.
            """
            CREATE TABLE midturn_interactions (
                seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
            CREATE INDEX midturn_interactions_pending
                ON midturn_interactions (created_at, seq) WHERE status = 'pending'
            """,
            "CREATE INDEX midturn_interactions_by_turn ON midturn_interactions (turn_id)",
            # Event ids come from an identity column, but every append takes the store's
            # append lock first (see _postgres.py), so ids are handed out and committed
            # in the same order: a reader that has seen id N has seen every id below N.
            """
            CREATE TABLE midturn_events (
                id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                type           TEXT NOT NULL,
                session_id     TEXT NOT NULL,
                turn_id        TEXT NOT NULL,
                interaction_id TEXT,
                body           TEXT NOT NULL
            )
            """,
            "CREATE INDEX midturn_events_by_session ON midturn_events (session_id, id)",
            """
            CREATE TABLE midturn_sessions (
                seq               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                id                TEXT NOT NULL UNIQUE,
                agent_token_hash  TEXT NOT NULL,
                answer_token_hash TEXT NOT NULL,
                created_at        TEXT NOT NULL,
                body              TEXT NOT NULL
            )
            """,
            "CREATE INDEX midturn_sessions_by_time ON midturn_sessions (created_at, seq)",
        ),
    ),
    Migration(
        2,
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
        3,
        "an index of events by interaction, for retention",
        (
            # Pruning a settled interaction deletes its events by interaction id (the
            # SQLite schema has had this index from its first migration).
            """
            CREATE INDEX IF NOT EXISTS midturn_events_by_interaction
                ON midturn_events (interaction_id)
            """,
        ),
    ),
    Migration(
        4,
        "pending counts per session, and partial indexes of the pending by session and turn",
        (
            # A session's queue position is its number of pending interactions: kept in
            # `midturn_queues` by the triggers below, whatever statement changes a row
            # (so an older replica's writes during a rolling upgrade count too), and read
            # in constant time however long the queue is.
            """
            CREATE TABLE midturn_queues (
                session_id TEXT PRIMARY KEY,
                pending    BIGINT NOT NULL CHECK (pending >= 0)
            )
            """,
            # `SET search_path FROM CURRENT`: the function finds this schema's table
            # whatever the search_path of the connection whose write fires it.
            """
            CREATE FUNCTION midturn_count_pending() RETURNS trigger
            LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
            BEGIN
                IF TG_OP <> 'INSERT' AND OLD.status = 'pending' THEN
                    UPDATE midturn_queues SET pending = pending - 1
                    WHERE session_id = OLD.session_id;
                END IF;
                IF TG_OP <> 'DELETE' AND NEW.status = 'pending' THEN
                    INSERT INTO midturn_queues AS q (session_id, pending)
                    VALUES (NEW.session_id, 1)
                    ON CONFLICT (session_id) DO UPDATE SET pending = q.pending + 1;
                END IF;
                RETURN NULL;
            END
            $$
            """,
            """
            CREATE TRIGGER midturn_count_inserted AFTER INSERT ON midturn_interactions
            FOR EACH ROW WHEN (NEW.status = 'pending')
            EXECUTE FUNCTION midturn_count_pending()
            """,
            """
            CREATE TRIGGER midturn_count_updated
            AFTER UPDATE OF status, session_id ON midturn_interactions
            FOR EACH ROW WHEN (
                (OLD.status = 'pending') <> (NEW.status = 'pending')
                OR (NEW.status = 'pending' AND OLD.session_id <> NEW.session_id)
            )
            EXECUTE FUNCTION midturn_count_pending()
            """,
            """
            CREATE TRIGGER midturn_count_deleted AFTER DELETE ON midturn_interactions
            FOR EACH ROW WHEN (OLD.status = 'pending')
            EXECUTE FUNCTION midturn_count_pending()
            """,
            # The trigger holds a lock on the table from its creation to this commit, so
            # no write falls between the count and the triggers.
            """
            INSERT INTO midturn_queues (session_id, pending)
            SELECT session_id, count(*) FROM midturn_interactions
            WHERE status = 'pending' GROUP BY session_id
            """,
            # "Is the turn waiting" when parking and "is anything of the turn still
            # pending" when settling: one index probe each. And a session's queue, head
            # first, reads only its pending rows, however many settled ones it has.
            """
            CREATE INDEX midturn_interactions_pending_by_turn
                ON midturn_interactions (session_id, turn_id) WHERE status = 'pending'
            """,
            """
            CREATE INDEX midturn_interactions_pending_by_session
                ON midturn_interactions (session_id, created_at, seq) WHERE status = 'pending'
            """,
        ),
    ),
    Migration(
        5,
        "a partial index of pending interactions by deadline",
        (
            # A start arms the deadlines of pending interactions soonest first, a page at
            # a time, reading only the id and the deadline (`pending_deadlines`). The
            # deadline is cut out of the body's text, not parsed as JSON: PostgreSQL's
            # JSON functions refuse a body holding an escaped NUL (\u0000), which an
            # answer may. The body is compact JSON whose top-level `deadline` comes
            # before any nested object, so the first `"deadline":"…"` is that one.
            """
            CREATE INDEX IF NOT EXISTS midturn_interactions_pending_deadline
                ON midturn_interactions
                ((substring(body from '"deadline":"([^"]+)"')), id)
                WHERE status = 'pending'
            """,
        ),
    ),
    Migration(
        6,
        "the notification outbox: webhook destinations, deliveries and the fan-out cursor",
        (
            # docs/notifications.md; the same shape as the SQLite store's migration 6.
            """
            CREATE TABLE midturn_webhooks (
                seq  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                id   TEXT NOT NULL UNIQUE,
                body TEXT NOT NULL
            )
            """,
            """
            CREATE TABLE midturn_deliveries (
                seq             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
                position BIGINT NOT NULL
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
            # A park racing the delete waits on its row lock, then inserts afresh.
            """
            CREATE OR REPLACE FUNCTION midturn_count_pending() RETURNS trigger
            LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
            BEGIN
                IF TG_OP <> 'INSERT' AND OLD.status = 'pending' THEN
                    DELETE FROM midturn_queues
                    WHERE session_id = OLD.session_id AND pending <= 1;
                    IF NOT FOUND THEN
                        UPDATE midturn_queues SET pending = pending - 1
                        WHERE session_id = OLD.session_id;
                    END IF;
                END IF;
                IF TG_OP <> 'DELETE' AND NEW.status = 'pending' THEN
                    INSERT INTO midturn_queues AS q (session_id, pending)
                    VALUES (NEW.session_id, 1)
                    ON CONFLICT (session_id) DO UPDATE SET pending = q.pending + 1;
                END IF;
                RETURN NULL;
            END
            $$
            """,
            "DELETE FROM midturn_queues WHERE pending = 0",
        ),
    ),
    Migration(
        8,
        "a park and a settle are one function call each: one round trip to the server",
        (
            # The append every write makes (the two functions below, and `APPEND` of
            # `_postgres_sql.py`): the events (parallel arrays, in their order) under
            # the append lock (the last lock a write takes, held until commit: ids
            # commit in the order drawn), then `pg_notify` with the newest id, delivered
            # at commit. An event marked in `gated` is left out when `drop_gated` holds.
            # Returns the ids drawn, or NULL when nothing was appended.
            """
            CREATE FUNCTION midturn_append(
                types text[], sessions text[], turns text[], interactions text[],
                bodies text[], gated boolean[], drop_gated boolean,
                append_key bigint, notify_suffix text
            ) RETURNS bigint[]
            LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
            DECLARE
                drawn bigint[];
            BEGIN
                IF coalesce(cardinality(types), 0) = 0 THEN
                    RETURN NULL;
                END IF;
                PERFORM pg_advisory_xact_lock(append_key);
                WITH inserted AS (
                    INSERT INTO midturn_events
                        (type, session_id, turn_id, interaction_id, body)
                    SELECT e.type, e.session_id, e.turn_id, e.interaction_id, e.body
                    FROM unnest(types, sessions, turns, interactions, bodies, gated)
                        WITH ORDINALITY AS e (type, session_id, turn_id, interaction_id,
                            body, gated, position)
                    WHERE NOT (drop_gated AND e.gated)
                    ORDER BY e.position
                    RETURNING id
                )
                SELECT array_agg(id ORDER BY id) INTO drawn FROM inserted;
                IF drawn IS NOT NULL THEN
                    PERFORM pg_notify('midturn_events',
                        drawn[cardinality(drawn)]::text || notify_suffix);
                END IF;
                RETURN drawn;
            END
            $$
            """,
            # A park, whole, in one transaction: the session's lock (a transaction lock
            # on the key the session-level lock of earlier versions uses, so a replica
            # still running one excludes it alike), then, each statement with a fresh
            # snapshot that sees what the lock's previous holder committed: the row of a
            # repeated tool call (`existing`), the queue (`queue_position`: the
            # session's pending count; `turn_waits`: one of the turn is pending), the
            # insert and the append. The caller chose the events for a queue it
            # expected (`expected_position`, `expected_waits`); when the queue is
            # another (`missed`), nothing is written and the caller, told the queue,
            # chooses again. NULL expected: park whatever the queue. `taken`: the id is
            # another interaction's.
            """
            CREATE FUNCTION midturn_park(
                session_key bigint,
                p_id text, p_kind text, p_session_id text, p_turn_id text,
                p_tool_call_id text, p_status text, p_created_at text,
                p_settled_at text, p_body text,
                expected_position bigint, expected_waits boolean,
                types text[], sessions text[], turns text[], interactions text[],
                bodies text[], append_key bigint, notify_suffix text,
                OUT outcome text, OUT queue_position bigint, OUT turn_waits boolean,
                OUT existing text, OUT event_ids bigint[]
            )
            LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
            BEGIN
                PERFORM pg_advisory_xact_lock(session_key);
                IF p_tool_call_id IS NOT NULL THEN
                    SELECT body INTO existing FROM midturn_interactions
                    WHERE session_id = p_session_id AND tool_call_id = p_tool_call_id;
                    IF existing IS NOT NULL THEN
                        outcome := 'existing';
                        RETURN;
                    END IF;
                END IF;
                SELECT coalesce(
                    (SELECT pending FROM midturn_queues WHERE session_id = p_session_id), 0
                ) INTO queue_position;
                SELECT EXISTS (
                    SELECT 1 FROM midturn_interactions
                    WHERE session_id = p_session_id AND turn_id = p_turn_id
                        AND status = 'pending'
                ) INTO turn_waits;
                IF expected_position IS NOT NULL AND (queue_position, turn_waits)
                        IS DISTINCT FROM (expected_position, expected_waits) THEN
                    outcome := 'missed';
                    RETURN;
                END IF;
                INSERT INTO midturn_interactions (id, kind, session_id, turn_id,
                    tool_call_id, status, created_at, settled_at, body)
                VALUES (p_id, p_kind, p_session_id, p_turn_id, p_tool_call_id, p_status,
                    p_created_at, p_settled_at, p_body)
                ON CONFLICT DO NOTHING;
                IF NOT FOUND THEN
                    outcome := 'taken';
                    RETURN;
                END IF;
                outcome := 'created';
                event_ids := midturn_append(types, sessions, turns, interactions, bodies,
                    NULL, false, append_key, notify_suffix);
            END
            $$
            """,
            # A settle, whole, in one transaction: the session's lock, the
            # compare-and-set (`won`), and for the winner whether the turn still waits
            # on another (`turn_waits`; the events marked in `gated` are appended only
            # when it does not), the session's pending count left and the append. The
            # loser gets the row as the winner left it (`current_body`; NULL when there is
            # none).
            """
            CREATE FUNCTION midturn_settle(
                session_key bigint,
                p_id text, p_status text, p_settled_at text, p_body text,
                p_session_id text, p_turn_id text,
                types text[], sessions text[], turns text[], interactions text[],
                bodies text[], gated boolean[], append_key bigint, notify_suffix text,
                OUT won boolean, OUT current_body text, OUT turn_waits boolean,
                OUT session_pending bigint, OUT event_ids bigint[]
            )
            LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
            BEGIN
                PERFORM pg_advisory_xact_lock(session_key);
                UPDATE midturn_interactions
                SET status = p_status, settled_at = p_settled_at, body = p_body
                WHERE id = p_id AND status = 'pending';
                won := FOUND;
                IF NOT won THEN
                    SELECT body INTO current_body FROM midturn_interactions WHERE id = p_id;
                    RETURN;
                END IF;
                SELECT EXISTS (
                    SELECT 1 FROM midturn_interactions
                    WHERE session_id = p_session_id AND turn_id = p_turn_id
                        AND status = 'pending'
                ) INTO turn_waits;
                SELECT coalesce(
                    (SELECT pending FROM midturn_queues WHERE session_id = p_session_id), 0
                ) INTO session_pending;
                event_ids := midturn_append(types, sessions, turns, interactions, bodies,
                    gated, turn_waits, append_key, notify_suffix);
            END
            $$
            """,
        ),
    ),
    Migration(
        9,
        "a park reads the turn's end under the session's lock",
        (
            # Migration 8's park with one more argument, `unless_ended`: when it holds
            # and the turn has ended (`midturn_turns_ended`), nothing is written
            # (`ended`, before the repeated tool call's read: an ended turn parks
            # nothing, a repeat included). Read after the session's lock, as the queue
            # is: ending a turn takes that lock too (the store's `end_turn`), so a turn
            # ends either before this read, which sees it, or after this park's commit,
            # and the end's list of the turn's pending interactions sees the park.
            # Migration 8's function stays, for replicas not yet upgraded (they read the
            # turn's end themselves, before and after their park).
            """
            CREATE FUNCTION midturn_park(
                session_key bigint,
                p_id text, p_kind text, p_session_id text, p_turn_id text,
                p_tool_call_id text, p_status text, p_created_at text,
                p_settled_at text, p_body text,
                expected_position bigint, expected_waits boolean, unless_ended boolean,
                types text[], sessions text[], turns text[], interactions text[],
                bodies text[], append_key bigint, notify_suffix text,
                OUT outcome text, OUT queue_position bigint, OUT turn_waits boolean,
                OUT existing text, OUT event_ids bigint[]
            )
            LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
            BEGIN
                PERFORM pg_advisory_xact_lock(session_key);
                IF unless_ended AND EXISTS (
                    SELECT 1 FROM midturn_turns_ended
                    WHERE session_id = p_session_id AND turn_id = p_turn_id
                ) THEN
                    outcome := 'ended';
                    RETURN;
                END IF;
                IF p_tool_call_id IS NOT NULL THEN
                    SELECT body INTO existing FROM midturn_interactions
                    WHERE session_id = p_session_id AND tool_call_id = p_tool_call_id;
                    IF existing IS NOT NULL THEN
                        outcome := 'existing';
                        RETURN;
                    END IF;
                END IF;
                SELECT coalesce(
                    (SELECT pending FROM midturn_queues WHERE session_id = p_session_id), 0
                ) INTO queue_position;
                SELECT EXISTS (
                    SELECT 1 FROM midturn_interactions
                    WHERE session_id = p_session_id AND turn_id = p_turn_id
                        AND status = 'pending'
                ) INTO turn_waits;
                IF expected_position IS NOT NULL AND (queue_position, turn_waits)
                        IS DISTINCT FROM (expected_position, expected_waits) THEN
                    outcome := 'missed';
                    RETURN;
                END IF;
                INSERT INTO midturn_interactions (id, kind, session_id, turn_id,
                    tool_call_id, status, created_at, settled_at, body)
                VALUES (p_id, p_kind, p_session_id, p_turn_id, p_tool_call_id, p_status,
                    p_created_at, p_settled_at, p_body)
                ON CONFLICT DO NOTHING;
                IF NOT FOUND THEN
                    outcome := 'taken';
                    RETURN;
                END IF;
                outcome := 'created';
                event_ids := midturn_append(types, sessions, turns, interactions, bodies,
                    NULL, false, append_key, notify_suffix);
            END
            $$
            """,
        ),
    ),
)


def quote_ident(name: str) -> str:
    """`name` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def advisory_key(purpose: str, schema: str) -> int:
    """A stable signed 64-bit advisory-lock key for one purpose in one schema, the same in
    every process (Python's `hash()` is salted per process, so it cannot serve)."""
    digest = hashlib.blake2b(f"midturn:{purpose}:{schema}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


async def migrate(connection: Any, schema: str | None) -> int:
    """Create `schema` if it is missing and apply every pending migration in it (or in
    the first schema of the connection's search_path). Returns the newest version.

    `connection` is an asyncpg connection whose search_path starts with `schema`.
    """
    async with connection.transaction():
        await connection.execute(
            "SELECT pg_advisory_xact_lock($1)", advisory_key("migrate", schema or "")
        )
        if schema is not None:
            await connection.execute(f"CREATE SCHEMA IF NOT EXISTS {quote_ident(schema)}")
        await connection.execute(MIGRATIONS_TABLE)
        applied = {
            row["version"]
            for row in await connection.fetch("SELECT version FROM midturn_migrations")
        }
        newest_known = MIGRATIONS[-1].version
        if applied and max(applied) > newest_known:
            raise UsageError(
                f"the database schema is at version {max(applied)}, newer than this midturn "
                f"knows (up to {newest_known}); upgrade midturn on this machine to the "
                "version the other replicas run"
            )
        for migration in MIGRATIONS:
            if migration.version in applied:
                continue
            for statement in migration.statements:
                await connection.execute(statement)
            await connection.execute(
                "INSERT INTO midturn_migrations (version, name) VALUES ($1, $2)",
                migration.version,
                migration.name,
            )
        return newest_known
