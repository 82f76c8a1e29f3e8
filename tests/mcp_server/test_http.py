"""`/mcp` on a real `midturn serve`: streamable HTTP behind the gateway's bearer tokens."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests._servers import LiveGateway, start_gateway
from tests.mcp_server.conftest import ASK, SECRET, Person, accept, within

from midturn import open_store

ADMIN = "test-admin-token-0123456789abcdef"


@pytest.fixture
def gateway(db_url: str) -> Any:
    server = start_gateway(db_url, ADMIN)
    yield server
    server.stop()


@contextlib.asynccontextmanager
async def _client(
    gateway: LiveGateway, token: str, person: Person, mode: str
) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
        transport = streamable_http_client(f"{gateway.url}/mcp", http_client=http)
        async with Client(transport, elicitation_callback=person, mode=mode) as client:
            yield client


async def _session(gateway: LiveGateway) -> dict[str, Any]:
    async with gateway.client() as http:
        made = await http.post("/v1/sessions", json={})
    assert made.status_code == 201
    session: dict[str, Any] = made.json()
    return session


async def test_mcp_needs_an_agent_or_admin_token(gateway: LiveGateway) -> None:
    session = await _session(gateway)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for token, status in ((None, 401), ("agent.nope.nope", 401), (session["answer_token"], 403)):
        async with gateway.client(token) as http:
            refused = await http.post("/mcp", json=call)
        assert refused.status_code == status, (token, refused.text)
        assert refused.json()["error"] in ("unauthorized", "forbidden")


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_agent_token_asks_in_its_own_session(
    gateway: LiveGateway, db_url: str, mode: str
) -> None:
    session = await _session(gateway)
    person = Person([accept({"db": "SQLite", "name": "svc"})])
    async with _client(gateway, session["agent_token"], person, mode) as client:
        result = await within(client.call_tool("ask_user_question", ASK))
    assert result.structured_content is not None
    assert result.structured_content["answers"][0]["answer"] == "SQLite"
    async with open_store(db_url) as store:
        (stored,) = await store.list_interactions(session_id=session["session_id"])
    assert stored.status == "answered"


async def test_the_admin_token_asks_in_the_default_session(
    gateway: LiveGateway, db_url: str
) -> None:
    person = Person([accept({"db": "PostgreSQL"})])
    async with _client(gateway, ADMIN, person, "auto") as client:
        result = await within(client.call_tool("ask_user_question", ASK))
    assert result.structured_content is not None
    async with open_store(db_url) as store:
        (stored,) = await store.list_interactions(session_id="mcp")
    assert stored.status == "answered"
    async with httpx.AsyncClient(base_url=gateway.url) as http:
        assert (await http.get("/healthz")).status_code == 200


async def test_a_secret_links_to_this_gateways_inbox_page(gateway: LiveGateway) -> None:
    async def consent(params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept")

    async def answer_in_inbox() -> None:
        async with gateway.client() as http:
            for _ in range(2000):  # a bounded poll, as a person would look
                pending = (await http.get("/v1/inbox")).json()["interactions"]
                if pending:
                    answered = await http.post(
                        f"/v1/asks/{pending[0]['id']}/answer", json={"answers": {"key": "s3"}}
                    )
                    assert answered.status_code == 200, answered.text
                    return
                await asyncio.sleep(0.01)
        raise AssertionError("the ask never reached the inbox")

    person = Person([consent])
    async with _client(gateway, ADMIN, person, "auto") as client:
        answering = asyncio.ensure_future(answer_in_inbox())
        result = await within(client.call_tool("ask_user_question", SECRET))
        await within(answering)
    (shown,) = person.seen
    assert isinstance(shown, types.ElicitRequestURLParams)
    page, _, fragment = shown.url.partition("#")
    assert page == f"{gateway.url}/"
    assert fragment.startswith("interaction=ia_")
    async with httpx.AsyncClient() as http:
        served = await http.get(page)
    assert served.status_code == 200
    assert "text/html" in served.headers["content-type"]
    assert "[secret provided]" in result.content[0].text  # type: ignore[union-attr]
