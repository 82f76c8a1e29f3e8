"""What only the PostgreSQL store promises (beyond the conformance suite): several store
objects — standing for several replicas — on one database hear each other's appends,
settle exactly once between them, migrate once, and survive a dropped notification
connection.

Each test works in a fresh schema of the test database, dropped afterwards. Without a
server the tests skip, except under `CI=true`, where they fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import uuid
from collections.abc import AsyncIterator, Callable
from urllib.parse import urlencode

import pytest
from tests._postgres import POSTGRES_URL, fresh_schema

from midturn.contract._interactions import Interaction, NewEvent
from midturn.contract._models import AskResult
from midturn.errors import UsageError
from midturn.store import Store, _postgres_schema, open_store
from midturn.store import _postgres_sql as sql
from midturn.store._codec import interaction_columns
from midturn.testing.conformance._data import RESULT, SECRET, answered, make_ask, note, requested

asyncpg = pytest.importorskip("asyncpg")

SAFETY_S = 20.0


@pytest.fixture
async def url() -> AsyncIterator[str]:
    """The URL of a fresh schema, dropped after the test."""
    async with fresh_schema("t_pg", "the PostgreSQL store must be tested") as fresh:
        yield fresh


@pytest.fixture
async def pair(url: str) -> AsyncIterator[tuple[Store, Store]]:
    """Two opened store objects on one schema, as two replicas would hold."""
    async with open_store(url) as first, open_store(url) as second:
        yield first, second


class Heard:
    """A listener that records the ids it is told and lets a test await one."""

    def __init__(self) -> None:
        self.ids: list[int] = []
        self._changed = asyncio.Event()

    def __call__(self, last_event_id: int) -> None:
        self.ids.append(last_event_id)
        self._changed.set()

    async def until(self, predicate: Callable[[list[int]], bool]) -> None:
        async def wait() -> None:
            while not predicate(self.ids):
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(wait(), SAFETY_S)


async def admin(sql: str, *args: object) -> object:
    connection = await asyncpg.connect(POSTGRES_URL)
    try:
        return await connection.fetchval(sql, *args)
    finally:
        await connection.close()


# -- cross-process wake-ups ---------------------------------------------------------------


async def test_an_append_by_one_store_wakes_the_listeners_of_another(
    pair: tuple[Store, Store],
) -> None:
    replica_a, replica_b = pair
    heard_a, heard_b = Heard(), Heard()
    replica_a.add_listener(heard_a)
    replica_b.add_listener(heard_b)
    interaction = make_ask("i1")

    _, _, created = await replica_b.create_interaction(interaction, [requested(interaction)])
    await heard_a.until(lambda ids: created[-1].id in ids)
    outcome = await replica_b.settle(
        "i1", status="answered", result=RESULT, events=[answered(interaction)]
    )
    await heard_a.until(lambda ids: outcome.events[-1].id in ids)

    assert heard_a.ids == [created[-1].id, outcome.events[-1].id]
    # The appending store heard its own appends once each, not again via the database.
    assert heard_b.ids == heard_a.ids
    assert await replica_a.read_events() == [*created, *outcome.events]


async def test_a_store_does_not_hear_appends_in_another_schema(url: str) -> None:
    other_url = url + "_other"
    try:
        async with (
            open_store(url) as mine,
            open_store(url) as mine_too,
            open_store(other_url) as other,
        ):
            heard = Heard()
            mine.add_listener(heard)
            await other.append_events([note("s1")])
            # Notifications arrive in commit order: once this one is heard, the other
            # schema's has been delivered (and ignored) too.
            appended = await mine_too.append_events([note("s1"), note("s1")])
            await heard.until(lambda ids: bool(ids))
            assert heard.ids == [appended[-1].id] == [2]
    finally:
        await admin(f'DROP SCHEMA IF EXISTS "{other_url.rpartition("=")[2]}" CASCADE')


async def test_the_listener_reconnects_and_reports_what_it_missed(
    pair: tuple[Store, Store],
) -> None:
    replica_a, replica_b = pair
    heard = Heard()
    replica_a.add_listener(heard)
    first_pid = replica_a.listener_pid  # type: ignore[attr-defined]
    assert isinstance(first_pid, int)

    assert await admin("SELECT pg_terminate_backend($1)", first_pid) is True
    appended = await replica_b.append_events([note("s1"), note("s2")])

    # Whether the append lands before or after the new LISTEN, replica A reports it:
    # by the notification, or by the catch-up read that follows every reconnect.
    await heard.until(lambda ids: bool(ids) and ids[-1] >= appended[-1].id)
    assert await replica_a.read_events() == list(appended)

    # It is listening again on a new connection: a later append arrives as a notification.
    later = await replica_b.append_events([note("s3")])
    await heard.until(lambda ids: ids[-1] == later[-1].id)
    new_pid = replica_a.listener_pid  # type: ignore[attr-defined]
    assert new_pid is not None and new_pid != first_pid
    assert heard.ids == sorted(set(heard.ids))


async def test_a_reader_woken_by_notifications_misses_no_event_under_concurrent_appends(
    pair: tuple[Store, Store],
) -> None:
    """Appends race from two stores; a reader on a third follows the log by id, woken only
    by its listener, and must see every event exactly once, in id order."""
    replica_a, replica_b = pair
    per_store, total = 60, 120
    async with open_store(replica_a.url) as reader_store:
        heard = Heard()
        reader_store.add_listener(heard)
        seen: list[int] = []

        async def follow() -> None:
            cursor = 0
            while len(seen) < total:
                events = await reader_store.read_events(after_id=cursor)
                seen.extend(event.id for event in events)
                if events:
                    cursor = events[-1].id
                    continue
                await heard.until(lambda ids, after=cursor: bool(ids) and ids[-1] > after)

        follower = asyncio.create_task(follow())
        batches = await asyncio.gather(
            *(
                replica.append_events([note(f"s{n}")])
                for n in range(per_store)
                for replica in (replica_a, replica_b)
            )
        )
        # A missed event would leave the follower waiting for it: give up after a while
        # and show what it saw.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(follower, SAFETY_S)

    appended = sorted(event.id for batch in batches for event in batch)
    assert len(appended) == total
    assert seen == appended


# -- settling across stores ---------------------------------------------------------------


async def test_of_200_concurrent_settles_over_two_stores_exactly_one_wins(
    pair: tuple[Store, Store],
) -> None:
    replica_a, replica_b = pair
    interaction = make_ask("i1")
    await replica_a.create_interaction(interaction, [requested(interaction)])

    outcomes = await asyncio.gather(
        *(
            (replica_a if n % 2 else replica_b).settle(
                "i1",
                status="answered",
                result=RESULT,
                settled_by=f"responder-{n}",
                events=[answered(interaction)],
            )
            for n in range(200)
        )
    )

    winners = [outcome for outcome in outcomes if outcome.won]
    assert len(winners) == 1
    for loser in (outcome for outcome in outcomes if not outcome.won):
        assert loser.events == ()
        assert loser.interaction == winners[0].interaction
    for replica in pair:
        assert await replica.get_interaction("i1") == winners[0].interaction
    assert [event.type for event in await replica_b.read_events()] == [
        "user_question_requested",
        "user_question_answered",
    ]


async def test_concurrent_creates_with_one_tool_call_id_over_two_stores_make_one(
    pair: tuple[Store, Store],
) -> None:
    replica_a, replica_b = pair

    def attempt(n: int) -> Interaction:
        return make_ask(f"i{n}", tool_call_id="call-1")

    results = await asyncio.gather(
        *(
            (replica_a if n % 2 else replica_b).create_interaction(
                attempt(n), [requested(attempt(n))]
            )
            for n in range(40)
        )
    )

    created = [stored for stored, was_created, _ in results if was_created]
    assert len(created) == 1
    assert all(stored == created[0] for stored, _, _ in results)
    assert len(await replica_a.list_interactions()) == 1
    assert len(await replica_b.read_events()) == 1


# -- migrations ---------------------------------------------------------------------------

_INSERT_ROW = (
    "INSERT INTO midturn_interactions (id, kind, session_id, turn_id,"
    " tool_call_id, status, created_at, settled_at, body)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
)


@contextlib.asynccontextmanager
async def _at_migration(schema: str, version: int) -> AsyncIterator[asyncpg.Connection]:
    """A connection to `schema`, created and migrated up to `version` (as an earlier
    midturn left it), for writing rows as that version's store did."""
    connection = await asyncpg.connect(POSTGRES_URL, server_settings={"search_path": schema})
    try:
        await connection.execute(f'CREATE SCHEMA "{schema}"')
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(_postgres_schema, "MIGRATIONS", _postgres_schema.MIGRATIONS[:version])
            assert await _postgres_schema.migrate(connection, schema) == version
        yield connection
    finally:
        await connection.close()


