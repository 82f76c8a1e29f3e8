"""Fixtures for the picker tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest

from midturn.testing.pilot import TerminalPilot


@pytest.fixture
def terminal() -> Iterator[Callable[..., TerminalPilot]]:
    """`terminal(columns, rows)`: an open terminal pilot, closed after the test."""
    with ExitStack() as stack:

        def make(columns: int = 80, rows: int = 40) -> TerminalPilot:
            return stack.enter_context(TerminalPilot(columns, rows))

        yield make
