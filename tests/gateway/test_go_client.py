"""A Go client against a real gateway (issue 10): a Go struct marshals every field, the
unset ones as `0`, `""`, `false` or `null`. Each request here is built that way, and
each is read as if the zeroed fields were left out, wherever a zero has no sound reading
of its own (docs/protocol.md, "Zero values")."""

from __future__ import annotations

from typing import Any

import httpx

from .conftest import ASK, LiveGateway, Session


def _go_ask_request(tool_input: Any, **fields: Any) -> dict[str, Any]:
    """`POST /v1/sessions/{sid}/asks` as a Go struct sends it."""
    return {"tool_input": tool_input, "dialect": "", "tool_call_id": "", "turn_id": "", **fields}


def _go_neo_ask(**fields: Any) -> dict[str, Any]:
    """neo's `ask_user` input as a Go struct marshals it."""
    zeroed: dict[str, Any] = {
        "question_id": "",
        "title": "",
        "description": "",
        "kind": "",
        "options": None,
        "required": False,
        "allow_skip": False,
        "max_choices": 0,
        "timeout_sec": 0,
    }
    return {**zeroed, **fields}


def _go_action(question_id: str, **fields: Any) -> dict[str, Any]:
    """A neo answer as one Go struct with both action shapes, every field zeroed."""
    zeroed: dict[str, Any] = {
        "question_id": question_id,
        "status": "",
        "values": None,
        "message": "",
        "answer_type": "",
        "selected_option_ids": None,
        "text": "",
    }
    return {**zeroed, **fields}


async def test_a_go_neo_ask_and_a_go_answer_round_trip(
    gateway: LiveGateway, session: Session
) -> None:
    options = [{"label": "PostgreSQL", "description": ""}, {"label": "SQLite", "description": ""}]
    tool_input = _go_neo_ask(
        question_id="db", title="Which database?", kind="single_choice", options=options
    )
    async with (
        gateway.client(session.agent_token) as agent,
        gateway.client(session.answer_token) as answerer,
    ):
        created = await agent.post(
            f"/v1/sessions/{session.session_id}/asks",
            json=_go_ask_request(tool_input, dialect="neo", tool_call_id="call_go"),
        )
        assert created.status_code == 201, created.text
        ask = created.json()["interaction"]
        assert ask["deadline"] is None  # timeout_sec 0: no timeout
        assert ask["ask"]["questions"][0]["max_choices"] is None
        answer = _go_action("db", answer_type="single_choice", selected_option_ids=["SQLite"])
        answered = await answerer.post(f"/v1/asks/{ask['id']}/answer", json=answer)
        assert answered.status_code == 200, answered.text
        read = await agent.get(f"/v1/asks/{ask['id']}")
    assert answered.json()["result"]["outcome"] == "answered"
    assert read.json()["output"]["data"] == {
        "status": "answered",
        "question_id": "db",
        "values": ["SQLite"],
        "message": None,
    }


async def test_zeroed_envelope_fields_read_as_left_out(
    gateway: LiveGateway, session: Session
) -> None:
    url = f"/v1/sessions/{session.session_id}/asks"
    async with gateway.client(session.agent_token) as agent:
        zeroed = await agent.post(url, json=_go_ask_request(ASK))
        left_out = await agent.post(url, json={"tool_input": ASK})
        nulls = await agent.post(
            url, json={"tool_input": ASK, "dialect": None, "turn_id": None, "tool_call_id": None}
        )
    for response in (zeroed, left_out, nulls):
        assert response.status_code == 201, response.text
    shown = [response.json()["interaction"] for response in (zeroed, left_out, nulls)]
    # no turn id given, however spelled: each is a turn of its own (docs/runtime.md#turns)
    assert [item["turn_id"] for item in shown] == ["~" + item["id"] for item in shown]
    assert [item["tool_call_id"] for item in shown] == [None, None, None]
    assert [item["dialect"] for item in shown] == ["midturn"] * 3
    assert len({item["id"] for item in shown}) == 3  # "" is no tool_call_id: no dedup on it


