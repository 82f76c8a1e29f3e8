"""Through a real `midturn serve`: a grant ends with its turn (stop, end, restart), a
missing `turn_id` makes no grant session-wide, an ended turn parks nothing, and a
`tool_call_id` held by the other kind is a 409."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests._postgres import fresh_schema
from tests._servers import LiveGateway

from midturn import AsyncClient, ToolCallConflict

from .conftest import ASK, Session, StartGateway


async def _permission(
    gateway: LiveGateway, session: Session, **fields: Any
) -> tuple[int, dict[str, Any]]:
    body = {"tool": "bash", "summary": "rm -rf build/", "risk": "high", **fields}
    async with gateway.client(session.agent_token) as agent:
        response = await agent.post(f"/v1/sessions/{session.session_id}/permissions", json=body)
    return response.status_code, response.json()


async def _decide(gateway: LiveGateway, session: Session, interaction_id: str) -> None:
    async with gateway.client(session.answer_token) as answerer:
        response = await answerer.post(
            f"/v1/permissions/{interaction_id}/decision", json={"decision": "allow_for_turn"}
        )
    assert response.status_code == 200, response.text


async def _turn(gateway: LiveGateway, session: Session, turn_id: str, action: str) -> Any:
    token = session.answer_token if action == "stop" else session.agent_token
    async with gateway.client(token) as client:
        response = await client.post(f"/v1/sessions/{session.session_id}/turns/{turn_id}/{action}")
    assert response.status_code == 200, response.text
    return response.json()


async def test_a_grant_ends_when_the_turn_is_stopped_and_after_a_restart(
    start_gateway: StartGateway, db_url: str, session: Session, gateway: LiveGateway
) -> None:
    _, first = await _permission(gateway, session, turn_id="t1")
    await _decide(gateway, session, first["interaction"]["id"])
    status, again = await _permission(gateway, session, turn_id="t1")
    assert status == 201 and again["interaction"]["status"] == "allowed"
    await _turn(gateway, session, "t1", "stop")
    status, later = await _permission(gateway, session, turn_id="t1")
    assert status == 201 and later["interaction"]["status"] == "cancelled"
    gateway.stop()
    restarted = start_gateway(db_url)
    status, after = await _permission(restarted, session, turn_id="t1")
    assert after["interaction"]["status"] == "cancelled"
    async with restarted.client(session.agent_token) as agent:
        ask = await agent.post(
            f"/v1/sessions/{session.session_id}/asks", json={"tool_input": ASK, "turn_id": "t1"}
        )
        queue = await agent.get(f"/v1/sessions/{session.session_id}/interactions")
    assert ask.status_code == 201 and ask.json()["interaction"]["status"] == "cancelled"
    assert queue.json()["interactions"] == []


async def test_a_grant_ends_when_the_agent_ends_the_turn(
    gateway: LiveGateway, session: Session
) -> None:
    _, first = await _permission(gateway, session, turn_id="t1")
    await _decide(gateway, session, first["interaction"]["id"])
    assert await _turn(gateway, session, "t1", "end") == {"cancelled": []}
    _, later = await _permission(gateway, session, turn_id="t1")
    assert later["interaction"]["status"] == "cancelled"
    async with gateway.client(session.answer_token) as answerer:
        refused = await answerer.post(f"/v1/sessions/{session.session_id}/turns/t2/end")
    assert refused.status_code == 403


async def test_without_a_turn_id_a_grant_covers_only_that_call(
    gateway: LiveGateway, session: Session
) -> None:
    _, first = await _permission(gateway, session)
    interaction = first["interaction"]
    assert interaction["turn_id"] == "~" + interaction["id"]
    await _decide(gateway, session, interaction["id"])
    async with gateway.client(session.answer_token) as answerer:
        read = await answerer.get(f"/v1/permissions/{interaction['id']}")
    assert read.json()["interaction"]["decision"]["decision"] == "allow"
    _, later = await _permission(gateway, session, turn_id=None)
    assert later["interaction"]["status"] == "pending"
    status, joined = await _permission(gateway, session, turn_id=interaction["turn_id"])
    assert status == 422, joined  # nobody joins a turn of its own


async def test_a_tool_call_id_of_the_other_kind_is_a_409_even_when_racing(
    gateway: LiveGateway, session: Session
) -> None:
    await _kind_conflicts(gateway, session)


async def test_a_tool_call_id_of_the_other_kind_is_a_409_on_postgresql(
    start_gateway: StartGateway,
) -> None:
    async with fresh_schema("kind_409", "the 409 must be tested on PostgreSQL") as url:
        gateway = start_gateway(url)
        async with gateway.client() as admin:
            created = await admin.post("/v1/sessions", json={})
        await _kind_conflicts(gateway, Session(**created.json()))
        gateway.stop()


async def _kind_conflicts(gateway: LiveGateway, session: Session) -> None:
    async with gateway.client(session.agent_token) as agent:
        asked = await agent.post(
            f"/v1/sessions/{session.session_id}/asks",
            json={"tool_input": ASK, "tool_call_id": "c1", "turn_id": "t1"},
        )
        status, conflict = await _permission(gateway, session, tool_call_id="c1")
        assert status == 409 and conflict["error"] == "tool_call_conflict"
        assert conflict["interaction_id"] == asked.json()["interaction"]["id"]
        assert conflict["kind"] == "ask"
        for number in range(20):
            call = f"race-{number}"
            ask, permission = await asyncio.gather(
                agent.post(
                    f"/v1/sessions/{session.session_id}/asks",
                    json={"tool_input": ASK, "tool_call_id": call},
                ),
                agent.post(
                    f"/v1/sessions/{session.session_id}/permissions",
                    json={"tool": "bash", "summary": "ls", "tool_call_id": call},
                ),
            )
            statuses = sorted([ask.status_code, permission.status_code])
            assert statuses == [201, 409], (ask.text, permission.text)
            if permission.status_code == 201:
                assert permission.json()["interaction"]["kind"] == "permission"
            else:
                assert permission.json()["error"] == "tool_call_conflict"
                assert ask.json()["interaction"]["kind"] == "ask"


async def test_the_client_ends_turns_and_raises_tool_call_conflict(
    gateway: LiveGateway, session: Session
) -> None:
    async with AsyncClient(gateway.url, session.agent_token) as agent:
        first, _ = await agent.request_permission(
            session.session_id, tool="bash", summary="ls", tool_call_id="c1", turn_id="t1"
        )
        with pytest.raises(ToolCallConflict, match="permission"):
            await agent.ask(session.session_id, ASK, tool_call_id="c1", turn_id="t1")
        assert [item.id for item in await agent.end_turn(session.session_id, "t1")] == [first.id]
        later, _ = await agent.ask(session.session_id, ASK, turn_id="t1")
    assert later.status == "cancelled"
