"""`handle_tool_call`: the whole question tool for a host."""

from __future__ import annotations

import asyncio
import json

import pytest
from tests.runtime.conftest import ANSWER, ASK, all_events, within

from midturn import Runtime, UsageError, render
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


async def test_json_string_arguments_are_read_as_the_tool_input(runtime: Runtime) -> None:
    """OpenAI's tool calls carry `arguments` as a JSON string: it is the same call."""
    async with ScriptedResponder(runtime, [answer(ANSWER)], session_id="s1") as human:
        output = await _call(runtime, "c1", json.dumps(ASK))
        await within(human.finished())
    stored = (await runtime.store.list_interactions(session_id="s1"))[0]
    assert stored.status == "answered" and stored.result is not None
    assert output == render(stored.result, "midturn")


async def test_arguments_that_are_not_json_are_an_error_the_model_can_fix(
    runtime: Runtime,
) -> None:
    output = await _call(runtime, "c1", '{"questions": [')
    assert output.is_error  # type: ignore[attr-defined]
    assert "not valid JSON" in output.text  # type: ignore[attr-defined]
    assert await runtime.queue("s1") == []


@pytest.mark.parametrize(
    ("name", "dialect"),
    [("AskUserQuestion", "midturn"), ("ask_user_question", "claude"), ("ask_user", "codex")],
)
async def test_a_registered_tool_name_in_another_dialect_is_a_usage_error(
    runtime: Runtime, name: str, dialect: str
) -> None:
    with pytest.raises(UsageError, match=f"{name!r}"):
        await runtime.handle_tool_call(
            "s1", name=name, tool_call_id="c1", tool_input=ASK, dialect=dialect
        )
    assert await runtime.queue("s1") == []


async def test_a_missing_dialect_for_a_registered_tool_name_is_a_usage_error(
    runtime: Runtime,
) -> None:
    with pytest.raises(UsageError, match="dialect='claude'"):
        await runtime.handle_tool_call(
            "s1", name="AskUserQuestion", tool_call_id="c1", tool_input=ASK
        )


async def test_a_name_of_the_hosts_own_takes_any_dialect(runtime: Runtime) -> None:
    async with ScriptedResponder(runtime, [answer(ANSWER)], session_id="s1") as human:
        output = await within(
            runtime.handle_tool_call("s1", name="ask_the_user", tool_call_id="c1", tool_input=ASK)
        )
        await within(human.finished())
    assert not output.is_error
