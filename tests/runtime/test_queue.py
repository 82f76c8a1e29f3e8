"""docs/runtime.md#one-queue-per-session: one surface per session — a shared FIFO of asks and
permissions."""

from __future__ import annotations

import asyncio

from tests.runtime.conftest import ANSWER, ASK, ONE_QUESTION, all_events, within

from midturn import Runtime
from midturn.testing import ScriptedResponder, allow, answer


async def test_a_permission_and_two_asks_made_in_parallel_are_shown_one_at_a_time_in_order(
    runtime: Runtime,
) -> None:
    made = await within(
        asyncio.gather(
            runtime.request_permission("s1", tool="bash", summary="rm -rf build", turn_id="t1"),
            runtime.ask("s1", ASK, turn_id="t1"),
            runtime.ask("s1", ONE_QUESTION, turn_id="t1"),
        )
    )
    ids = [interaction.id for interaction, _ in made]
    queue = await runtime.queue("s1")
    order = [interaction.id for interaction in queue]
    assert sorted(order) == sorted(ids)
    requested = [e for e in await all_events(runtime, "s1") if e.type.endswith("_requested")]
    # The requested events announce the same order, each with its place in the queue.
    assert [e.interaction_id for e in requested] == order
    assert [e.data["position"] for e in requested] == [0, 1, 2]

    # Settling the head shows the next one; never two heads at once.
    shown: list[str] = []
    while queue:
        head = queue[0]
        shown.append(head.id)
        if head.kind == "permission":
            await runtime.decide(head.id, "allow")
        else:
            await runtime.answer(head.id, {"skip": True})
        queue = await runtime.queue("s1")
    assert shown == order


async def test_queues_are_isolated_per_session(runtime: Runtime) -> None:
    a, _ = await runtime.ask("alpha", ASK)
    b, _ = await runtime.ask("beta", ASK)
    assert [i.id for i in await runtime.queue("alpha")] == [a.id]
    assert [i.id for i in await runtime.queue("beta")] == [b.id]
    events_b = await all_events(runtime, "beta")
    assert {e.session_id for e in events_b} == {"beta"}
    assert next(e for e in events_b if e.type == "user_question_requested").data["position"] == 0
    assert [i.id for i in await runtime.inbox()] == [a.id, b.id]


async def test_positions_count_the_pending_ones_ahead(runtime: Runtime) -> None:
    first, _ = await runtime.ask("s1", ASK)
    await runtime.ask("s1", ASK)
    await runtime.answer(first.id, ANSWER)
    third, _ = await runtime.ask("s1", ASK)
    requested = [e for e in await all_events(runtime, "s1") if e.type == "user_question_requested"]
    assert [e.data["position"] for e in requested] == [0, 1, 1]
    assert requested[-1].interaction_id == third.id


async def test_replay_gives_the_same_events_every_time_and_resumes_after_an_id(
    runtime: Runtime,
) -> None:
    async with ScriptedResponder(runtime, [allow(), answer(ANSWER)], session_id="s1") as human:
        await runtime.request_permission("s1", tool="bash", summary="ls", turn_id="t1")
        await runtime.ask("s1", ASK, turn_id="t1")
        await within(human.finished())
    first = await all_events(runtime, "s1")
    second = await all_events(runtime, "s1")
    assert first == second
    assert [e.id for e in first] == sorted(e.id for e in first)
    middle = first[len(first) // 2].id
    resumed = [e async for e in runtime.events(after=middle, session_id="s1", follow=False)]
    assert resumed == [e for e in first if e.id > middle]


async def test_asks_parked_at_once_queue_in_order_and_a_cancelled_one_frees_the_session(
    runtime: Runtime,
) -> None:
    """Many asks started together in one session take its lock in turn (on SQLite each
    waits for the one before it to be stored); one cancelled while it waits neither
    takes a place in the queue nor keeps the session locked."""
    tasks = [asyncio.create_task(runtime.ask("s1", ASK, tool_call_id=f"c{n}")) for n in range(12)]
    await asyncio.sleep(0)  # every task started, most of them waiting for the lock
    tasks[5].cancel()
    parked = []
    for n, task in enumerate(tasks):
        try:
            parked.append(await within(task))
        except asyncio.CancelledError:
            assert n == 5
    later, _ = await within(runtime.ask("s1", ASK, tool_call_id="later"))
    queue = await runtime.queue("s1")
    assert queue[-1].id == later.id
    requested = [e for e in await all_events(runtime, "s1") if e.type == "user_question_requested"]
    assert [e.data["position"] for e in requested] == list(range(len(queue)))
    assert len(queue) == len(parked) + 1


async def test_asks_of_a_turn_made_together_are_stamped_in_queue_order(runtime: Runtime) -> None:
    """An ask keeps the moment it was made as its `created_at` only when the session's
    lock is free as it parks; one that waited for the lock is stamped again once it holds
    it. Either way the stamps run in queue order, each its requested event's moment."""
    tasks = [
        asyncio.create_task(runtime.ask("s1", ASK, turn_id="t1", tool_call_id=f"c{n}"))
        for n in range(12)
    ]
    parked = [interaction for interaction, _ in [await within(task) for task in tasks]]
    queue = await runtime.queue("s1")
    assert sorted(item.id for item in queue) == sorted(item.id for item in parked)
    stamps = [item.created_at for item in queue]
    assert stamps == sorted(stamps)
    requested = [e for e in await all_events(runtime, "s1") if e.type == "user_question_requested"]
    assert [e.interaction_id for e in requested] == [item.id for item in queue]
    assert [e.at for e in requested] == stamps
    assert [e.data["interaction"]["created_at"] for e in requested] == [
        item.model_dump(mode="json")["created_at"] for item in queue
    ]
