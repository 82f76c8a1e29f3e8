"""Fixtures for the picker tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input

from ._vt import Terminal


@pytest.fixture
async def terminal() -> AsyncIterator[Callable[..., Terminal]]:
    made: list[Any] = []

    def make(columns: int = 80, rows: int = 40) -> Terminal:
        term = Terminal(columns, rows)
        context = create_pipe_input()
        term.input = context.__enter__()
        made.append(context)
        return term

    yield make
    for context in made:
        context.__exit__(None, None, None)