async def test_stores_opening_together_on_a_new_schema_migrate_it_once(url: str) -> None:
    stores = [open_store(url) for _ in range(4)]
    try:
        await asyncio.gather(*(store.open() for store in stores))
        versions = {await store.schema_version() for store in stores}
    finally:
        await asyncio.gather(*(store.aclose() for store in stores))

    schema = url.rpartition("=")[2]
    applied = await admin(
        f'SELECT array_agg(version ORDER BY version) FROM "{schema}".midturn_migrations'
    )
    assert versions == {max(applied)}  # type: ignore[arg-type]
    assert applied == list(range(1, len(applied) + 1))  # type: ignore[arg-type]


async def test_a_database_migrated_by_a_newer_midturn_is_refused(url: str) -> None:
    async with open_store(url) as store:
        version = await store.schema_version()
    schema = url.rpartition("=")[2]
    await admin(
        f'INSERT INTO "{schema}".midturn_migrations (version, name) VALUES ($1, $2)',
        version + 1,
        "from the future",
    )

    with pytest.raises(UsageError, match="upgrade midturn"):
        await open_store(url).open()


def _before_the_pending_counts(
    migrations: tuple[_postgres_schema.Migration, ...],
) -> tuple[_postgres_schema.Migration, ...]:
    """The migrations before the one that adds the pending counts (found by its name,
    so the test holds whatever number it is given)."""
    names = [migration.name for migration in migrations]
    return migrations[: next(n for n, name in enumerate(names) if "pending counts" in name)]


