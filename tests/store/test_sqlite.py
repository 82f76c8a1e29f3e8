"""What the SQLite store promises beyond the conformance suite: its URLs, the file it
makes, recorded migrations, and one winner when several OS processes settle at once."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from pathlib import Path

import pytest

from midturn.contract._interactions import Interaction, NewEvent
from midturn.errors import UsageError
from midturn.store import _sqlite, open_store
from midturn.store._base import Store
from midturn.store._sqlite import sqlite_path
from midturn.store._sqlite_schema import MIGRATIONS, Migration

WORKER = Path(__file__).with_name("_settle_worker.py")


def pending_ask(interaction_id: str = "i1") -> Interaction:
    return Interaction(id=interaction_id, kind="ask", session_id="s1", turn_id="t1")


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:///data/midturn.db", "data/midturn.db"),
        ("sqlite:////var/lib/midturn/midturn.db", "/var/lib/midturn/midturn.db"),
        ("sqlite://", ".midturn/midturn.db"),
        ("sqlite:///", ".midturn/midturn.db"),
        ("sqlite:///my%20data/m.db", "my data/m.db"),
        ("sqlite:///:memory:", ":memory:"),
    ],
)
def test_url_paths(url: str, path: str) -> None:
    assert sqlite_path(url) == path


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("sqlite://host/x.db", "three slashes"),
        ("sqlite:///x.db?mode=ro", "no query"),
        ("sqlite3:///x.db", "unknown store scheme"),
    ],
)
def test_bad_urls_say_what_to_write(url: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        open_store(url)


async def test_a_relative_path_is_made_under_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    async with open_store("sqlite://") as store:
        await store.create_interaction(pending_ask())
    assert (tmp_path / ".midturn" / "midturn.db").is_file()

    async with open_store("sqlite:///nested/deeper/x.db") as store:
        assert await store.get_interaction("i1") is None
    assert (tmp_path / "nested" / "deeper" / "x.db").is_file()


async def test_a_new_file_and_folder_are_private_to_their_owner(tmp_path: Path) -> None:
    file = tmp_path / "new" / "m.db"
    async with open_store(f"sqlite:///{file}") as store:
        await store.create_interaction(pending_ask())
        wal = file.with_name("m.db-wal")
        assert wal.is_file()
        assert wal.stat().st_mode & 0o777 == 0o600
    assert file.stat().st_mode & 0o777 == 0o600
    assert file.parent.stat().st_mode & 0o777 == 0o700


async def test_an_unwritable_location_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(UsageError, match="cannot open the SQLite file"):
        await open_store(f"sqlite:///{blocker}/midturn.db").open()


async def test_migrations_are_recorded_once_and_the_file_is_in_wal_mode(tmp_path: Path) -> None:
    file = tmp_path / "m.db"
    for _ in range(3):
        async with open_store(f"sqlite:///{file}") as store:
            assert await store.schema_version() == len(MIGRATIONS)

    with sqlite3.connect(file) as db:
        rows = db.execute("SELECT version, name, applied_at FROM midturn_migrations").fetchall()
        mode = db.execute("PRAGMA journal_mode").fetchone()[0]
    db.close()
    assert [(version, name) for version, name, _ in rows] == [
        (migration.version, migration.name) for migration in MIGRATIONS
    ]
    assert all(applied_at.endswith("Z") for _, _, applied_at in rows)
    assert mode == "wal"


async def test_a_failing_migration_applies_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "m.db"
    async with open_store(f"sqlite:///{file}"):
        pass
    broken = Migration(
        len(MIGRATIONS) + 1,
        "half a change",
        ("CREATE TABLE midturn_half (x INTEGER)", "CREATE TABLE oops syntax error"),
    )
    monkeypatch.setattr(_sqlite, "MIGRATIONS", (*MIGRATIONS, broken))

    with pytest.raises(sqlite3.OperationalError, match="syntax error"):
        await open_store(f"sqlite:///{file}").open()

    with sqlite3.connect(file) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        versions = [row[0] for row in db.execute("SELECT version FROM midturn_migrations")]
    db.close()
    assert "midturn_half" not in tables
    assert versions == [migration.version for migration in MIGRATIONS]


async def test_queues_of_a_file_from_before_the_pending_counts_start_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The migration adding the pending counts counts the interactions already pending:
    a park after the upgrade gets the position the rows before it give, and the count
    follows settles."""
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with monkeypatch.context() as patch:
        names = [migration.name for migration in MIGRATIONS]
        counts = next(n for n, name in enumerate(names) if "pending counts" in name)
        patch.setattr(_sqlite, "MIGRATIONS", MIGRATIONS[:counts])
        async with open_store(url) as old:
            for n in range(4):
                await old.create_interaction(
                    Interaction(
                        id=f"old{n}", kind="ask", session_id="s1" if n < 3 else "s2", turn_id="t1"
                    )
                )
            await old.settle("old2", status="skipped")
    positions: list[int] = []

    def events(position: int, waiting: bool) -> list[NewEvent]:
        positions.append(position)
        return []

    async with open_store(url) as store:
        assert await store.schema_version() == len(MIGRATIONS)
        await store.create_queued(pending_ask("new"), events)
        await store.create_queued(
            Interaction(id="other", kind="ask", session_id="s2", turn_id="t1"), events
        )
        await store.settle("old0", status="skipped")
        await store.create_queued(pending_ask("after"), events)

    assert positions == [2, 1, 2]


