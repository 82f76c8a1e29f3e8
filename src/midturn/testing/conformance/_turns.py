"""The store conformance suite, ended turns (`end_turn`, `turn_ended`) and the
pending count the gateway's metrics read (`count_pending`). Every backend must pass it."""

from __future__ import annotations

from midturn.store import Store
from midturn.testing.conformance._backend import Backend
from midturn.testing.conformance._data import RESULT, make_ask, make_permission
from midturn.testing.conformance._queue import Chooser


class TurnConformance:
    """Ended turns and the pending count."""

    async def test_an_ended_turn_is_recorded_once_and_only_for_that_turn(
        self, store: Store
    ) -> None:
        assert not await store.turn_ended("s1", "t1")
        assert await store.end_turn("s1", "t1", how="stopped")
        assert not await store.end_turn("s1", "t1", how="finished")  # the first record stays
        assert await store.turn_ended("s1", "t1")
        assert not await store.turn_ended("s1", "t2")
        assert not await store.turn_ended("s2", "t1")

    async def test_an_ended_turn_survives_a_restart(self, backend: Backend) -> None:
        async with backend.new_store() as store:
            await store.end_turn("s1", "t1", how="finished")
        if not backend.survives_reopen:
            return
        async with backend.new_store() as again:
            assert await again.turn_ended("s1", "t1")
            assert not await again.end_turn("s1", "t1", how="stopped")

    async def test_an_ended_turn_is_seen_by_another_store_on_the_same_data(
        self,
        backend: Backend,
    ) -> None:
        backend.require("shares_database", "two store objects on one database")
        async with backend.new_store() as first, backend.new_store() as second:
            await first.end_turn("s1", "t1", how="stopped")
            assert await second.turn_ended("s1", "t1")

    async def test_create_unless_ended_writes_nothing_in_an_ended_turn(self, store: Store) -> None:
        await store.end_turn("s1", "t1", how="stopped")
        chooser = Chooser("a1", turn_id="t1")
        assert await store.create_unless_ended(chooser.item, chooser) is None
        assert await store.get_interaction("a1") is None
        assert await store.read_events() == []
        assert await store.count_pending() == 0

    async def test_create_unless_ended_in_an_ended_turn_returns_none_for_a_repeat_too(
        self, store: Store
    ) -> None:
        first = Chooser("a1", turn_id="t1", tool_call_id="call-1")
        _, created, _ = await store.create_queued(first.item, first)
        assert created
        await store.end_turn("s1", "t1", how="stopped")
        again = Chooser("a2", turn_id="t1", tool_call_id="call-1")
        assert await store.create_unless_ended(again.item, again) is None
        # its events may have been chosen (PostgreSQL chooses them for the one statement
        # that finds the turn ended), never written
        assert {event.interaction_id for event in await store.read_events()} <= {"a1", None}
        assert [item.id for item in await store.list_interactions()] == ["a1"]

    async def test_create_unless_ended_parks_as_create_queued_in_a_live_turn(
        self, store: Store
    ) -> None:
        await store.end_turn("s1", "t2", how="finished")  # another turn of the session
        await store.end_turn("s2", "t1", how="finished")  # the same turn id elsewhere
        first = Chooser("a1", turn_id="t1")
        made = await store.create_unless_ended(first.item, first)
        assert made is not None
        stored, created, appended = made
        assert created and stored.id == "a1"
        assert first.calls[-1] == (0, False)
        assert [event.type for event in appended] == ["user_question_requested", "turn_waiting"]
        second = Chooser("a2", turn_id="t1")
        made = await store.create_unless_ended(second.item, second)
        assert made is not None and made[1]
        assert second.calls[-1] == (1, True)
        third = Chooser("a3", turn_id="t1")
        assert await store.create_unless_ended(third.item, third) is not None
        assert await store.count_pending() == 3

    async def test_count_pending_counts_every_session_and_drops_what_settles(
        self, store: Store
    ) -> None:
        assert await store.count_pending() == 0
        await store.create_interaction(make_ask("a1", session_id="s1"))
        await store.create_interaction(make_ask("a2", session_id="s2"))
        await store.create_interaction(make_permission("p1", session_id="s1"))
        assert await store.count_pending() == 3
        await store.settle("a1", status="answered", result=RESULT)
        assert await store.count_pending() == 2
        assert await store.count_pending() == len(await store.list_interactions(status="pending"))