async def test_queues_of_a_database_from_before_the_pending_counts_start_right(
    url: str,
) -> None:
    """The migration adding the pending counts counts the interactions already pending:
    a park after the upgrade gets the position the rows before it give."""
    schema = url.rpartition("=")[2]
    before = _before_the_pending_counts(_postgres_schema.MIGRATIONS)
    async with _at_migration(schema, len(before)) as connection:
        for n, status in enumerate(("pending", "pending", "answered", "pending")):
            item = make_ask(f"old{n}", session_id="s1" if n < 3 else "s2")
            columns = interaction_columns(item)
            await connection.execute(_INSERT_ROW, *{**columns, "status": status}.values())

    async with open_store(url) as store:
        assert await store.schema_version() == len(_postgres_schema.MIGRATIONS)

        async def park(item: Interaction) -> int:
            """The position `item` was parked at: the events written are the ones
            chosen last (the store chose for a queue it expected first, and missed)."""
            positions: list[int] = []

            def events(position: int, waiting: bool) -> list[NewEvent]:
                positions.append(position)
                return [requested(item)]

            _, created, _ = await store.create_queued(item, events)
            assert created
            return positions[-1]

        first = await park(make_ask("new"))
        other = await park(make_ask("other", session_id="s2"))
        await store.settle("old0", status="skipped")
        after = await park(make_ask("after", turn_id="t2"))

    assert (first, other, after) == (2, 1, 2)


def _before_the_functions() -> int:
    """How many migrations come before the one that makes a park and a settle one
    function call each (found by its name)."""
    names = [migration.name for migration in _postgres_schema.MIGRATIONS]
    return next(n for n, name in enumerate(names) if "one function call" in name)


