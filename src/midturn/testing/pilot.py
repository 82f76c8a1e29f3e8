"""The terminal pilot: drive midturn's real terminal picker with real key input and read
what the screen shows, the way a person would see it.

- `TerminalPilot`: in this process. prompt_toolkit's real VT100 output is fed to a pyte
  screen, keys go in through prompt_toolkit's pipe input. Hand `pilot.input` and
  `pilot.output` to `midturn.tui.pick` (or `TerminalIO(pilot.input, pilot.output, pilot)`
  to the terminal answerer), press keys and `await pilot.shows(...)`.
- `PtyPilot`: a command (`midturn ask`, `midturn answer`, your own program) on a real
  pseudo-terminal (pexpect), its output read into a pyte screen.

Both need the `testing` extra (`pip install "midturn[testing]"`): pyte, and pexpect for
`PtyPilot`. Waits are bounded by `SAFETY_S`, never timed.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Self

from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from midturn.errors import UsageError
from midturn.testing._extra import require

pyte = require("pyte", "the terminal pilot")

__all__ = ["SAFETY_S", "Keys", "PtyPilot", "TerminalPilot", "midturn_command", "pilot_env"]

SAFETY_S = 20.0
"""How long a pilot waits for the screen before failing: a bound for a busy machine,
never a timing assertion."""


class Keys:
    """The bytes a terminal sends for the keys the picker reads."""

    UP, DOWN, RIGHT, LEFT = "\x1b[A", "\x1b[B", "\x1b[C", "\x1b[D"
    ENTER, ESC, TAB, SPACE = "\r", "\x1b", "\t", " "
    CTRL_C, BACKSPACE = "\x03", "\x7f"


class _Screen:
    """A pyte screen and what was written to it."""

    def __init__(self, columns: int, rows: int) -> None:
        self.screen: Any = pyte.Screen(columns, rows)
        self._stream: Any = pyte.Stream(self.screen)
        self._written: list[str] = []

    def feed(self, data: str) -> None:
        self._written.append(data)
        self._stream.feed(data)

    @property
    def raw(self) -> str:
        """Everything written to the terminal so far, control sequences included."""
        return "".join(self._written)

    @property
    def text(self) -> str:
        """The screen's text, each line without its trailing blanks."""
        return "\n".join(line.rstrip() for line in self.screen.display).rstrip("\n")

    @property
    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]


class TerminalPilot(_Screen):
    """A `columns` x `rows` terminal in this process for the picker to draw on. Use it as
    a context manager (it opens the pipe input):

        with TerminalPilot() as pilot:
            picking = asyncio.create_task(pick(ask, input=pilot.input, output=pilot.output))
            await pilot.shows("Which database?")
            pilot.press(Keys.DOWN, Keys.ENTER)
            result = await picking
    """

    def __init__(self, columns: int = 80, rows: int = 40) -> None:
        super().__init__(columns, rows)
        self._changed = asyncio.Event()
        stream: Any = self  # the file-like object prompt_toolkit writes to
        self.output = Vt100_Output(stream, lambda: Size(rows=rows, columns=columns), term="xterm")
        self._pipe: Any = None
        self._input: PipeInput | None = None

    def __enter__(self) -> Self:
        if self._pipe is not None:
            raise UsageError("this TerminalPilot is already open; make a new one")
        self._pipe = create_pipe_input()
        self._input = self._pipe.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        pipe, self._pipe = self._pipe, None
        if pipe is not None:
            pipe.__exit__(exc_type, exc, tb)

    @property
    def input(self) -> PipeInput:
        """The pipe input to hand to the picker (open the pilot first)."""
        if self._input is None or self._pipe is None:
            raise UsageError("open the TerminalPilot first: `with TerminalPilot() as pilot:`")
        return self._input

    # the file-like side prompt_toolkit writes to
    def write(self, data: str) -> int:
        self.feed(data)
        return len(data)

    def flush(self) -> None:
        self._changed.set()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return "utf-8"

    # what tests use
    async def until(self, check: Callable[[str], bool], timeout: float = SAFETY_S) -> str:
        """Wait until the screen text passes `check`; return it (or fail after `timeout`)."""

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
        """Wait until the screen shows every one of `texts`; return the screen."""
        return await self.until(lambda screen: all(text in screen for text in texts))

    def press(self, *keys: str) -> None:
        """Send each key as its own burst, in order."""
        for key in keys:
            self.input.send_text(key)


