"""The PostgreSQL store reads a turn's end inside its park (`park_sees_turn_end`): one
statement where the runtime sent three (the turn's end read before the park and again
after it), and still exact across processes, since ending a turn takes the session's
lock, which a park holds from before its read of the turn's end until its commit.

Each test works in a fresh schema of the test database, dropped afterwards. Without a
server the tests skip, except under `CI=true`, where they fail.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from tests._postgres import POSTGRES_URL, fresh_schema
from tests.store.test_postgres_pool import _Statements

from midturn.contract._interactions import Interaction, NewEvent
from midturn.store import QueuedEvents, open_store
from midturn.store import _postgres_schema as schema_module
from midturn.store._codec import interaction_columns
from midturn.store._postgres import PostgresStore
from midturn.store._postgres_schema import MIGRATIONS
from midturn.testing.conformance._data import make_ask, note, requested

asyncpg = pytest.importorskip("asyncpg")

SAFETY_S = 20.0


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async with fresh_schema("t_pgturn", "the PostgreSQL store must be tested") as fresh:
        yield fresh


def _chooser(item: Interaction) -> QueuedEvents:
    def events(position: int, waiting: bool) -> list[NewEvent]:
        return [requested(item)] if waiting else [requested(item), note(item.session_id)]

    return events


async def _until_waiting(watcher: Any, fragment: str, done: asyncio.Future[object]) -> int:
    """How many backends wait on an advisory lock running a statement with `fragment`,
    polled until one does or `done` is."""
    for _ in range(int(SAFETY_S * 100)):
        waiting = await watcher.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'advisory' AND query LIKE $1",
            f"%{fragment}%",
        )
        if waiting or done.done():
            return int(waiting)
        await asyncio.sleep(0.01)
    raise AssertionError(f"nothing running {fragment!r} ever waited or ended")


async def test_a_park_reads_the_turns_end_in_its_one_statement(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_store(url) as store:
        assert isinstance(store, PostgresStore) and store.park_sees_turn_end
        statements = _Statements(monkeypatch)
        live = make_ask("ia_live", turn_id="t1")
        mark = statements.count
        made = await store.create_unless_ended(live, _chooser(live))
        assert made is not None and made[1] and statements.since(mark) == 1
        await store.end_turn("s1", "t2", how="stopped")
        late = make_ask("ia_late", turn_id="t2")
        mark = statements.count
        assert await store.create_unless_ended(late, _chooser(late)) is None
        assert statements.since(mark) == 1
        assert await store.get_interaction(late.id) is None


async def test_a_turn_ending_during_a_park_finds_it_pending_or_the_park_refused(
    url: str,
) -> None:
    """The park held at its append (after its read of the turn's end, before its
    commit, by another holder of the append lock) while another replica ends the turn
    and lists what the turn has pending: that list sees the park, or the park sees the
    end. Without the session's lock in `end_turn` the end and its list came in between,
    found nothing, and the park then committed into an ended turn."""
    async with open_store(url) as store, open_store(url) as other:
        assert isinstance(store, PostgresStore)
        holder = await asyncpg.connect(POSTGRES_URL)
        watcher = await asyncpg.connect(POSTGRES_URL)
        try:
            transaction = holder.transaction()
            await transaction.start()
            await holder.execute("SELECT pg_advisory_xact_lock($1)", store._lock_key)
            ask = make_ask("ia_racing", turn_id="t1")
            park = asyncio.ensure_future(store.create_unless_ended(ask, _chooser(ask)))
            assert await _until_waiting(watcher, "midturn_park(", park) == 1

            async def stop() -> list[Interaction]:
                await other.end_turn("s1", "t1", how="stopped")
                return await other.list_interactions(
                    session_id="s1", turn_id="t1", status="pending"
                )

            stopping = asyncio.ensure_future(stop())
            await _until_waiting(watcher, "midturn_turns_ended", stopping)
            await transaction.rollback()
            made = await asyncio.wait_for(park, SAFETY_S)
            found = await asyncio.wait_for(stopping, SAFETY_S)
        finally:
            await holder.close()
            await watcher.close()
    assert made is None or [item.id for item in found] == [ask.id]


async def test_a_replica_on_the_previous_version_still_parks_after_the_migration(
    url: str,
) -> None:
    """Migration 9 adds a park function that reads the turn's end; the previous one,
    which replicas not yet upgraded call, stays and still parks."""
    async with open_store(url) as store:
        assert await store.schema_version() == len(MIGRATIONS)
    schema = url.rpartition("=")[2]
    ask = make_ask("ia_old")
    connection = await asyncpg.connect(POSTGRES_URL, server_settings={"search_path": schema})
    try:
        events = ([requested(ask).type], ["s1"], ["t1"], [ask.id], ["{}"])
        key = schema_module.advisory_key("session\x00s1", schema)
        row = await connection.fetchrow(
            "SELECT * FROM midturn_park($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,"
            " $13, $14, $15, $16, $17, $18, $19)",
            key,
            *interaction_columns(ask).values(),
            None,
            None,
            *events,
            schema_module.advisory_key("events", schema),
            f":{schema}",
        )
    finally:
        await connection.close()
    assert row["outcome"] == "created"
