"""The later dialects through a live gateway: an ask posted with `dialect: "auto"` is read
as its product's shape, and the output the agent reads back is in that product's own
result shape."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.contract import _payloads as p

from .conftest import LiveGateway, Session

CASES = [
    ("gemini", p.GEMINI, {"answers": ["SQLite", "my-app", "Yes"]}),
    ("codex", p.CODEX, {"answers": {"database": "SQLite", "region": "Mars"}}),
    ("copilot", p.COPILOT, {"answers": {"Database": "PostgreSQL", "Name": None, "Features": [0]}}),
    ("deepagents", p.DEEPAGENTS, {"answers": ["SQLite", "billing-api"]}),
    (
        "mcp-elicitation",
        p.ELICITATION,
        {"answers": {"name": "Ada", "email": "ada@example.com", "subscribe": "Yes"}},
    ),
]
EXPECTED: dict[str, Any] = {
    "gemini": {"answers": {"0": "SQLite", "1": "my-app", "2": "Yes"}},
    "codex": {
        "answers": {
            "database": {"answers": ["SQLite"]},
            "region": {"answers": ["user_note: Mars"]},
        }
    },
    "copilot": {
        "answers": {
            "Database": {"selected": ["PostgreSQL"], "freeText": None, "skipped": False},
            "Name": {"selected": [], "freeText": None, "skipped": True},
            "Features": {"selected": ["Dark mode"], "freeText": None, "skipped": False},
        }
    },
    "deepagents": None,
    "mcp-elicitation": {
        "action": "accept",
        "content": {"name": "Ada", "email": "ada@example.com", "subscribe": "Yes"},
    },
}


@pytest.mark.parametrize(("dialect", "tool_input", "answer"), CASES)
async def test_an_auto_ask_reads_back_in_its_products_result_shape(
    gateway: LiveGateway, session: Session, dialect: str, tool_input: Any, answer: Any
) -> None:
    async with (
        gateway.client(session.agent_token) as agent,
        gateway.client(session.answer_token) as answerer,
    ):
        created = await agent.post(
            f"/v1/sessions/{session.session_id}/asks",
            json={"tool_input": tool_input, "tool_call_id": f"c-{dialect}", "dialect": "auto"},
        )
        assert created.status_code == 201, created.text
        interaction = created.json()["interaction"]
        assert interaction["dialect"] == dialect
        answered = await answerer.post(f"/v1/asks/{interaction['id']}/answer", json=answer)
        assert answered.status_code == 200, answered.text
        output = (await agent.get(f"/v1/asks/{interaction['id']}")).json()["output"]

    assert output["is_error"] is False
    assert output["data"] == EXPECTED[dialect]
    if dialect == "deepagents":
        assert output["text"] == (
            f"Q: {p.DB}\nA: SQLite\n\nQ: What should the service be called?\nA: billing-api"
        )
    else:
        assert json.loads(output["text"]) == EXPECTED[dialect]
