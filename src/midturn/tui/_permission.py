"""`pick_permission`: decide a permission request in the same inline picker
(docs/runtime.md#permissions).

Rows: Allow, Allow for this turn, Deny (typing on Deny adds a message for the model),
and Show details when the request has any. Details open below the rows, wrapped and
capped, so a long diff never pushes the choices off the screen.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.output import Output

from midturn.contract._interactions import Decision, PermissionRequest
from midturn.tui._app import run_inline
from midturn.tui._render import MIN_WIDTH, Fragment, Line, block, help_lines, wrap_runs
from midturn.tui._sanitize import sanitize
from midturn.tui._state import RepeatGuard

__all__ = ["DETAIL_LINES", "PermissionChoice", "pick_permission", "pick_permission_sync"]

DETAIL_LINES = 20
"""At most this many lines of details are shown; the rest is counted."""

Row = Literal["allow", "allow_for_turn", "deny", "details"]
_LABELS: dict[Row, str] = {
    "allow": "Allow",
    "allow_for_turn": "Allow for this turn",
    "deny": "Deny",
    "details": "Show details",
}


@dataclass(frozen=True, slots=True)
class PermissionChoice:
    """The person's decision, or `decision=None` when they pressed Ctrl-C to stop the
    turn. `message` is what they typed on Deny, for the model."""

    decision: Decision | None
    message: str | None = None

    @property
    def stopped(self) -> bool:
        return self.decision is None


class PermissionState:
    def __init__(self, request: PermissionRequest, *, repeat_window_s: float) -> None:
        self.request = request
        self.rows: list[Row] = ["allow", "allow_for_turn", "deny"]
        if request.details:
            self.rows.append("details")
        self.cursor = 0
        self.show_details = False
        self.message = ""
        self.choice: PermissionChoice | None = None
        self.guard = RepeatGuard(repeat_window_s)

    def move(self, step: int) -> None:
        self.cursor = (self.cursor + step) % len(self.rows)

    def enter(self, now: float) -> None:
        if self.guard.swallows("enter", now):
            return
        row = self.rows[self.cursor]
        if row == "details":
            self.show_details = not self.show_details
        elif row == "deny":
            self.choice = PermissionChoice("deny", self.message.strip() or None)
        else:
            self.choice = PermissionChoice(row)

    def type_text(self, text: str) -> None:
        if self.rows[self.cursor] != "deny" and text.strip():
            self.cursor = self.rows.index("deny")
        if self.rows[self.cursor] == "deny":
            self.message = (self.message + text)[:2000]

    def backspace(self) -> None:
        if self.rows[self.cursor] == "deny":
            self.message = self.message[:-1]


def render_permission(state: PermissionState, width: int, height: int | None = None) -> list[Line]:
    """The permission picker for `width` columns; open details are capped at
    `DETAIL_LINES` lines, fewer when `height` is short."""
    width = max(width, MIN_WIDTH)
    request = state.request
    lines = wrap_runs(
        [
            ("class:chip", " Permission "),
            ("", " "),
            ("class:question", sanitize(request.tool, multiline=False)),
            ("", "  "),
            (f"class:risk.{request.risk}", f"risk: {request.risk}"),
        ],
        width,
    )
    lines.extend(wrap_runs([("", sanitize(request.summary))], width))
    lines.append([])
    for row, kind in enumerate(state.rows):
        here = row == state.cursor
        pointer: Fragment = ("class:pointer", "❯ ") if here else ("", "  ")
        style = "class:current" if here else "class:option"
        label = _LABELS[kind]
        if kind == "details" and state.show_details:
            label = "Hide details"
        runs: list[Fragment] = [(style, label)]
        if kind == "allow_for_turn":
            tool = sanitize(request.tool, multiline=False)
            runs.append(("class:description", f" ({tool} is not asked again this turn)"))
        if kind == "deny" and (state.message or here):
            runs += [("class:description", " message:"), ("class:typed", f" {state.message}")]
            if here:
                runs.append(("class:caret", "▏"))
        lines.extend(block([pointer], runs, width))
    if state.show_details and request.details:
        detail = wrap_runs([("class:description", sanitize(request.details))], width - 2)
        lines.append([])
        room = (
            DETAIL_LINES if height is None else max(3, min(DETAIL_LINES, height - len(lines) - 5))
        )
        lines.extend([("", "  "), *line] for line in detail[:room])
        if len(detail) > room:
            hidden = len(detail) - room
            lines.extend(wrap_runs([("class:hint", f"  … {hidden} more lines")], width))
    lines.append([])
    keys = ["↑↓ move", "Enter choose", "type to deny with a reason", "Ctrl-C stop"]
    lines.extend(help_lines(keys, width))
    return lines


async def pick_permission(
    request: PermissionRequest,
    *,
    input: Input | None = None,
    output: Output | None = None,
    repeat_window_s: float = 0.5,
    leave_summary: bool = True,
    clock: Callable[[], float] = time.monotonic,
) -> PermissionChoice:
    """Show a permission request in the terminal; return the decision (or a stop).

    The options are those of `pick`: an Enter that arrives within `repeat_window_s` of
    the picker opening (typeahead, a held key) does not decide anything."""
    state = PermissionState(request, repeat_window_s=repeat_window_s)
    state.guard.armed("enter", clock())
    kb = KeyBindings()

    def done(event: KeyPressEvent, choice: PermissionChoice | None) -> None:
        if choice is not None and not event.app.is_done:
            event.app.exit(result=choice)

    @kb.add("up")
    def _up(event: KeyPressEvent) -> None:
        state.move(-1)

    @kb.add("down")
    def _down(event: KeyPressEvent) -> None:
        state.move(+1)

    @kb.add("enter")
    @kb.add("c-j")
    def _enter(event: KeyPressEvent) -> None:
        state.enter(clock())
        done(event, state.choice)

    @kb.add("c-c")
    def _stop(event: KeyPressEvent) -> None:
        done(event, PermissionChoice(None))

    @kb.add("backspace")
    @kb.add("c-h")
    def _backspace(event: KeyPressEvent) -> None:
        state.backspace()

    @kb.add(Keys.BracketedPaste)
    def _paste(event: KeyPressEvent) -> None:
        state.type_text(sanitize(event.data, multiline=False))

    @kb.add(Keys.Any)
    def _type(event: KeyPressEvent) -> None:
        if event.data.isprintable():
            state.type_text(event.data)

    def summary(choice: PermissionChoice, width: int) -> list[Line]:
        if not leave_summary:
            return []
        tool = sanitize(request.tool, multiline=False)
        if choice.stopped:
            return wrap_runs([("class:stopped", f"✖ Stopped ({tool}).")], width)
        said = {"allow": "Allowed", "allow_for_turn": "Allowed for this turn", "deny": "Denied"}
        text = f"{said[choice.decision or 'deny']}: {tool}"
        if choice.message:
            text += f" ({sanitize(choice.message, multiline=False)})"
        return wrap_runs([("class:done", "✔ "), ("", text)], width)

    def draw(width: int, height: int) -> list[Line]:
        return render_permission(state, width, height)

    result: PermissionChoice = await run_inline(
        draw, kb, summary=summary, input=input, output=output
    )
    return result


def pick_permission_sync(request: PermissionRequest, **kwargs: Any) -> PermissionChoice:
    """`pick_permission` for synchronous code (not from inside a running event loop)."""
    return asyncio.run(pick_permission(request, **kwargs))
