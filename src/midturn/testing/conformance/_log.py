"""The store conformance suite: the event log, listeners, sessions,
durability and secrets. Every backend must pass it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from midturn.contract._interactions import Event, NewEvent
from midturn.errors import UsageError
from midturn.store import Store
from midturn.testing.conformance._backend import Backend
from midturn.testing.conformance._data import (
    RESULT,
    SECRET,
    T0,
    make_ask,
    make_permission,
    note,
    requested,
    session,
)


class LogConformance:
    """The event log, listeners, sessions, durability and secrets."""

    # -- events ----------------------------------------------------------------------------

    async def test_event_ids_increase_and_read_back_after_any_id(self, store: Store) -> None:
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

    async def test_tail_start_opens_a_window_on_the_newest_events(self, store: Store) -> None:
        assert await store.tail_start(5) == 0
        appended = [*await store.append_events([note("s1"), note("s2"), note("s1"), note("s2")])]
        appended += await store.append_events([note("s1")])
        s1 = [event for event in appended if event.session_id == "s1"]

        async def window(count: int, session_id: str | None = None) -> list[Event]:
            start = await store.tail_start(count, session_id=session_id)
            return await store.read_events(start, session_id=session_id)

        assert await window(2) == appended[-2:]
        assert await window(0) == []
        assert await window(100) == appended
        assert await window(2, "s1") == s1[-2:]
        assert await window(3, "s1") == s1
        assert await window(1, "nobody") == []
        with pytest.raises(UsageError, match="count"):
            await store.tail_start(-1)

    async def test_events_read_by_type_keep_the_log_ids(self, store: Store) -> None:
        def resumed(session_id: str) -> NewEvent:
            return NewEvent(type="turn_resumed", session_id=session_id, turn_id="t1")

        assert await store.read_events_of_types(["turn_resumed"]) == []
        assert await store.tail_start_of_types(["turn_resumed"], 1) == 0
        appended = [
            *await store.append_events(
                [note("s1"), resumed("s1"), note("s2"), resumed("s2"), resumed("s1")]
            ),
            *await store.append_events([note("s1"), resumed("s1")]),
        ]
        wanted = [event for event in appended if event.type == "turn_resumed"]
        s1 = [event for event in wanted if event.session_id == "s1"]

        assert await store.read_events_of_types(["turn_resumed"]) == wanted
        assert await store.read_events_of_types(["turn_resumed"], limit=2) == wanted[:2]
        assert await store.read_events_of_types(["turn_resumed"], wanted[1].id) == wanted[2:]
        assert await store.read_events_of_types(["turn_resumed"], session_id="s1") == s1
        assert (
            await store.read_events_of_types(["turn_resumed"], s1[0].id, session_id="s1", limit=1)
            == s1[1:2]
        )
        assert await store.read_events_of_types(["turn_resumed"], session_id="s3") == []
        assert await store.read_events_of_types(["user_question_requested"]) == []
        both = await store.read_events_of_types(["turn_resumed", "turn_waiting"])
        assert both == appended
        assert await store.read_events_of_types([], appended[4].id) == appended[5:]

        async def window(count: int, session_id: str | None = None) -> list[Event]:
            start = await store.tail_start_of_types(["turn_resumed"], count, session_id=session_id)
            return await store.read_events_of_types(["turn_resumed"], start, session_id=session_id)

        assert await window(2) == wanted[-2:]
        assert await window(0) == []
        assert await window(100) == wanted
        assert await window(2, "s1") == s1[-2:]
        assert await window(3, "s1") == s1
        assert await window(1, "nobody") == []
        assert await store.tail_start_of_types([], 2) == await store.tail_start(2)
        with pytest.raises(UsageError, match="count"):
            await store.tail_start_of_types(["turn_resumed"], -1)

    async def test_events_keep_their_fields(self, store: Store) -> None:
        interaction = make_ask("i1")
        (event,) = await store.append_events([requested(interaction)])
        assert isinstance(event, Event)
        (read,) = await store.read_events()
        assert read == event
        assert read.model_dump() == {**requested(interaction).model_dump(), "id": event.id}

    async def test_append_of_nothing_appends_nothing(self, store: Store) -> None:
        assert await store.append_events([]) == ()
        assert await store.last_event_id() == 0

    async def test_listeners_hear_every_append_with_the_newest_id(self, store: Store) -> None:
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

    # -- sessions --------------------------------------------------------------------------

    async def test_sessions_create_get_list(self, store: Store) -> None:
        first, second = session("a", created_at=T0), session("b", created_at=T0 + timedelta(1))
        await store.create_session(second)
        await store.create_session(first)

        assert await store.get_session("a") == first
        assert await store.get_session("zzz") is None
        assert await store.list_sessions() == [first, second]

    async def test_a_duplicate_session_id_is_a_usage_error(self, store: Store) -> None:
        await store.create_session(session("a"))
        with pytest.raises(UsageError, match="'a'"):
            await store.create_session(session("a", created_at=T0 + timedelta(1)))
        assert await store.list_sessions() == [session("a")]

    # -- durability ------------------------------------------------------------------------

    async def test_everything_survives_reopening(self, backend: Backend) -> None:
        backend.require("survives_reopen", "its data is gone with its store object")
        pending = make_ask("pending", tool_call_id="call-1")
        settled = make_ask("settled")
        permission = make_permission("perm")
        async with backend.new_store() as first:
            await first.create_session(session("s1"))
            await first.create_interaction(pending, [requested(pending)])
            await first.create_interaction(settled)
            await first.create_interaction(permission)
            done = await first.settle(
                "settled", status="answered", result=RESULT, events=[note("s1")]
            )
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

    async def test_no_secret_value_reaches_storage(self, backend: Backend) -> None:
        backend.require("raw_bytes", "it writes nothing outside this process to read back")
        assert backend.raw_bytes is not None
        async with backend.new_store() as opened:
            await opened.create_interaction(make_ask("i1"))
            assert RESULT.answers[1].secret_value is not None
            await opened.settle("i1", status="answered", result=RESULT)
            await opened.create_interaction(make_ask("i2"))
            await opened.settle("i2", status="answered", result=RESULT, events=[note("s1")])
            stored = await backend.raw_bytes()

        assert b"[secret provided]" in stored
        assert SECRET.encode() not in stored