async def test_a_go_permission_and_decision(gateway: LiveGateway, session: Session) -> None:
    url = f"/v1/sessions/{session.session_id}/permissions"
    go = {
        "tool": "bash",
        "summary": "ls -la",
        "risk": "",
        "details": "",
        "tool_call_id": "",
        "turn_id": "",
        "timeout_s": 0,
    }
    async with (
        gateway.client(session.agent_token) as agent,
        gateway.client(session.answer_token) as answerer,
    ):
        zeroed = await agent.post(url, json=go)
        left_out = await agent.post(url, json={"tool": "bash", "summary": "ls -la"})
        assert zeroed.status_code == 201, zeroed.text
        assert left_out.status_code == 201, left_out.text
        permission = zeroed.json()["interaction"]
        decided = await answerer.post(
            f"/v1/permissions/{permission['id']}/decision",
            json={"decision": "allow", "message": ""},
        )
    expected = left_out.json()["interaction"]
    assert permission["permission"] == expected["permission"]  # risk medium, no details
    assert [permission["turn_id"], expected["turn_id"]] == [
        "~" + permission["id"],
        "~" + expected["id"],
    ]
    assert (permission["deadline"] is None) == (expected["deadline"] is None)
    assert decided.status_code == 200, decided.text
    assert decided.json()["interaction"]["decision"]["message"] is None


async def test_a_zeroed_redirect_beside_an_answer_is_no_redirect(
    gateway: LiveGateway, session: Session
) -> None:
    async with (
        gateway.client(session.agent_token) as agent,
        gateway.client(session.answer_token) as answerer,
    ):
        created = await agent.post(
            f"/v1/sessions/{session.session_id}/asks", json={"tool_input": ASK}
        )
        ask_id = created.json()["interaction"]["id"]
        answer = {"answers": {"db": "SQLite", "name": "billing"}, "skip": False, "redirect": ""}
        answered = await answerer.post(f"/v1/asks/{ask_id}/answer", json=answer)
    assert answered.status_code == 200, answered.text
    assert answered.json()["result"]["outcome"] == "answered"


async def test_an_empty_answer_is_a_422_and_the_ask_stays_pending(
    gateway: LiveGateway, session: Session
) -> None:
    async with (
        gateway.client(session.agent_token) as agent,
        gateway.client(session.answer_token) as answerer,
    ):
        created = await agent.post(
            f"/v1/sessions/{session.session_id}/asks", json={"tool_input": ASK}
        )
        ask_id = created.json()["interaction"]["id"]
        url = f"/v1/asks/{ask_id}/answer"
        refusals = [
            await answerer.post(url, content=body, headers={"content-type": "application/json"})
            for body in (b"{}", b"null", b'{"answers": {}}', b'{"answers": null}')
        ]
        still = await agent.get(f"/v1/asks/{ask_id}")
        skipped = await answerer.post(url, json={"skip": True})
    for refusal in refusals:
        assert refusal.status_code == 422, refusal.text
        assert refusal.json()["error"] == "invalid_answer"
    assert still.json()["interaction"]["status"] == "pending"
    assert skipped.status_code == 200 and skipped.json()["result"]["outcome"] == "skipped"


async def test_re_posting_to_a_secret_question_tells_nothing(
    gateway: LiveGateway, session: Session
) -> None:
    secret = {"questions": [{"id": "token", "question": "Paste the token", "secret": True}]}
    async with (
        gateway.client(session.agent_token) as agent,
        gateway.client(session.answer_token) as answerer,
    ):
        created = await agent.post(
            f"/v1/sessions/{session.session_id}/asks", json={"tool_input": secret}
        )
        url = f"/v1/asks/{created.json()['interaction']['id']}/answer"
        first = await answerer.post(url, json="hunter2")
        right: httpx.Response = await answerer.post(url, json="hunter2")
        wrong = await answerer.post(url, json="a-guess")
    assert first.status_code == 200, first.text
    assert (right.status_code, wrong.status_code) == (409, 409)
    assert right.json() == wrong.json()  # byte for byte the same refusal
    assert "hunter2" not in right.text
