"""The shipped live gateway: a real `midturn serve` server in a thread for a user's tests."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from midturn.testing import ScriptedResponder, answer, live_gateway, start_gateway

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


def test_a_gateway_slower_to_start_than_the_safety_bound_still_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a loaded machine a gateway can take longer than any fixed bound to listen:
    `start_gateway` waits until it listens or its thread has failed, never for a time.
    (The bound is made nil here, so a start that is not instant would have lost it.)"""
    import midturn.testing._gateway as module

    monkeypatch.setattr(module, "SAFETY_S", 0.0)
    with live_gateway() as gateway:
        assert httpx.get(gateway.url + "/healthz", timeout=20).status_code < 500


def test_a_gateway_that_cannot_start_says_why(tmp_path: Path) -> None:
    (tmp_path / "midturn.db").write_bytes(b"not a database " * 100)
    with pytest.raises(AssertionError, match="did not start") as raised:
        start_gateway(f"sqlite:///{tmp_path / 'midturn.db'}", "admin-token-0123456789abcdef")
    assert "not a database" in str(raised.value)  # what failed, not a timeout
