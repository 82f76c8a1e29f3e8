"""`/#interaction=<id>`: the page an MCP client's URL mode opens for a secret. The link
carries no credential; the inbox asks for the person's token (or uses the one the tab
holds), opens the request's session with that request in the slot, and the secret typed
there reaches the agent without being in any stored byte."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client as McpClient
from playwright.sync_api import Page, expect
from tests._servers import SAFETY_S, LiveGateway
from tests.web.conftest import ADMIN_TOKEN, Agent, Session, create_session, start_gateway

from midturn import SECRET_MARK, AsyncClient
from midturn.mcp import Backend, McpOptions, create_server, load_state_key

VALUE = "sk-live-3f9a-never-stored-anywhere"
SECRET: dict[str, Any] = {
    "questions": [
        {"id": "key", "question": "Paste the deploy API key", "kind": "text", "secret": True}
    ]
}


@pytest.fixture
def own_gateway(tmp_path: Path) -> Iterator[LiveGateway]:
    """A gateway on a data folder of this test's own, so every stored byte is searched."""
    data = tmp_path / "data"
    data.mkdir()
    server = start_gateway(f"sqlite:///{data / 'midturn.db'}")
    yield server
    server.stop()


def _mcp_secret_ask(
    gateway: LiveGateway, session: Session, key_dir: Path, link: Future[str]
) -> types.CallToolResult:
    """An MCP client in URL mode, on the MCP server over the gateway (its agent token):
    the URL it is sent goes to `link`; the call returns once the inbox answered."""

    async def consent(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams)
        link.set_result(params.url)
        return types.ElicitResult(action="accept")

    async def run() -> types.CallToolResult:
        async with AsyncClient(gateway.url, session.agent_token) as agent:
            options = McpOptions(
                session_id=session.session_id, public_url=gateway.url, wait_bound_s=SAFETY_S
            )
            key = load_state_key(key_dir)
            server = create_server(Backend(agent), state_key=key, options=options)
            async with McpClient(server, elicitation_callback=consent) as client:
                asked = client.call_tool("ask_user_question", SECRET)
                return await asyncio.wait_for(asked, SAFETY_S)

    return asyncio.run(run())


def _stored_bytes(folder: Path) -> bytes:
    return b"".join(path.read_bytes() for path in folder.rglob("*") if path.is_file())


def _answer_url(gateway: LiveGateway, session: Session) -> str:
    return f"{gateway.url}/#{session.answer_url.split('#', 1)[1]}"


def test_a_secret_link_signs_in_opens_the_request_and_is_never_stored(
    page: Page, own_gateway: LiveGateway, tmp_path: Path
) -> None:
    session = create_session(own_gateway)
    link: Future[str] = Future()
    with ThreadPoolExecutor(max_workers=1) as pool:
        asking = pool.submit(_mcp_secret_ask, own_gateway, session, tmp_path / "mcp", link)
        url = link.result(SAFETY_S)
        assert url.startswith(f"{own_gateway.url}/#interaction=")
        assert "token" not in url
        page.goto(url)
        signin = page.locator("#signin")
        expect(signin).to_be_visible()
        field = signin.get_by_label("Answer link or token")
        field.fill(_answer_url(own_gateway, session))  # the link the person already holds
        signin.get_by_role("button", name="Sign in").click()
        tray = page.locator(".tray-ask.tray-linked")
        expect(tray).to_contain_text("Paste the deploy API key")
        expect(page.locator("#slot-notice")).to_have_text("This is the request your link opened.")
        assert "token=" not in page.url
        key = tray.locator("input[type=password]")
        key.fill(VALUE)
        key.press("Enter")
        result = asking.result(SAFETY_S)
    text = result.content[0].text  # type: ignore[union-attr]
    assert SECRET_MARK in text and VALUE not in text
    assert VALUE not in page.content()
    stored = _stored_bytes(Path(own_gateway.db_url.removeprefix("sqlite:///")).parent)
    assert b"Paste the deploy API key" in stored  # the search reads what was stored
    assert VALUE.encode() not in stored
    assert VALUE.encode() not in _stored_bytes(tmp_path / "mcp")


def test_a_link_uses_the_token_the_tab_holds_and_says_what_waits_before_it(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    page.goto(f"{gateway.url}/#token={ADMIN_TOKEN}")  # signed in as the admin in this tab
    expect(page.locator("#inbox-view")).to_be_visible()
    first = agent.ask({"questions": [{"id": "q1", "question": "First?", "kind": "text"}]})
    second = agent.ask({"questions": [{"id": "q2", "question": "Second?", "kind": "text"}]})
    page.goto(f"{gateway.url}/#interaction={second.id}")
    expect(page.locator("#signin")).to_be_hidden()
    expect(page.locator("#where")).to_have_text(f"Session {session.session_id}")
    notice = page.locator("#slot-notice")
    expect(notice).to_have_text(
        "The request from your link is waiting behind 1 earlier request of this session; "
        "answer those first."
    )
    agent.as_answerer(lambda c: c.answer(first.id, {"answers": {"q1": "done"}}))
    expect(page.locator(".tray-ask.tray-linked")).to_contain_text("Second?")
    expect(notice).to_have_text("This is the request your link opened.")


def test_a_token_of_another_session_is_asked_to_sign_in_again(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    asked = agent.ask({"questions": [{"id": "q", "question": "Mine?", "kind": "text"}]})
    other = create_session(gateway)
    page.goto(_answer_url(gateway, other))
    expect(page.locator("#session-view")).to_be_visible()
    page.goto(f"{gateway.url}/#interaction={asked.id}")
    expect(page.locator("#signin-error")).to_contain_text("does not reach this request")
    page.locator("#signin-token").fill(session.answer_token)
    page.locator("#signin-token").press("Enter")
    expect(page.locator(".tray-ask.tray-linked")).to_contain_text("Mine?")
