"""The package's own tests: its store passes midturn's conformance suite, and an agent
asks through its dialect, both found by entry point."""

from __future__ import annotations

import asyncio

import pytest
from midturn_poll import store as scratch

import midturn
from midturn.store import open_store, store_schemes
from midturn.testing import ScriptedResponder, answer
from midturn.testing.conformance import Backend, StoreConformance


class TestScratchStore(StoreConformance):
    @pytest.fixture
    def backend(self, request: pytest.FixtureRequest) -> Backend:
        url = f"scratch://{request.node.name}"
        return Backend(lambda: open_store(url), name="scratch")


def test_the_entry_points_registered_the_scheme_and_the_dialect() -> None:
    assert "scratch" in store_schemes()
    assert midturn.get_dialect("poll").tool_name == "run_poll"


@pytest.mark.asyncio
async def test_an_ask_in_the_poll_dialect_is_answered_and_read_back_as_a_poll() -> None:
    poll = {"poll": "Which database?", "choices": ["PostgreSQL", "SQLite"]}
    async with (
        open_store("scratch://ask") as store,
        midturn.Runtime(store) as runtime,
        ScriptedResponder(runtime, [answer("SQLite")], session_id="s1") as person,
    ):
        output = await asyncio.wait_for(
            runtime.handle_tool_call(
                "s1", name="run_poll", tool_call_id="call_1", tool_input=poll, dialect="poll"
            ),
            20,
        )
        await asyncio.wait_for(person.finished(), 20)
    assert output.text == "POLL RESULT: SQLite"
    assert output.data == {"vote": "SQLite"}
    assert "scratch://ask" in scratch.OPENED
    assert person.responses[0].interaction.dialect == "poll"
