"""Random scripts of store calls give the same answers on every backend: memory, SQLite
and PostgreSQL.

The conformance suite pins each behaviour with a chosen example; this runs many mixed
sequences — creates that collide on ids and tool call ids, settles that win and lose,
appends, filtered listings, reads after arbitrary ids — and compares every result and
every error across the backends.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests._postgres import POSTGRES_URL, drop_schema, require_server

from midturn.contract._interactions import Interaction, NewEvent, PermissionDecision
from midturn.contract._models import AskResult
from midturn.errors import MidturnError
from midturn.store import Store, open_store

T0 = datetime(2026, 5, 1, tzinfo=UTC)
IDS = st.sampled_from(["a", "b", "c", "d", "e"])
SESSIONS = st.sampled_from(["s1", "s2"])
TURNS = st.sampled_from(["t1", "t2"])
TIMES = st.integers(0, 3).map(lambda minutes: T0 + timedelta(minutes=minutes))
STATUSES = st.sampled_from(["answered", "skipped", "cancelled", "allowed", "denied", "pending"])


def _event(session_id: str, turn_id: str) -> NewEvent:
    return NewEvent(type="turn_waiting", session_id=session_id, turn_id=turn_id, at=T0)


create = st.builds(
    lambda interaction_id, kind, session_id, turn_id, tool_call, at, events: (
        "create",
        Interaction(
            id=interaction_id,
            kind=kind,
            session_id=session_id,
            turn_id=turn_id,
            tool_call_id=tool_call,
            created_at=at,
        ),
        [_event(session_id, turn_id)] * events,
    ),
    IDS,
    st.sampled_from(["ask", "permission"]),
    SESSIONS,
    TURNS,
    st.none() | st.sampled_from(["call-1", "call-2"]),
    TIMES,
    st.integers(0, 2),
)
settle = st.builds(
    lambda interaction_id, status, with_payload, events: (
        "settle",
        interaction_id,
        status,
        with_payload,
        events,
    ),
    IDS | st.just("missing"),
    STATUSES,
    st.booleans(),
    st.integers(0, 2),
)
append = st.builds(
    lambda session_id, turn_id, count: ("append", [_event(session_id, turn_id)] * count),
    SESSIONS,
    TURNS,
    st.integers(0, 3),
)
listing = st.builds(
    lambda **filters: ("list", filters),
    session_id=st.none() | SESSIONS,
    turn_id=st.none() | TURNS,
    status=st.none() | STATUSES,
    kind=st.none() | st.sampled_from(["ask", "permission"]),
    limit=st.none() | st.integers(1, 3),
)
reading = st.builds(
    lambda after_id, session_id, limit: ("read", after_id, session_id, limit),
    st.integers(-1, 8),
    st.none() | SESSIONS,
    st.integers(1, 4),
)
lookup = st.builds(
    lambda session_id, tool_call: ("find", session_id, tool_call),
    SESSIONS,
    st.sampled_from(["call-1", "call-2"]),
)
SCRIPTS = st.lists(
    st.one_of(create, create, settle, settle, append, listing, reading, lookup), max_size=25
)


async def _step(store: Store, step: tuple[Any, ...]) -> Any:
    match step:
        case ("create", interaction, events):
            return await store.create_interaction(interaction, events)
        case ("settle", interaction_id, status, with_payload, events):
            current = await store.get_interaction(interaction_id)
            payload: dict[str, Any] = {}
            if with_payload and current is not None and current.kind == "ask":
                payload["result"] = AskResult(outcome="skipped")
            elif with_payload and current is not None:
                payload["decision"] = PermissionDecision(outcome="denied")
            outcome = await store.settle(
                interaction_id,
                status=status,
                settled_at=T0 + timedelta(hours=1),
                settled_by="tester",
                events=[_event("s1", "t1")] * events,
                **payload,
            )
            return outcome.interaction, outcome.won, outcome.events
        case ("append", events):
            return await store.append_events(events)
        case ("list", filters):
            return await store.list_interactions(**filters)
        case ("read", after_id, session_id, limit):
            return await store.read_events(after_id, session_id=session_id, limit=limit)
        case ("find", session_id, tool_call):
            return await store.find_by_tool_call(session_id, tool_call)
    raise AssertionError(f"unknown step {step!r}")


async def _run(url: str, script: list[tuple[Any, ...]]) -> list[Any]:
    results: list[Any] = []
    async with open_store(url) as store:
        for step in script:
            try:
                results.append(await _step(store, step))
            except MidturnError as error:
                results.append((type(error).__name__,))
        results.append(await store.list_interactions())
        results.append(await store.read_events())
        results.append(await store.last_event_id())
    return results


def _agree(script: list[tuple[Any, ...]], memory: list[Any], other: list[Any]) -> None:
    for step, (left, right) in enumerate(zip(memory, other, strict=True)):
        assert left == right, f"step {step}: {script[step] if step < len(script) else 'end'}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCRIPTS)
def test_memory_and_sqlite_agree_on_every_script(script: list[tuple[Any, ...]]) -> None:
    memory = asyncio.run(_run("memory://", script))
    _agree(script, memory, asyncio.run(_run("sqlite:///:memory:", script)))


async def _empty(url: str) -> None:
    """Open once (creating the schema), then empty every table and restart the ids."""
    import asyncpg  # type: ignore[import-untyped]

    async with open_store(url):
        pass
    base, _, schema = url.partition("?schema=")
    connection = await asyncpg.connect(base)
    try:
        await connection.execute(
            f'TRUNCATE "{schema}".midturn_interactions, "{schema}".midturn_events,'
            f' "{schema}".midturn_sessions RESTART IDENTITY'
        )
    finally:
        await connection.close()


def test_memory_and_postgres_agree_on_every_script() -> None:
    require_server("the differential test must run on PostgreSQL")
    url = f"{POSTGRES_URL}?schema=t_differential_{uuid.uuid4().hex[:8]}"

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(SCRIPTS)
    def agree(script: list[tuple[Any, ...]]) -> None:
        memory = asyncio.run(_run("memory://", script))
        asyncio.run(_empty(url))
        _agree(script, memory, asyncio.run(_run(url, script)))

    try:
        agree()
    finally:
        asyncio.run(drop_schema(url))
