"""The shipped test doubles: a scripted model and the agent loop that drives it."""

from __future__ import annotations

import pytest

from midturn import ToolOutput, UsageError
from midturn.testing import Conversation, Message, ModelStep, ScriptedModel, ToolCall, run_turn


async def test_a_turn_plays_the_script_and_builds_the_reply_from_the_tool_result() -> None:
    call = ToolCall("call_1", "ask_user_question", {"questions": [{"question": "DB?"}]})
    model = ScriptedModel(
        [
            ModelStep(text="One question first.", tool_calls=(call,)),
            lambda conversation: ModelStep(text=f"Using {conversation.last_tool_result().text}."),
        ]
    )
    calls: list[ToolCall] = []

    async def handle(tool_call: ToolCall) -> ToolOutput:
        calls.append(tool_call)
        return ToolOutput(text="PostgreSQL")

    shown: list[Message] = []
    conversation = await run_turn(
        model, Conversation(), "Set it up", handle, on_message=shown.append
    )

    assert calls == [call]
    assert [(m.role, m.text) for m in conversation.messages] == [
        ("user", "Set it up"),
        ("assistant", "One question first."),
        ("tool", "PostgreSQL"),
        ("assistant", "Using PostgreSQL."),
    ]
    assert conversation.messages[2].tool_call_id == "call_1"
    assert shown == conversation.messages
    assert model.finished
    assert [len(seen) for seen in model.seen] == [1, 3]


async def test_a_synchronous_tool_and_an_error_result() -> None:
    call = ToolCall("c", "ask_user_question", {})
    model = ScriptedModel([ModelStep(tool_calls=(call,)), ModelStep(text="ok")])
    conversation = await run_turn(
        model, Conversation(), "hi", lambda _: ToolOutput(text="bad input", is_error=True)
    )
    assert conversation.last_tool_result().is_error


async def test_running_out_of_steps_says_what_to_do() -> None:
    model = ScriptedModel([ModelStep(tool_calls=(ToolCall("c", "t", {}),))])
    with pytest.raises(UsageError, match="ran out of steps"):
        await run_turn(model, Conversation(), "hi", lambda _: ToolOutput(text="x"))


def test_a_reply_step_without_a_tool_result_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no tool result"):
        Conversation().last_tool_result()
    with pytest.raises(UsageError, match="at least one step"):
        ScriptedModel([])


async def test_a_whole_turn_with_the_scripted_model_and_a_scripted_human() -> None:
    from midturn import Runtime, open_store
    from midturn.testing import ScriptedResponder, answer

    ask = {
        "questions": [
            {
                "id": "db",
                "header": "Database",
                "question": "Which database?",
                "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}],
            }
        ]
    }
    model = ScriptedModel(
        [
            ModelStep(tool_calls=(ToolCall("call_1", "ask_user_question", ask),)),
            lambda conversation: ModelStep(
                text="Using " + (conversation.last_tool_result().text or "").split(": ")[-1]
            ),
        ]
    )
    async with (
        open_store("memory://") as store,
        Runtime(store) as runtime,
        ScriptedResponder(runtime, [answer({"db": "SQLite"})], session_id="s"),
    ):

        async def tool(call: ToolCall) -> ToolOutput:
            return await runtime.handle_tool_call(
                "s", name=call.name, tool_call_id=call.id, tool_input=call.input
            )

        conversation = await run_turn(model, Conversation(), "Set it up", tool)
    assert conversation.messages[2].text == "The user answered:\n- Database: SQLite"
    assert conversation.messages[-1].text == "Using SQLite"
