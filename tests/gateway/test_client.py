"""`midturn.client`: error bodies come back as midturn's exceptions, and the blocking
facade behaves like the async client."""

from __future__ import annotations

import pytest

from midturn import (
    Forbidden,
    GatewayError,
    InvalidAnswer,
    InvalidAsk,
    NotFound,
    Unauthorized,
    render,
)
from midturn.client import AsyncClient, Client

from .conftest import ADMIN_TOKEN, ASK, LiveGateway, Session


async def test_refusals_become_midturn_exceptions(gateway: LiveGateway, session: Session) -> None:
    async with (
        AsyncClient(gateway.url, session.agent_token) as agent,
        AsyncClient(gateway.url, session.answer_token) as answerer,
        AsyncClient(gateway.url, "nobody") as stranger,
    ):
        with pytest.raises(InvalidAsk) as bad_ask:
            await agent.ask(
                session.session_id, {"questions": [{"question": "?", "options": [{"label": "A"}]}]}
            )
        parked, _ = await agent.ask(session.session_id, ASK, tool_call_id="c1")
        with pytest.raises(InvalidAnswer) as bad_answer:
            await answerer.answer(parked.id, {"answers": {"db": ["PostgreSQL", "SQLite"]}})
        with pytest.raises(Forbidden):
            await agent.answer(parked.id, {"answers": {"db": "SQLite"}})
        with pytest.raises(NotFound):
            await agent.get("no-such-ask")
        with pytest.raises(Unauthorized):
            await stranger.inbox()
        with pytest.raises(GatewayError) as malformed:
            await agent.request_permission(session.session_id, tool="", summary="s")

    assert bad_ask.value.problems and "options" in bad_ask.value.problems[0].path
    assert bad_answer.value.question == "db"
    assert (malformed.value.status_code, malformed.value.error) == (422, "invalid_request")


def test_the_blocking_client_creates_sessions_and_reads_queues(gateway: LiveGateway) -> None:
    with Client(gateway.url, ADMIN_TOKEN) as admin:
        credentials = admin.create_session({"purpose": "test"})
        assert admin.whoami() == {"role": "admin", "session_id": None}
    with Client(gateway.url, credentials.agent_token) as agent:
        parked, created = agent.ask(credentials.session_id, ASK, tool_call_id="c1")
        again, created_again = agent.ask(credentials.session_id, ASK, tool_call_id="c1")
        queue = agent.queue(credentials.session_id)
        cancelled = agent.cancel(parked.id)
        pending = agent.get(parked.id, wait=0)
    assert again.id == parked.id and (created, created_again) == (True, False)
    assert [item.id for item in queue] == [parked.id]
    assert cancelled.interaction.status == "cancelled" and pending.status == "cancelled"
    assert cancelled.output is not None and cancelled.output == render(
        cancelled.interaction.result, "midturn"
    )
    assert credentials.answer_url.startswith(f"{gateway.url}/#token=")


def test_a_closed_blocking_client_says_so(gateway: LiveGateway) -> None:
    client = Client(gateway.url, ADMIN_TOKEN)
    client.close()
    with pytest.raises(Exception, match="closed"):
        client.inbox()
