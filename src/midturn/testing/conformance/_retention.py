"""The store conformance suite: retention, and the deadlines read on start.
Settled interactions older than a cutoff are pruned with their events; pending ones
never; the log's last id never goes back and reading after any id gives what is kept.
Every backend must pass it."""

from __future__ import annotations

from datetime import timedelta

from midturn.contract._interactions import Interaction, NewEvent
from midturn.store import Pruned, Store
from midturn.testing.conformance._backend import Backend
from midturn.testing.conformance._data import RESULT, T0, answered, make_ask, note, requested

CUTOFF = T0 + timedelta(days=30)


async def _park(store: Store, interaction: Interaction) -> None:
    await store.create_interaction(
        interaction, [requested(interaction), note(interaction.session_id, interaction.turn_id)]
    )


async def _answer(store: Store, interaction: Interaction, days: float) -> None:
    outcome = await store.settle(
        interaction.id,
        status="answered",
        result=RESULT,
        settled_by="web",
        settled_at=T0 + timedelta(days=days),
        events=[
            answered(interaction),
            NewEvent(type="turn_resumed", session_id="s1", turn_id=interaction.turn_id),
        ],
    )
    assert outcome.won


# -- start-up --------------------------------------------------------------------------


class RetentionConformance:
    """Pruning settled interactions and their events, and the deadlines read on start."""

    async def test_only_settled_interactions_older_than_the_cutoff_are_prunable(
        self, store: Store
    ) -> None:
        old, recent, pending = make_ask("old"), make_ask("recent"), make_ask("pending")
        for interaction in (old, recent, pending):
            await _park(store, interaction)
        await _answer(store, old, days=1)
        await _answer(store, recent, days=31)

        assert [item.id for item in await store.prunable(CUTOFF)] == ["old"]
        assert await store.count_prunable(CUTOFF) == 1
        assert await store.count_prunable(T0) == 0
        assert await store.prunable(T0 + timedelta(days=365), limit=1) == [
            await store.get_interaction("old")
        ]

    async def test_prune_deletes_the_interactions_and_their_events_and_never_a_pending_one(
        self,
        store: Store,
    ) -> None:
        old, other_turn, pending = (
            make_ask("old", tool_call_id="c1"),
            make_ask("other", turn_id="t2"),
            make_ask("pending", turn_id="t3"),
        )
        for interaction in (old, other_turn, pending):
            await _park(store, interaction)
        await _answer(store, old, days=1)
        await _answer(store, other_turn, days=40)
        before = await store.read_events()

        pruned = await store.prune(["old", "pending", "nobody"])

        # `old` and its two events and its turn's two turn events; `pending` is untouched.
        assert pruned == Pruned(interactions=1, events=4)
        assert await store.get_interaction("old") is None
        assert await store.find_by_tool_call("s1", "c1") is None
        assert (await store.get_interaction("pending")) is not None
        assert [item.id for item in await store.list_interactions()] == ["other", "pending"]
        kept = await store.read_events()
        assert kept == [event for event in before if event.turn_id != "t1"]
        assert await store.prune(["old"]) == Pruned()  # already gone: nothing

    async def test_turn_events_go_only_before_the_turns_kept_interactions(
        self, store: Store
    ) -> None:
        first, second = make_ask("first"), make_ask("second")
        await _park(store, first)
        await _answer(store, first, days=1)
        await _park(store, second)  # same turn, still pending
        before = await store.read_events()

        await store.prune(["first"])

        after = await store.read_events()
        # The turn events of `first`'s time go; everything from `second`'s request on stays.
        second_request = next(e for e in before if e.interaction_id == "second")
        assert after == [event for event in before if event.id >= second_request.id]
        assert any(event.type == "turn_waiting" for event in after)

    async def test_the_newest_event_is_kept_so_ids_never_go_back(
        self, store: Store, backend: Backend
    ) -> None:
        only = make_ask("only")
        await _park(store, only)
        await _answer(store, only, days=1)
        last = await store.last_event_id()

        await store.prune(["only"])

        assert await store.get_interaction("only") is None
        (newest,) = await store.read_events()
        assert newest.id == last == await store.last_event_id()
        again = make_ask("again")
        await _park(store, again)
        assert min(event.id for event in await store.read_events(after_id=last)) > last
        if backend.survives_reopen:  # and after a restart
            async with backend.new_store() as reopened:
                assert await reopened.last_event_id() > last

    async def test_reading_after_a_pruned_id_gives_what_is_kept(self, store: Store) -> None:
        old, kept = make_ask("old"), make_ask("kept", session_id="s2")
        await _park(store, old)
        await _park(store, kept)
        await _answer(store, old, days=1)
        first_id = (await store.read_events())[0].id

        await store.prune(["old"])

        remaining = await store.read_events()
        assert remaining and all(event.interaction_id != "old" for event in remaining)
        assert await store.read_events(after_id=first_id) == [
            e for e in remaining if e.id > first_id
        ]
        assert await store.read_events(after_id=0, session_id="s2") == [
            e for e in remaining if e.session_id == "s2"
        ]

    async def test_pending_deadlines_are_the_pending_interactions_with_a_deadline(
        self,
        store: Store,
    ) -> None:
        timed, settled = make_ask("timed"), make_ask("settled")
        untimed = make_ask("untimed").model_copy(update={"deadline": None})
        for interaction in (timed, settled, untimed):
            await _park(store, interaction)
        await _answer(store, settled, days=1)

        assert await store.pending_deadlines() == [("timed", timed.deadline)]

    async def test_pending_deadlines_come_soonest_first_in_pages_after_the_last_id(
        self,
        store: Store,
    ) -> None:
        # Created in one order, due in the reverse one.
        asks = [
            make_ask(f"a{n}", created_at=T0 + timedelta(seconds=n)).model_copy(
                update={"deadline": T0 + timedelta(hours=10 - n)}
            )
            for n in range(5)
        ]
        for interaction in asks:
            await _park(store, interaction)
        await _answer(store, asks[2], days=1)

        first = await store.pending_deadlines(limit=2)
        second = await store.pending_deadlines(after=first[-1][0], limit=2)
        rest = await store.pending_deadlines(after=second[-1][0], limit=2)

        assert [key for key, _ in first + second] == ["a4", "a3", "a1", "a0"]
        assert rest == []
        assert dict(first + second) == {item.id: item.deadline for item in asks if item.id != "a2"}

    async def test_pending_deadlines_read_past_awkward_text_in_the_body(self, store: Store) -> None:
        # A NUL and a quoted "deadline" in the model's text must not hide or fake the deadline.
        ask = make_ask("odd")
        assert ask.ask is not None
        question = ask.ask.questions[0]
        odd_text = 'nul\x00 "deadline":"1999-01-01T00:00:00Z" end'
        renamed = question.model_copy(update={"question": odd_text})
        odd = ask.model_copy(update={"ask": ask.ask.model_copy(update={"questions": (renamed,)})})
        await _park(store, odd)

        assert await store.pending_deadlines() == [("odd", odd.deadline)]
