"""Permissions (docs/runtime.md#permissions) and availability
(docs/runtime.md#where-nobody-can-answer)."""

from __future__ import annotations

import pytest
from tests.runtime.conftest import ASK, all_events

from midturn import AlreadySettled, Runtime, Store, UsageError


async def test_allow_and_deny_settle_with_their_decision(runtime: Runtime) -> None:
    allowed, _ = await runtime.request_permission("s1", tool="bash", summary="ls", risk="low")
    denied, _ = await runtime.request_permission(
        "s1", tool="bash", summary="rm -rf /", risk="high", details="rm -rf / --no-preserve-root"
    )
    first = await runtime.decide(allowed.id, "allow", by="user")
    second = await runtime.decide(denied.id, "deny", message="Never touch /", by="user")
    assert first.interaction.status == "allowed"
    assert first.interaction.decision is not None
    assert first.interaction.decision.decision == "allow"
    assert second.interaction.status == "denied"
    assert second.interaction.decision is not None
    assert second.interaction.decision.message == "Never touch /"
    decided = [e for e in await all_events(runtime) if e.type == "permission_decided"]
    assert [e.interaction_id for e in decided] == [allowed.id, denied.id]
    assert decided[1].data["interaction"]["decision"]["outcome"] == "denied"


async def test_a_repeated_decision_is_a_duplicate_and_a_different_one_is_refused(
    runtime: Runtime,
) -> None:
    permission, _ = await runtime.request_permission("s1", tool="bash", summary="ls")
    await runtime.decide(permission.id, "deny", message="no")
    assert (await runtime.decide(permission.id, "deny", message="no")).duplicate
    with pytest.raises(AlreadySettled):
        await runtime.decide(permission.id, "allow")
    with pytest.raises(UsageError, match="unknown permission decision"):
        await runtime.decide(permission.id, "maybe")  # type: ignore[arg-type]


async def test_allow_for_turn_allows_the_same_tool_without_asking_until_the_turn_ends(
    runtime: Runtime,
) -> None:
    first, _ = await runtime.request_permission("s1", tool="edit", summary="a.py", turn_id="t1")
    await runtime.decide(first.id, "allow_for_turn", by="user")
    before = await all_events(runtime)
    again, created = await runtime.request_permission(
        "s1", tool="edit", summary="b.py", turn_id="t1"
    )
    assert created and again.status == "allowed"
    assert again.decision is not None and again.decision.auto
    assert again.settled_by == "system"
    new = [e for e in await all_events(runtime) if e not in before]
    assert [e.type for e in new] == ["permission_decided"]  # nothing shown, nothing waited
    other_tool, _ = await runtime.request_permission("s1", tool="bash", summary="ls", turn_id="t1")
    next_turn, _ = await runtime.request_permission("s1", tool="edit", summary="c.py", turn_id="t2")
    assert other_tool.pending and next_turn.pending


async def test_allow_for_turn_also_allows_the_same_tool_already_waiting(
    runtime: Runtime,
) -> None:
    first, _ = await runtime.request_permission("s1", tool="edit", summary="a", turn_id="t1")
    second, _ = await runtime.request_permission("s1", tool="edit", summary="b", turn_id="t1")
    await runtime.decide(first.id, "allow_for_turn")
    settled = await runtime.get(second.id)
    assert settled.status == "allowed"
    assert settled.decision is not None and settled.decision.auto
    assert await runtime.queue("s1") == []


async def test_a_bad_permission_request_is_a_usage_error(runtime: Runtime) -> None:
    with pytest.raises(UsageError, match="summary"):
        await runtime.request_permission("s1", tool="bash", summary="")
    with pytest.raises(UsageError, match="timeout_s"):
        await runtime.request_permission("s1", tool="bash", summary="ls", timeout_s=0)
    for beyond_dates in (3e11, float("inf"), float("nan")):  # no deadline date could hold it
        with pytest.raises(UsageError, match="at most 31536000"):
            await runtime.request_permission(
                "s1", tool="bash", summary="ls", timeout_s=beyond_dates
            )
    assert await runtime.queue("s1") == []


def test_a_default_permission_timeout_beyond_a_year_is_a_usage_error(store: Store) -> None:
    with pytest.raises(UsageError, match="at most 31536000"):
        Runtime(store, permission_timeout_s=3e11)


async def test_non_interactive_asks_are_unavailable_at_once_and_nobody_cancelled(
    store: Store,
) -> None:
    async with Runtime(store, interactive=False) as runtime:
        ask, created = await runtime.ask("s1", ASK, tool_call_id="c1")
        permission, _ = await runtime.request_permission("s1", tool="bash", summary="ls")
        assert created and ask.status == "unavailable"
        assert ask.result is not None and ask.result.outcome == "unavailable"
        assert ask.settled_by == "system"
        assert permission.status == "unavailable"
        assert permission.decision is not None and permission.decision.decision is None
        assert await runtime.queue("s1") == []
        events = await all_events(runtime)
        assert not any("cancelled" in e.type or e.type.endswith("_requested") for e in events)
        assert events == []
        again, created = await runtime.ask("s1", ASK, tool_call_id="c1")
        assert not created and again == ask
        output = await runtime.handle_tool_call(
            "s1", name="ask_user_question", tool_call_id="c2", tool_input=ASK
        )
        assert not output.is_error
        assert output.data["outcome"] == "unavailable"
