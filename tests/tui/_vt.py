"""A virtual terminal for the picker tests: prompt_toolkit's real VT100 output is fed to
a pyte screen, keys go in through a pipe, and tests await what the screen shows."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pyte
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input.base import PipeInput
from prompt_toolkit.output.vt100 import Vt100_Output

from midturn import Ask, Option, Question

UP, DOWN, RIGHT, LEFT = "\x1b[A", "\x1b[B", "\x1b[C", "\x1b[D"
ENTER, ESC, CTRL_C, BACKSPACE = "\r", "\x1b", "\x03", "\x7f"

SAFETY_S = 20.0
"""How long a test waits for the screen before failing: a bound for a busy machine (a
full suite beside other work), never a timing assertion."""


class Terminal:
    """A `columns` x `rows` terminal screen that a picker draws on."""

    def __init__(self, columns: int = 80, rows: int = 40) -> None:
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.Stream(self.screen)
        self.raw: list[str] = []
        self._changed = asyncio.Event()
        self.output = Vt100_Output(self, lambda: Size(rows=rows, columns=columns), term="xterm")
        self.input: PipeInput

    # the file-like side prompt_toolkit writes to
    def write(self, data: str) -> int:
        self.raw.append(data)
        self.stream.feed(data)
        return len(data)

    def flush(self) -> None:
        self._changed.set()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return "utf-8"

    # what tests use
    @property
    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display).rstrip("\n")

    @property
    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    async def until(self, check: Callable[[str], bool], timeout: float = SAFETY_S) -> str:
        """Wait until the screen text passes `check`; return it."""

        async def poll() -> str:
            while not check(self.text):
                self._changed.clear()
                await self._changed.wait()
            return self.text

        try:
            return await asyncio.wait_for(poll(), timeout)
        except TimeoutError:
            raise AssertionError(f"screen never matched; it shows:\n{self.text}") from None

    async def shows(self, *texts: str) -> str:
        return await self.until(lambda screen: all(text in screen for text in texts))

    def press(self, *keys: str) -> None:
        """Send each key as its own burst, in order."""
        for key in keys:
            self.input.send_text(key)


def choice(
    qid: str,
    header: str,
    question: str,
    labels: list[str],
    *,
    descriptions: list[str | None] | None = None,
    **extra: Any,
) -> Question:
    descriptions = descriptions or [None] * len(labels)
    options = tuple(
        Option(label=label, description=desc)
        for label, desc in zip(labels, descriptions, strict=True)
    )
    return Question(id=qid, header=header, question=question, options=options, **extra)


def text_question(qid: str, header: str, question: str, **extra: Any) -> Question:
    return Question(id=qid, header=header, question=question, kind="text", **extra)


def ask_of(*questions: Question) -> Ask:
    return Ask(questions=questions)
