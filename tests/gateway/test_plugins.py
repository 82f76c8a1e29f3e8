"""A dialect and a store backend from a package outside midturn, found by entry point,
serve a real `midturn serve`: its store URL opens the package's backend, and an ask in
the package's dialect is parked, answered and rendered in that dialect."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import httpx
from tests._entry_points import BACKEND_SOURCE, DIALECT_SOURCE, POLL, write_distribution
from tests._servers import serve_process

TOKEN = "plugin-admin-token-0123456789abcdef"


def test_a_packages_dialect_and_store_serve_a_real_gateway(tmp_path: Path) -> None:
    root = write_distribution(
        tmp_path / "site",
        "midturn-poll-and-scratch",
        {
            "midturn.dialects": {"poll": "poll_dialect:PollDialect"},
            "midturn.stores": {"scratch": "scratch_store:factory"},
        },
        {"poll_dialect": DIALECT_SOURCE, "scratch_store": BACKEND_SOURCE},
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), *sys.path])}
    with (
        serve_process("scratch://team", TOKEN, tmp_path / "serve.log", env=env) as url,
        httpx.Client(base_url=url, timeout=20) as http,
    ):
        admin = {"Authorization": f"Bearer {TOKEN}"}
        session = http.post("/v1/sessions", headers=admin, json={}).json()
        agent = {"Authorization": f"Bearer {session['agent_token']}"}
        person = {"Authorization": f"Bearer {session['answer_token']}"}
        created = http.post(
            f"/v1/sessions/{session['session_id']}/asks",
            headers=agent,
            json={"tool_input": POLL, "dialect": "poll", "tool_call_id": "call_1"},
        )
        assert created.status_code == 201, created.text
        interaction = created.json()["interaction"]
        assert interaction["dialect"] == "poll"
        answered = http.post(f"/v1/asks/{interaction['id']}/answer", headers=person, json="SQLite")
        assert answered.status_code == 200, answered.text
        read = http.get(f"/v1/asks/{interaction['id']}", headers=agent).json()
        assert read["output"]["text"] == "POLL RESULT: SQLite"
        assert read["output"]["data"] == {"vote": "SQLite"}
        unknown = http.post(
            f"/v1/sessions/{session['session_id']}/asks",
            headers=agent,
            json={"tool_input": POLL, "dialect": "nope"},
        )
        assert unknown.status_code == 400
        assert "'poll'" in unknown.json()["message"]  # the package's dialect is listed
