"""`midturn mcp` as a stdio subprocess, driven by the real `mcp` client; a client with
no elicitation is answered by a second party through a real gateway on the same store."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from tests._servers import start_gateway
from tests.mcp_server.conftest import ASK, Person, accept, within

from midturn import open_store
from midturn.testing.pilot import pilot_env

MIDTURN = str(Path(sys.executable).with_name("midturn"))
ADMIN = "test-admin-token-0123456789abcdef"


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[TextIO]:
    with (tmp_path / "mcp.log").open("w") as log:
        yield log


def _transport(db_url: str, errlog: TextIO, *extra: str) -> Any:
    params = StdioServerParameters(command=MIDTURN, args=["mcp", "--store", db_url, *extra])
    return stdio_client(params, errlog=errlog)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_stdio_server_asks_through_the_client(
    db_url: str, errlog: TextIO, mode: str
) -> None:
    person = Person([accept({"db": "SQLite", "name": "svc"})])
    async with Client(_transport(db_url, errlog), elicitation_callback=person, mode=mode) as client:
        names = {tool.name for tool in (await within(client.list_tools())).tools}
        result = await within(client.call_tool("ask_user_question", ASK))
    assert "ask_user_question" in names
    assert result.structured_content is not None
    assert [a["answer"] for a in result.structured_content["answers"]] == ["SQLite", "svc"]
    async with open_store(db_url) as store:
        (stored,) = await store.list_interactions(session_id="mcp")
    assert (stored.status, stored.settled_by) == ("answered", "mcp")


async def _answer_through_gateway(base_url: str) -> str:
    headers = {"Authorization": f"Bearer {ADMIN}"}
    async with httpx.AsyncClient(base_url=base_url, headers=headers) as http:
        for _ in range(2000):  # a bounded poll of the inbox, as a person would look
            pending = (await http.get("/v1/inbox")).json()["interactions"]
            if pending:
                (ask,) = pending
                answered = await http.post(
                    f"/v1/asks/{ask['id']}/answer", json={"answers": {"db": "PostgreSQL"}}
                )
                assert answered.status_code == 200, answered.text
                return str(ask["id"])
            await asyncio.sleep(0.01)
    raise AssertionError("the MCP ask never reached the gateway's inbox")


async def test_no_elicitation_answered_through_the_gateway(db_url: str, errlog: TextIO) -> None:
    gateway = start_gateway(db_url, ADMIN)
    try:
        async with Client(_transport(db_url, errlog, "--wait-bound", "30")) as client:
            answering = asyncio.ensure_future(_answer_through_gateway(gateway.url))
            result = await within(client.call_tool("ask_user_question", ASK))
            interaction_id = await within(answering)
    finally:
        gateway.stop()
    assert result.structured_content is not None
    assert result.structured_content["answers"][0]["answer"] == "PostgreSQL"
    async with open_store(db_url) as store:
        (stored,) = await store.list_interactions(session_id="mcp")
    assert stored.id == interaction_id
    assert stored.settled_by == "admin"


def test_a_store_that_does_not_open_leaves_no_state_key(tmp_path: Path) -> None:
    """`midturn mcp` opens the store before it makes its `requestState` key: a start that
    fails on the store (here a file that is not a database) exits 2 and writes nothing."""
    (tmp_path / "midturn.db").write_bytes(b"not a database " * 100)
    done = subprocess.run(
        [MIDTURN, "mcp", "--store", f"sqlite:///{tmp_path / 'midturn.db'}"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=pilot_env(),
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "is not a SQLite database" in done.stderr
    assert not (tmp_path / "mcp_state_key").exists()
