"""The inline prompt_toolkit application both pickers run in.

Not full screen: the picker draws below what is already on the terminal, like a composer
taking over its slot, and erases itself when done, leaving a one-line summary.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, TypeVar

from prompt_toolkit.application import Application, get_app
from prompt_toolkit.formatted_text import FormattedText, StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import UIContent, UIControl
from prompt_toolkit.output import Output
from prompt_toolkit.shortcuts import print_formatted_text
from prompt_toolkit.styles import Style

from midturn.tui._render import Line

__all__ = ["STYLE", "run_inline"]

T = TypeVar("T")

STYLE = Style.from_dict(
    {
        "chip": "reverse bold",
        "progress": "bold",
        "hint": "italic",
        "question": "bold",
        "pointer": "ansicyan bold",
        "current": "ansicyan bold",
        "number": "ansibrightblack",
        "box": "ansicyan",
        "description": "ansibrightblack",
        "preview": "ansicyan",
        "recommended": "ansigreen",
        "typed": "ansiyellow",
        "caret": "ansicyan",
        "skipped": "ansibrightblack italic",
        "notice": "ansired bold",
        "help": "ansibrightblack",
        "risk.low": "ansigreen bold",
        "risk.medium": "ansiyellow bold",
        "risk.high": "ansired bold reverse",
        "done": "ansigreen",
        "stopped": "ansired",
        "timer": "ansiyellow",
    }
)


class _Screen(UIControl):
    """Draws whatever `draw(width, height)` returns for the space the terminal has."""

    def __init__(self, draw: Callable[[int, int], list[Line]]) -> None:
        self._draw = draw

    @staticmethod
    def _rows() -> int:
        """The terminal's rows: the most an inline layout can use."""
        return get_app().output.get_size().rows

    def preferred_width(self, max_available_width: int) -> int | None:
        return None

    def preferred_height(
        self,
        width: int,
        max_available_height: int,
        wrap_lines: bool,
        get_line_prefix: Any,
    ) -> int | None:
        return len(self._draw(width, self._rows()))

    def create_content(self, width: int, height: int) -> UIContent:
        lines: list[StyleAndTextTuples] = [list(line) for line in self._draw(width, self._rows())]

        def get_line(i: int) -> StyleAndTextTuples:
            return lines[i] if i < len(lines) else []

        return UIContent(
            get_line=get_line,
            line_count=len(lines),
            show_cursor=False,
        )


async def run_inline(
    draw: Callable[[int, int], list[Line]],
    bindings: KeyBindings,
    *,
    summary: Callable[[T, int], list[Line]] | None,
    input: Input | None,
    output: Output | None,
    refresh_interval: float | None = None,
) -> T:
    """Run the inline screen until a key binding calls `app.exit(result=...)`.

    Cancelling the awaiting task (a timeout, the interaction settled elsewhere) closes
    the screen cleanly before the cancellation goes on.
    """
    app: Application[T] = Application(
        layout=Layout(Window(_Screen(draw), wrap_lines=False, dont_extend_height=True)),
        key_bindings=bindings,
        style=STYLE,
        full_screen=False,
        erase_when_done=True,
        mouse_support=False,
        input=input,
        output=output,
        refresh_interval=refresh_interval,
    )
    app.ttimeoutlen = 0.05  # a lone Esc acts at once instead of after half a second
    task = asyncio.ensure_future(app.run_async(handle_sigint=False))
    try:
        result = await asyncio.shield(task)
    except asyncio.CancelledError:
        if app.future is not None and not app.future.done():
            app.exit(exception=asyncio.CancelledError())
        else:
            task.cancel()
        with contextlib.suppress(BaseException):
            await task
        raise
    if summary is not None:
        lines = summary(result, app.output.get_size().columns)
        if lines:
            fragments: list[tuple[str, str]] = []
            for line in lines:
                fragments.extend([*line, ("", "\n")])
            print_formatted_text(FormattedText(fragments), end="", style=STYLE, output=app.output)
    return result
