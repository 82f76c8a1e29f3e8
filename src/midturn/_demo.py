"""`midturn demo`: one agent turn on a scripted model that stops mid-turn to ask in this
terminal, then continues the same turn with the answer.

The pieces are the real ones: the runtime parks the tool call (`handle_tool_call`), the
terminal answerer shows the queue's head in the picker and answers it, and the model's
next step is built from the tool result text it receives.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable
from typing import Any

from midturn.testing._model import (
    Conversation,
    Message,
    ModelStep,
    ScriptedModel,
    ToolCall,
    run_turn,
)
from midturn.tui._answerer import STOPPED, answer_loop
from midturn.tui._render import block, plain
from midturn.tui._sanitize import sanitize
from midturn.tui._terminal import TerminalIO

__all__ = ["DEMO_ASK", "USER_MESSAGE", "demo_model", "run_demo"]

USER_MESSAGE = "Set up a new backend service for our billing team."

DEMO_ASK: dict[str, Any] = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the billing service use?",
            "options": [
                {
                    "label": "PostgreSQL",
                    "description": "Managed, scales out, point-in-time recovery",
                },
                {"label": "SQLite", "description": "Embedded, zero setup, one file to back up"},
            ],
            "recommended": "PostgreSQL",
        },
        {
            "id": "features",
            "header": "Features",
            "question": "Which features should the first release include?",
            "options": [
                {"label": "Invoices"},
                {"label": "Refunds"},
                {"label": "Usage metering"},
            ],
            "multi": True,
        },
        {
            "id": "name",
            "header": "Name",
            "question": "What should the service be called?",
            "kind": "text",
        },
    ]
}

_LINE = re.compile(r"^- (?P<header>[^:]+): (?P<value>.*)$")


def _final_reply(conversation: Conversation) -> ModelStep:
    """The model's last step, written from the tool result it was given."""
    result = conversation.last_tool_result()
    text = result.text or ""
    if result.is_error:
        return ModelStep(text=f"The question tool failed ({text}); I will stop here.")
    answers = {m["header"]: m["value"] for m in map(_LINE.match, text.splitlines()) if m}
    if not answers:
        return ModelStep(
            text="You skipped the questions, so I will scaffold `billing-service` on "
            "PostgreSQL with invoices only, and note those assumptions in the README."
        )
    db = answers.get("Database", "(skipped)")
    database = "PostgreSQL" if db == "(skipped)" else db
    features = answers.get("Features", "(skipped)")
    name = answers.get("Name", "(skipped)").strip('"')
    name = "billing-service" if name == "(skipped)" else name
    wanted = "invoices only" if features == "(skipped)" else features.lower()
    return ModelStep(
        text=f"Thanks. Scaffolding `{name}` on {database} with {wanted}: creating the "
        f"repository layout, the {database} migrations and a first test for each feature."
    )


def demo_model() -> ScriptedModel:
    """The demo's scripted model: ask, then reply with the answers."""
    ask = ToolCall("call_1", "ask_user_question", DEMO_ASK)
    return ScriptedModel(
        [
            ModelStep(text="Happy to. A few decisions first.", tool_calls=(ask,)),
            _final_reply,
        ]
    )


def _transcript(term: TerminalIO) -> Callable[[Message], None]:
    """Print each message as it is added, wrapped to the terminal's width."""

    def say(prefix: str, text: str, *, indent: str = "") -> None:
        width = max(20, term.output.get_size().columns - 1)
        lines = block([("", indent + prefix)], [("", sanitize(text))], width)
        term.say(plain(lines))

    def show(message: Message) -> None:
        if message.role == "user":
            term.say("")
            say("you › ", message.text or "")
        elif message.role == "assistant":
            if message.text:
                term.say("")
                say("assistant › ", message.text)
            for call in message.tool_calls:
                count = len(call.input.get("questions", []))
                say("↳ ", f"tool call {call.name} ({call.id}): {count} question(s)", indent="  ")
                term.say("")
        else:
            mark = "tool error" if message.is_error else "tool result"
            term.say("")
            say("", f"{mark} ({message.tool_call_id}) ›")
            for line in (message.text or "").splitlines():
                say("", line, indent="  ")

    return show


async def run_demo(term: TerminalIO, *, repeat_window_s: float) -> int:
    """Run the demo turn on this terminal. Returns 0, or 130 when stopped with Ctrl-C."""
    from midturn.runtime import Runtime
    from midturn.store import open_store

    session = "demo"
    async with open_store("memory://") as store, Runtime(store) as runtime:
        answerer = asyncio.create_task(
            answer_loop(
                runtime,
                term,
                session_id=session,
                repeat_window_s=repeat_window_s,
                idle_message=None,
            )
        )

        async def tool(call: ToolCall) -> Any:
            output = await runtime.handle_tool_call(
                session,
                name=call.name,
                tool_call_id=call.id,
                tool_input=call.input,
                turn_id="turn_1",
            )
            data = output.data if isinstance(output.data, dict) else {}
            if data.get("outcome") == "cancelled":
                await asyncio.Event().wait()  # the turn is over; the model never sees this
            return output

        turn = asyncio.create_task(
            run_turn(demo_model(), Conversation(), USER_MESSAGE, tool, on_message=_transcript(term))
        )
        try:
            await asyncio.wait({turn, answerer}, return_when=asyncio.FIRST_COMPLETED)
            if answerer.done() and answerer.result() == STOPPED:
                term.say("\n✖ Turn stopped: the model does not see the cancelled ask.")
                return STOPPED
            await turn
            return 0
        finally:
            for task in (turn, answerer):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
