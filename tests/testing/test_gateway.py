"""The shipped live gateway: a real `midturn serve` server in a thread for a user's tests."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from midturn.testing import ScriptedResponder, answer, live_gateway

ASK = {"questions": [{"question": "Which database?", "options": ["PostgreSQL", "SQLite"]}]}


def test_a_live_gateway_serves_an_ask_end_to_end_and_stops() -> None:
    with live_gateway() as gateway:
        assert gateway.url.startswith("http://127.0.0.1:") and gateway.port > 0
        assert gateway.db_url == "memory://"

        async def round_trip() -> str:
            async with gateway.midturn_client() as admin:
                session = await admin.create_session()
                async with (
                    gateway.midturn_client(session.agent_token) as agent,
                    gateway.midturn_client(session.answer_token) as person,
                    ScriptedResponder(person, [answer("SQLite")], session_id=session.session_id),
                ):
                    asked, _ = await agent.ask(session.session_id, ASK, tool_call_id="c1")
                    done = await asyncio.wait_for(agent.wait(asked.id), 20)
                    assert done.output is not None
                    return done.output.text

        assert "SQLite" in asyncio.run(round_trip())
        url = gateway.url
    with pytest.raises(httpx.TransportError):
        httpx.get(url + "/v1/sessions", timeout=5)
