"""Find the person's terminal, even when stdout is piped (`x=$(midturn ask ...)`).

The picker reads keys from and draws on the controlling terminal: standard input and
output when both are terminals, else `/dev/tty`. With neither there is no one to ask.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from prompt_toolkit.input import Input, create_input
from prompt_toolkit.output import Output
from prompt_toolkit.output.vt100 import Vt100_Output

__all__ = ["REPEAT_GUARD_ENV", "TerminalIO", "open_terminal", "repeat_window_from_env"]

REPEAT_GUARD_ENV = "MIDTURN_REPEAT_GUARD_MS"


@dataclass(frozen=True, slots=True)
class TerminalIO:
    """prompt_toolkit input and output bound to one terminal, and a way to print there."""

    input: Input
    output: Output
    stream: IO[str]

    def say(self, text: str) -> None:
        """Print a line on the terminal (not on a piped stdout)."""
        self.stream.write(text + "\n")
        self.stream.flush()


def _is_tty(stream: IO[str] | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (ValueError, OSError):
        return False


@contextlib.contextmanager
def open_terminal() -> Iterator[TerminalIO | None]:
    """The controlling terminal as prompt_toolkit I/O, or None when there is none."""
    if _is_tty(sys.stdin) and _is_tty(sys.stdout):
        output = Vt100_Output.from_pty(sys.stdout, term=os.environ.get("TERM"))
        yield TerminalIO(create_input(sys.stdin), output, sys.stdout)
        return
    try:
        reader = open("/dev/tty", encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError:
        yield None
        return
    try:
        writer = open("/dev/tty", "w", encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError:
        reader.close()
        yield None
        return
    try:
        output = Vt100_Output.from_pty(writer, term=os.environ.get("TERM"))
        yield TerminalIO(create_input(reader), output, writer)
    finally:
        reader.close()
        writer.close()


def repeat_window_from_env(default_s: float) -> float:
    """The key-repeat guard window, from `MIDTURN_REPEAT_GUARD_MS` when it is set."""
    raw = os.environ.get(REPEAT_GUARD_ENV, "").strip()
    if not raw:
        return default_s
    try:
        return max(0.0, float(raw) / 1000)
    except ValueError:
        return default_s
