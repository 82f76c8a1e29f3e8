"""Run `midturn` in a real pseudo-terminal and read its screen through a virtual terminal
(pyte), the way a person would see it."""

from __future__ import annotations

import os
import re
import signal
import sys
import time

import pexpect
import pyte

UP, DOWN, RIGHT, LEFT = "\x1b[A", "\x1b[B", "\x1b[C", "\x1b[D"
ENTER, ESC, CTRL_C = "\r", "\x1b", "\x03"

READ_TIMEOUT_S = 15.0


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MIDTURN_", "PYTEST_"))}
    env.update(
        TERM="xterm",
        PROMPT_TOOLKIT_NO_CPR="1",  # a pty without a terminal emulator cannot answer CPR
        MIDTURN_REPEAT_GUARD_MS="0",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def _default_sigint() -> None:
    """Ctrl-C interrupts the program, as in a person's terminal, even when this test
    run was started where SIGINT is ignored (a background job of a script: an ignored
    signal stays ignored across exec)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Pty:
    """A command on a `columns` x `rows` pseudo-terminal."""

    def __init__(
        self,
        argv: list[str],
        *,
        columns: int = 80,
        rows: int = 30,
        env: dict[str, str] | None = None,
        shell: str | None = None,
    ) -> None:
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.Stream(self.screen)
        self.raw = ""
        if shell is not None:
            program, args = "/bin/bash", ["-c", shell]
        else:
            program, args = sys.executable, ["-m", "midturn.cli", *argv]
        self.child = pexpect.spawn(
            program,
            args,
            dimensions=(rows, columns),
            env=env or child_env(),
            encoding="utf-8",
            timeout=READ_TIMEOUT_S,
            preexec_fn=_default_sigint,
        )

    @property
    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display).rstrip("\n")

    def _feed(self, data: str) -> None:
        self.raw += data
        self.stream.feed(data)

    def shows(self, *texts: str) -> str:
        """Read output until the screen shows every one of `texts` (or fail)."""
        deadline = time.monotonic() + READ_TIMEOUT_S
        while not all(text in self.text for text in texts):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"the screen never showed {texts}; it shows:\n{self.text}")
            try:
                self._feed(self.child.read_nonblocking(65536, timeout=remaining))
            except pexpect.EOF:
                raise AssertionError(
                    f"the program ended before showing {texts}; the screen:\n{self.text}"
                ) from None
            except pexpect.TIMEOUT:
                continue
        return self.text

    def saw(self, *texts: str) -> None:
        """Read output until every one of `texts` has been on the screen, even if only
        for a moment: the screen is checked after each control sequence, not only after
        each read. For what a program draws and then erases by itself (a picker that
        times out): a slow reader can get the drawing and the erasing in one read."""
        unseen = set(texts)
        deadline = time.monotonic() + READ_TIMEOUT_S
        while unseen:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"the screen never showed {sorted(unseen)}:\n{self.text}")
            try:
                data = self.child.read_nonblocking(65536, timeout=remaining)
            except pexpect.EOF:
                raise AssertionError(
                    f"the program ended before showing {sorted(unseen)}; the screen:\n{self.text}"
                ) from None
            except pexpect.TIMEOUT:
                continue
            for piece in re.split(r"(?=\x1b)", data):
                self._feed(piece)
                unseen -= {text for text in unseen if text in self.text}

    def press(self, *keys: str) -> None:
        for key in keys:
            self.child.send(key)

    def finish(self) -> int:
        """Read to the end; the exit status (128+N for a signal)."""
        while True:
            try:
                self._feed(self.child.read_nonblocking(65536, timeout=READ_TIMEOUT_S))
            except pexpect.EOF:
                break
        self.child.close()
        if self.child.exitstatus is not None:
            return int(self.child.exitstatus)
        return 128 + int(self.child.signalstatus or 0)
