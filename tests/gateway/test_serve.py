"""`serve`: the admin token, the announcement, a clean stop on SIGTERM/SIGINT, and
pending asks that survive a restart on the SQLite file, still answerable."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import sys
from pathlib import Path

import httpx
import pytest

from midturn.gateway._serve import admin_token_for, data_dir_for

from .conftest import ANSWER, ASK, SAFETY_S, Session, StartGateway, create_ask


async def test_pending_asks_survive_a_restart_and_stay_answerable(
    start_gateway: StartGateway, db_url: str
) -> None:
    first = start_gateway(db_url)
    async with first.client() as admin:
        session = Session(**(await admin.post("/v1/sessions", json={})).json())
    asks = [await create_ask(first, session, f"call-{n}") for n in range(3)]
    await asyncio.to_thread(first.stop)

    second = start_gateway(db_url)
    async with (
        second.client(session.answer_token) as answerer,
        second.client(session.agent_token) as agent,
    ):
        queue = await answerer.get(f"/v1/sessions/{session.session_id}/interactions")
        assert [i["id"] for i in queue.json()["interactions"]] == [a["id"] for a in asks]
        again = await agent.post(
            f"/v1/sessions/{session.session_id}/asks",
            json={"tool_input": ASK, "tool_call_id": "call-0", "turn_id": "turn-1"},
        )
        answered = await answerer.post(f"/v1/asks/{asks[0]['id']}/answer", json=ANSWER)
        read = await agent.get(f"/v1/asks/{asks[0]['id']}", params={"wait": 5})

    assert (again.status_code, again.json()["interaction"]["id"]) == (200, asks[0]["id"])
    assert answered.status_code == 200
    assert read.json()["interaction"]["status"] == "answered"


def test_the_admin_token_is_generated_once_with_mode_0600(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MIDTURN_TOKEN", raising=False)
    token, generated = admin_token_for(tmp_path / "data")
    again, generated_again = admin_token_for(tmp_path / "data")
    mode = stat.S_IMODE((tmp_path / "data" / "admin_token").stat().st_mode)
    assert (generated, generated_again) == (True, False)
    assert again == token and len(token) > 40
    assert mode == 0o600


def test_midturn_token_and_the_argument_take_precedence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIDTURN_TOKEN", "from-env")
    assert admin_token_for(tmp_path) == ("from-env", False)
    assert admin_token_for(tmp_path, "from-arg") == ("from-arg", False)
    assert not (tmp_path / "admin_token").exists()


def test_the_data_folder_is_the_sqlite_files_folder(tmp_path: Path) -> None:
    assert data_dir_for(f"sqlite:///{tmp_path}/x/m.db") == (tmp_path / "x").resolve()


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
async def test_serve_prints_the_inbox_url_and_stops_cleanly_on_a_signal(
    tmp_path: Path, stop_signal: signal.Signals
) -> None:
    db = f"sqlite:///{tmp_path / 'data' / 'midturn.db'}"
    env = {k: v for k, v in os.environ.items() if k != "MIDTURN_TOKEN"}
    env["PYTHONUNBUFFERED"] = "1"

    async def start() -> tuple[asyncio.subprocess.Process, list[str]]:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "midturn.gateway",
            "--db",
            db,
            "--port",
            "0",
            "--access-log",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
        assert process.stdout is not None
        lines = []
        while not any(line.startswith("web inbox: ") for line in lines):
            line = (await asyncio.wait_for(process.stdout.readline(), SAFETY_S)).decode()
            assert line, "the gateway exited before it listened"
            lines.append(line.strip())
        return process, lines

    process, lines = await start()
    url = lines[0].removeprefix("midturn gateway on ").split()[0]
    inbox = lines[-1].removeprefix("web inbox: ")
    token = (tmp_path / "data" / "admin_token").read_text().strip()
    assert inbox == f"{url}/#token={token}"
    assert "new admin token saved" in lines[0]

    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {token}"}) as h:
        session = (await h.post("/v1/sessions", json={})).json()
        agent = {"Authorization": f"Bearer {session['agent_token']}"}
        created = await h.post(
            f"/v1/sessions/{session['session_id']}/asks", json={"tool_input": ASK}, headers=agent
        )
    process.send_signal(stop_signal)
    code = await asyncio.wait_for(process.wait(), SAFETY_S)
    _, errors = await process.communicate()
    assert code == 0, errors.decode()
    assert b"Traceback" not in errors
    for secret in (token, session["agent_token"], session["answer_token"]):
        assert secret.encode() not in errors  # logs never carry a token
    access = [json.loads(line) for line in errors.decode().splitlines() if line.startswith("{")]
    created_line = next(
        line for line in access if line.get("status") == 201 and "asks" in line["path"]
    )
    assert created_line["route"] == "/v1/sessions/{session_id}/asks"
    assert created_line["role"] == "agent" and created_line["method"] == "POST"
    assert set(created_line) >= {"time", "level", "duration_ms"}

    process, lines = await start()
    assert "new admin token" not in lines[0]
    url = lines[0].removeprefix("midturn gateway on ").split()[0]
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {token}"}) as h:
        inbox_now = (await h.get("/v1/inbox")).json()["interactions"]
    process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(process.wait(), SAFETY_S) == 0
    assert [i["id"] for i in inbox_now] == [created.json()["interaction"]["id"]]
    assert inbox_now[0]["status"] == "pending"


def test_a_started_gateway_keeps_its_start_out_of_the_collectors_full_passes(
    start_gateway: StartGateway, db_url: str
) -> None:
    """A full collection walks every tracked object: the start's (modules, the app,
    its models) are frozen once the gateway listens, and the youngest generation is
    collected rarely enough that a request's objects die before they are promoted."""
    import gc

    start_gateway(db_url)
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold()[0] >= 20_000
