"""Through a real `midturn serve` on each store: a session's label (`GET /v1/sessions/{sid}`),
who is asking (`context` on asks and permissions), and the session's history (search,
keyset pages, the JSON Lines export), who may read it, and what bad parameters get."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from tests._postgres import fresh_schema
from tests._servers import LiveGateway

from midturn import AsyncClient, Client, Forbidden

from .conftest import ADMIN_TOKEN, StartGateway

SECRET = "sk-live-DO-NOT-LEAK-4242"
ASK_WITH_SECRET = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database for billing?",
            "options": ["PostgreSQL", "SQLite"],
        },
        {
            "id": "key",
            "header": "API key",
            "question": "Paste the vendor key",
            "kind": "text",
            "secret": True,
        },
    ]
}
CONTEXT = {
    "agent": "release-bot",
    "doing": "Setting up the billing service\x1b[2J; I need a database first.",
    "tool": {"name": "ask_user_question", "input": {"questions": 2}},
}


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
async def store_gateway(
    request: pytest.FixtureRequest, start_gateway: StartGateway, tmp_path: Path
) -> AsyncIterator[LiveGateway]:
    kind = request.param
    if kind == "postgresql":
        async with fresh_schema("history", "history must be tested on PostgreSQL") as url:
            gateway = start_gateway(url)
            yield gateway
            gateway.stop()
        return
    yield start_gateway("memory://" if kind == "memory" else f"sqlite:///{tmp_path / 'h.db'}")


async def _settle_three(gateway: LiveGateway) -> tuple[Any, list[str]]:
    """A titled session with an answered ask (a secret in it), a denied permission and a
    pending ask; returns its credentials and the ids, oldest first."""
    async with gateway.midturn_client(ADMIN_TOKEN) as admin:
        session = await admin.create_session({"title": "Billing  service", "team": "payments"})
    sid = session.session_id
    async with (
        gateway.midturn_client(session.agent_token) as agent,
        gateway.midturn_client(session.answer_token) as person,
    ):
        asked, _ = await agent.ask(
            sid, ASK_WITH_SECRET, tool_call_id="c1", turn_id="t1", context=CONTEXT
        )
        await person.answer(asked.id, {"answers": {"db": "SQLite", "key": SECRET}})
        permission, _ = await agent.request_permission(
            sid,
            tool="bash",
            summary="rm -rf build/",
            risk="high",
            turn_id="t1",
            tool_call_id="c2",
            context={"agent": "release-bot", "doing": "Cleaning up."},
        )
        await person.decide(permission.id, "deny", message="use make clean")
        pending, _ = await agent.ask(
            sid,
            {"questions": [{"question": "Ship it?", "options": ["Yes", "No"]}]},
            tool_call_id="c3",
            turn_id="t1",
        )
    return session, [asked.id, permission.id, pending.id]


async def test_history_lists_searches_pages_and_exports_without_a_secret(
    store_gateway: LiveGateway,
) -> None:
    gateway = store_gateway
    session, (ask_id, permission_id, _) = await _settle_three(gateway)
    sid = session.session_id
    async with gateway.client(session.answer_token) as raw:
        whole = await raw.get(f"/v1/sessions/{sid}/history")
        found = await raw.get(f"/v1/sessions/{sid}/history", params={"q": "MAKE clean"})
        first = await raw.get(f"/v1/sessions/{sid}/history", params={"limit": 1})
        export = await raw.get(f"/v1/sessions/{sid}/history", params={"format": "jsonl"})
    assert whole.status_code == 200, whole.text
    entries = whole.json()["entries"]
    assert [entry["id"] for entry in entries] == [ask_id, permission_id]  # not the pending
    asked, decided = entries
    assert asked["status"] == "answered" and asked["settled_by"] == "answer"
    assert [(q["header"], q["answer"]) for q in asked["questions"]] == [
        ("Database", "SQLite"),
        ("API key", "[secret provided]"),
    ]
    assert asked["context"] == {
        "agent": "release-bot",
        "doing": "Setting up the billing service; I need a database first.",
        "tool": {"name": "ask_user_question", "input": '{"questions":2}'},
    }
    assert decided["permission"] == {"tool": "bash", "summary": "rm -rf build/", "risk": "high"}
    assert decided["decision"] == {"decision": "deny", "message": "use make clean", "auto": False}
    assert asked["asked_at"] <= decided["asked_at"] and decided["settled_at"] is not None

    assert [entry["id"] for entry in found.json()["entries"]] == [permission_id]
    assert [entry["id"] for entry in first.json()["entries"]] == [ask_id]
    async with gateway.client(session.answer_token) as raw:
        second = await raw.get(
            f"/v1/sessions/{sid}/history",
            params={"limit": 1, "cursor": first.json()["next_cursor"]},
        )
    assert [entry["id"] for entry in second.json()["entries"]] == [permission_id]

    assert export.status_code == 200
    assert export.headers["content-type"].startswith("application/jsonl")
    assert "attachment" in export.headers["content-disposition"]
    assert sid in export.headers["content-disposition"]
    lines = export.text.splitlines()
    assert [json.loads(line) for line in lines] == entries
    for body in (whole.text, found.text, first.text, export.text):
        assert SECRET not in body

    async with gateway.midturn_client(session.answer_token) as person:
        everything = [entry async for entry in person.iter_history(sid, page_size=1)]
        assert [entry.id for entry in everything] == [ask_id, permission_id]
        assert await person.export_history(sid, query="sqlite") == lines[0] + "\n"


async def test_the_session_label_carries_its_title_and_meta(store_gateway: LiveGateway) -> None:
    gateway = store_gateway
    session, _ = await _settle_three(gateway)
    async with gateway.midturn_client(session.answer_token) as person:
        label = await person.session(session.session_id)
        queue = await person.queue(session.session_id)
    assert label.title == "Billing service"  # whitespace folded
    assert label.meta == {"title": "Billing  service", "team": "payments"}
    assert queue[0].context is None  # the ask made without one
    async with gateway.midturn_client(ADMIN_TOKEN) as admin:
        untitled = await admin.create_session({"title": 7})
        assert (await admin.session(untitled.session_id)).title is None
        escaped = await admin.create_session({"title": "Ops\x1b]0;pwned\x07\x1b[2J  board"})
        assert (await admin.session(escaped.session_id)).title == "Ops board"
        assert (await admin.session(session.session_id)).session_id == session.session_id


async def test_another_sessions_token_reads_neither_label_nor_history(
    store_gateway: LiveGateway,
) -> None:
    gateway = store_gateway
    one, _ = await _settle_three(gateway)
    async with gateway.midturn_client(ADMIN_TOKEN) as admin:
        other = await admin.create_session()
    for path in (f"/v1/sessions/{one.session_id}/history", f"/v1/sessions/{one.session_id}"):
        for token in (other.answer_token, other.agent_token):
            async with gateway.client(token) as raw:
                refused = await raw.get(path, params={"format": "jsonl"})
            assert refused.status_code == 403, refused.text
            assert refused.json()["error"] == "forbidden"
            assert "billing" not in refused.text.lower()
        async with gateway.client(None) as anonymous:
            assert (await anonymous.get(path)).status_code == 401
    async with gateway.midturn_client(other.answer_token) as stranger:
        with pytest.raises(Forbidden):
            await stranger.history_page(one.session_id)
    async with gateway.client(one.agent_token) as agent:
        assert (await agent.get(f"/v1/sessions/{one.session_id}/history")).status_code == 200
    async with gateway.client(ADMIN_TOKEN) as admin_raw:
        missing = await admin_raw.get("/v1/sessions/s_nope/history")
        assert missing.status_code == 404 and missing.json()["error"] == "not_found"
        assert (await admin_raw.get("/v1/sessions/s_nope")).status_code == 404


@pytest.mark.parametrize(
    ("params", "status", "error"),
    [
        ({"limit": 0}, 422, "invalid_request"),
        ({"limit": 1001}, 422, "invalid_request"),
        ({"limit": "many"}, 422, "invalid_request"),
        ({"q": "x" * 201}, 422, "invalid_request"),
        ({"format": "xml"}, 422, "invalid_request"),
        ({"cursor": "not-a-cursor"}, 400, "bad_request"),
        ({"cursor": "not-a-cursor", "format": "jsonl"}, 400, "bad_request"),
    ],
)
async def test_bad_history_parameters_are_refused_plainly(
    gateway: LiveGateway, params: dict[str, Any], status: int, error: str
) -> None:
    async with gateway.midturn_client(ADMIN_TOKEN) as admin:
        session = await admin.create_session()
    async with gateway.client(session.answer_token) as raw:
        response = await raw.get(f"/v1/sessions/{session.session_id}/history", params=params)
    assert response.status_code == status, response.text
    assert response.json()["error"] == error and response.json()["message"]


@pytest.mark.parametrize(
    "context",
    [
        {"agent": "bot", "mood": "curious"},
        {"agent": ["not", "text"]},
        {"tool": {"input": "no name"}},
        {"tool": {"name": "   "}},
        "release-bot",
    ],
)
async def test_a_malformed_context_is_refused_and_nothing_is_parked(
    gateway: LiveGateway, context: Any
) -> None:
    async with gateway.midturn_client(ADMIN_TOKEN) as admin:
        session = await admin.create_session()
    sid = session.session_id
    async with gateway.client(session.agent_token) as raw:
        ask = await raw.post(
            f"/v1/sessions/{sid}/asks",
            json={
                "tool_input": {"questions": [{"question": "Go?", "options": ["Yes", "No"]}]},
                "context": context,
            },
        )
        permission = await raw.post(
            f"/v1/sessions/{sid}/permissions",
            json={"tool": "bash", "summary": "ls", "context": context},
        )
        queue = await raw.get(f"/v1/sessions/{sid}/interactions")
    for response in (ask, permission):
        assert response.status_code == 422, response.text
        assert response.json()["error"] == "invalid_request"
        assert any(p["path"].startswith("body.context") for p in response.json()["problems"])
    assert queue.json()["interactions"] == []


async def test_long_context_text_is_cut_and_an_empty_one_is_null(gateway: LiveGateway) -> None:
    async with gateway.midturn_client(ADMIN_TOKEN) as admin:
        session = await admin.create_session()
    ask = {"questions": [{"question": "Go?", "options": ["Yes", "No"]}]}
    async with AsyncClient(gateway.url, session.agent_token) as agent:
        long, _ = await agent.ask(
            session.session_id,
            ask,
            context={
                "agent": "a\u202eb " * 100,
                "doing": "word " * 1000,
                "tool": {"name": "t", "input": "x" * 5000},
            },
        )
        empty, _ = await agent.ask(session.session_id, ask, context={"agent": "  ", "doing": ""})
    context = long.context
    assert context is not None and context.agent is not None and context.doing is not None
    assert len(context.agent) <= 80 and context.agent.endswith("…")
    assert "\u202e" in context.agent  # kept for the surfaces, which strip it on screen
    assert len(context.doing) <= 1000 and context.doing.endswith("word…")
    assert context.tool is not None and len(context.tool.input or "") <= 1000
    assert empty.context is None


async def test_the_blocking_client_reads_the_label_the_history_and_the_export(
    gateway: LiveGateway,
) -> None:
    one_question = {"questions": [{"question": "Go ahead?", "options": ["Yes", "No"]}]}

    def work() -> tuple[Any, list[Any], str, Any]:
        with Client(gateway.url, ADMIN_TOKEN) as admin:
            made = admin.create_session({"title": "Blocking"})
        sid = made.session_id
        with (
            Client(gateway.url, made.agent_token) as agent,
            Client(gateway.url, made.answer_token) as person,
        ):
            parked, _ = agent.ask(sid, one_question, context={"agent": "sync-bot"})
            person.answer(parked.id, "Yes")
            return (
                person.session(sid),
                list(person.iter_history(sid, page_size=1)),
                person.export_history(sid),
                person.history_page(sid, query="no-such-word"),
            )

    label, entries, text, nothing = await asyncio.to_thread(work)
    assert label.title == "Blocking"
    assert [(e.status, e.context.agent, e.questions[0].answer) for e in entries] == [
        ("answered", "sync-bot", "Yes")
    ]
    assert json.loads(text)["id"] == entries[0].id
    assert nothing.entries == () and nothing.next_cursor is None
