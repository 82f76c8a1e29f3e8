"""The store conformance suite: lifecycle, interactions, settling.
Every backend must pass it.

`store` is an opened, empty store of the backend under test and `backend.new_store()`
another store object on the same data. What they store comes from `_data.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta

import pytest

from midturn.contract._context import InteractionContext, ToolCallContext
from midturn.contract._interactions import PermissionDecision
from midturn.contract._models import AskResult
from midturn.errors import NotFound, UsageError
from midturn.store import Event, Store
from midturn.testing.conformance._backend import Backend
from midturn.testing.conformance._data import (
    RESULT,
    T0,
    answered,
    make_ask,
    make_permission,
    note,
    requested,
)


class LifecycleConformance:
    """Opening and closing, creating and finding interactions, settling exactly once."""

    # -- lifecycle -------------------------------------------------------------------------

    async def test_open_is_idempotent_and_migrations_are_recorded(
        self, store: Store, backend: Backend
    ) -> None:
        version = await store.schema_version()
        await store.open()
        assert await store.schema_version() == version
        async with backend.new_store() as again:
            assert await again.schema_version() == version
        if backend.survives_reopen:
            assert version >= 1

    async def test_use_before_open_is_a_usage_error(self, backend: Backend) -> None:
        unopened = backend.new_store()
        with pytest.raises(UsageError, match="not open"):
            await unopened.get_interaction("x")

    async def test_close_is_idempotent(self, backend: Backend) -> None:
        opened = backend.new_store()
        await opened.open()
        await opened.aclose()
        await opened.aclose()
        with pytest.raises(UsageError, match="not open"):  # closed for good, not reopened
            await opened.get_interaction("x")

    # -- interactions ----------------------------------------------------------------------

    async def test_create_get_and_find_by_tool_call(self, store: Store) -> None:
        interaction = make_ask("i1", tool_call_id="call-1")

        stored, created, events = await store.create_interaction(
            interaction, [requested(interaction)]
        )

        assert created
        assert stored == interaction
        assert [event.type for event in events] == ["user_question_requested"]
        assert events[0].interaction_id == "i1"
        assert await store.get_interaction("i1") == interaction
        assert await store.find_by_tool_call("s1", "call-1") == interaction
        assert await store.find_by_tool_call("s2", "call-1") is None
        assert await store.get_interaction("missing") is None

    async def test_who_is_asking_is_kept_through_settle_listing_and_reopen(
        self, store: Store, backend: Backend
    ) -> None:
        context = InteractionContext(
            agent="release-bot",
            doing="Cleaning the build — «ünïcode», \u202e kept for the surfaces",
            tool=ToolCallContext(name="bash", input='{"command":"rm -rf build/"}'),
        )
        interaction = make_ask("i1", tool_call_id="call-1").model_copy(update={"context": context})
        await store.create_interaction(interaction, [requested(interaction)])
        outcome = await store.settle("i1", status="answered", result=RESULT)
        assert outcome.interaction.context == context
        listed = await store.list_interactions(session_id="s1")
        assert [item.context for item in listed] == [context]
        if backend.survives_reopen:
            async with backend.new_store() as again:
                found = await again.get_interaction("i1")
                assert found is not None and found.context == context

    async def test_create_is_idempotent_by_tool_call_id(self, store: Store) -> None:
        first = make_ask("i1", tool_call_id="call-1")
        await store.create_interaction(first, [requested(first)])
        last = await store.last_event_id()

        repeat = make_ask("i2", tool_call_id="call-1")
        stored, created, events = await store.create_interaction(repeat, [requested(repeat)])

        assert (stored, created, events) == (first, False, ())
        assert await store.last_event_id() == last
        assert await store.get_interaction("i2") is None

    async def test_the_same_tool_call_id_in_another_session_is_another_interaction(
        self,
        store: Store,
    ) -> None:
        await store.create_interaction(make_ask("i1", session_id="s1", tool_call_id="call-1"))
        _, created, _ = await store.create_interaction(
            make_ask("i2", session_id="s2", tool_call_id="call-1")
        )
        assert created
        found = await store.find_by_tool_call("s2", "call-1")
        assert found is not None and found.id == "i2"

    async def test_interactions_without_tool_call_id_are_never_merged(self, store: Store) -> None:
        await store.create_interaction(make_ask("i1"))
        _, created, _ = await store.create_interaction(make_ask("i2"))
        assert created
        assert [i.id for i in await store.list_interactions()] == ["i1", "i2"]

    async def test_a_duplicate_id_is_a_usage_error_and_changes_nothing(self, store: Store) -> None:
        await store.create_interaction(make_ask("i1"))
        with pytest.raises(UsageError, match="i1"):
            await store.create_interaction(make_ask("i1", turn_id="other"), [note("s1")])
        assert await store.last_event_id() == 0
        stored = await store.get_interaction("i1")
        assert stored is not None and stored.turn_id == "t1"

    async def test_only_pending_interactions_can_be_created(self, store: Store) -> None:
        settled = make_ask("i1").model_copy(update={"status": "answered"})
        with pytest.raises(UsageError, match="pending"):
            await store.create_interaction(settled)
        assert await store.get_interaction("i1") is None

    async def test_list_interactions_filters_and_orders_head_first(self, store: Store) -> None:
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
        assert await ids(status="pending", kind="ask") == [
            "early",
            "tie-1",
            "tie-3",
            "other",
            "late",
        ]
        assert await ids(status="skipped") == ["tie-2"]
        assert await ids(turn_id="t2") == ["tie-3"]
        assert await ids(kind="permission") == ["perm"]
        assert await ids(session_id="s1", status="pending", limit=2) == ["early", "tie-1"]
        assert await ids(session_id="nobody") == []

    async def test_list_interactions_pages_by_keyset_stable_under_inserts_and_settles(
        self,
        store: Store,
    ) -> None:
        # ties on created_at too: the page boundary must fall between them by insertion
        for name in ("a", "b", "c", "d", "e"):
            await store.create_interaction(make_ask(name))
        await store.create_interaction(make_ask("early", created_at=T0 - timedelta(seconds=5)))

        async def page(after: str | None, limit: int = 2) -> list[str]:
            found = await store.list_interactions(status="pending", limit=limit, after=after)
            return [i.id for i in found]

        first = await page(None)
        assert first == ["early", "a"]
        # meanwhile: the cursor's own interaction settles, one not yet listed settles, and
        # a new one is inserted at the end — the next pages neither skip nor repeat
        await store.settle("a", status="skipped", result=AskResult(outcome="skipped"))
        await store.settle("c", status="skipped", result=AskResult(outcome="skipped"))
        await store.create_interaction(make_ask("f", created_at=T0 + timedelta(seconds=1)))
        second = await page(first[-1])
        assert second == ["b", "d"]
        assert await page(second[-1]) == ["e", "f"]
        assert await page("f") == []
        # the same keyset within one session, and without a limit
        assert [i.id for i in await store.list_interactions(session_id="s1", after="b")] == [
            "c",
            "d",
            "e",
            "f",
        ]
        with pytest.raises(UsageError, match="cursor"):
            await store.list_interactions(after="no-such-interaction")

    # -- settling --------------------------------------------------------------------------

    async def test_settle_wins_once_and_appends_its_events(self, store: Store) -> None:
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

    async def test_settle_stores_no_secret_value(self, store: Store) -> None:
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

    async def test_settle_a_permission_with_a_decision(self, store: Store) -> None:
        await store.create_interaction(make_permission("p1"))
        decision = PermissionDecision(outcome="denied", decision="deny", message="not on main")

        outcome = await store.settle("p1", status="denied", decision=decision, settled_by="cli")

        assert outcome.won
        stored = await store.get_interaction("p1")
        assert stored is not None
        assert (stored.status, stored.decision, stored.settled_by) == ("denied", decision, "cli")
        assert stored.settled_at is not None

    async def test_of_fifty_concurrent_settles_exactly_one_wins(self, store: Store) -> None:
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

    async def test_a_cancelled_settle_happens_whole_or_not_at_all(self, store: Store) -> None:
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
            status, events = await _status_and_events(store, "i1")
            assert (status, len(events)) in (("pending", 0), ("cancelled", 1))
            if status == "cancelled":
                break

    async def test_settling_a_settled_interaction_loses_and_changes_nothing(
        self, store: Store
    ) -> None:
        await store.create_interaction(make_ask("i1"))
        first = await store.settle("i1", status="skipped", result=AskResult(outcome="skipped"))

        second = await store.settle(
            "i1", status="answered", result=RESULT, events=[note("s1")], settled_by="late"
        )

        assert not second.won
        assert second.events == ()
        assert second.interaction == first.interaction
        assert await store.last_event_id() == 0

    async def test_settle_of_an_unknown_id_is_not_found(self, store: Store) -> None:
        with pytest.raises(NotFound, match="nope"):
            await store.settle("nope", status="cancelled", events=[note("s1")])
        assert await store.last_event_id() == 0

    async def test_settle_into_a_wrong_status_or_with_the_wrong_payload_is_a_usage_error(
        self,
        store: Store,
    ) -> None:
        await store.create_interaction(make_ask("i1"))
        await store.create_interaction(make_permission("p1"))
        with pytest.raises(UsageError, match="pending"):
            await store.settle("i1", status="pending")
        with pytest.raises(UsageError, match="decision"):
            await store.settle(
                "i1", status="allowed", decision=PermissionDecision(outcome="allowed")
            )
        with pytest.raises(UsageError, match="result"):
            await store.settle("p1", status="answered", result=RESULT)
        with pytest.raises(UsageError, match="cannot be 'denied'"):
            await store.settle("i1", status="denied", events=[note("s1")])
        with pytest.raises(UsageError, match="cannot be 'answered'"):
            await store.settle("p1", status="answered", events=[note("s1")])
        assert [i.status for i in await store.list_interactions()] == ["pending", "pending"]
        assert await store.last_event_id() == 0


async def _status_and_events(store: Store, interaction_id: str) -> tuple[str, list[Event]]:
    """An interaction's status and the log, as one moment saw them. A store may finish a
    write its caller cancelled (a statement once sent may commit), so the two reads can
    straddle that commit; the status, read again after the log, says whether they did
    (it changes once at most), and then they are read again."""
    while True:
        before = await store.get_interaction(interaction_id)
        events = await store.read_events()
        after = await store.get_interaction(interaction_id)
        assert before is not None and after is not None
        if before.status == after.status:
            return after.status, events
