"""Several real gateway processes on one PostgreSQL database (docs/replicas.md): what one
replica stores, the others see and are woken by; settling is exactly-once across them;
an agent survives the death of its replica; pending asks survive a restart of all.

Each test starts `midturn serve` processes (on port 0; each announces its address) on a
fresh schema of the test database, dropped afterwards. Without a PostgreSQL server these
tests skip, except under `CI=true`, where they fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests._postgres import fresh_schema

ADMIN_TOKEN = "replica-test-admin-token"
SAFETY_S = 30.0

ASK = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use?",
            "options": [
                {"label": "PostgreSQL", "description": "A server, several replicas"},
                {"label": "SQLite", "description": "One file, no server"},
            ],
        },
        {"id": "name", "question": "What should the service be called?", "kind": "text"},
    ]
}

# `midturn serve --db URL --port 0`, run by this interpreter (the venv's `midturn`
# script need not be on PATH); port 0 picks a free port, which the gateway announces.
_MIDTURN = "import sys; from midturn.cli import main; sys.exit(main())"


@dataclass
class Replica:
    process: asyncio.subprocess.Process
    url: str
    log: Path

    def client(self, token: str, **options: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self.url,
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(SAFETY_S + 70),
            **options,
        )


Launch = Callable[[], Awaitable[Replica]]


@pytest.fixture
async def db_url() -> AsyncIterator[str]:
    """The URL of a fresh schema, dropped after the test."""
    async with fresh_schema("t_replicas", "the replica tests must run") as url:
        yield url


@pytest.fixture
async def launch(db_url: str, tmp_path: Path) -> AsyncIterator[Launch]:
    """Start a gateway process on the test's database; every one started is stopped at
    the end of the test."""
    started: list[Replica] = []

    async def start() -> Replica:
        log = tmp_path / f"replica-{len(started)}.log"
        env = {
            **os.environ,
            "MIDTURN_TOKEN": ADMIN_TOKEN,
            "MIDTURN_HOME": str(tmp_path / "home"),
            "PYTHONUNBUFFERED": "1",
        }
        with log.open("wb") as errors:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                _MIDTURN,
                "serve",
                "--db",
                db_url,
                "--port",
                "0",
                stdout=asyncio.subprocess.PIPE,
                stderr=errors,
                env=env,
            )
        replica = Replica(process, "", log)
        started.append(replica)
        replica.url = await asyncio.wait_for(_announced_url(replica), SAFETY_S)
        return replica

    yield start
    for replica in started:
        await _stop(replica.process)


async def _announced_url(replica: Replica) -> str:
    assert replica.process.stdout is not None
    while line := (await replica.process.stdout.readline()).decode():
        if line.startswith("midturn gateway on "):
            return line.removeprefix("midturn gateway on ").split()[0]
    raise AssertionError(f"the gateway exited before it listened:\n{replica.log.read_text()}")


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), 15)
        except TimeoutError:
            process.kill()
            await process.wait()


async def new_session(replica: Replica) -> dict[str, str]:
    async with replica.client(ADMIN_TOKEN) as admin:
        response = await admin.post("/v1/sessions", json={})
    assert response.status_code == 201, response.text
    session: dict[str, str] = response.json()
    return session


async def create_ask(
    replica: Replica, session: dict[str, str], tool_call_id: str = "call-1"
) -> dict[str, Any]:
    async with replica.client(session["agent_token"]) as agent:
        response = await agent.post(
            f"/v1/sessions/{session['session_id']}/asks",
            json={"tool_input": ASK, "tool_call_id": tool_call_id, "turn_id": "turn-1"},
        )
    assert response.status_code in (200, 201), response.text
    interaction: dict[str, Any] = response.json()["interaction"]
    return interaction


async def until_waiting(replica: Replica, count: int) -> None:
    """Until `count` long polls are held by `replica` (its metrics say so)."""
    async with httpx.AsyncClient(base_url=replica.url) as client:
        for _ in range(2000):
            metrics = (await client.get("/metrics")).text
            if f"midturn_waiting_requests {count}" in metrics.splitlines():
                return
    raise AssertionError(f"{replica.url} never held {count} long poll(s)")


class EventStream:
    """A session's server-sent events from one replica, from the start of the log, read
    by a task into a queue (so the test awaits the event it needs)."""

    def __init__(self, replica: Replica, token: str, session_id: str) -> None:
        self._client = replica.client(token)
        self._path = f"/v1/sessions/{session_id}/events"
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> EventStream:
        self._task = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        await self._client.aclose()

    async def _read(self) -> None:
        async with self._client.stream("GET", self._path) as response:
            assert response.status_code == 200
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    self._queue.put_nowait(json.loads(line.removeprefix("data:")))

    async def until(self, event_type: str, interaction_id: str) -> dict[str, Any]:
        """The next event of `event_type` about `interaction_id` (others are skipped)."""

        async def find() -> dict[str, Any]:
            while True:
                event = await self._queue.get()
                if (event["type"], event["interaction_id"]) == (event_type, interaction_id):
                    return event

        return await asyncio.wait_for(find(), SAFETY_S)


ANSWER = {"answers": {"db": "PostgreSQL", "name": "billing-api"}}


# -- tests ---------------------------------------------------------------------------------


async def test_an_answer_through_b_wakes_the_waiter_and_the_stream_on_a(launch: Launch) -> None:
    replica_a, replica_b = await asyncio.gather(launch(), launch())
    session = await new_session(replica_a)
    ask = await create_ask(replica_a, session)

    async with (
        EventStream(replica_a, session["answer_token"], session["session_id"]) as stream,
        EventStream(replica_b, session["answer_token"], session["session_id"]) as stream_b,
        replica_a.client(session["agent_token"]) as agent,
    ):
        requested = await stream.until("user_question_requested", ask["id"])
        assert await stream_b.until("user_question_requested", ask["id"]) == requested
        waiter = asyncio.create_task(agent.get(f"/v1/asks/{ask['id']}", params={"wait": 60}))
        await until_waiting(replica_a, 1)

        async with replica_b.client(session["answer_token"]) as answerer:
            answered = await answerer.post(f"/v1/asks/{ask['id']}/answer", json=ANSWER)
        assert answered.status_code == 200, answered.text
        assert answered.json()["duplicate"] is False

        waited = await asyncio.wait_for(waiter, SAFETY_S)
        announced = await stream.until("user_question_answered", ask["id"])
        assert await stream_b.until("user_question_answered", ask["id"]) == announced

    assert waited.status_code == 200
    body = waited.json()
    assert body["interaction"]["status"] == "answered"
    assert body["interaction"]["result"] == answered.json()["result"]
    assert body["output"] is not None and "billing-api" in body["output"]["text"]
    assert announced["id"] > requested["id"]
    assert announced["data"]["interaction"]["result"] == answered.json()["result"]


async def test_of_200_concurrent_answers_split_over_two_replicas_exactly_one_is_accepted(
    launch: Launch,
) -> None:
    replica_a, replica_b = await asyncio.gather(launch(), launch())
    session = await new_session(replica_a)
    ask = await create_ask(replica_b, session)
    limits = httpx.Limits(max_connections=100)

    async with (
        replica_a.client(session["answer_token"], limits=limits) as via_a,
        replica_b.client(session["answer_token"], limits=limits) as via_b,
    ):
        responses = await asyncio.gather(
            *(
                (via_a if n % 2 else via_b).post(
                    f"/v1/asks/{ask['id']}/answer",
                    json={"answers": {"db": "SQLite", "name": f"service-{n}"}},
                )
                for n in range(200)
            )
        )

    accepted = [response for response in responses if response.status_code == 200]
    refused = [response for response in responses if response.status_code == 409]
    assert len(accepted) == 1, [response.text for response in accepted]
    assert len(refused) == 199
    result = accepted[0].json()["result"]
    assert all(response.json()["interaction"]["result"] == result for response in refused)
    async with replica_a.client(session["agent_token"]) as agent:
        stored = (await agent.get(f"/v1/asks/{ask['id']}")).json()["interaction"]
        queue = await agent.get(f"/v1/sessions/{session['session_id']}/interactions")
    assert stored["result"] == result
    assert queue.json()["interactions"] == []


async def test_an_agent_whose_replica_is_killed_retries_on_the_other_and_gets_the_answer(
    launch: Launch,
) -> None:
    replica_a, replica_b = await asyncio.gather(launch(), launch())
    session = await new_session(replica_a)
    ask = await create_ask(replica_a, session)

    async with replica_a.client(session["agent_token"]) as agent_on_a:
        waiter = asyncio.create_task(agent_on_a.get(f"/v1/asks/{ask['id']}", params={"wait": 60}))
        await until_waiting(replica_a, 1)
        replica_a.process.send_signal(signal.SIGKILL)
        with pytest.raises(httpx.TransportError):
            await asyncio.wait_for(waiter, SAFETY_S)

    # The agent retries its call on the surviving replica: the same tool call id finds
    # the same ask, and its wait returns the answer given meanwhile.
    again = await create_ask(replica_b, session)
    assert again["id"] == ask["id"] and again["status"] == "pending"
    async with replica_b.client(session["agent_token"]) as agent_on_b:
        waiter = asyncio.create_task(agent_on_b.get(f"/v1/asks/{ask['id']}", params={"wait": 60}))
        await until_waiting(replica_b, 1)
        async with replica_b.client(session["answer_token"]) as answerer:
            answered = await answerer.post(f"/v1/asks/{ask['id']}/answer", json=ANSWER)
        waited = await asyncio.wait_for(waiter, SAFETY_S)

    assert answered.status_code == 200, answered.text
    assert waited.json()["interaction"]["status"] == "answered"
    assert waited.json()["interaction"]["result"] == answered.json()["result"]


async def test_pending_asks_stay_answerable_after_every_replica_restarts(
    launch: Launch,
) -> None:
    first_a, first_b = await asyncio.gather(launch(), launch())
    session = await new_session(first_a)
    asks = [
        await create_ask(replica, session, f"call-{n}")
        for n, replica in enumerate((first_a, first_b))
    ]
    await asyncio.gather(_stop(first_a.process), _stop(first_b.process))

    replica_a, replica_b = await asyncio.gather(launch(), launch())
    async with (
        replica_a.client(session["agent_token"]) as agent,
        replica_b.client(session["answer_token"]) as answerer,
    ):
        queue = await answerer.get(f"/v1/sessions/{session['session_id']}/interactions")
        assert [item["id"] for item in queue.json()["interactions"]] == [a["id"] for a in asks]
        for ask in asks:
            waiter = asyncio.create_task(agent.get(f"/v1/asks/{ask['id']}", params={"wait": 60}))
            await until_waiting(replica_a, 1)
            answered = await answerer.post(f"/v1/asks/{ask['id']}/answer", json=ANSWER)
            assert answered.status_code == 200, answered.text
            waited = await asyncio.wait_for(waiter, SAFETY_S)
            assert waited.json()["interaction"]["status"] == "answered"


async def test_a_surviving_replica_times_out_the_asks_of_a_killed_one(launch: Launch) -> None:
    replica_a, replica_b = await asyncio.gather(launch(), launch())
    session = await new_session(replica_a)
    async with replica_a.client(session["agent_token"]) as agent:
        created = await agent.post(
            f"/v1/sessions/{session['session_id']}/asks",
            json={"tool_input": {**ASK, "timeout_s": 1}, "tool_call_id": "call-1"},
        )
    assert created.status_code == 201, created.text
    ask = created.json()["interaction"]
    replica_a.process.send_signal(signal.SIGKILL)
    await replica_a.process.wait()

    async with replica_b.client(session["agent_token"]) as agent:
        waited = await agent.get(f"/v1/asks/{ask['id']}", params={"wait": 5})

    assert waited.json()["interaction"]["status"] == "timed_out"


async def test_stopping_a_turn_through_b_cancels_what_a_parked_and_wakes_its_waiter(
    launch: Launch,
) -> None:
    replica_a, replica_b = await asyncio.gather(launch(), launch())
    session = await new_session(replica_a)
    ask = await create_ask(replica_a, session)

    async with replica_a.client(session["agent_token"]) as agent:
        waiter = asyncio.create_task(agent.get(f"/v1/asks/{ask['id']}", params={"wait": 60}))
        await until_waiting(replica_a, 1)
        async with replica_b.client(session["answer_token"]) as answerer:
            stopped = await answerer.post(f"/v1/sessions/{session['session_id']}/turns/turn-1/stop")
        waited = await asyncio.wait_for(waiter, SAFETY_S)

    assert stopped.status_code == 200, stopped.text
    assert [item["id"] for item in stopped.json()["cancelled"]] == [ask["id"]]
    assert waited.json()["interaction"]["status"] == "cancelled"


async def test_a_permission_decided_through_b_reaches_a_and_allow_for_turn_holds_on_a(
    launch: Launch,
) -> None:
    replica_a, replica_b = await asyncio.gather(launch(), launch())
    session = await new_session(replica_a)
    request = {"tool": "shell", "summary": "make deploy", "risk": "high", "turn_id": "turn-1"}

    async with (
        replica_a.client(session["agent_token"]) as agent,
        replica_b.client(session["answer_token"]) as answerer,
    ):
        created = await agent.post(
            f"/v1/sessions/{session['session_id']}/permissions",
            json={**request, "tool_call_id": "call-1"},
        )
        assert created.status_code == 201, created.text
        permission = created.json()["interaction"]
        waiter = asyncio.create_task(
            agent.get(f"/v1/permissions/{permission['id']}", params={"wait": 60})
        )
        await until_waiting(replica_a, 1)
        decided = await answerer.post(
            f"/v1/permissions/{permission['id']}/decision", json={"decision": "allow_for_turn"}
        )
        waited = await asyncio.wait_for(waiter, SAFETY_S)
        # The same tool again in the same turn, asked through A: allowed without asking.
        again = await agent.post(
            f"/v1/sessions/{session['session_id']}/permissions",
            json={**request, "tool_call_id": "call-2"},
        )

    assert decided.status_code == 200, decided.text
    assert waited.json()["interaction"]["status"] == "allowed"
    assert waited.json()["interaction"]["decision"]["decision"] == "allow_for_turn"
    assert again.status_code == 201, again.text
    assert again.json()["interaction"]["status"] == "allowed"
    assert again.json()["interaction"]["decision"]["auto"] is True
