"""Run `midturn` in a real pseudo-terminal and read its screen: the shipped terminal pilot
(`midturn.testing.PtyPilot`), started on `midturn ARGV...` or on a shell line."""

from __future__ import annotations

from typing import Any

from midturn.testing.pilot import Keys, PtyPilot, midturn_command
from midturn.testing.pilot import pilot_env as child_env

UP, DOWN, RIGHT, LEFT = Keys.UP, Keys.DOWN, Keys.RIGHT, Keys.LEFT
ENTER, ESC, CTRL_C = Keys.ENTER, Keys.ESC, Keys.CTRL_C

__all__ = ["CTRL_C", "DOWN", "ENTER", "ESC", "LEFT", "RIGHT", "UP", "Pty", "child_env"]


def Pty(argv: list[str], *, shell: str | None = None, **options: Any) -> PtyPilot:
    """`midturn ARGV...` (or `bash -c SHELL`) on a pseudo-terminal."""
    command = ["/bin/bash", "-c", shell] if shell is not None else midturn_command(*argv)
    return PtyPilot(command, **options)
