"""The terminal answerer over an in-process runtime: it shows the queue's head, posts the
answer or decision, moves on, and stops the turn on Ctrl-C."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from midturn import Runtime, open_store
from midturn.tui._answerer import STOPPED, answer_loop
from midturn.tui._terminal import TerminalIO

from ._vt import CTRL_C, DOWN, ENTER, SAFETY_S, Terminal

Make = Callable[..., Terminal]
DB_ASK = {
    "questions": [
        {
            "header": "Database",
            "question": "Which database?",
            "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}],
        }
    ]
}


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    async with open_store("memory://") as store, Runtime(store) as rt:
        yield rt


def io_for(term: Terminal) -> TerminalIO:
    stream: Any = term
    return TerminalIO(term.input, term.output, stream)


async def test_answers_the_head_then_the_next_then_stops(terminal: Make, runtime: Runtime) -> None:
    term = terminal()
    first, _ = await runtime.ask("s1", DB_ASK, turn_id="t1", tool_call_id="call_1")
    permission, _ = await runtime.request_permission(
        "s1", tool="Bash", summary="Run make clean", risk="low", turn_id="t1"
    )
    loop = asyncio.create_task(
        answer_loop(runtime, io_for(term), session_id="s1", repeat_window_s=0)
    )
    screen = await term.shows("Which database?")
    assert "Permission" not in screen  # one surface at a time: only the head
    term.press(DOWN, ENTER)
    answered = (await asyncio.wait_for(runtime.wait(first.id), SAFETY_S)).interaction
    assert answered.status == "answered"
    assert answered.result is not None and answered.result.answers[0].answer == "SQLite"

    await term.shows("Permission", "Run make clean")
    term.press(ENTER)
    decided = (await asyncio.wait_for(runtime.wait(permission.id), SAFETY_S)).interaction
    assert decided.status == "allowed"
    await term.shows("Waiting for questions")

    later, _ = await runtime.ask("s1", DB_ASK, turn_id="t2")
    await term.shows("Which database?")
    term.press(CTRL_C)
    assert await asyncio.wait_for(loop, SAFETY_S) == STOPPED
    stopped = await runtime.get(later.id)
    assert stopped.status == "cancelled"


async def test_a_head_settled_elsewhere_is_replaced(terminal: Make, runtime: Runtime) -> None:
    term = terminal()
    first, _ = await runtime.ask("s1", {"questions": [{"question": "First?", "kind": "text"}]})
    await runtime.ask("s1", {"questions": [{"question": "Second?", "kind": "text"}]})
    loop = asyncio.create_task(
        answer_loop(runtime, io_for(term), session_id="s1", repeat_window_s=0)
    )
    await term.shows("First?")
    await runtime.answer(first.id, "typed in the web inbox")
    screen = await term.shows("Second?")
    assert "settled elsewhere" in screen
    loop.cancel()
    with pytest.raises(asyncio.CancelledError):
        await loop
