"""Runtime tests run on the memory store and on a SQLite file (every test, both)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from tests._asks import ANSWER, ASK  # noqa: F401 - the suite's tests import them from here

from midturn import Event, Runtime, Store, open_store

T = TypeVar("T")
SAFETY_S = 10.0

ONE_QUESTION: dict[str, Any] = {
    "questions": [
        {
            "id": "color",
            "question": "Which color?",
            "options": [{"label": "Red"}, {"label": "Blue"}],
            "recommended": "Blue",
        }
    ]
}


async def within(awaitable: Awaitable[T]) -> T:
    """Await with a safety timeout (never a timing assertion)."""
    return await asyncio.wait_for(awaitable, SAFETY_S)


@pytest.fixture(params=["memory", "sqlite"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "memory":
        return "memory://"
    return f"sqlite:///{tmp_path / 'midturn.db'}"


@pytest.fixture
async def store(store_url: str) -> AsyncIterator[Store]:
    async with open_store(store_url) as opened:
        yield opened


@pytest.fixture
async def runtime(store: Store) -> AsyncIterator[Runtime]:
    async with Runtime(store) as opened:
        yield opened


async def next_event(stream: AsyncIterator[Event], *types: str) -> Event:
    """The next event of one of `types` from a followed stream."""

    async def find() -> Event:
        async for event in stream:
            if event.type in types:
                return event
        raise AssertionError(f"the stream ended before a {types} event")

    return await within(find())


async def all_events(runtime: Runtime, session_id: str | None = None) -> list[Event]:
    return [event async for event in runtime.events(session_id=session_id, follow=False)]
