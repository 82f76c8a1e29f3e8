"""The store conformance suite: the queue-aware writes the runtime parks and
settles with (`create_queued`, `settle_in_turn`). Every backend must pass it, whether it
inherits the base versions or does each in one transaction."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from midturn.contract._interactions import NewEvent
from midturn.errors import NotFound
from midturn.store import Store
from midturn.testing.conformance._data import RESULT, make_ask, make_permission, note, requested


class Chooser:
    """The `events` callback: records what the store told it, returns requested (and
    `turn_waiting` when the turn was not waiting yet)."""

    def __init__(
        self,
        interaction_id: str,
        session_id: str = "s1",
        turn_id: str = "t1",
        tool_call_id: str | None = None,
    ) -> None:
        self.item = make_ask(
            interaction_id, session_id=session_id, turn_id=turn_id, tool_call_id=tool_call_id
        )
        self.calls: list[tuple[int, bool]] = []

    def __call__(self, position: int, turn_waiting: bool) -> Sequence[NewEvent]:
        self.calls.append((position, turn_waiting))
        chosen = [requested(self.item)]
        if not turn_waiting:
            chosen.append(note(self.item.session_id, self.item.turn_id))
        return chosen


async def park(
    store: Store, interaction_id: str, *, session_id: str = "s1", turn_id: str = "t1"
) -> tuple[Chooser, tuple[int, bool], list[str]]:
    chooser = Chooser(interaction_id, session_id, turn_id)
    stored, created, appended = await store.create_queued(
        make_ask(interaction_id, session_id=session_id, turn_id=turn_id), chooser
    )
    assert created and stored.id == interaction_id
    assert len(chooser.calls) == 1
    return chooser, chooser.calls[0], [event.type for event in appended]


class QueueConformance:
    """The queue-aware writes: `create_queued` and `settle_in_turn`."""

    async def test_create_queued_gives_the_position_and_whether_the_turn_waits(
        self,
        store: Store,
    ) -> None:
        _, first, first_types = await park(store, "a1")
        _, second, second_types = await park(store, "a2")
        _, other_turn, other_turn_types = await park(store, "a3", turn_id="t2")
        _, other_session, _ = await park(store, "b1", session_id="s2")

        assert first == (0, False) and first_types == ["user_question_requested", "turn_waiting"]
        assert second == (1, True) and second_types == ["user_question_requested"]
        assert other_turn == (2, False)
        assert other_turn_types == ["user_question_requested", "turn_waiting"]
        assert other_session == (0, False)
        stored = [event.interaction_id for event in await store.read_events()]
        assert stored == ["a1", None, "a2", "a3", None, "b1", None]

    async def test_create_queued_counts_only_pending_interactions(self, store: Store) -> None:
        await park(store, "a1")
        await store.settle("a1", status="answered", result=RESULT)
        await store.create_interaction(make_permission("p1", turn_id="t9"))

        _, seen, types = await park(store, "a2")

        assert seen == (1, False)  # the permission of another turn waits; a1 no longer does
        assert types == ["user_question_requested", "turn_waiting"]

    async def test_create_queued_repeat_writes_nothing(self, store: Store) -> None:
        first = make_ask("a1", tool_call_id="call-1")
        await store.create_queued(first, Chooser("a1"))
        before = await store.last_event_id()

        again = make_ask("a2", tool_call_id="call-1")
        stored, created, appended = await store.create_queued(again, Chooser("a2"))

        assert (stored.id, created, appended) == ("a1", False, ())
        assert await store.last_event_id() == before
        assert await store.get_interaction("a2") is None

    async def test_settle_in_turn_appends_turn_done_only_for_the_last_pending(
        self,
        store: Store,
    ) -> None:
        for interaction_id in ("a1", "a2"):
            await store.create_interaction(make_ask(interaction_id))
        await store.create_interaction(make_ask("a3", turn_id="t2"))
        done = [note("s1")]

        first = await store.settle_in_turn(
            "a1", session_id="s1", turn_id="t1", status="skipped", turn_done=done
        )
        last = await store.settle_in_turn(
            "a2", session_id="s1", turn_id="t1", status="answered", result=RESULT, turn_done=done
        )

        assert first.won and [event.type for event in first.events] == []
        assert last.won and [event.type for event in last.events] == ["turn_waiting"]
        assert last.interaction.status == "answered"
        assert last.interaction.result is not None
        assert all(answer.secret_value is None for answer in last.interaction.result.answers)
        assert (await store.get_interaction("a3")).pending  # type: ignore[union-attr]

    async def test_settle_in_turn_puts_events_before_turn_done(self, store: Store) -> None:
        item = make_ask("a1")
        await store.create_interaction(item)
        settled_event = NewEvent(
            type="user_question_answered", session_id="s1", turn_id="t1", interaction_id="a1"
        )

        outcome = await store.settle_in_turn(
            "a1",
            session_id="s1",
            turn_id="t1",
            status="answered",
            result=RESULT,
            events=[settled_event],
            turn_done=[note("s1")],
        )

        assert [event.type for event in outcome.events] == [
            "user_question_answered",
            "turn_waiting",
        ]
        assert outcome.events[0].id < outcome.events[1].id
        assert list(outcome.events) == await store.read_events()

    async def test_settle_in_turn_loser_appends_nothing(self, store: Store) -> None:
        await store.create_interaction(make_ask("a1"))
        await store.settle("a1", status="skipped")
        before = await store.last_event_id()

        outcome = await store.settle_in_turn(
            "a1", session_id="s1", turn_id="t1", status="answered", turn_done=[note("s1")]
        )

        assert not outcome.won and outcome.events == ()
        assert outcome.interaction.status == "skipped"
        assert await store.last_event_id() == before

    async def test_settle_in_turn_of_an_unknown_id_is_not_found(self, store: Store) -> None:
        with pytest.raises(NotFound):
            await store.settle_in_turn(
                "missing", session_id="s1", turn_id="t1", status="skipped", turn_done=[note("s1")]
            )