async def test_a_database_left_by_the_previous_version_upgrades_and_its_queue_carries_on(
    url: str,
) -> None:
    """A database at the migration before the functions, holding a turn's two pending
    asks and their events as that version's store wrote them: opened by this version,
    it migrates; a park in a new turn of the session gets position 2 and waits anew,
    the old asks settle (read first: this store did not park them), and the old turn
    resumes once, after its last."""
    schema = url.rpartition("=")[2]
    old = [make_ask(f"old{n}", tool_call_id=f"call-{n}") for n in range(2)]
    async with _at_migration(schema, _before_the_functions()) as connection:
        for item in old:
            await connection.execute(_INSERT_ROW, *interaction_columns(item).values())
            await connection.execute(
                "INSERT INTO midturn_events (type, session_id, turn_id, interaction_id, body)"
                " VALUES ($1, $2, $3, $4, $5)",
                "user_question_requested",
                item.session_id,
                item.turn_id,
                item.id,
                requested(item).model_dump_json(),
            )

    async with open_store(url) as store:
        assert await store.schema_version() == len(_postgres_schema.MIGRATIONS)
        again, created, _ = await store.create_queued(
            make_ask("again", tool_call_id="call-0"), lambda position, waits: []
        )
        assert (again, created) == (old[0], False)
        chosen: list[tuple[int, bool]] = []
        item = make_ask("new", turn_id="t2")

        def events(position: int, waits: bool) -> list[NewEvent]:
            chosen.append((position, waits))
            return [requested(item)] if waits else [requested(item), note("s1", "t2")]

        _, created, appended = await store.create_queued(item, events)
        assert created and chosen[-1] == (2, False)
        assert [event.type for event in appended] == ["user_question_requested", "turn_waiting"]
        done = [NewEvent(type="turn_resumed", session_id="s1", turn_id="t1")]
        outcomes = [
            await store.settle_in_turn(
                ask.id, session_id="s1", turn_id="t1", status="skipped", turn_done=done
            )
            for ask in old
        ]
        assert [outcome.won for outcome in outcomes] == [True, True]
        assert [[event.type for event in outcome.events] for outcome in outcomes] == [
            [],
            ["turn_resumed"],
        ]
        assert [event.id for event in await store.read_events()] == [1, 2, 3, 4, 5]
        assert await store.count_pending() == 1


async def test_a_session_lock_of_a_replica_on_the_previous_version_holds_a_park_back(
    url: str,
) -> None:
    """The previous version held a session-level lock on the same key across its
    statements; a park of this version waits for it (a rolling upgrade keeps every
    write of a session one at a time) and goes on when it is released."""
    async with open_store(url) as store:
        schema = url.rpartition("=")[2]
        key = _postgres_schema.advisory_key("session\x00s1", schema)
        old_replica = await asyncpg.connect(POSTGRES_URL)
        watcher = await asyncpg.connect(POSTGRES_URL)
        try:
            await old_replica.execute("SELECT pg_advisory_lock($1)", key)
            ask = make_ask("held")
            park = asyncio.create_task(store.create_interaction(ask, [requested(ask)]))
            waiting = None
            for _ in range(int(SAFETY_S * 100)):  # until its backend waits on the lock
                waiting = await watcher.fetchval(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'advisory'"
                    " AND query LIKE '%midturn_park(%'"
                )
                if waiting:
                    break
                await asyncio.sleep(0.01)
            assert waiting == 1 and not park.done()
            await old_replica.execute("SELECT pg_advisory_unlock($1)", key)
            stored, created, appended = await asyncio.wait_for(park, SAFETY_S)
        finally:
            await old_replica.close()
            await watcher.close()
        assert (stored, created, len(appended)) == (ask, True, 1)


# -- indexes ------------------------------------------------------------------------------