def midturn_command(*args: str) -> list[str]:
    """The argv of `midturn ARGS...` run by this Python."""
    return [sys.executable, "-m", "midturn.cli", *args]


def pilot_env(**extra: str) -> dict[str, str]:
    """An environment for a piloted `midturn`: this one without MIDTURN_*/PYTEST_*
    variables, an xterm, no cursor-position requests (a pseudo-terminal without an
    emulator cannot answer them), no key-repeat guard, unbuffered output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MIDTURN_", "PYTEST_"))}
    env.update(
        TERM="xterm",
        PROMPT_TOOLKIT_NO_CPR="1",
        MIDTURN_REPEAT_GUARD_MS="0",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def _default_sigint() -> None:
    """Ctrl-C interrupts the child, as in a person's terminal, even when the tests were
    started where SIGINT is ignored (an ignored signal stays ignored across exec)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class PtyPilot(_Screen):
    """`argv` on a `columns` x `rows` pseudo-terminal (for `midturn` itself:
    `PtyPilot(midturn_command("ask", "Which database?", "-o", "A", "-o", "B"))`)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        columns: int = 80,
        rows: int = 30,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        timeout: float = SAFETY_S,
    ) -> None:
        if not argv:
            raise UsageError("PtyPilot needs a command to run, e.g. midturn_command('ask', ...)")
        pexpect = require("pexpect", "PtyPilot")
        super().__init__(columns, rows)
        self._eof: type[BaseException] = pexpect.EOF
        self._timeout_error: type[BaseException] = pexpect.TIMEOUT
        self.timeout = timeout
        self.child: Any = pexpect.spawn(
            argv[0],
            list(argv[1:]),
            dimensions=(rows, columns),
            env=dict(env) if env is not None else pilot_env(),
            cwd=cwd,
            encoding="utf-8",
            timeout=timeout,
            preexec_fn=_default_sigint,
        )

    def _read(self, remaining: float, waiting_for: object) -> str | None:
        try:
            return str(self.child.read_nonblocking(65536, timeout=remaining))
        except self._timeout_error:
            return None
        except self._eof:
            raise AssertionError(
                f"the program ended before showing {waiting_for}; the screen:\n{self.text}"
            ) from None

    def shows(self, *texts: str) -> str:
        """Read output until the screen shows every one of `texts` (or fail)."""
        deadline = time.monotonic() + self.timeout
        while not all(text in self.text for text in texts):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"the screen never showed {texts}; it shows:\n{self.text}")
            data = self._read(remaining, texts)
            if data is not None:
                self.feed(data)
        return self.text

    def saw(self, *texts: str) -> None:
        """Read output until every one of `texts` has been on the screen, even if only
        for a moment: the screen is checked after each control sequence, not only after
        each read (for what a program draws and then erases by itself)."""
        unseen = set(texts)
        deadline = time.monotonic() + self.timeout
        while unseen:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"the screen never showed {sorted(unseen)}:\n{self.text}")
            data = self._read(remaining, sorted(unseen))
            for piece in re.split(r"(?=\x1b)", data or ""):
                self.feed(piece)
                unseen -= {text for text in unseen if text in self.text}

    def press(self, *keys: str) -> None:
        for key in keys:
            self.child.send(key)

    def finish(self) -> int:
        """Read to the end; the exit status (128+N for a signal)."""
        while True:
            try:
                self.feed(str(self.child.read_nonblocking(65536, timeout=self.timeout)))
            except self._eof:
                break
        self.child.close()
        if self.child.exitstatus is not None:
            return int(self.child.exitstatus)
        return 128 + int(self.child.signalstatus or 0)
