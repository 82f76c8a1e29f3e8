"""The store conformance suite: awkward input — large and unusual text, NUL
characters in identifiers, naive times, bad limits. Every backend must pass it."""

from __future__ import annotations

from datetime import timedelta, timezone

import pytest

from midturn.contract._interactions import (
    Interaction,
    NewEvent,
    PermissionDecision,
    PermissionRequest,
)
from midturn.errors import NotFound, UsageError
from midturn.store import Store
from midturn.testing.conformance._data import T0, make_ask, note, session


class InputConformance:
    """Large and awkward text, NUL characters, naive times and bad limits."""

    async def test_large_and_awkward_text_round_trips(self, store: Store) -> None:
        awkward = 'quote" backslash\\ newline\n emoji🦆 rtl\u202e zero-width\u200b é'
        payload = f"nul\x00 {awkward}"
        permission = Interaction(
            id=f"p-{awkward}",
            kind="permission",
            session_id=f"s-{awkward}",
            turn_id="t1",
            tool_call_id=awkward,
            created_at=T0,
            permission=PermissionRequest(
                tool="shell", summary=payload, details=(payload * 4000)[:190_000]
            ),
        )
        event = NewEvent(
            type="permission_requested",
            session_id=permission.session_id,
            turn_id="t1",
            interaction_id=permission.id,
            data={"text": payload, "list": [1, 2.5, True, None, {"k": payload}]},
        )
        _, _, (appended,) = await store.create_interaction(permission, [event])

        assert await store.get_interaction(permission.id) == permission
        assert await store.find_by_tool_call(permission.session_id, awkward) == permission
        assert await store.list_interactions(session_id=permission.session_id) == [permission]
        assert await store.read_events(session_id=permission.session_id) == [appended]
        settled = await store.settle(
            permission.id,
            status="denied",
            decision=PermissionDecision(outcome="denied", decision="deny", message=payload),
        )
        assert await store.get_interaction(permission.id) == settled.interaction

    async def test_a_nul_in_an_identifier_is_refused(self, store: Store) -> None:
        nul = "a\x00b"
        for bad in (
            make_ask(nul),
            make_ask("i1", session_id=nul),
            make_ask("i1", turn_id=nul),
            make_ask("i1", tool_call_id=nul),
        ):
            with pytest.raises(UsageError, match="NUL"):
                await store.create_interaction(bad)
        with pytest.raises(UsageError, match="NUL"):
            await store.create_interaction(make_ask("i1"), [note(nul)])
        with pytest.raises(UsageError, match="NUL"):
            await store.create_session(session(nul))
        with pytest.raises(UsageError, match="NUL"):
            await store.append_events([note("s1"), note(nul)])
        assert await store.list_interactions() == []
        assert await store.last_event_id() == 0

        await store.create_interaction(make_ask("i1"))
        with pytest.raises(UsageError, match="NUL"):
            await store.settle("i1", status="cancelled", events=[note(nul)])
        assert await store.list_interactions(status="pending") == [make_ask("i1")]

    async def test_a_nul_in_an_identifier_read_finds_nothing(self, store: Store) -> None:
        nul = "a\x00b"
        assert await store.get_interaction(nul) is None
        assert await store.find_by_tool_call(nul, nul) is None
        assert await store.get_session(nul) is None
        assert await store.list_interactions(session_id=nul, turn_id=nul) == []
        assert await store.read_events(session_id=nul) == []
        with pytest.raises(NotFound):
            await store.settle(nul, status="cancelled")

    async def test_a_naive_time_is_taken_as_utc_in_listings(self, store: Store) -> None:
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

    async def test_a_limit_below_one_is_a_usage_error(self, store: Store) -> None:
        with pytest.raises(UsageError, match="limit"):
            await store.list_interactions(limit=0)
        with pytest.raises(UsageError, match="limit"):
            await store.read_events(limit=0)