def _hot_paths() -> dict[str, tuple[str, tuple[object, ...], tuple[str, ...]]]:
    """Every read and write a park, an answer or a stream makes, with example arguments
    and the indexes it must use: those that cost the same however many rows the tables
    hold (the pending ones read only pending rows)."""
    by_id = "midturn_interactions_id_key"
    by_call = "midturn_interactions_session_id_tool_call_id_key"
    by_turn = "midturn_interactions_pending_by_turn"
    return {
        "get": (sql.GET, ("i1",), (by_id,)),
        "find_by_tool_call": (sql.FIND_BY_TOOL_CALL, ("s1", "call-1"), (by_call,)),
        "session queue head first": (
            *sql.list_query("s1", None, "pending", None, 50),
            ("midturn_interactions_pending_by_session",),
        ),
        "turn pending": (*sql.list_query("s1", "t1", "pending", None, None), (by_turn,)),
        "all pending head first": (
            *sql.list_query(None, None, "pending", None, 50),
            ("midturn_interactions_pending",),
        ),
        "read_events": (sql.READ_EVENTS, (0, 100), ("midturn_events_pkey",)),
        "read_events of a session": (
            sql.READ_SESSION_EVENTS,
            ("s1", 0, 100),
            ("midturn_events_by_session",),
        ),
    }


# 20 sessions, 2,000 interactions of which one in ten is pending, and 2,000 events, with
# their statistics: the planner then chooses as it would in service.
_MANY_ROWS = """
INSERT INTO midturn_interactions
    (id, kind, session_id, turn_id, tool_call_id, status, created_at, settled_at, body)
SELECT 'i' || n, 'ask', 's' || n % 20, 't' || n / 10, 'call-' || n,
    CASE WHEN n % 10 = 0 THEN 'pending' ELSE 'answered' END, lpad(n::text, 10, '0'), NULL, '{}'
FROM generate_series(1, 2000) AS n;
INSERT INTO midturn_events (type, session_id, turn_id, interaction_id, body)
SELECT 'turn_waiting', 's' || n % 20, 't' || n / 10, NULL, '{}' FROM generate_series(1, 2000) AS n;
ANALYZE;
"""


def _literal(value: object) -> str:
    """An argument of `_hot_paths` as SQL text (they are text, integers, empty lists)."""
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, list):
        assert value == []
        return "'{}'"
    return str(value)


@pytest.mark.parametrize("name", list(_hot_paths()))
async def test_every_hot_path_is_served_by_an_index(url: str, name: str) -> None:
    """With sequential scans priced out and generic plans forced (asyncpg reuses its
    prepared statements, and PostgreSQL then plans without the arguments' values), a
    plan still holding a Seq Scan on a midturn table has no index to use; and each path
    must use the index made for it (the pending ones: a partial index of pending rows,
    so settled rows, however many, are never read)."""
    async with open_store(url):
        pass
    query, arguments, indexes = _hot_paths()[name]
    schema = url.rpartition("=")[2]
    connection = await asyncpg.connect(POSTGRES_URL, server_settings={"search_path": schema})
    try:
        await connection.execute(_MANY_ROWS)
        await connection.execute("SET enable_seqscan = off")
        await connection.execute("SET plan_cache_mode = force_generic_plan")
        await connection.execute(f"PREPARE hot AS {query}")
        values = ", ".join(_literal(argument) for argument in arguments)
        rows = await connection.fetch(f"EXPLAIN EXECUTE hot({values})")
        plan = "\n".join(row[0] for row in rows)
    finally:
        await connection.close()

    scans = [line for line in plan.splitlines() if "Seq Scan on midturn_" in line]
    assert scans == [], plan
    assert [index for index in indexes if f"{index} " not in f"{plan} "] == [], plan


