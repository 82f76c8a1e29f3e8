"""docs/runtime.md#states: persist then publish, settle exactly once, duplicates, refusals,
stops."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from tests.runtime.conftest import ANSWER, ASK, all_events, next_event, within

from midturn import AlreadySettled, InvalidAnswer, InvalidAsk, NotFound, Runtime, UsageError


async def test_an_answer_sent_the_instant_the_requested_event_appears_is_accepted(
    runtime: Runtime,
) -> None:
    stream = runtime.events(session_id="s1")
    accepted: list[bool] = []

    async def answer_on_sight() -> None:
        async for event in stream:
            if event.type == "user_question_requested":
                assert event.interaction_id is not None
                settled = await runtime.answer(event.interaction_id, ANSWER, by="user")
                accepted.append(not settled.duplicate)
                return

    responder = asyncio.create_task(answer_on_sight())
    interaction, created = await runtime.ask("s1", ASK, turn_id="t1")
    await within(responder)
    assert created
    assert accepted == [True]
    settled = (await within(runtime.wait(interaction.id))).interaction
    assert settled.status == "answered"
    assert settled.result is not None
    assert settled.result.answer_for("db").answer == "PostgreSQL"  # type: ignore[union-attr]


async def test_the_interaction_is_stored_before_its_requested_event(runtime: Runtime) -> None:
    interaction, _ = await runtime.ask("s1", ASK)
    events = await all_events(runtime, "s1")
    requested = [e for e in events if e.type == "user_question_requested"]
    assert [e.interaction_id for e in requested] == [interaction.id]
    assert requested[0].data["interaction"] == interaction.model_dump(mode="json")
    assert requested[0].data["position"] == 0
    assert (await runtime.get(interaction.id)).pending


async def test_200_concurrent_answers_settle_once_with_one_event(runtime: Runtime) -> None:
    interaction, _ = await runtime.ask("s1", ASK, turn_id="t1")
    same = ANSWER
    other = {"answers": {"db": "SQLite", "name": "other"}}
    payloads = [same if i % 2 else other for i in range(200)]

    async def respond(payload: object) -> str:
        try:
            settled = await runtime.answer(interaction.id, payload, by="user")
        except AlreadySettled:
            return "refused"
        return "duplicate" if settled.duplicate else "accepted"

    outcomes = await within(asyncio.gather(*(respond(p) for p in payloads)))
    assert outcomes.count("accepted") == 1
    assert outcomes.count("duplicate") + outcomes.count("refused") == 199
    winner = payloads[outcomes.index("accepted")]
    for payload, outcome in zip(payloads, outcomes, strict=True):
        if outcome != "accepted":  # a duplicate repeats the winner; a refusal differs
            assert (outcome == "duplicate") == (payload is winner)
    answered = [e for e in await all_events(runtime) if e.type == "user_question_answered"]
    assert len(answered) == 1
    assert answered[0].data["interaction"]["result"]["outcome"] == "answered"


async def test_a_duplicate_answer_returns_the_same_result_and_publishes_nothing(
    runtime: Runtime,
) -> None:
    interaction, _ = await runtime.ask("s1", ASK)
    first = await runtime.answer(interaction.id, ANSWER)
    before = await all_events(runtime)
    again = await runtime.answer(interaction.id, {"answers": ["PostgreSQL", "billing-api"]})
    assert again.duplicate and not first.duplicate
    assert again.interaction == first.interaction
    assert await all_events(runtime) == before


async def test_a_conflicting_answer_is_refused_with_the_settled_interaction(
    runtime: Runtime,
) -> None:
    interaction, _ = await runtime.ask("s1", ASK)
    first = await runtime.answer(interaction.id, ANSWER)
    with pytest.raises(AlreadySettled) as refused:
        await runtime.answer(interaction.id, {"answers": {"db": "SQLite", "name": "x"}})
    assert refused.value.interaction == first.interaction
    with pytest.raises(AlreadySettled):  # an unreadable answer after settling: refused too
        await runtime.answer(interaction.id, {"answers": {"nope": 1}})
    assert await runtime.get(interaction.id) == first.interaction


async def test_an_invalid_answer_changes_nothing_and_the_ask_stays_answerable(
    runtime: Runtime,
) -> None:
    interaction, _ = await runtime.ask("s1", ASK)
    before = await all_events(runtime)
    with pytest.raises(InvalidAnswer, match="no question"):
        await runtime.answer(interaction.id, {"answers": {"nope": "x"}})
    assert (await runtime.get(interaction.id)).pending
    assert await all_events(runtime) == before
    assert not (await runtime.answer(interaction.id, ANSWER)).duplicate


async def test_a_malformed_ask_parks_nothing(runtime: Runtime) -> None:
    with pytest.raises(InvalidAsk) as invalid:
        await runtime.ask("s1", {"questions": [{"question": "Pick", "options": ["one"]}]})
    assert "questions[0].options" in str(invalid.value)
    assert await runtime.queue("s1") == []
    assert await all_events(runtime) == []


async def test_a_late_answer_after_the_turn_stopped_is_refused_and_changes_nothing(
    runtime: Runtime,
) -> None:
    first, _ = await runtime.ask("s1", ASK, turn_id="t1", tool_call_id="a")
    second, _ = await runtime.ask("s1", ASK, turn_id="t1", tool_call_id="b")
    elsewhere, _ = await runtime.ask("s1", ASK, turn_id="t2")
    stopped = await runtime.stop_turn("s1", "t1", by="user")
    assert {i.id for i in stopped} == {first.id, second.id}
    assert all(i.status == "cancelled" for i in stopped)
    assert all(i.result is not None and i.result.outcome == "cancelled" for i in stopped)
    before = await all_events(runtime)
    with pytest.raises(AlreadySettled):
        await runtime.answer(first.id, ANSWER)
    assert (await runtime.get(first.id)).status == "cancelled"
    assert await all_events(runtime) == before
    assert [i.id for i in await runtime.queue("s1")] == [elsewhere.id]
    assert await runtime.stop_turn("s1", "t1") == []


async def test_cancel_settles_once_and_repeating_it_is_a_duplicate(runtime: Runtime) -> None:
    interaction, _ = await runtime.ask("s1", ASK)
    first = await runtime.cancel(interaction.id, by="agent")
    again = await runtime.cancel(interaction.id, by="agent")
    assert first.interaction.status == "cancelled" and not first.duplicate
    assert again.duplicate and again.interaction == first.interaction
    answered, _ = await runtime.ask("s1", ASK)
    await runtime.answer(answered.id, ANSWER)
    with pytest.raises(AlreadySettled):
        await runtime.cancel(answered.id)


async def test_a_waiting_caller_is_woken_by_the_settle(runtime: Runtime) -> None:
    interaction, _ = await runtime.ask("s1", ASK)
    waiter = asyncio.create_task(runtime.wait(interaction.id))
    await asyncio.sleep(0)
    assert not waiter.done()
    await runtime.answer(interaction.id, {"skip": True})
    settled = (await within(waiter)).interaction
    assert settled.status == "skipped"
    assert settled.result is not None and settled.result.outcome == "skipped"


async def test_wait_with_a_timeout_returns_the_pending_interaction(runtime: Runtime) -> None:
    interaction, _ = await runtime.ask("s1", ASK)
    assert (await runtime.wait(interaction.id, timeout=0)).pending
    assert (await runtime.wait(interaction.id, timeout=0.01)).pending


async def test_unknown_ids_and_wrong_kinds_are_clear_errors(runtime: Runtime) -> None:
    with pytest.raises(NotFound):
        await runtime.answer("ia_missing", ANSWER)
    with pytest.raises(NotFound):
        await runtime.wait("ia_missing")
    permission, _ = await runtime.request_permission("s1", tool="bash", summary="ls")
    with pytest.raises(UsageError, match="decide"):
        await runtime.answer(permission.id, ANSWER)
    ask, _ = await runtime.ask("s1", ASK)
    with pytest.raises(UsageError, match="answer"):
        await runtime.decide(ask.id, "allow")


async def test_redirect_settles_redirected_with_the_message(runtime: Runtime) -> None:
    interaction, _ = await runtime.ask("s1", ASK, turn_id="t1")
    async with contextlib.aclosing(runtime.events(session_id="s1")) as stream:  # type: ignore[type-var]
        settled = await runtime.answer(interaction.id, {"redirect": "Use MySQL, stop asking"})
        assert settled.interaction.status == "redirected"
        result = settled.interaction.result
        assert result is not None and result.outcome == "redirected"
        assert result.message == "Use MySQL, stop asking"
        event = await next_event(stream, "user_question_redirected")
    assert event.data["interaction"]["result"]["message"] == "Use MySQL, stop asking"


async def test_a_closed_runtime_refuses_work(store: object) -> None:
    from midturn import Store

    assert isinstance(store, Store)
    runtime = Runtime(store)
    with pytest.raises(UsageError, match="not open"):
        await runtime.ask("s1", ASK)
    async with runtime:
        pass
    with pytest.raises(UsageError):
        await runtime.open()
