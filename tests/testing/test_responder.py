"""The scripted human shipped for users' own tests."""

from __future__ import annotations

from tests.runtime.conftest import ANSWER, ASK, within

from midturn import AlreadySettled, InvalidAnswer, Runtime
from midturn.testing import (
    ScriptedResponder,
    allow_for_turn,
    answer,
    deny,
    stall,
    stop_turn,
)


async def test_the_responder_follows_its_script_in_request_order(runtime: Runtime) -> None:
    script = [answer(lambda item: ANSWER), deny("no"), allow_for_turn(), stall(), stop_turn()]
    async with ScriptedResponder(runtime, script, session_id="s1") as human:
        ask, _ = await runtime.ask("s1", ASK, turn_id="t1")
        denied, _ = await runtime.request_permission("s1", tool="rm", summary="x", turn_id="t1")
        edit, _ = await runtime.request_permission("s1", tool="edit", summary="a", turn_id="t1")
        stalled, _ = await runtime.ask("s1", ASK, turn_id="t1")
        stopper, _ = await runtime.ask("s1", ASK, turn_id="t1")
        await within(human.finished())
        extra, _ = await runtime.ask("s1", ASK, turn_id="t2")
        waited = await within(runtime.wait(ask.id))
    assert [r.interaction.id for r in human.responses] == [
        ask.id,
        denied.id,
        edit.id,
        stalled.id,
        stopper.id,
    ]
    answered = human.responses[0].settled
    assert answered is not None and waited.interaction.status == "answered"
    assert answered.output is not None and answered.output == waited.output
    assert (await runtime.get(denied.id)).status == "denied"
    assert (await runtime.get(edit.id)).status == "allowed"
    assert human.responses[3].settled is None  # stalled: left pending until the stop
    assert {i.id for i in human.responses[4].stopped} == {stalled.id, stopper.id}
    assert (await runtime.get(extra.id)).pending
    assert human.remaining == 0


async def test_a_refused_response_is_recorded_and_the_script_goes_on(runtime: Runtime) -> None:
    ask, _ = await runtime.ask("s1", ASK)
    await runtime.answer(ask.id, {"skip": True})
    fresh, _ = await runtime.ask("s1", ASK)
    async with ScriptedResponder(runtime, [answer({"answers": {"nope": 1}}), answer(ANSWER)]) as h:
        second, _ = await runtime.ask("s1", ASK)
        await within(h.finished())
    assert h.responses[0].interaction.id == fresh.id
    error = h.responses[0].error
    assert isinstance(error, InvalidAnswer) and not isinstance(error, AlreadySettled)
    assert (await runtime.get(ask.id)).status == "skipped"  # settled before: not scripted
    assert h.responses[1].interaction.id == second.id
    assert (await runtime.get(second.id)).status == "answered"
