"""`pick`: answer an ask in the terminal, inline below the conversation (docs/terminal.md)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.output import Output

from midturn.contract._models import Ask
from midturn.tui._app import run_inline
from midturn.tui._render import Line, render_picker, wrap_runs
from midturn.tui._sanitize import sanitize
from midturn.tui._state import PickerState

__all__ = ["DEFAULT_REPEAT_WINDOW_S", "PickerResult", "pick", "pick_sync"]

DEFAULT_REPEAT_WINDOW_S = 0.5
"""How long after Enter or Esc moves the picker on a repeat of that key is ignored."""


@dataclass(frozen=True, slots=True)
class PickerResult:
    """What the person did with the ask.

    `payload` is an answer in a shape of docs/contract.md#answers, ready for `midturn.parse_answer`
    or a gateway's answer route (every question skipped is still a payload: each value is
    `None`). `stopped` is true when they pressed Ctrl-C to stop the turn; `payload` is
    then `None`. A secret's value is in `payload` in memory: never log it.
    """

    payload: dict[str, Any] | None
    lines: tuple[str, ...] = ()

    @property
    def stopped(self) -> bool:
        return self.payload is None


_DIGITS = frozenset("123456789")


def _bindings(state: PickerState, finish: Any, clock: Callable[[], float]) -> KeyBindings:
    kb = KeyBindings()

    def after(event: KeyPressEvent) -> None:
        if state.phase in ("submitted", "stopped"):
            finish(event)

    @kb.add("up")
    def _up(event: KeyPressEvent) -> None:
        state.up()

    @kb.add("down")
    def _down(event: KeyPressEvent) -> None:
        state.down()

    @kb.add("left")
    def _left(event: KeyPressEvent) -> None:
        state.left()

    @kb.add("right")
    def _right(event: KeyPressEvent) -> None:
        state.right()
        after(event)

    @kb.add("enter")
    @kb.add("c-j")
    def _enter(event: KeyPressEvent) -> None:
        state.enter(clock())
        after(event)

    @kb.add("escape", eager=True)
    def _escape(event: KeyPressEvent) -> None:
        state.escape(clock())
        after(event)

    @kb.add("space")
    def _space(event: KeyPressEvent) -> None:
        state.space()

    @kb.add("backspace")
    @kb.add("c-h")
    def _backspace(event: KeyPressEvent) -> None:
        state.backspace()

    @kb.add("c-c")
    def _stop(event: KeyPressEvent) -> None:
        state.stop()
        after(event)

    @kb.add(Keys.BracketedPaste)
    def _paste(event: KeyPressEvent) -> None:
        state.type_text(sanitize(event.data, multiline=False))

    @kb.add(Keys.Any)
    def _type(event: KeyPressEvent) -> None:
        data = event.data
        if data in _DIGITS and state.number(int(data), clock()):
            after(event)
            return
        if data == "?" and state.toggle_keys():
            return
        if data.isprintable():
            state.type_text(data)

    return kb


def summary_lines(state: PickerState, width: int = 80) -> list[Line]:
    """What stays on the terminal once the picker closes: one line per question."""
    if state.phase == "stopped":
        return wrap_runs([("class:stopped", "✖ Stopped.")], width)
    lines: list[Line] = []
    for position, question in enumerate(state.ask.questions):
        answer = state.display_answer(position)
        header = sanitize(question.header, multiline=False)
        value = (
            ("class:typed", sanitize(answer, multiline=False))
            if answer is not None
            else ("class:skipped", "(skipped)")
        )
        lines.extend(wrap_runs([("class:done", "✔ "), ("", f"{header}: "), value], width))
    return lines


async def pick(
    ask: Ask,
    *,
    input: Input | None = None,
    output: Output | None = None,
    repeat_window_s: float = DEFAULT_REPEAT_WINDOW_S,
    leave_summary: bool = True,
    clock: Callable[[], float] = time.monotonic,
    time_left_s: float | None = None,
) -> PickerResult:
    """Show `ask` in the terminal and return what the person answered.

    `input` and `output` default to the process's terminal; pass prompt_toolkit ones
    to run elsewhere (a pipe in tests, `/dev/tty`). Cancelling the call closes the
    picker and leaves the terminal as it was.

    `repeat_window_s` is how long a repeat of Enter or Esc is ignored after that key moved
    the picker on (and after the picker opens, so typeahead cannot pick); 0 turns it off.
    `clock` is the time source for that guard and the countdown.

    `time_left_s` (default: the ask's own `timeout_s`) shows a countdown in the header.
    The picker does not end itself when it runs out: whoever owns the timeout settles the
    ask and cancels the picker.
    """
    state = PickerState(ask, repeat_window_s=repeat_window_s)
    state.guard.armed("enter", clock())  # typeahead Enter must not pick
    state.quiet_until = clock() + repeat_window_s  # nor a typeahead number key
    seconds = time_left_s if time_left_s is not None else ask.timeout_s
    deadline = None if seconds is None else clock() + seconds

    def finish(event: KeyPressEvent) -> None:
        if not event.app.is_done:
            event.app.exit(result=state)

    def draw(width: int, height: int) -> list[Line]:
        if deadline is not None:
            state.time_left = max(0.0, deadline - clock())
        return render_picker(state, width, height)

    def summary(done: PickerState, width: int) -> list[Line]:
        return summary_lines(done, width) if leave_summary else []

    done: PickerState = await run_inline(
        draw,
        _bindings(state, finish, clock),
        summary=summary,
        input=input,
        output=output,
        refresh_interval=None if deadline is None else 0.5,
    )
    text = tuple("".join(t for _, t in line) for line in summary_lines(done))
    return PickerResult(None if done.phase == "stopped" else done.payload(), text)


def pick_sync(ask: Ask, **kwargs: Any) -> PickerResult:
    """`pick` for synchronous code (not from inside a running event loop)."""
    return asyncio.run(pick(ask, **kwargs))
