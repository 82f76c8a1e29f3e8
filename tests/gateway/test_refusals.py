"""Every refusal of docs/protocol.md, each a JSON `{error, message}` body that says what to do,
and none of them changing anything."""

from __future__ import annotations

from typing import Any

import httpx

from .conftest import ANSWER, ASK, LiveGateway, NewSession, Session, create_ask


def _refusal(response: httpx.Response, status: int, error: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    assert body["error"] == error
    assert isinstance(body["message"], str) and len(body["message"]) > 20
    assert "Traceback" not in response.text
    return body


async def test_401_without_a_token_or_with_an_unknown_one(
    gateway: LiveGateway, session: Session
) -> None:
    async with gateway.client(None) as anonymous, gateway.client("agent.s_x.forged") as forged:
        missing = await anonymous.get("/v1/inbox")
        wrong = await forged.get(f"/v1/sessions/{session.session_id}/interactions")
        not_bearer = await anonymous.get("/v1/inbox", headers={"Authorization": "Basic eDp5"})
    body = _refusal(missing, 401, "unauthorized")
    assert "Authorization: Bearer" in body["message"]
    assert missing.headers["www-authenticate"].startswith("Bearer")
    _refusal(wrong, 401, "unauthorized")
    _refusal(not_bearer, 401, "unauthorized")


async def test_a_token_of_the_right_shape_for_another_session_is_401_not_a_match(
    gateway: LiveGateway, session: Session
) -> None:
    kind, sid, secret = session.agent_token.split(".")
    forged = f"{kind}.{sid}.{secret[:-2]}xx"
    async with gateway.client(forged) as client:
        response = await client.get(f"/v1/sessions/{session.session_id}/interactions")
    _refusal(response, 401, "unauthorized")


async def test_403_for_a_valid_token_where_it_does_not_belong(
    gateway: LiveGateway, session: Session
) -> None:
    async with gateway.client(session.agent_token) as agent:
        response = await agent.get("/v1/inbox")
    body = _refusal(response, 403, "forbidden")
    assert "admin token" in body["message"]


async def test_404_for_unknown_asks_sessions_and_routes(gateway: LiveGateway) -> None:
    async with gateway.client() as admin:
        no_ask = await admin.get("/v1/asks/no-such-ask")
        no_session = await admin.get("/v1/sessions/s_nope/interactions")
        no_route = await admin.get("/v1/nothing-here")
        no_static = await admin.get("/static/nothing.js")
    assert "no-such-ask" in _refusal(no_ask, 404, "not_found")["message"]
    assert "POST /v1/sessions" in _refusal(no_session, 404, "not_found")["message"]
    _refusal(no_route, 404, "not_found")
    _refusal(no_static, 404, "not_found")


async def test_a_permission_id_on_the_ask_routes_is_404_naming_the_right_route(
    gateway: LiveGateway, session: Session
) -> None:
    async with gateway.client(session.agent_token) as agent:
        created = await agent.post(
            f"/v1/sessions/{session.session_id}/permissions",
            json={"tool": "bash", "summary": "ls"},
        )
        permission_id = created.json()["interaction"]["id"]
        response = await agent.get(f"/v1/asks/{permission_id}")
    assert f"/v1/permissions/{permission_id}" in _refusal(response, 404, "not_found")["message"]


async def test_405_names_the_allowed_method(gateway: LiveGateway) -> None:
    async with gateway.client() as admin:
        response = await admin.delete("/v1/inbox")
    assert "GET" in _refusal(response, 405, "method_not_allowed")["message"]
    assert response.headers["allow"] == "GET"


async def test_409_carries_the_settled_interaction_and_its_result(
    gateway: LiveGateway, session: Session
) -> None:
    ask = await create_ask(gateway, session)
    async with (
        gateway.client(session.answer_token) as answerer,
        gateway.client(session.agent_token) as agent,
    ):
        accepted = await answerer.post(f"/v1/asks/{ask['id']}/answer", json=ANSWER)
        different = await answerer.post(
            f"/v1/asks/{ask['id']}/answer", json={"answers": {"db": "SQLite", "name": "x"}}
        )
        cancel_late = await agent.post(f"/v1/asks/{ask['id']}/cancel")
    body = _refusal(different, 409, "already_settled")
    assert body["interaction"]["status"] == "answered"
    assert body["interaction"]["result"] == accepted.json()["result"]
    assert _refusal(cancel_late, 409, "already_settled")["interaction"]["id"] == ask["id"]


async def test_413_for_a_body_over_64_kib_declared_or_streamed(
    gateway: LiveGateway, session: Session
) -> None:
    big = {"tool_input": {"questions": [{"question": "x" * 70_000}]}}

    async def chunks() -> Any:
        for _ in range(20):
            yield b" " * 4096

    async with gateway.client(session.agent_token) as agent:
        declared = await agent.post(f"/v1/sessions/{session.session_id}/asks", json=big)
        streamed = await agent.post(
            f"/v1/sessions/{session.session_id}/asks",
            content=chunks(),
            headers={"Content-Type": "application/json"},
        )
        queue = await agent.get(f"/v1/sessions/{session.session_id}/interactions")
    _refusal(declared, 413, "payload_too_large")
    _refusal(streamed, 413, "payload_too_large")
    assert queue.json()["interactions"] == []


async def test_422_for_a_bad_ask_gives_the_model_its_problems_and_parks_nothing(
    gateway: LiveGateway, session: Session
) -> None:
    bad = {"questions": [{"question": "Which one?", "options": [{"label": "Only"}]}]}
    async with gateway.client(session.agent_token) as agent:
        response = await agent.post(
            f"/v1/sessions/{session.session_id}/asks", json={"tool_input": bad}
        )
        queue = await agent.get(f"/v1/sessions/{session.session_id}/interactions")
    body = _refusal(response, 422, "invalid_ask")
    assert body["problems"] and all({"path", "message"} <= set(p) for p in body["problems"])
    assert any("options" in problem["path"] for problem in body["problems"])
    assert "options" in body["message"]
    assert queue.json()["interactions"] == []


async def test_422_for_a_bad_answer_leaves_the_ask_pending_and_answerable(
    gateway: LiveGateway, session: Session
) -> None:
    ask = await create_ask(gateway, session)
    async with gateway.client(session.answer_token) as answerer:
        refused = await answerer.post(
            f"/v1/asks/{ask['id']}/answer", json={"answers": {"no-such-question": "x"}}
        )
        still = await answerer.get(f"/v1/asks/{ask['id']}")
        accepted = await answerer.post(f"/v1/asks/{ask['id']}/answer", json=ANSWER)
    body = _refusal(refused, 422, "invalid_answer")
    assert "no-such-question" in body["message"]
    assert still.json()["interaction"]["status"] == "pending"
    assert accepted.status_code == 200


async def test_422_for_a_malformed_request_lists_its_problems(
    gateway: LiveGateway, session: Session
) -> None:
    async with gateway.client(session.agent_token) as agent:
        not_json = await agent.post(
            f"/v1/sessions/{session.session_id}/asks",
            content=b"{not json",
            headers={"Content-Type": "application/json"},
        )
        no_input = await agent.post(f"/v1/sessions/{session.session_id}/asks", json={})
        too_long = await agent.get("/v1/asks/x", params={"wait": 61})
    for response in (not_json, no_input, too_long):
        assert _refusal(response, 422, "invalid_request")["problems"]
    assert any(p["path"] == "body.tool_input" for p in no_input.json()["problems"])
    assert any(p["path"] == "query.wait" for p in too_long.json()["problems"])


async def test_refusals_in_one_session_leave_another_session_untouched(
    gateway: LiveGateway, new_session: NewSession
) -> None:
    mine, theirs = await new_session(), await new_session()
    ask = await create_ask(gateway, theirs, tool_input=ASK)
    async with gateway.client(mine.answer_token) as intruder:
        response = await intruder.post(f"/v1/asks/{ask['id']}/answer", json=ANSWER)
    _refusal(response, 403, "forbidden")
    async with gateway.client(theirs.answer_token) as owner:
        still = await owner.get(f"/v1/asks/{ask['id']}")
    assert still.json()["interaction"]["status"] == "pending"


async def test_400_for_an_unknown_dialect_names_the_known_ones(
    gateway: LiveGateway, session: Session
) -> None:
    async with gateway.client(session.agent_token) as agent:
        response = await agent.post(
            f"/v1/sessions/{session.session_id}/asks",
            json={"tool_input": ASK, "dialect": "klingon"},
        )
    body = _refusal(response, 400, "bad_request")
    assert "klingon" in body["message"] and "claude" in body["message"]
