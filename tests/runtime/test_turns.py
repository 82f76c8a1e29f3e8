"""The turn's `waiting_user_input` state: a hook, an awaitable, events; and its scope."""

from __future__ import annotations

import asyncio

from tests.runtime.conftest import ANSWER, ASK, all_events, within

from midturn import Runtime


async def test_a_turn_waits_while_anything_it_parked_is_pending(runtime: Runtime) -> None:
    flips: list[bool] = []
    async with runtime.turn("s1", "t1") as turn:
        turn.on_waiting(flips.append)
        assert not turn.waiting
        ask, _ = await turn.ask(ASK)
        permission, _ = await turn.request_permission(tool="bash", summary="ls")
        await within(turn.wait_until(waiting=True))
        await runtime.answer(ask.id, ANSWER)
        assert turn.waiting  # the permission still holds the turn
        await runtime.decide(permission.id, "allow")
        await within(turn.wait_until(waiting=False))
        assert not turn.waiting
    assert flips == [True, False]
    types = [e.type for e in await all_events(runtime, "s1")]
    assert types == [
        "user_question_requested",
        "turn_waiting",
        "permission_requested",
        "user_question_answered",
        "permission_decided",
        "turn_resumed",
    ]


async def test_leaving_the_turn_cancels_what_it_parked(runtime: Runtime) -> None:
    async with runtime.turn("s1", "t1") as turn:
        ask, _ = await turn.ask(ASK)
        permission, _ = await turn.request_permission(tool="bash", summary="ls")
        other, _ = await runtime.ask("s1", ASK, turn_id="t2")
    assert (await runtime.get(ask.id)).status == "cancelled"
    assert (await runtime.get(permission.id)).status == "cancelled"
    assert (await runtime.get(other.id)).pending
    assert turn.waiting is False


async def test_a_turn_handle_sees_a_turn_already_waiting(runtime: Runtime) -> None:
    await runtime.ask("s1", ASK, turn_id="t1")
    async with runtime.turn("s1", "t1", stop_on_exit=False) as turn:
        assert turn.waiting
    assert len(await runtime.queue("s1")) == 1


async def test_aborting_the_host_task_cancels_its_ask(runtime: Runtime) -> None:
    async with runtime.turn("s1", "t1") as turn:
        call = asyncio.create_task(
            turn.handle_tool_call(name="ask_user_question", tool_call_id="c1", tool_input=ASK)
        )
        await within(turn.wait_until(waiting=True))
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        await within(turn.wait_until(waiting=False))
    settled = (await runtime.store.list_interactions(session_id="s1"))[0]
    assert settled.status == "cancelled" and settled.settled_by == "host"


async def test_a_turn_follows_settles_made_by_another_runtime_on_the_store(
    runtime: Runtime,
) -> None:
    async with Runtime(runtime.store) as other, runtime.turn("s1", "t1") as turn:
        ask, _ = await turn.ask(ASK)
        await within(turn.wait_until(waiting=True))
        await other.answer(ask.id, ANSWER)
        await within(turn.wait_until(waiting=False))
        settled = (await within(runtime.wait(ask.id))).interaction
    assert settled.status == "answered"


async def test_watch_is_the_public_tap_a_turn_uses(runtime: Runtime) -> None:
    seen: list[str] = []
    stop = runtime.watch(lambda event: seen.append(event.type))
    ask, _ = await runtime.ask("s1", ASK, turn_id="t1")
    assert seen == ["user_question_requested", "turn_waiting"]  # synchronously, in order
    stop()
    await runtime.answer(ask.id, ANSWER)
    assert seen == ["user_question_requested", "turn_waiting"]