async def test_stores_opening_a_new_file_at_once_migrate_it_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    stores = [open_store(url) for _ in range(4)]
    await asyncio.gather(*(store.open() for store in stores))
    try:
        assert {await store.schema_version() for store in stores} == {len(MIGRATIONS)}
    finally:
        for store in stores:
            await store.aclose()
    with sqlite3.connect(tmp_path / "m.db") as db:
        count = db.execute("SELECT count(*) FROM midturn_migrations").fetchone()[0]
    db.close()
    assert count == len(MIGRATIONS)


async def test_a_file_from_a_newer_midturn_is_refused_untouched(tmp_path: Path) -> None:
    file = tmp_path / "m.db"
    async with open_store(f"sqlite:///{file}"):
        pass
    with sqlite3.connect(file) as db:
        db.execute(
            "INSERT INTO midturn_migrations VALUES (?, 'from the future', 'x')",
            (len(MIGRATIONS) + 1,),
        )
    db.close()

    with pytest.raises(UsageError, match="upgrade midturn"):
        await open_store(f"sqlite:///{file}").open()
    with sqlite3.connect(file) as db:
        assert (
            db.execute("SELECT count(*) FROM midturn_migrations").fetchone()[0]
            == len(MIGRATIONS) + 1
        )
    db.close()


async def test_two_store_objects_on_one_file_settle_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    async with open_store(url) as first, open_store(url) as second:
        await first.create_interaction(pending_ask())
        outcomes = await asyncio.gather(
            *(
                store.settle("i1", status="cancelled", settled_by=f"{name}-{n}")
                for n in range(10)
                for name, store in (("first", first), ("second", second))
            )
        )
        assert sum(outcome.won for outcome in outcomes) == 1
        assert len({outcome.interaction.settled_by for outcome in outcomes}) == 1
        assert await second.get_interaction("i1") == await first.get_interaction("i1")


