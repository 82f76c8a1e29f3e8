"""The MCP server over the ports on a remote gateway: the same `create_server` on an
`AsyncClient` (in memory), and `midturn mcp --gateway URL` as a stdio subprocess, driven
by the real `mcp` client against a real `midturn serve`; asks answered by a second party
through the gateway, and the 2026-07-28 round trip (input_required → retry) settling
through the gateway."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, TextIO

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from tests._servers import LiveGateway, start_gateway
from tests.mcp_server.conftest import ASK, SAFETY_S, Person, accept, within

from midturn import AsyncClient, Interaction, open_store
from midturn.client import SessionCredentials
from midturn.mcp import Backend, McpOptions, create_server, load_state_key
from midturn.mcp._remote import SESSIONS_FILE

MIDTURN = str(Path(sys.executable).with_name("midturn"))
ADMIN = "test-admin-token-0123456789abcdef"
QUESTION = "ask_user_question"


@pytest.fixture
def gateway(db_url: str) -> Iterator[LiveGateway]:
    server = start_gateway(db_url, ADMIN)
    yield server
    server.stop()


@pytest.fixture
async def session(gateway: LiveGateway) -> SessionCredentials:
    async with AsyncClient(gateway.url, ADMIN) as admin:
        return await admin.create_session({"name": "remote test"})


@pytest.fixture
async def agent(gateway: LiveGateway, session: SessionCredentials) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(gateway.url, session.agent_token) as client:
        yield client


@pytest.fixture
async def admin(gateway: LiveGateway) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(gateway.url, ADMIN) as client:
        yield client


def _options(gateway: LiveGateway, session_id: str) -> McpOptions:
    return McpOptions(
        session_id=session_id, wait_bound_s=SAFETY_S, progress_every_s=0.05, public_url=gateway.url
    )


async def _second_party_answers(gateway: LiveGateway, session: SessionCredentials) -> str:
    """A person with the session's answer token: waits on the session's events for the
    ask, then answers it through the gateway. Returns its id."""
    async with AsyncClient(gateway.url, session.answer_token) as person:
        async for event in person.events(session.session_id):
            if event.type == "user_question_requested":
                assert event.interaction_id is not None
                await person.answer(event.interaction_id, {"answers": {"db": "PostgreSQL"}})
                return event.interaction_id
    raise AssertionError("the event stream ended")  # pragma: no cover


async def _stored(db_url: str, session_id: str) -> Interaction:
    async with open_store(db_url) as store:
        (stored,) = await store.list_interactions(session_id=session_id)
    return stored


# -- in memory: create_server over AsyncClient ------------------------------------------


async def test_an_agent_token_asks_and_a_second_party_answers_through_the_gateway(
    gateway: LiveGateway,
    session: SessionCredentials,
    agent: AsyncClient,
    data_dir: Path,
    db_url: str,
) -> None:
    # No answer credential: the server cannot settle a form, so it shows none (the
    # person has no replies; a form would fail the test) and waits for the inbox.
    person = Person([])
    server = create_server(
        Backend(agent),
        state_key=load_state_key(data_dir),
        options=_options(gateway, session.session_id),
    )
    async with Client(server, elicitation_callback=person) as client:
        answering = asyncio.ensure_future(_second_party_answers(gateway, session))
        result = await within(client.call_tool(QUESTION, ASK))
        interaction_id = await within(answering)
    assert person.seen == []
    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["answers"][0]["answer"] == "PostgreSQL"
    stored = await _stored(db_url, session.session_id)
    assert (stored.id, stored.status, stored.settled_by) == (interaction_id, "answered", "answer")


@pytest.mark.parametrize("who", ["admin", "agent and answer tokens"])
async def test_an_mrtr_round_trip_settles_through_the_gateway(
    gateway: LiveGateway,
    session: SessionCredentials,
    data_dir: Path,
    db_url: str,
    who: str,
) -> None:
    async with (
        AsyncClient(gateway.url, ADMIN if who == "admin" else session.agent_token) as asker,
        AsyncClient(gateway.url, ADMIN if who == "admin" else session.answer_token) as answerer,
    ):
        server = create_server(
            Backend(asker, answerer),
            state_key=load_state_key(data_dir),
            options=_options(gateway, session.session_id),
        )
        person = Person([accept({"db": "SQLite", "name": "billing-api"})])
        async with Client(server, elicitation_callback=person) as client:
            assert client.session.protocol_version == "2026-07-28"
            result = await within(client.call_tool(QUESTION, ASK))
    assert len(person.seen) == 1 and person.seen[0].mode == "form"
    assert result.structured_content is not None
    assert [a["answer"] for a in result.structured_content["answers"]] == ["SQLite", "billing-api"]
    stored = await _stored(db_url, session.session_id)
    # A gateway records the token's role: the ports carry no name of the settler.
    role = "admin" if who == "admin" else "answer"
    assert (stored.status, stored.settled_by) == ("answered", role)


async def test_a_dismissed_form_over_a_gateway_skips_and_records_the_role(
    gateway: LiveGateway,
    session: SessionCredentials,
    admin: AsyncClient,
    data_dir: Path,
    db_url: str,
) -> None:
    server = create_server(
        admin, state_key=load_state_key(data_dir), options=_options(gateway, session.session_id)
    )
    person = Person([types.ElicitResult(action="cancel")])
    async with Client(server, elicitation_callback=person) as client:
        result = await within(client.call_tool(QUESTION, ASK))
    assert result.structured_content is not None
    assert result.structured_content["outcome"] == "skipped"
    stored = await _stored(db_url, session.session_id)
    assert (stored.status, stored.settled_by) == ("skipped", "admin")


async def test_wait_for_answer_refuses_another_sessions_interaction(
    gateway: LiveGateway, session: SessionCredentials, admin: AsyncClient, data_dir: Path
) -> None:
    other = await admin.create_session()
    parked, _ = await admin.ask(other.session_id, ASK)
    async with AsyncClient(gateway.url, session.agent_token) as agent_client:
        server = create_server(
            Backend(agent_client),
            state_key=load_state_key(data_dir),
            options=_options(gateway, session.session_id),
        )
        async with Client(server) as client:
            arguments = {"interaction_id": parked.id, "seconds": 0}
            result = await within(client.call_tool("wait_for_answer", arguments))
    assert result.is_error
    assert (await admin.wait(parked.id, 0)).pending  # nothing changed


# -- `midturn mcp --gateway URL` over stdio ----------------------------------------------


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[TextIO]:
    with (tmp_path / "mcp.log").open("w") as log:
        yield log


def _remote(gateway: LiveGateway, home: Path, errlog: TextIO, **env: str) -> Any:
    params = StdioServerParameters(
        command=MIDTURN,
        args=["mcp", "--gateway", gateway.url, "--wait-bound", str(SAFETY_S)],
        env={"MIDTURN_HOME": str(home), **env},
    )
    return stdio_client(params, errlog=errlog)


async def test_midturn_mcp_on_a_gateway_with_an_agent_token_is_answered_by_a_second_party(
    gateway: LiveGateway,
    session: SessionCredentials,
    tmp_path: Path,
    errlog: TextIO,
    db_url: str,
) -> None:
    transport = _remote(gateway, tmp_path / "home", errlog, MIDTURN_AGENT_TOKEN=session.agent_token)
    async with Client(transport) as client:
        answering = asyncio.ensure_future(_second_party_answers(gateway, session))
        result = await within(client.call_tool(QUESTION, ASK))
        interaction_id = await within(answering)
    assert result.structured_content is not None
    assert result.structured_content["answers"][0]["answer"] == "PostgreSQL"
    stored = await _stored(db_url, session.session_id)
    assert (stored.id, stored.settled_by) == (interaction_id, "answer")


async def test_midturn_mcp_on_a_gateway_with_the_admin_token_reuses_its_session(
    gateway: LiveGateway, tmp_path: Path, errlog: TextIO, db_url: str
) -> None:
    home = tmp_path / "home"
    answers = [{"db": "SQLite", "name": "one"}, {"db": "PostgreSQL", "name": "two"}]
    for content in answers:  # two starts of the server: one session
        person = Person([accept(content)])
        transport = _remote(gateway, home, errlog, MIDTURN_TOKEN=ADMIN)
        async with Client(transport, elicitation_callback=person) as client:
            result = await within(client.call_tool(QUESTION, ASK))
        assert len(person.seen) == 1  # the form came in an input_required result
        assert result.structured_content is not None
        assert result.structured_content["answers"][1]["answer"] == content["name"]
    (session_id,) = json.loads((home / SESSIONS_FILE).read_text())[gateway.url].values()
    async with open_store(db_url) as store:
        stored = await store.list_interactions(session_id=session_id)
        record = await store.get_session(session_id)
    assert [i.settled_by for i in stored] == ["admin", "admin"]
    assert record is not None and record.meta["name"] == "mcp"


async def test_midturn_mcp_on_a_gateway_refuses_an_answer_token(
    gateway: LiveGateway, session: SessionCredentials, tmp_path: Path
) -> None:
    process = await asyncio.create_subprocess_exec(
        MIDTURN,
        "mcp",
        "--gateway",
        gateway.url,
        env={**os.environ, "MIDTURN_HOME": str(tmp_path), "MIDTURN_TOKEN": session.answer_token},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await within(process.communicate())
    assert process.returncode == 2, stderr
    assert b"answer token cannot ask" in stderr


async def test_an_answer_token_is_refused_before_the_mcp_server_loads(
    gateway: LiveGateway, session: SessionCredentials, tmp_path: Path
) -> None:
    """The refusal comes from one whoami, before the MCP SDK is imported (about 1 s of
    CPU, which a loaded machine stretches past any bound): a wrong token fails at once."""
    code = (
        "import sys; from midturn.cli import main; "
        f"code = main(['mcp', '--gateway', {gateway.url!r}]); "
        "print(code, sorted(m for m in ('mcp', 'midturn.mcp') if m in sys.modules))"
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        code,
        env={**os.environ, "MIDTURN_HOME": str(tmp_path), "MIDTURN_TOKEN": session.answer_token},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await within(process.communicate())
    assert b"answer token cannot ask" in stderr
    assert stdout.decode().split() == ["2", "[]"], stdout


async def test_a_gateway_gone_away_is_an_error_result_not_a_crash(
    db_url: str, data_dir: Path
) -> None:
    gone = start_gateway(db_url, ADMIN)
    async with AsyncClient(gone.url, ADMIN) as admin_client:
        created = await admin_client.create_session()
        options = _options(gone, created.session_id)
        server = create_server(admin_client, state_key=load_state_key(data_dir), options=options)
        gone.stop()
        async with Client(server) as client:
            result = await within(client.call_tool(QUESTION, ASK))
    assert result.is_error
    assert "gateway did not answer" in result.content[0].text  # type: ignore[union-attr]