def _function_calls() -> dict[str, tuple[str, tuple[object, ...], tuple[str, ...]]]:
    """The calls of migration 8's and 9's functions a park and a settle make (on `_MANY_ROWS`:
    `i10` is pending in session s10, turn t1, `i11` settled), with the indexes their
    statements must use."""
    ask = make_ask("new", session_id="s1", turn_id="t1", tool_call_id="call-new")
    events = ([requested(ask).type], ["s1"], ["t1"], ["new"], ["{}"])
    tail = (1, ":x")
    by_id = "midturn_interactions_id_key"
    by_call = "midturn_interactions_session_id_tool_call_id_key"
    by_turn = "midturn_interactions_pending_by_turn"
    queues = "midturn_queues_pkey"
    columns = tuple(interaction_columns(ask).values())
    park = (sql.PARK, (2, *columns, 0, False, False, *events, *tail))
    repeated = make_ask("again", session_id="s10", tool_call_id="call-10")
    return {
        "park": (*park, (by_call, queues, by_turn)),
        "park unless its turn ended": (
            sql.PARK,
            (2, *columns, 0, False, True, *events, *tail),
            ("midturn_turns_ended_pkey", by_call, queues, by_turn),
        ),
        "park, a repeated tool call": (
            sql.PARK,
            (2, *interaction_columns(repeated).values(), None, None, False, *events, *tail),
            (by_call,),
        ),
        "settle": (
            sql.SETTLE,
            (2, "i10", "answered", "2026", "{}", "s10", "t1", *events, [True], *tail),
            (by_id, by_turn, queues),
        ),
        "settle, lost": (
            sql.SETTLE,
            (2, "i11", "answered", "2026", "{}", "s11", "t1", *events, [False], *tail),
            (by_id,),
        ),
    }


@pytest.mark.parametrize("name", list(_function_calls()))
async def test_a_park_and_a_settle_read_through_indexes(url: str, name: str) -> None:
    """The statements inside the functions, their triggers' included, planned
    generically (PL/pgSQL caches its plans too) with sequential scans priced out, as
    `auto_explain` reports them to the client: none scans a midturn table, and each
    read uses the index made for it."""
    async with open_store(url):
        pass
    query, arguments, indexes = _function_calls()[name]
    schema = url.rpartition("=")[2]
    connection = await asyncpg.connect(POSTGRES_URL, server_settings={"search_path": schema})
    plans: list[str] = []
    try:
        await connection.execute(_MANY_ROWS)
        await connection.execute("LOAD 'auto_explain'")
        for setting in (
            "enable_seqscan = off",
            "plan_cache_mode = force_generic_plan",
            "auto_explain.log_min_duration = 0",
            "auto_explain.log_nested_statements = on",
            "auto_explain.log_level = notice",
            "client_min_messages = notice",
        ):
            await connection.execute(f"SET {setting}")
        connection.add_log_listener(lambda _, message: plans.append(str(message)))
        await connection.fetchrow(query, *arguments)
    finally:
        await connection.close()

    plan = "\n".join(plans)
    assert "pg_advisory_xact_lock(session_key)" in plan, plan  # the functions' statements
    scans = [line for line in plan.splitlines() if "Seq Scan on midturn_" in line]
    assert scans == [], plan
    assert [index for index in indexes if f"{index} " not in f"{plan} "] == [], plan


# -- secrets and URLs ---------------------------------------------------------------------


async def test_no_secret_value_reaches_any_table(url: str) -> None:
    async with open_store(url) as store:
        await store.create_interaction(make_ask("i1"), [requested(make_ask("i1"))])
        await store.settle("i1", status="answered", result=RESULT, events=[note("s1")])
    schema = url.rpartition("=")[2]

    everything = ""
    for table in ("midturn_interactions", "midturn_events", "midturn_sessions"):
        rows = await admin(
            f"SELECT coalesce(string_agg(t::text, ' '), '') FROM \"{schema}\".{table} t"
        )
        everything += str(rows)

    assert "[secret provided]" in everything
    assert SECRET not in everything


@pytest.mark.parametrize(
    ("query", "problem"),
    [
        ("pool_max=0", "pool_max"),
        ("pool_min=x", "pool_min"),
        ("pool_min=5&pool_max=2", "pool_min=5 is above pool_max=2"),
        ("schema=" + "s" * 64, "1 to 63 bytes"),
    ],
)
def test_bad_url_parameters_are_usage_errors(query: str, problem: str) -> None:
    with pytest.raises(UsageError, match=problem):
        open_store(f"postgresql://postgres@127.0.0.1:5432/test?{query}")