async def _start_worker(url: str, name: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        str(WORKER),
        url,
        "i1",
        name,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def test_of_several_processes_settling_one_interaction_exactly_one_wins(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    async with open_store(url) as store:
        await store.create_interaction(pending_ask())

    names = [f"process-{n}" for n in range(4)]
    workers = [await _start_worker(url, name) for name in names]
    try:
        for worker in workers:  # every worker has its store open
            assert worker.stdout is not None
            line = await asyncio.wait_for(worker.stdout.readline(), timeout=60)
            assert line == b"ready\n", (await worker.communicate())[1].decode()
        for worker in workers:  # the starting gun
            assert worker.stdin is not None
            worker.stdin.write(b"go\n")
            await worker.stdin.drain()
        outputs = await asyncio.wait_for(
            asyncio.gather(*(worker.communicate() for worker in workers)), timeout=60
        )
    finally:
        for worker in workers:
            if worker.returncode is None:
                worker.kill()
                await worker.wait()

    assert [worker.returncode for worker in workers] == [0] * len(workers), outputs
    reports = [json.loads(stdout) for stdout, _ in outputs]
    winners = [name for name, report in zip(names, reports, strict=True) if report["won"]]
    assert len(winners) == 1
    assert all(report["settled_by"] == winners[0] for report in reports)
    assert sum(len(report["events"]) for report in reports) == 1

    async with open_store(url) as store:
        settled = await store.get_interaction("i1")
        events = await store.read_events()
    assert settled is not None and settled.settled_by == winners[0]
    assert [event.data["by"] for event in events] == winners


async def test_a_settle_whose_caller_is_cancelled_completes_and_is_announced(
    tmp_path: Path,
) -> None:
    file = tmp_path / "m.db"
    async with open_store(f"sqlite:///{file}") as store:
        await store.create_interaction(pending_ask())
        heard = asyncio.Event()
        store.add_listener(lambda _: heard.set())
        cancelled = NewEvent(
            type="user_question_cancelled", session_id="s1", turn_id="t1", interaction_id="i1"
        )
        # Another connection holds the write lock, so the settle cannot finish at once:
        # it waits for the lock on the store's thread while its caller is cancelled.
        other = sqlite3.connect(file, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            task = asyncio.create_task(store.settle("i1", status="cancelled", events=[cancelled]))
            await asyncio.sleep(0)  # one step: the settle now waits on the store's thread
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        finally:
            other.execute("COMMIT")
            other.close()

        await asyncio.wait_for(heard.wait(), timeout=10)
        settled = await store.get_interaction("i1")
        assert settled is not None and settled.status == "cancelled"
        assert [event.type for event in await store.read_events()] == ["user_question_cancelled"]


async def test_listeners_hear_appends_made_through_another_connection(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    async with open_store(url) as watching, open_store(url) as writing:
        heard: list[int] = []
        woke = asyncio.Event()

        def listener(newest: int) -> None:
            heard.append(newest)
            woke.set()

        watching.add_listener(listener)
        appended = await writing.append_events(
            [NewEvent(type="turn_waiting", session_id="s1", turn_id="t1")] * 2
        )
        await asyncio.wait_for(woke.wait(), timeout=10)
        assert heard == [appended[-1].id]
        assert await watching.read_events() == list(appended)


async def test_many_stores_racing_to_open_new_files_all_open(tmp_path: Path) -> None:
    # Switching a new file to WAL takes an exclusive lock that SQLite refuses at once,
    # without its busy handler, while another connection opens the same file: every
    # racer must still open (seen as "database is locked" about once in 20 rounds).
    for round_ in range(60):
        url = f"sqlite:///{tmp_path / f'race{round_}.db'}"
        stores = [open_store(url) for _ in range(6)]
        opened = await asyncio.gather(*(store.open() for store in stores), return_exceptions=True)
        for store in stores:
            await store.aclose()
        assert [error for error in opened if error is not None] == []


async def test_the_pending_counts_keep_only_sessions_with_something_pending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session's count row goes with its last pending interaction (settled or
    deleted), a file from before that rule loses its empty rows when it migrates, and
    the server-wide count sums the rows without reading the interactions."""
    path = tmp_path / "m.db"
    url = f"sqlite:///{path}"

    def ask(interaction_id: str, session_id: str) -> Interaction:
        return Interaction(id=interaction_id, kind="ask", session_id=session_id, turn_id="t1")

    def no_events(position: int, waiting: bool) -> list[NewEvent]:
        return []

    with monkeypatch.context() as patch:
        before = next(n for n, m in enumerate(MIGRATIONS) if "only for a session" in m.name)
        patch.setattr(_sqlite, "MIGRATIONS", MIGRATIONS[:before])
        async with open_store(url) as old:
            await old.create_queued(ask("old", "s0"), no_events)
            await old.settle("old", status="skipped")  # leaves ("s0", 0) behind, then
    async with open_store(url) as store:
        for n in range(3):
            await store.create_queued(ask(f"a{n}", "s1"), no_events)
        await store.create_queued(ask("b0", "s2"), no_events)
        await store.create_queued(ask("c0", "s3"), no_events)
        for n in range(3):
            await store.settle(f"a{n}", status="skipped")
        assert await store.count_pending() == 2
    db = sqlite3.connect(path)
    try:
        with db:
            db.execute("DELETE FROM midturn_interactions WHERE id = 'c0'")
        assert db.execute("SELECT session_id, pending FROM midturn_queues").fetchall() == [
            ("s2", 1)
        ]
        plan = db.execute(f"EXPLAIN QUERY PLAN {_sqlite._COUNT_PENDING}").fetchall()
    finally:
        db.close()
    assert "midturn_interactions" not in str(plan)
    async with open_store(url) as store:
        assert await store.count_pending() == 1
        await store.create_queued(ask("a9", "s1"), no_events)  # the row comes back
        assert await store.count_pending() == 2


# -- indexes: each statement reads the one made for it, and nothing more is written ------


def _hot_paths() -> dict[str, tuple[str, int, str]]:
    """Each statement the store runs on a hot path: (SQL, its parameter count, the
    index its plan must search)."""
    turn = "midturn_interactions_by_turn_status"

    def listing(**filters: object) -> tuple[str, int]:
        sql, params = _sqlite.list_sql(**filters)  # type: ignore[arg-type]
        return sql, len(params) + (2 if "after" in filters else 0)

    paths: dict[str, tuple[str, int, str]] = {
        "get": (_sqlite._BY_ID, 1, "sqlite_autoindex_midturn_interactions_1"),
        "by tool call": (_sqlite._BY_TOOL_CALL, 2, "midturn_interactions_by_tool_call"),
        "repeat and queue read (park)": (_sqlite._PARK_PROBE, 3, turn),
        "repeat (park)": (_sqlite._PARK_PROBE, 3, "midturn_interactions_by_tool_call"),
        "row and turn still pending (settle)": (_sqlite._SETTLE_PROBE, 1, turn),
        "settle": (_sqlite._SETTLE, 4, "sqlite_autoindex_midturn_interactions_1"),
        "deadlines": (_sqlite._DEADLINES_FIRST, 1, "midturn_interactions_deadlines"),
        "deadlines after": (_sqlite._DEADLINES_AFTER, 3, "midturn_interactions_deadlines"),
        "prune events": (_sqlite._PRUNE_SESSION_EVENTS, 3, "midturn_events_by_session"),
        "prune events, one turn": (_sqlite._PRUNE_TURN_EVENTS, 3, "midturn_events_by_session"),
    }
    for name, filters, index in (
        ("inbox", {"status": "pending"}, "midturn_interactions_pending_by_time"),
        ("inbox page", {"status": "pending", "after": "x"}, "midturn_interactions_pending_by_time"),
        ("history", {"session_id": "s"}, "midturn_interactions_by_session"),
        ("history page", {"session_id": "s", "after": "x"}, "midturn_interactions_by_session"),
        ("turn pending", {"session_id": "s", "turn_id": "t", "status": "pending"}, turn),
        (
            "turn's allowed permissions",
            {"session_id": "s", "turn_id": "t", "kind": "permission", "status": "allowed"},
            turn,
        ),
    ):
        sql, count = listing(**filters)
        paths[name] = (sql, count, index)
    return paths


@pytest.mark.parametrize("name", sorted(_hot_paths()))
async def test_every_hot_path_searches_its_index(tmp_path: Path, name: str) -> None:
    async with open_store(f"sqlite:///{tmp_path / 'm.db'}"):
        pass
    sql, count, index = _hot_paths()[name]
    with sqlite3.connect(tmp_path / "m.db") as db:
        plan = " ; ".join(row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {sql}", [None] * count))
    db.close()
    assert f"INDEX {index} " in f"{plan} ", plan


@pytest.mark.parametrize("sql", [_sqlite._PRUNE_SESSION_EVENTS, _sqlite._PRUNE_TURN_EVENTS])
async def test_a_prune_reads_the_events_of_its_sessions_only(tmp_path: Path, sql: str) -> None:
    """With no index of events by interaction (migration 11), a batch's events are found
    in two ranges of the session's index: the first event kept of each turn, then the
    rows to delete. The log is never scanned whole."""
    async with open_store(f"sqlite:///{tmp_path / 'm.db'}"):
        pass
    with sqlite3.connect(tmp_path / "m.db") as db:
        plan = [row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {sql}", [None] * 3)]
    db.close()
    ranges = [step for step in plan if "INDEX midturn_events_by_session (session_id=?" in step]
    assert len(ranges) == 2, plan
    assert not [step for step in plan if step.startswith("SCAN midturn_events")], plan


def _indexes(file: Path) -> set[str]:
    with sqlite3.connect(file) as db:
        rows = db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN"
            " ('midturn_interactions', 'midturn_events') AND sql IS NOT NULL"
        )
        names = {row[0] for row in rows}
    db.close()
    return names


async def test_a_file_from_before_the_leaner_indexes_keeps_its_rows_reachable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The migration replacing the indexes keeps every read right on the rows already
    there: the pending ones (with and without a deadline), the settled ones, a turn's,
    and the events a prune removes."""
    file = tmp_path / "m.db"
    url = f"sqlite:///{file}"
    before = next(n for n, m in enumerate(MIGRATIONS) if m.name.startswith("fewer index pages"))
    deadline = "2030-01-01T00:00:00Z"
    with monkeypatch.context() as patch:
        patch.setattr(_sqlite, "MIGRATIONS", MIGRATIONS[:before])
        async with open_store(url) as old:
            for n in range(4):
                item = pending_ask(f"i{n}").model_copy(update={"turn_id": f"t{n % 2}"})
                if n % 2:
                    item = Interaction.model_validate({**item.model_dump(), "deadline": deadline})
                event = NewEvent(
                    type="user_question_requested",
                    session_id="s1",
                    turn_id=item.turn_id,
                    interaction_id=item.id,
                )
                await old.create_interaction(item, [event])
            await old.settle("i0", status="skipped")
    assert "midturn_interactions_by_status" in _indexes(file)

    async with open_store(url) as store:
        assert await store.schema_version() == len(MIGRATIONS)
        pending = await store.list_interactions(status="pending")
        assert [item.id for item in pending] == ["i1", "i2", "i3"]
        assert [i.id for i in await store.list_interactions(status="skipped")] == ["i0"]
        turn = await store.list_interactions(session_id="s1", turn_id="t0", status="pending")
        assert [item.id for item in turn] == ["i2"]
        assert [key for key, _ in await store.pending_deadlines()] == ["i1", "i3"]
        assert [key for key, _ in await store.pending_deadlines(after="i1")] == ["i3"]
        pruned = await store.prune(["i0"])
        assert (pruned.interactions, pruned.events) == (1, 1)
    assert _indexes(file) == {
        "midturn_interactions_by_tool_call",
        "midturn_interactions_by_time",
        "midturn_interactions_by_session",
        "midturn_interactions_by_turn_status",
        "midturn_interactions_pending_by_time",
        "midturn_interactions_deadlines",
        "midturn_events_by_session",
    }


async def test_events_appended_together_take_consecutive_ids_in_their_order(
    tmp_path: Path,
) -> None:
    """Several events go in one INSERT (a batch of `_EVENTS_PER_INSERT` rows at most),
    each event's id read from the last row's: the ids handed back are the stored ones."""
    count = _sqlite._EVENTS_PER_INSERT * 2 + 3
    events = [NewEvent(type="turn_waiting", session_id="s1", turn_id=f"t{n}") for n in range(count)]
    async with open_store(f"sqlite:///{tmp_path / 'm.db'}") as store:
        await store.append_events(events[:1])
        appended = await store.append_events(events)
        stored = await store.read_events(limit=count + 1)
    assert [event.id for event in appended] == list(range(2, count + 2))
    assert stored[1:] == list(appended)
    assert [event.turn_id for event in appended] == [event.turn_id for event in events]


async def _checkpointed(store: Store) -> None:
    """Until the store's background checkpoint has run (it waits for the writes to pause)."""
    connection = getattr(store, "_connection", None)
    assert connection is not None
    for _ in range(1000):
        if not connection.checkpoint_pending():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the background checkpoint never ran")


async def test_writes_that_pause_are_checkpointed_and_the_wal_starts_over(
    tmp_path: Path,
) -> None:
    """A burst of writes, fewer than `CHECKPOINT_EVERY`, is checkpointed once the writes
    pause (with no further write), so the next burst writes the WAL from its top again
    instead of growing it."""
    file = tmp_path / "m.db"
    wal = tmp_path / "m.db-wal"

    async def burst(count: int, first: int) -> None:
        for n in range(first, first + count):
            await store.append_events(
                [NewEvent(type="turn_waiting", session_id="s", turn_id=f"t{n}")]
            )

    async with open_store(f"sqlite:///{file}") as store:
        before = file.stat().st_size
        await burst(40, 0)
        await _checkpointed(store)
        assert file.stat().st_size > before  # the pages were copied into the file
        grown = wal.stat().st_size
        await burst(20, 40)
        await _checkpointed(store)
        assert wal.stat().st_size <= grown
        assert len(await store.read_events(limit=100)) == 60

    async with open_store(f"sqlite:///{file}") as store:
        assert len(await store.read_events(limit=100)) == 60


def _wal_sequence(wal: Path) -> int:
    """The WAL header's checkpoint sequence number: one more each time the WAL starts over."""
    return int.from_bytes(wal.read_bytes()[12:16], "big")


async def test_the_wal_starts_over_at_the_pause_not_in_the_next_write(tmp_path: Path) -> None:
    """The background checkpoint that copied the whole WAL also starts it over, so the
    header write and its fsync, which the first write into a WAL that starts over makes,
    land at the pause and not inside the next write; that write appends to it."""
    file = tmp_path / "m.db"
    wal = tmp_path / "m.db-wal"
    async with open_store(f"sqlite:///{file}") as store:
        for n in range(40):
            await store.append_events(
                [NewEvent(type="turn_waiting", session_id="s", turn_id=f"t{n}")]
            )
        sequence = _wal_sequence(wal)
        await _checkpointed(store)
        assert _wal_sequence(wal) == sequence + 1  # started over, before any further write
        await store.append_events([NewEvent(type="turn_waiting", session_id="s", turn_id="t40")])
        assert _wal_sequence(wal) == sequence + 1  # the write appended
        assert len(await store.read_events(limit=100)) == 41
    with sqlite3.connect(file) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (0,)  # rewritten as it was


async def test_the_wal_is_not_started_over_under_a_write_lock_held_elsewhere(
    tmp_path: Path,
) -> None:
    """Starting the WAL over never waits for another process's write lock (the writing
    connection's busy timeout is 0 there): it is left to that process's write."""
    file = tmp_path / "m.db"
    async with open_store(f"sqlite:///{file}") as store:
        await store.append_events([NewEvent(type="turn_waiting", session_id="s", turn_id="t")])
        await _checkpointed(store)
        connection = getattr(store, "_connection", None)
        assert connection is not None
        other = sqlite3.connect(file, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            connection._start_wal_over()  # returns at once, no error
            other.execute("ROLLBACK")
        finally:
            other.close()
        await store.append_events([NewEvent(type="turn_waiting", session_id="s", turn_id="u")])
        assert len(await store.read_events(limit=10)) == 2


# -- event ids: the largest id plus one, no sequence table -------------------------------


def _turn_event(turn_id: str, interaction_id: str | None = None) -> NewEvent:
    return NewEvent(
        type="user_question_requested" if interaction_id else "turn_waiting",
        session_id="s1",
        turn_id=turn_id,
        interaction_id=interaction_id,
    )


async def test_an_append_writes_no_sequence_row(tmp_path: Path) -> None:
    """Event ids are the rowid (the largest id plus one): an append writes no
    `sqlite_sequence` page beside the table's and its indexes' (one WAL frame fewer per
    write). The table keeps no AUTOINCREMENT."""
    file = tmp_path / "m.db"
    async with open_store(f"sqlite:///{file}") as store:
        appended = await store.append_events([_turn_event("t1"), _turn_event("t2")])
    assert [event.id for event in appended] == [1, 2]
    with sqlite3.connect(file) as db:
        sql = db.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'midturn_events'"
        ).fetchone()[0]
        sequences = db.execute(
            "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'"
        ).fetchone()[0]
        rows = db.execute("SELECT * FROM sqlite_sequence").fetchall() if sequences else []
    db.close()
    assert "AUTOINCREMENT" not in sql.upper()
    assert rows == []


async def test_event_ids_never_go_back_after_a_prune_or_a_failed_write(tmp_path: Path) -> None:
    """Without AUTOINCREMENT a new id is the largest kept plus one: a prune never deletes
    the newest event, and a write that fails rolls back before anyone could read its ids,
    so every id handed out is still larger than every id handed out before it."""
    async with open_store(f"sqlite:///{tmp_path / 'm.db'}") as store:
        await store.create_interaction(pending_ask("i1"), [_turn_event("t1", "i1")])
        await store.settle("i1", status="skipped", events=[_turn_event("t1", "i1")])
        newest = (await store.append_events([_turn_event("t1")]))[-1].id
        with pytest.raises(UsageError):  # a repeated id: its events roll back with it
            await store.create_interaction(pending_ask("i1"), [_turn_event("t1", "i1")])
        pruned = await store.prune(["i1"])
        assert pruned.events == 2
        assert await store.last_event_id() == newest
        after = await store.append_events([_turn_event("t2")])
    assert after[0].id == newest + 1


def _events_rows(file: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(file) as db:
        rows = db.execute("SELECT * FROM midturn_events ORDER BY id").fetchall()
    db.close()
    return rows


async def _file_with_autoincrement(url: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """A file at the schema before the event table's rebuild, with pruned events and the
    outbox cursor moved: (its newest event id, the cursor)."""
    before = next(n for n, m in enumerate(MIGRATIONS) if "sequence" in m.name)
    with monkeypatch.context() as patch:
        patch.setattr(_sqlite, "MIGRATIONS", MIGRATIONS[:before])
        async with open_store(url) as old:
            for n in range(3):
                item = pending_ask(f"i{n}").model_copy(update={"turn_id": f"t{n}"})
                await old.create_interaction(item, [_turn_event(item.turn_id, item.id)])
                await old.append_events([_turn_event(item.turn_id)])
                await old.settle(item.id, status="skipped", events=[_turn_event(f"t{n}", item.id)])
            cursor = await old.last_event_id()
            assert await old.enqueue_deliveries([], cursor=(0, cursor)) == 0
            await old.prune(["i0", "i2"])
            newest = await old.last_event_id()
            assert await old.schema_version() == before
    return newest, cursor


async def test_a_file_with_autoincrement_keeps_its_events_ids_and_cursor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rebuild of the event table (migration 9) keeps every row under its id, the
    indexes the reads use, and the outbox cursor; the next id follows the newest."""
    file = tmp_path / "m.db"
    url = f"sqlite:///{file}"
    newest, cursor = await _file_with_autoincrement(url, monkeypatch)
    rows = _events_rows(file)
    assert len(rows) < newest  # the prune left gaps below the newest id

    async with open_store(url) as store:
        assert await store.schema_version() == len(MIGRATIONS)
        assert _events_rows(file) == rows
        assert await store.last_event_id() == newest
        assert await store.outbox_cursor() == cursor
        assert [e.id for e in await store.read_events(session_id="s1")] == [r[0] for r in rows]
        appended = await store.append_events([_turn_event("t9"), _turn_event("t9")])
        assert [event.id for event in appended] == [newest + 1, newest + 2]
        pruned = await store.prune(["i1"])  # its two events and its turn's
        assert pruned.events == 3
    assert "midturn_events_by_session" in _indexes(file)
    with sqlite3.connect(file) as db:
        plan = db.execute(
            "EXPLAIN QUERY PLAN SELECT id, body FROM midturn_events"
            " WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?",
            ("s1", 0, 10),
        ).fetchall()
        assert db.execute("SELECT * FROM sqlite_sequence").fetchall() == []
    db.close()
    assert "midturn_events_by_session" in str(plan)


async def test_a_file_whose_newest_event_was_deleted_by_hand_is_not_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the newest event deleted outside midturn, the largest id left is below one
    already handed out: the rebuild would hand that id out again, so the migration
    refuses, says what to do, and leaves the file as it was."""
    file = tmp_path / "m.db"
    url = f"sqlite:///{file}"
    newest, _ = await _file_with_autoincrement(url, monkeypatch)
    with sqlite3.connect(file) as db:
        db.execute("DELETE FROM midturn_events WHERE id = ?", (newest,))
    db.close()
    rows = _events_rows(file)

    with pytest.raises(sqlite3.IntegrityError, match="sqlite_sequence"):
        await open_store(url).open()
    assert _events_rows(file) == rows
    with sqlite3.connect(file) as db:
        assert db.execute("SELECT seq FROM sqlite_sequence").fetchall() == [(newest,)]
    db.close()


# -- asks without a tool call: no entry in the (session_id, tool_call_id) index ----------


def _tool_call_indexes(file: Path) -> list[tuple[str, bool, bool]]:
    """The indexes on `midturn_interactions (session_id, tool_call_id)`: (name, unique,
    partial)."""
    with sqlite3.connect(file) as db:
        found = []
        for _, name, unique, _, partial in db.execute("PRAGMA index_list(midturn_interactions)"):
            columns = [row[2] for row in db.execute(f"PRAGMA index_info({name})")]
            if columns == ["session_id", "tool_call_id"]:
                found.append((name, bool(unique), bool(partial)))
    db.close()
    return found


async def test_an_ask_without_a_tool_call_has_no_tool_call_index_entry(tmp_path: Path) -> None:
    """Only asks with a tool call id are in the unique index of (session_id, tool_call_id)
    (a partial index): one b-tree fewer, one WAL frame fewer, for a park without one."""
    file = tmp_path / "m.db"
    async with open_store(f"sqlite:///{file}"):
        pass
    assert _tool_call_indexes(file) == [("midturn_interactions_by_tool_call", True, True)]


async def test_a_file_from_before_the_partial_tool_call_index_keeps_its_rows_and_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rebuild of the interactions table (migration 10) keeps every row and its seq,
    the pending counts and the triggers that keep them, a repeated tool call's answer and
    a repeated id's refusal."""
    file = tmp_path / "m.db"
    url = f"sqlite:///{file}"

    def no_events(position: int, waiting: bool) -> list[NewEvent]:
        return []

    def ask(n: int, tool_call_id: str | None) -> Interaction:
        return Interaction(
            id=f"i{n}", kind="ask", session_id="s1", turn_id=f"t{n}", tool_call_id=tool_call_id
        )

    before = next(n for n, m in enumerate(MIGRATIONS) if "tool call" in m.name)
    with monkeypatch.context() as patch:
        patch.setattr(_sqlite, "MIGRATIONS", MIGRATIONS[:before])
        async with open_store(url) as old:
            for n, call in enumerate(("c0", None, None, "c3")):
                await old.create_queued(ask(n, call), no_events)
            await old.settle("i0", status="skipped")
    with sqlite3.connect(file) as db:
        rows = db.execute("SELECT * FROM midturn_interactions ORDER BY seq").fetchall()
    db.close()
    assert len(_tool_call_indexes(file)) == 1 and not _tool_call_indexes(file)[0][2]

    positions: list[int] = []

    def queued(position: int, waiting: bool) -> list[NewEvent]:
        positions.append(position)
        return []

    async with open_store(url) as store:
        assert await store.schema_version() == len(MIGRATIONS)
        with sqlite3.connect(file) as db:
            assert db.execute("SELECT * FROM midturn_interactions ORDER BY seq").fetchall() == rows
        db.close()
        assert await store.count_pending() == 3
        _, created, _ = await store.create_queued(ask(9, "c3"), queued)
        assert not created  # the repeated tool call found
        with pytest.raises(UsageError, match="already exists"):
            await store.create_queued(ask(1, None), queued)
        await store.create_queued(ask(5, None), queued)
        await store.settle("i1", status="skipped")
        await store.create_queued(ask(6, "c6"), queued)
        assert await store.count_pending() == 4
        listed = await store.list_interactions(session_id="s1", status="pending")
        assert [item.id for item in listed] == ["i2", "i3", "i5", "i6"]
    assert positions == [3, 3, 3]  # the repeated id chose its events, then was refused
    assert _tool_call_indexes(file) == [("midturn_interactions_by_tool_call", True, True)]
    assert _indexes(file) >= {
        "midturn_interactions_by_time",
        "midturn_interactions_by_session",
        "midturn_interactions_by_turn_status",
        "midturn_interactions_pending_by_time",
        "midturn_interactions_deadlines",
    }
