"""`handle_tool_call`: the whole question tool for a host."""

from __future__ import annotations

import asyncio

from tests.runtime.conftest import ANSWER, ASK, all_events, within

from midturn import Runtime, render
from midturn.testing import ScriptedResponder, answer, redirect, skip


async def _call(runtime: Runtime, call_id: str, tool_input: object = ASK) -> object:
    return await within(
        runtime.handle_tool_call(
            "s1",
            name="ask_user_question",
            tool_call_id=call_id,
            tool_input=tool_input,  # type: ignore[arg-type]
        )
    )


async def test_a_malformed_call_is_an_error_result_and_nothing_is_parked(
    runtime: Runtime,
) -> None:
    output = await runtime.handle_tool_call(
        "s1",
        name="ask_user_question",
        tool_call_id="c1",
        tool_input={"questions": [{"question": "Pick", "options": [{"label": "Only"}]}]},
    )
    assert output.is_error
    assert output.text.startswith("The question tool call was not shown to the user")
    assert "questions[0].options" in output.text
    assert await runtime.queue("s1") == []
    assert await all_events(runtime) == []


async def test_answered_skipped_and_redirected_calls_render_their_result(
    runtime: Runtime,
) -> None:
    script = [answer(ANSWER), skip(), redirect("Use MySQL instead")]
    async with ScriptedResponder(runtime, script, session_id="s1") as human:
        answered = await _call(runtime, "c1")
        skipped = await _call(runtime, "c2")
        redirected = await _call(runtime, "c3")
        await within(human.finished())
    results = [i.result for i in await runtime.store.list_interactions(session_id="s1")]
    assert [r.outcome for r in results if r is not None] == ["answered", "skipped", "redirected"]
    for output, result in zip((answered, skipped, redirected), results, strict=True):
        assert result is not None
        assert output == render(result, "midturn")
    assert "Use MySQL instead" in redirected.text  # type: ignore[attr-defined]


async def test_a_call_in_another_dialect_renders_in_that_dialect(runtime: Runtime) -> None:
    interaction_task = asyncio.create_task(_call(runtime, "c1"))
    async with ScriptedResponder(runtime, [answer(ANSWER)], session_id="s1") as human:
        output = await interaction_task
        await within(human.finished())
    stored = (await runtime.store.list_interactions(session_id="s1"))[0]
    assert stored.dialect == "midturn" and stored.result is not None
    assert output == render(stored.result, stored.dialect)