async def test_an_unreachable_server_is_a_clear_error_without_the_password() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free_port = probe.getsockname()[1]
    store = open_store(f"postgresql://postgres:hunter2@127.0.0.1:{free_port}/test")

    with pytest.raises(UsageError, match="cannot connect to PostgreSQL") as caught:
        await store.open()
    assert "hunter2" not in str(caught.value)
    with pytest.raises(UsageError, match="not open"):
        await store.last_event_id()


async def test_settle_results_keep_their_shape_across_stores(pair: tuple[Store, Store]) -> None:
    replica_a, replica_b = pair
    await replica_a.create_interaction(make_ask("i1"))
    skipped = AskResult(outcome="skipped")
    outcome = await replica_b.settle(
        "i1",
        status="skipped",
        result=skipped,
        events=[NewEvent(type="user_question_skipped", session_id="s1", turn_id="t1")],
    )
    stored = await replica_a.get_interaction("i1")
    assert stored == outcome.interaction
    assert stored is not None and stored.result == skipped


async def test_a_schema_name_that_needs_quoting_works(url: str) -> None:
    schema = f'Odd "Name" {uuid.uuid4().hex[:6]}'
    odd_url = f"{POSTGRES_URL}?{urlencode({'schema': schema})}"
    try:
        async with open_store(odd_url) as store:
            await store.create_interaction(make_ask("i1"), [requested(make_ask("i1"))])
            assert [event.id for event in await store.read_events()] == [1]
        quoted = '"' + schema.replace('"', '""') + '"'
        assert await admin(f"SELECT count(*) FROM {quoted}.midturn_interactions") == 1
    finally:
        await admin(f'DROP SCHEMA IF EXISTS "{schema.replace(chr(34), chr(34) * 2)}" CASCADE')


async def test_the_pending_counts_keep_only_sessions_with_something_pending(url: str) -> None:
    """A session's count row goes with its last pending interaction (settled or
    deleted), a database from before that rule loses its empty rows when it migrates,
    and the server-wide count sums the rows without reading the interactions."""

    def no_events(position: int, waiting: bool) -> list[NewEvent]:
        return []

    migrations = _postgres_schema.MIGRATIONS
    before = next(n for n, m in enumerate(migrations) if "only for a session" in m.name)
    schema = url.rpartition("=")[2]
    async with _at_migration(schema, before) as old:
        # as that version's store wrote a park and its settle: leaves ("s0", 0) behind
        await old.execute(
            _INSERT_ROW, *interaction_columns(make_ask("old", session_id="s0")).values()
        )
        await old.execute("UPDATE midturn_interactions SET status = 'skipped' WHERE id = 'old'")
    async with open_store(url) as store:
        for n in range(3):
            await store.create_queued(make_ask(f"a{n}", session_id="s1"), no_events)
        await store.create_queued(make_ask("b0", session_id="s2"), no_events)
        await store.create_queued(make_ask("c0", session_id="s3"), no_events)
        for n in range(3):
            await store.settle(f"a{n}", status="skipped")
        assert await store.count_pending() == 2
        connection = await asyncpg.connect(POSTGRES_URL, server_settings={"search_path": schema})
        try:
            await connection.execute("DELETE FROM midturn_interactions WHERE id = 'c0'")
            rows = await connection.fetch("SELECT session_id, pending FROM midturn_queues")
            plan = "\n".join(
                row[0] for row in await connection.fetch(f"EXPLAIN {sql.COUNT_PENDING}")
            )
        finally:
            await connection.close()
        assert [tuple(row) for row in rows] == [("s2", 1)]
        assert "midturn_interactions" not in plan, plan
        assert await store.count_pending() == 1
        await store.create_queued(make_ask("a9", session_id="s1"), no_events)  # back again
        assert await store.count_pending() == 2
