"""Opt-in question timeouts, the permission default, and deadlines across restarts."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.runtime.conftest import ONE_QUESTION, next_event, within

from midturn import Interaction, Runtime, Store, UsageError, open_store, parse_ask
from midturn.contract._interactions import utcnow
from midturn.store._memory import MemoryStore
from midturn.store._sqlite import SqliteStore


async def test_an_ask_times_out_skipped_by_default(runtime: Runtime) -> None:
    async with contextlib.aclosing(runtime.events(session_id="s1")) as stream:  # type: ignore[type-var]
        interaction, _ = await runtime.ask("s1", {**ONE_QUESTION, "timeout_s": 0.05})
        assert interaction.deadline is not None
        event = await next_event(stream, "user_question_timeout")
    assert event.interaction_id == interaction.id
    settled = await runtime.get(interaction.id)
    assert settled.status == "timed_out" and settled.settled_by == "system"
    assert settled.result is not None and settled.result.outcome == "timed_out"
    assert [a.status for a in settled.result.answers] == ["timed_out"]


async def test_an_ask_times_out_to_its_recommended_option(runtime: Runtime) -> None:
    tool_input = {**ONE_QUESTION, "timeout_s": 0.05, "on_timeout": "recommended"}
    interaction, _ = await runtime.ask("s1", tool_input)
    settled = (await within(runtime.wait(interaction.id))).interaction
    assert settled.status == "timed_out"
    assert settled.result is not None
    answer = settled.result.answers[0]
    assert answer.selected == ("Blue",) and answer.auto_selected


async def test_a_permission_times_out_and_never_allows(store: Store) -> None:
    async with Runtime(store, permission_timeout_s=0.05) as runtime:
        permission, _ = await runtime.request_permission("s1", tool="bash", summary="ls")
        settled = (await within(runtime.wait(permission.id))).interaction
    assert settled.status == "timed_out"
    assert settled.decision is not None and settled.decision.outcome == "timed_out"
    assert settled.decision.decision is None


async def test_the_permission_default_is_300_seconds(runtime: Runtime) -> None:
    permission, _ = await runtime.request_permission("s1", tool="bash", summary="ls")
    assert permission.deadline is not None
    assert permission.deadline - permission.created_at == timedelta(seconds=300)


async def test_an_answer_before_the_deadline_wins_and_the_timer_does_nothing(
    runtime: Runtime,
) -> None:
    interaction, _ = await runtime.ask("s1", {**ONE_QUESTION, "timeout_s": 3600})
    settled = await runtime.answer(interaction.id, "Red")
    assert settled.interaction.status == "answered"


async def test_overdue_deadlines_settle_when_a_runtime_opens(store_url: str) -> None:
    ask = parse_ask({**ONE_QUESTION, "timeout_s": 1})
    past = utcnow() - timedelta(seconds=5)
    overdue = Interaction(
        id="ia_overdue",
        kind="ask",
        session_id="s1",
        turn_id="t1",
        created_at=past,
        deadline=past + timedelta(seconds=1),
        ask=ask,
    )
    async with open_store(store_url) as store:
        await store.create_interaction(overdue)
        async with Runtime(store) as runtime:
            settled = await runtime.get("ia_overdue")  # settled during open
            assert settled.status == "timed_out"
            events = [e async for e in runtime.events(follow=False)]
    assert [e.type for e in events] == ["user_question_timeout", "turn_resumed"]


async def test_a_future_deadline_is_scheduled_again_after_a_restart(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'restart.db'}"
    async with open_store(url) as store, Runtime(store) as runtime:
        interaction, _ = await runtime.ask("s1", {**ONE_QUESTION, "timeout_s": 0.2})
    async with open_store(url) as store, Runtime(store) as runtime:
        settled = (await within(runtime.wait(interaction.id))).interaction
    assert settled.status == "timed_out"


async def test_deadlines_share_one_timer_task(runtime: Runtime) -> None:
    await runtime.ask("s1", {**ONE_QUESTION, "timeout_s": 3600}, tool_call_id="first")
    before = len(asyncio.all_tasks())
    for n in range(50):
        await runtime.ask("s1", {**ONE_QUESTION, "timeout_s": 3600}, tool_call_id=f"c{n}")
        await runtime.request_permission("s1", tool="bash", summary=f"run {n}")
    assert len(asyncio.all_tasks()) == before


async def test_closing_the_runtime_releases_waiters_and_keeps_the_ask_pending(
    store: Store,
) -> None:
    runtime = Runtime(store)
    await runtime.open()
    interaction, _ = await runtime.ask("s1", ONE_QUESTION)
    waiter = asyncio.create_task(runtime.wait(interaction.id))
    await asyncio.sleep(0)  # let the waiter register (ordering only)
    await runtime.aclose()
    with pytest.raises(UsageError, match="still pending"):
        await within(waiter)
    assert (await store.get_interaction(interaction.id)).pending  # type: ignore[union-attr]


async def test_a_runtime_times_out_what_another_process_parked_and_left(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    async with open_store(url) as store, Runtime(store) as survivor:
        async with open_store(url) as other_store, Runtime(other_store) as gone:
            interaction, _ = await gone.ask("s1", {**ONE_QUESTION, "timeout_s": 0.2})
        # The parking runtime is gone; the survivor heard of the ask and arms its deadline.
        settled = (await within(survivor.wait(interaction.id))).interaction
    assert settled.status == "timed_out" and settled.settled_by == "system"


class _FailsFirstSettle:
    """A store whose first settle fails, as a database does on a transient error."""

    failures = 0

    async def settle_in_turn(self, *args: Any, **kwargs: Any) -> Any:
        if self.failures == 0:
            self.failures += 1
            raise sqlite3.OperationalError("database is locked")
        return await super().settle_in_turn(*args, **kwargs)  # type: ignore[misc]


class _FlakyMemory(_FailsFirstSettle, MemoryStore):
    pass


class _FlakySqlite(_FailsFirstSettle, SqliteStore):
    pass


async def test_a_timeout_whose_expiry_fails_once_is_retried(store_url: str) -> None:
    flaky = _FlakyMemory(store_url) if store_url.startswith("memory") else _FlakySqlite(store_url)
    async with flaky, Runtime(flaky) as runtime:
        interaction, _ = await runtime.ask("s1", {**ONE_QUESTION, "timeout_s": 0.05})
        settled = (await within(runtime.wait(interaction.id))).interaction
        assert flaky.failures == 1
    assert settled.status == "timed_out" and settled.settled_by == "system"


async def test_a_recovered_timeout_whose_expiry_fails_once_is_retried(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'midturn.db'}"
    now = utcnow()
    interaction = Interaction(  # its deadline passed while no runtime ran
        id="ia_overdue",
        kind="ask",
        session_id="s1",
        turn_id="t1",
        created_at=now - timedelta(seconds=10),
        deadline=now - timedelta(seconds=5),
        ask=parse_ask({**ONE_QUESTION, "timeout_s": 5}, "midturn"),
    )
    async with open_store(url) as store:
        await store.create_interaction(interaction)
    flaky = _FlakySqlite(url)
    async with flaky, Runtime(flaky) as runtime:  # opening does not fail on it
        settled = (await within(runtime.wait(interaction.id))).interaction
    assert flaky.failures == 1 and settled.status == "timed_out"


async def test_a_start_reads_only_the_pending_deadlines_not_every_pending_interaction(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'restart.db'}"
    async with open_store(url) as store, Runtime(store) as runtime:
        soon, _ = await runtime.ask("s1", {**ONE_QUESTION, "timeout_s": 0.2}, tool_call_id="a")
        later, _ = await runtime.ask("s1", {**ONE_QUESTION, "timeout_s": 3600}, tool_call_id="b")

    async with open_store(url) as store:
        whole_reads: list[object] = []
        list_interactions = store.list_interactions

        async def counted(**filters: object) -> list[Interaction]:
            if filters.get("status") == "pending" and filters.get("session_id") is None:
                whole_reads.append(filters)
            return await list_interactions(**filters)  # type: ignore[arg-type]

        store.list_interactions = counted  # type: ignore[method-assign]
        async with Runtime(store) as runtime:
            assert whole_reads == []
            assert (await within(runtime.wait(soon.id))).interaction.status == "timed_out"
            assert (await runtime.get(later.id)).status == "pending"
