"""The store conformance suite (SPEC §4): every backend must pass every test here.

The fixtures in `conftest.py` run each test once per backend (memory, SQLite,
PostgreSQL); `store` is an opened, empty store and `backend.new_store()` opens another
store object on the same data.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import SecretStr

from midturn.contract._interactions import (
    Event,
    Interaction,
    NewEvent,
    PermissionDecision,
    PermissionRequest,
)
from midturn.contract._models import Ask, AskResult, Option, Question, QuestionAnswer
from midturn.errors import NotFound, UsageError
from midturn.store import SessionRecord, Store

from .conftest import Backend

T0 = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)

ASK = Ask(
    questions=(
        Question(
            id="db",
            header="Database",
            question="Which database should the service use?",
            options=(
                Option(label="SQLite", description="One file, no server"),
                Option(label="PostgreSQL", description="A server, several replicas"),
            ),
            recommended=0,
        ),
        Question(id="key", header="API key", question="Paste the key", kind="text", secret=True),
    ),
    timeout_s=60.0,
)


def make_ask(
    interaction_id: str,
    *,
    session_id: str = "s1",
    turn_id: str = "t1",
    tool_call_id: str | None = None,
    created_at: datetime = T0,
) -> Interaction:
    return Interaction(
        id=interaction_id,
        kind="ask",
        session_id=session_id,
        turn_id=turn_id,
        tool_call_id=tool_call_id,
        created_at=created_at,
        deadline=created_at + timedelta(seconds=60),
        ask=ASK,
    )


def make_permission(
    interaction_id: str, *, session_id: str = "s1", turn_id: str = "t1"
) -> Interaction:
    return Interaction(
        id=interaction_id,
        kind="permission",
        session_id=session_id,
        turn_id=turn_id,
        created_at=T0,
        permission=PermissionRequest(tool="shell", summary="rm -rf build/", risk="high"),
    )


def requested(interaction: Interaction) -> NewEvent:
    return NewEvent(
        type="user_question_requested",
        session_id=interaction.session_id,
        turn_id=interaction.turn_id,
        interaction_id=interaction.id,
        at=T0,
        data={"questions": 2, "tags": ["a", "b"], "nested": {"x": None}},
    )


def answered(interaction: Interaction) -> NewEvent:
    return NewEvent(
        type="user_question_answered",
        session_id=interaction.session_id,
        turn_id=interaction.turn_id,
        interaction_id=interaction.id,
    )


def note(session_id: str, turn_id: str = "t1") -> NewEvent:
    return NewEvent(type="turn_waiting", session_id=session_id, turn_id=turn_id)


SECRET = "sk-live-9f8e7d6c5b4a-never-store-me"

RESULT = AskResult(
    outcome="answered",
    answers=(
        QuestionAnswer(
            id="db",
            header="Database",
            question="Which database should the service use?",
            status="answered",
            selected=("SQLite",),
            answer="SQLite",
        ),
        QuestionAnswer(
            id="key",
            header="API key",
            question="Paste the key",
            status="answered",
            answer="[secret provided]",
            secret_value=SecretStr(SECRET),
        ),
    ),
)


def session(session_id: str, *, created_at: datetime = T0) -> SessionRecord:
    return SessionRecord(
        id=session_id,
        agent_token_hash=f"agent-hash-{session_id}",
        answer_token_hash=f"answer-hash-{session_id}",
        created_at=created_at,
        meta={"label": f"session {session_id}", "n": 1},
    )


# -- lifecycle ---------------------------------------------------------------------------


async def test_open_is_idempotent_and_migrations_are_recorded(
    store: Store, backend: Backend
) -> None:
    version = await store.schema_version()
    await store.open()
    assert await store.schema_version() == version
    async with backend.new_store() as again:
        assert await again.schema_version() == version
    if backend.durable:
        assert version >= 1


async def test_use_before_open_is_a_usage_error(backend: Backend) -> None:
    unopened = backend.new_store()
    with pytest.raises(UsageError, match="not open"):
        await unopened.get_interaction("x")


async def test_close_is_idempotent(backend: Backend) -> None:
    opened = backend.new_store()
    await opened.open()
    await opened.aclose()
    await opened.aclose()


# -- interactions ------------------------------------------------------------------------


async def test_create_get_and_find_by_tool_call(store: Store) -> None:
    interaction = make_ask("i1", tool_call_id="call-1")

    stored, created, events = await store.create_interaction(interaction, [requested(interaction)])

    assert created
    assert stored == interaction
    assert [event.type for event in events] == ["user_question_requested"]
    assert events[0].interaction_id == "i1"
    assert await store.get_interaction("i1") == interaction
    assert await store.find_by_tool_call("s1", "call-1") == interaction
    assert await store.find_by_tool_call("s2", "call-1") is None
    assert await store.get_interaction("missing") is None


async def test_create_is_idempotent_by_tool_call_id(store: Store) -> None:
    first = make_ask("i1", tool_call_id="call-1")
    await store.create_interaction(first, [requested(first)])
    last = await store.last_event_id()

    repeat = make_ask("i2", tool_call_id="call-1")
    stored, created, events = await store.create_interaction(repeat, [requested(repeat)])

    assert (stored, created, events) == (first, False, ())
    assert await store.last_event_id() == last
    assert await store.get_interaction("i2") is None


async def test_the_same_tool_call_id_in_another_session_is_another_interaction(
    store: Store,
) -> None:
    await store.create_interaction(make_ask("i1", session_id="s1", tool_call_id="call-1"))
    _, created, _ = await store.create_interaction(
        make_ask("i2", session_id="s2", tool_call_id="call-1")
    )
    assert created
    found = await store.find_by_tool_call("s2", "call-1")
    assert found is not None and found.id == "i2"


async def test_interactions_without_tool_call_id_are_never_merged(store: Store) -> None:
    await store.create_interaction(make_ask("i1"))
    _, created, _ = await store.create_interaction(make_ask("i2"))
    assert created
    assert [i.id for i in await store.list_interactions()] == ["i1", "i2"]


async def test_a_duplicate_id_is_a_usage_error_and_changes_nothing(store: Store) -> None:
    await store.create_interaction(make_ask("i1"))
    with pytest.raises(UsageError, match="i1"):
        await store.create_interaction(make_ask("i1", turn_id="other"), [note("s1")])
    assert await store.last_event_id() == 0
    stored = await store.get_interaction("i1")
    assert stored is not None and stored.turn_id == "t1"


async def test_only_pending_interactions_can_be_created(store: Store) -> None:
    settled = make_ask("i1").model_copy(update={"status": "answered"})
    with pytest.raises(UsageError, match="pending"):
        await store.create_interaction(settled)
    assert await store.get_interaction("i1") is None


async def test_list_interactions_filters_and_orders_head_first(store: Store) -> None:
    # Created out of time order: the listing follows created_at, ties by insertion.
    await store.create_interaction(make_ask("late", created_at=T0 + timedelta(seconds=5)))
    await store.create_interaction(make_ask("early", created_at=T0 - timedelta(seconds=5)))
    await store.create_interaction(make_ask("tie-1"))
    await store.create_interaction(make_ask("tie-2"))
    await store.create_interaction(make_ask("tie-3", turn_id="t2"))
    await store.create_interaction(make_ask("other", session_id="s2"))
    await store.create_interaction(make_permission("perm"))
    await store.settle("tie-2", status="skipped", result=AskResult(outcome="skipped"))

    async def ids(**filters: object) -> list[str]:
        return [i.id for i in await store.list_interactions(**filters)]  # type: ignore[arg-type]

    assert await ids() == ["early", "tie-1", "tie-2", "tie-3", "other", "perm", "late"]
    assert await ids(session_id="s1") == ["early", "tie-1", "tie-2", "tie-3", "perm", "late"]
    assert await ids(session_id="s1", status="pending") == [
        "early",
        "tie-1",
        "tie-3",
        "perm",
        "late",
    ]
    assert await ids(status="pending", kind="ask") == ["early", "tie-1", "tie-3", "other", "late"]
    assert await ids(status="skipped") == ["tie-2"]
    assert await ids(turn_id="t2") == ["tie-3"]
    assert await ids(kind="permission") == ["perm"]
    assert await ids(session_id="s1", status="pending", limit=2) == ["early", "tie-1"]
    assert await ids(session_id="nobody") == []


async def test_a_naive_time_is_taken_as_utc_in_listings(store: Store) -> None:
    naive = T0.replace(tzinfo=None)
    plus_one_hour = timezone(timedelta(hours=1))
    await store.create_interaction(make_ask("utc+1", created_at=T0.astimezone(plus_one_hour)))
    await store.create_interaction(make_ask("naive-late", created_at=naive + timedelta(1)))
    await store.create_interaction(make_ask("naive-early", created_at=naive - timedelta(1)))
    await store.create_session(session("late", created_at=naive + timedelta(1)))
    await store.create_session(session("early", created_at=T0))

    listed = await store.list_interactions()
    assert [i.id for i in listed] == ["naive-early", "utc+1", "naive-late"]
    assert listed[0].created_at == naive - timedelta(1)
    assert [s.id for s in await store.list_sessions()] == ["early", "late"]


async def test_a_limit_below_one_is_a_usage_error(store: Store) -> None:
    with pytest.raises(UsageError, match="limit"):
        await store.list_interactions(limit=0)
    with pytest.raises(UsageError, match="limit"):
        await store.read_events(limit=0)


# -- settling ----------------------------------------------------------------------------


async def test_settle_wins_once_and_appends_its_events(store: Store) -> None:
    interaction = make_ask("i1", tool_call_id="call-1")
    await store.create_interaction(interaction, [requested(interaction)])
    at = T0 + timedelta(seconds=30)

    outcome = await store.settle(
        "i1",
        status="answered",
        result=RESULT,
        settled_by="web",
        settled_at=at,
        events=[answered(interaction)],
    )

    assert outcome.won
    assert outcome.interaction.status == "answered"
    assert outcome.interaction.settled_at == at
    assert outcome.interaction.settled_by == "web"
    assert outcome.interaction.result == RESULT.without_secrets()
    assert [event.type for event in outcome.events] == ["user_question_answered"]
    assert outcome.events[0].id == 2
    assert await store.get_interaction("i1") == outcome.interaction
    assert await store.find_by_tool_call("s1", "call-1") == outcome.interaction
    assert await store.list_interactions(status="pending") == []


async def test_settle_stores_no_secret_value(store: Store) -> None:
    await store.create_interaction(make_ask("i1"))
    outcome = await store.settle("i1", status="answered", result=RESULT)

    stored = await store.get_interaction("i1")
    assert stored is not None and stored.result is not None
    secret_answer = stored.result.answer_for("key")
    assert secret_answer is not None
    assert secret_answer.secret_value is None
    assert secret_answer.answer == "[secret provided]"
    assert outcome.interaction.result is not None
    assert all(a.secret_value is None for a in outcome.interaction.result.answers)


async def test_settle_a_permission_with_a_decision(store: Store) -> None:
    await store.create_interaction(make_permission("p1"))
    decision = PermissionDecision(outcome="denied", decision="deny", message="not on main")

    outcome = await store.settle("p1", status="denied", decision=decision, settled_by="cli")

    assert outcome.won
    stored = await store.get_interaction("p1")
    assert stored is not None
    assert (stored.status, stored.decision, stored.settled_by) == ("denied", decision, "cli")
    assert stored.settled_at is not None


async def test_of_fifty_concurrent_settles_exactly_one_wins(store: Store) -> None:
    interaction = make_ask("i1")
    await store.create_interaction(interaction, [requested(interaction)])

    outcomes = await asyncio.gather(
        *(
            store.settle(
                "i1",
                status="answered",
                result=RESULT,
                settled_by=f"responder-{n}",
                events=[answered(interaction)],
            )
            for n in range(50)
        )
    )

    winners = [outcome for outcome in outcomes if outcome.won]
    assert len(winners) == 1
    winner = winners[0]
    for loser in (outcome for outcome in outcomes if not outcome.won):
        assert loser.events == ()
        assert loser.interaction == winner.interaction
    assert await store.get_interaction("i1") == winner.interaction
    assert [e.type for e in await store.read_events()] == [
        "user_question_requested",
        "user_question_answered",
    ]


async def test_a_cancelled_settle_happens_whole_or_not_at_all(store: Store) -> None:
    interaction = make_ask("i1")
    await store.create_interaction(interaction)
    for steps in range(3):  # cancel after 0, 1 and 2 steps of the settle
        task = asyncio.create_task(
            store.settle("i1", status="cancelled", events=[answered(interaction)])
        )
        for _ in range(steps):
            await asyncio.sleep(0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        stored = await store.get_interaction("i1")
        assert stored is not None
        events = await store.read_events()
        assert (stored.status, len(events)) in (("pending", 0), ("cancelled", 1))
        if stored.status == "cancelled":
            break


async def test_settling_a_settled_interaction_loses_and_changes_nothing(store: Store) -> None:
    await store.create_interaction(make_ask("i1"))
    first = await store.settle("i1", status="skipped", result=AskResult(outcome="skipped"))

    second = await store.settle(
        "i1", status="answered", result=RESULT, events=[note("s1")], settled_by="late"
    )

    assert not second.won
    assert second.events == ()
    assert second.interaction == first.interaction
    assert await store.last_event_id() == 0


async def test_settle_of_an_unknown_id_is_not_found(store: Store) -> None:
    with pytest.raises(NotFound, match="nope"):
        await store.settle("nope", status="cancelled", events=[note("s1")])
    assert await store.last_event_id() == 0


async def test_settle_into_pending_or_with_the_wrong_payload_is_a_usage_error(
    store: Store,
) -> None:
    await store.create_interaction(make_ask("i1"))
    await store.create_interaction(make_permission("p1"))
    with pytest.raises(UsageError, match="pending"):
        await store.settle("i1", status="pending")
    with pytest.raises(UsageError, match="decision"):
        await store.settle("i1", status="allowed", decision=PermissionDecision(outcome="allowed"))
    with pytest.raises(UsageError, match="result"):
        await store.settle("p1", status="answered", result=RESULT)
    assert [i.status for i in await store.list_interactions()] == ["pending", "pending"]


# -- events ------------------------------------------------------------------------------


async def test_event_ids_increase_and_read_back_after_any_id(store: Store) -> None:
    assert await store.last_event_id() == 0
    assert await store.read_events() == []
    first = await store.append_events([note("s1"), note("s2")])
    second = await store.append_events([note("s1", turn_id="t2")])
    appended = [*first, *second]
    ids = [event.id for event in appended]

    assert ids == sorted(ids) and len(set(ids)) == 3
    assert await store.last_event_id() == ids[-1]
    assert await store.read_events() == appended
    assert await store.read_events(after_id=ids[0]) == appended[1:]
    assert await store.read_events(after_id=ids[-1]) == []
    assert await store.read_events(after_id=ids[-1] + 100) == []
    assert await store.read_events(limit=2) == appended[:2]
    assert await store.read_events(session_id="s1") == [appended[0], appended[2]]
    assert await store.read_events(after_id=ids[0], session_id="s1") == [appended[2]]
    assert await store.read_events(session_id="s1", limit=1) == [appended[0]]
    assert await store.read_events(session_id="s3") == []


async def test_events_keep_their_fields(store: Store) -> None:
    interaction = make_ask("i1")
    (event,) = await store.append_events([requested(interaction)])
    assert isinstance(event, Event)
    (read,) = await store.read_events()
    assert read == event
    assert read.model_dump() == {**requested(interaction).model_dump(), "id": event.id}


async def test_append_of_nothing_appends_nothing(store: Store) -> None:
    assert await store.append_events([]) == ()
    assert await store.last_event_id() == 0


async def test_listeners_hear_every_append_with_the_newest_id(store: Store) -> None:
    heard: list[int] = []
    store.add_listener(heard.append)
    interaction = make_ask("i1")

    _, _, created = await store.create_interaction(interaction, [requested(interaction)])
    settled = await store.settle("i1", status="cancelled", events=[note("s1"), note("s1")])
    lost = await store.settle("i1", status="cancelled", events=[note("s1")])
    appended = await store.append_events([note("s2")])

    assert not lost.won
    assert heard[:1] == [created[-1].id]
    assert settled.events[-1].id in heard
    assert heard[-1] == appended[-1].id
    assert heard == sorted(heard)
    store.remove_listener(heard.append)
    count = len(heard)
    await store.append_events([note("s2")])
    assert len(heard) == count


# -- sessions ----------------------------------------------------------------------------


async def test_sessions_create_get_list(store: Store) -> None:
    first, second = session("a", created_at=T0), session("b", created_at=T0 + timedelta(1))
    await store.create_session(second)
    await store.create_session(first)

    assert await store.get_session("a") == first
    assert await store.get_session("zzz") is None
    assert await store.list_sessions() == [first, second]


async def test_a_duplicate_session_id_is_a_usage_error(store: Store) -> None:
    await store.create_session(session("a"))
    with pytest.raises(UsageError, match="'a'"):
        await store.create_session(session("a", created_at=T0 + timedelta(1)))
    assert await store.list_sessions() == [session("a")]


# -- durability --------------------------------------------------------------------------


async def test_everything_survives_reopening(backend: Backend) -> None:
    if not backend.durable:
        pytest.skip(f"the {backend.name} backend keeps nothing after its store is gone")
    pending = make_ask("pending", tool_call_id="call-1")
    settled = make_ask("settled")
    permission = make_permission("perm")
    async with backend.new_store() as first:
        await first.create_session(session("s1"))
        await first.create_interaction(pending, [requested(pending)])
        await first.create_interaction(settled)
        await first.create_interaction(permission)
        done = await first.settle("settled", status="answered", result=RESULT, events=[note("s1")])
        events = await first.read_events()

    async with backend.new_store() as second:
        assert await second.get_interaction("pending") == pending
        assert await second.find_by_tool_call("s1", "call-1") == pending
        assert await second.get_interaction("settled") == done.interaction
        assert await second.get_interaction("perm") == permission
        assert await second.list_interactions() == [pending, done.interaction, permission]
        assert await second.get_session("s1") == session("s1")
        assert await second.read_events() == events
        # A pending interaction stays answerable after the restart; ids keep growing.
        late = await second.settle("pending", status="skipped", events=[note("s1")])
        assert late.won
        assert late.events[0].id > events[-1].id


async def test_no_secret_value_reaches_storage(backend: Backend) -> None:
    async with backend.new_store() as opened:
        await opened.create_interaction(make_ask("i1"))
        assert RESULT.answers[1].secret_value is not None
        await opened.settle("i1", status="answered", result=RESULT)
        await opened.create_interaction(make_ask("i2"))
        await opened.settle("i2", status="answered", result=RESULT, events=[note("s1")])
        stored = await backend.raw_bytes()

    if stored is None:
        pytest.skip(f"the {backend.name} backend writes nothing outside this process")
    assert b"[secret provided]" in stored
    assert SECRET.encode() not in stored
