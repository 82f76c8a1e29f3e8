"""MCP tests drive the real `mcp` client (`from mcp import Client`) against midturn's
MCP server, in memory (2026-07-28 by default, `mode="legacy"` for the 2025 push) and as
`midturn mcp` over stdio. Each test gets a SQLite store in its own folder."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import mcp_types as types
import pytest
from mcp.client.session import ClientRequestContext
from tests._asks import ANSWER, ASK  # noqa: F401 - the suite's tests import them from here

from midturn import Interaction, Runtime, Store, open_store
from midturn.mcp import McpOptions, create_server, load_state_key

T = TypeVar("T")
SAFETY_S = 20.0

MULTI: dict[str, Any] = {
    "questions": [
        {
            "id": "langs",
            "header": "Languages",
            "question": "Which languages should the linter cover?",
            "options": [{"label": "Python"}, {"label": "Go"}, {"label": "Rust"}],
            "multi": True,
        }
    ]
}
SECRET: dict[str, Any] = {
    "questions": [
        {"id": "key", "question": "Paste the deploy API key", "kind": "text", "secret": True}
    ]
}


async def within(awaitable: Awaitable[T]) -> T:
    """Await with a safety bound (never a timing assertion)."""
    return await asyncio.wait_for(awaitable, SAFETY_S)


Reply = types.ElicitResult | Callable[[types.ElicitRequestParams], Awaitable[types.ElicitResult]]


@dataclass
class Person:
    """An elicitation callback that answers from a script, one reply per form shown,
    and keeps every request it saw."""

    replies: list[Reply] = field(default_factory=list)
    seen: list[types.ElicitRequestParams] = field(default_factory=list)

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.seen.append(params)
        reply = self.replies.pop(0)
        if isinstance(reply, types.ElicitResult):
            return reply
        return await reply(params)


def accept(content: dict[str, Any]) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=content)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def db_url(data_dir: Path) -> str:
    data_dir.mkdir(exist_ok=True)
    return f"sqlite:///{data_dir / 'midturn.db'}"


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:
    async with open_store(db_url) as opened:
        yield opened


@pytest.fixture
async def runtime(store: Store) -> AsyncIterator[Runtime]:
    async with Runtime(store) as opened:
        yield opened


@pytest.fixture
def options() -> McpOptions:
    return McpOptions(wait_bound_s=SAFETY_S, progress_every_s=0.05)


@pytest.fixture
def server(runtime: Runtime, data_dir: Path, options: McpOptions) -> Any:
    return create_server(runtime, state_key=load_state_key(data_dir), options=options)


async def requested(runtime: Runtime) -> Interaction:
    """The next interaction parked in the store (awaited on the event log)."""

    async def find() -> Interaction:
        async for event in runtime.events():
            if event.type in ("user_question_requested", "permission_requested"):
                assert event.interaction_id is not None
                return await runtime.get(event.interaction_id)
        raise AssertionError("the event stream ended")  # pragma: no cover

    return await within(find())


async def settle_events(runtime: Runtime, interaction_id: str) -> list[str]:
    """The settle events the store holds for one interaction (one per settle)."""
    kinds = [
        event.type
        async for event in runtime.events(follow=False)
        if event.interaction_id == interaction_id
    ]
    return [
        kind
        for kind in kinds
        if kind.startswith(("user_question_", "permission_"))
        and kind not in ("user_question_requested", "permission_requested")
    ]
