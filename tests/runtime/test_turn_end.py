"""A turn ends — stopped, finished, or its `Turn` block left — and with it every grant it
gave (docs/runtime.md#permissions): an `allow_for_turn` never outlives its turn, never
spans a session, and an ended turn parks nothing new. Held in the store, so across
restarts and processes."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest
from tests._postgres import fresh_schema
from tests.runtime.conftest import ASK, all_events

from midturn import Interaction, Runtime, Store, ToolCallConflict, UsageError, open_store
from midturn.store._memory import MemoryStore
from midturn.store._sqlite import SqliteStore


class _Yielding:
    """A store that yields to the event loop a few times (a seeded random number) before
    and after every read and write, as a store doing real I/O does, so that concurrent
    calls interleave in a test as they do in production."""

    _random = random.Random(10)

    async def _pause(self) -> None:
        for _ in range(self._random.randint(0, 3)):
            await asyncio.sleep(0)

    async def list_interactions(self, **filters: Any) -> list[Interaction]:
        await self._pause()
        found: list[Interaction] = await super().list_interactions(**filters)  # type: ignore[misc]
        await self._pause()
        return found

    async def create_queued(self, *args: Any, **kwargs: Any) -> Any:
        await self._pause()
        made = await super().create_queued(*args, **kwargs)  # type: ignore[misc]
        await self._pause()
        return made

    async def create_unless_ended(self, *args: Any, **kwargs: Any) -> Any:
        await self._pause()
        made = await super().create_unless_ended(*args, **kwargs)  # type: ignore[misc]
        await self._pause()
        return made

    async def settle_in_turn(self, *args: Any, **kwargs: Any) -> Any:
        await self._pause()
        settled = await super().settle_in_turn(*args, **kwargs)  # type: ignore[misc]
        await self._pause()
        return settled


class YieldingMemory(_Yielding, MemoryStore):
    pass


class YieldingSqlite(_Yielding, SqliteStore):
    pass


def yielding(url: str) -> Store:
    return YieldingMemory(url) if url.startswith("memory") else YieldingSqlite(url)


async def _grant(runtime: Runtime, turn_id: str | None, tool: str = "bash") -> Interaction:
    first, _ = await runtime.request_permission(
        "s1", tool=tool, summary="rm -rf build/", risk="high", turn_id=turn_id
    )
    await runtime.decide(first.id, "allow_for_turn", by="user")
    return first


async def test_a_stopped_turn_ends_its_grant(runtime: Runtime) -> None:
    await _grant(runtime, "t1")
    await runtime.stop_turn("s1", "t1")
    later, _ = await runtime.request_permission("s1", tool="bash", summary="rm -rf /", turn_id="t1")
    assert later.status != "allowed"


async def test_a_finished_turn_ends_its_grant(runtime: Runtime) -> None:
    await _grant(runtime, "t1")
    assert await runtime.end_turn("s1", "t1") == []
    later, _ = await runtime.request_permission("s1", tool="bash", summary="rm -rf /", turn_id="t1")
    assert later.status == "cancelled"
    assert later.decision is not None and later.decision.outcome == "cancelled"


async def test_leaving_a_turn_block_ends_its_grant(runtime: Runtime) -> None:
    async with runtime.turn("s1", "t1") as turn:
        first, _ = await turn.request_permission(tool="bash", summary="ls")
        await runtime.decide(first.id, "allow_for_turn")
        again, _ = await turn.request_permission(tool="bash", summary="ls -l")
        assert again.status == "allowed"
    later, _ = await runtime.request_permission("s1", tool="bash", summary="rm", turn_id="t1")
    assert later.status == "cancelled"


async def test_a_turn_left_with_an_error_is_stopped_and_cancels_what_it_parked(
    runtime: Runtime,
) -> None:
    with pytest.raises(RuntimeError):
        async with runtime.turn("s1", "t1") as turn:
            ask, _ = await turn.ask(ASK)
            raise RuntimeError("the host failed")
    assert (await runtime.get(ask.id)).status == "cancelled"
    later, _ = await runtime.ask("s1", ASK, turn_id="t1")
    assert later.status == "cancelled"


async def test_without_a_turn_id_allow_for_turn_grants_only_that_call(runtime: Runtime) -> None:
    first = await _grant(runtime, None)
    decided = await runtime.get(first.id)
    assert decided.status == "allowed" and decided.turn_id == f"~{first.id}"
    # recorded as what it did: this one call was allowed, no turn was granted
    assert decided.decision is not None and decided.decision.decision == "allow"
    again = await runtime.decide(first.id, "allow_for_turn")
    assert again.duplicate
    later, _ = await runtime.request_permission("s1", tool="bash", summary="rm -rf /")
    assert later.pending
    empty, _ = await runtime.request_permission("s1", tool="bash", summary="ls", turn_id="")
    assert empty.pending and empty.turn_id == f"~{empty.id}"


async def test_each_interaction_without_a_turn_id_is_a_turn_of_its_own(runtime: Runtime) -> None:
    first, _ = await runtime.ask("s1", ASK)
    second, _ = await runtime.ask("s1", ASK)
    assert first.turn_id == f"~{first.id}" and second.turn_id == f"~{second.id}"
    stopped = await runtime.stop_turn("s1", first.turn_id)
    assert [item.id for item in stopped] == [first.id]
    assert (await runtime.get(second.id)).pending
    with pytest.raises(UsageError, match="turn_id"):
        await runtime.ask("s1", ASK, turn_id=second.turn_id)  # nobody joins it
    with pytest.raises(UsageError, match="turn_id"):
        await runtime.request_permission("s1", tool="x", summary="y", turn_id="~mine")


async def test_a_stopped_turn_cancels_new_asks_and_permissions_at_once(runtime: Runtime) -> None:
    await runtime.stop_turn("s1", "t1")
    ask, created = await runtime.ask("s1", ASK, turn_id="t1", tool_call_id="c1")
    permission, _ = await runtime.request_permission(
        "s1", tool="bash", summary="ls", turn_id="t1", tool_call_id="c2"
    )
    assert created and ask.status == "cancelled"
    assert ask.result is not None and ask.result.outcome == "cancelled"
    assert permission.status == "cancelled"
    assert await runtime.queue("s1") == []
    assert not any(event.type == "turn_waiting" for event in await all_events(runtime))
    again, created = await runtime.ask("s1", ASK, turn_id="t1", tool_call_id="c1")
    assert not created and again.id == ask.id  # a resumed call still finds its interaction
    output = await runtime.handle_tool_call(
        "s1", name="ask_user_question", tool_call_id="c3", tool_input=ASK, turn_id="t1"
    )
    assert output.data["outcome"] == "cancelled"
    other, _ = await runtime.ask("s1", ASK, turn_id="t2")
    assert other.pending


async def test_a_stopped_turn_and_its_grant_stay_ended_after_a_restart(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'midturn.db'}"
    async with open_store(url) as store, Runtime(store) as runtime:
        await _grant(runtime, "t1")
        await runtime.stop_turn("s1", "t1")
    async with open_store(url) as store, Runtime(store) as runtime:
        later, _ = await runtime.request_permission(
            "s1", tool="bash", summary="rm -rf /", turn_id="t1"
        )
        assert later.status == "cancelled"
        ask, _ = await runtime.ask("s1", ASK, turn_id="t1")
        assert ask.status == "cancelled"


async def _racing_grants(first: Runtime, second: Runtime, rounds: int) -> list[Interaction]:
    """Each round: a permission waits in a new turn; one runtime grants it for the turn
    while the other requests the same tool in that turn. Returns every permission."""
    every: list[Interaction] = []
    for number in range(rounds):
        turn_id = f"race-{number}"
        head, _ = await first.request_permission("s1", tool="edit", summary="a.py", turn_id=turn_id)

        async def request(summary: str, turn_id: str = turn_id) -> Interaction:
            made, _ = await second.request_permission(
                "s1", tool="edit", summary=summary, turn_id=turn_id
            )
            return made

        results = await asyncio.gather(
            first.decide(head.id, "allow_for_turn"), request("b.py"), request("c.py")
        )
        every += [await second.get(item.id) for item in results[1:]]
        every.append(await first.get(head.id))
    return every


async def test_a_permission_racing_a_grant_is_allowed_never_stranded(store_url: str) -> None:
    async with yielding(store_url) as store, Runtime(store) as runtime:
        every = await _racing_grants(runtime, runtime, 40)
    assert {item.status for item in every} == {"allowed"}


async def _two_runtimes_race(url: str) -> None:
    one = yielding(url) if url.startswith("sqlite") else open_store(url)
    two = yielding(url) if url.startswith("sqlite") else open_store(url)
    async with one, two, Runtime(one) as first, Runtime(two) as second:
        every = await _racing_grants(first, second, 40)
        stranded = [item for item in every if item.pending]
        assert not stranded, f"{len(stranded)} permission(s) stranded behind a grant"


async def test_a_grant_race_across_two_stores_on_one_sqlite_file(tmp_path: Path) -> None:
    await _two_runtimes_race(f"sqlite:///{tmp_path / 'midturn.db'}")


async def test_a_grant_race_across_two_stores_on_postgresql() -> None:
    async with fresh_schema("grant_race", "the grant race must be tested on PostgreSQL") as url:
        await _two_runtimes_race(url)


async def _stop_holds_in_another(url: str) -> None:
    async with open_store(url) as one, open_store(url) as two:  # noqa: SIM117 - one each
        async with Runtime(one) as first, Runtime(two) as second:
            await _grant(first, "t1")
            await first.stop_turn("s1", "t1")
            later, _ = await second.request_permission(
                "s1", tool="bash", summary="rm", turn_id="t1"
            )
            assert later.status == "cancelled"
            ask, _ = await second.ask("s1", ASK, turn_id="t1")
            assert ask.status == "cancelled"


async def test_a_stop_in_one_process_holds_in_another(tmp_path: Path) -> None:
    await _stop_holds_in_another(f"sqlite:///{tmp_path / 'midturn.db'}")


async def test_a_stop_in_one_replica_holds_in_another_on_postgresql() -> None:
    async with fresh_schema("stop_holds", "a stop must hold across PostgreSQL replicas") as url:
        await _stop_holds_in_another(url)


async def test_a_park_racing_a_stop_never_stays_pending(store: Store) -> None:
    async with Runtime(store) as runtime:
        for number in range(40):
            turn_id = f"stop-{number}"
            await runtime.ask("s1", ASK, turn_id=turn_id)  # the turn has something parked
            made = await asyncio.gather(
                runtime.ask("s1", ASK, turn_id=turn_id),
                runtime.stop_turn("s1", turn_id),
                runtime.request_permission("s1", tool="x", summary="y", turn_id=turn_id),
            )
            for interaction in (made[0][0], made[2][0]):
                assert not (await runtime.get(interaction.id)).pending


class _AskSneaksIn:
    """A store on which an ask takes a tool call's id between a permission request's
    look-up of that id and its park: the race of an ask and a permission for one id."""

    runtime: Runtime | None = None

    async def find_by_tool_call(self, session_id: str, tool_call_id: str) -> Any:
        found = await super().find_by_tool_call(session_id, tool_call_id)  # type: ignore[misc]
        runtime, self.runtime = self.runtime, None
        if runtime is not None and found is None:
            await runtime.ask(session_id, ASK, tool_call_id=tool_call_id, turn_id="t1")
        return found


class _SneakyMemory(_AskSneaksIn, MemoryStore):
    pass


class _SneakySqlite(_AskSneaksIn, SqliteStore):
    pass


async def _kind_race(store: Any) -> None:
    async with store, Runtime(store) as runtime:
        store.runtime = runtime
        with pytest.raises(ToolCallConflict, match="belongs to a ask"):
            await runtime.request_permission(
                "s1", tool="bash", summary="ls", tool_call_id="c1", turn_id="t1"
            )
        assert [item.kind for item in await runtime.queue("s1")] == ["ask"]


async def test_a_permission_racing_an_ask_for_one_tool_call_id_is_a_conflict(
    store_url: str,
) -> None:
    memory = store_url.startswith("memory")
    await _kind_race(_SneakyMemory(store_url) if memory else _SneakySqlite(store_url))


async def test_a_permission_racing_an_ask_for_one_tool_call_id_on_postgresql() -> None:
    from midturn.store._postgres import PostgresStore

    class SneakyPostgres(_AskSneaksIn, PostgresStore):
        pass

    async with fresh_schema("kind_race", "the kind race must be tested on PostgreSQL") as url:
        await _kind_race(SneakyPostgres(url))
