"""Replica benchmark: the gateway round trip across two replicas on one PostgreSQL,
beside the same round trip on one replica, measured in the same run (goal: ≤ 1.5×).

    .venv/bin/python bench/replicas.py [--rounds 200] [--db postgresql://postgres@127.0.0.1:5432/test]

One round trip: an agent creates an ask through replica A and long-polls it there
(`GET /v1/asks/{id}?wait=60`); an answerer, following the session's event stream, sees
the `user_question_requested` event and posts the answer; the round trip ends when the
agent's long poll returns the answer.

- two replicas: the answerer's stream and answer go through replica B. The request
  crosses to B by NOTIFY, the answer back to A's waiter by NOTIFY.
- one replica (the anchor): the answerer's stream and answer go through A as well.

Both run against the same two processes on one fresh schema (dropped at the end), one
round of each in turn, so load and noise fall on both alike.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import asyncpg
import httpx

TOKEN = "bench-replicas-admin-token"
ASK = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use?",
            "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}],
        }
    ]
}
ANSWER = {"answers": {"db": "PostgreSQL"}}
# `midturn serve --db URL --port 0` run by this interpreter; port 0 picks a free port,
# which the gateway announces.
_MIDTURN = "import sys; from midturn.cli import main; sys.exit(main())"


async def start_replica(db_url: str, home: str) -> tuple[asyncio.subprocess.Process, str]:
    env = {**os.environ, "MIDTURN_TOKEN": TOKEN, "MIDTURN_HOME": home, "PYTHONUNBUFFERED": "1"}
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
        stderr=asyncio.subprocess.DEVNULL,  # the access log
        env=env,
    )
    assert process.stdout is not None
    while line := (await process.stdout.readline()).decode():
        if line.startswith("midturn gateway on "):
            return process, line.removeprefix("midturn gateway on ").split()[0]
    raise SystemExit(f"a replica exited before it listened (code {await process.wait()})")


@dataclass
class Answerer:
    """Follows a session's events on one replica and answers every new ask there."""

    client: httpx.AsyncClient
    session_id: str
    task: asyncio.Task[None] | None = None

    async def run(self) -> None:
        async for event in self.events():
            if event["type"] == "user_question_requested":
                interaction_id = event["interaction_id"]
                response = await self.client.post(f"/v1/asks/{interaction_id}/answer", json=ANSWER)
                response.raise_for_status()

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        url = f"/v1/sessions/{self.session_id}/events"
        async with self.client.stream("GET", url) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    yield json.loads(line.removeprefix("data:"))


async def new_session(base_url: str) -> dict[str, str]:
    async with httpx.AsyncClient(
        base_url=base_url, headers={"Authorization": f"Bearer {TOKEN}"}
    ) as admin:
        response = await admin.post("/v1/sessions", json={})
        response.raise_for_status()
        session: dict[str, str] = response.json()
        return session


async def round_trip(agent: httpx.AsyncClient, session_id: str) -> float:
    started = time.perf_counter()
    created = await agent.post(
        f"/v1/sessions/{session_id}/asks",
        json={"tool_input": ASK, "tool_call_id": uuid.uuid4().hex},
    )
    created.raise_for_status()
    interaction_id = created.json()["interaction"]["id"]
    waited = await agent.get(f"/v1/asks/{interaction_id}", params={"wait": 60})
    waited.raise_for_status()
    elapsed = time.perf_counter() - started
    status = waited.json()["interaction"]["status"]
    if status != "answered":
        raise SystemExit(f"round trip ended with status {status!r}, not 'answered'")
    return elapsed


def client(base_url: str, token: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=90
    )


async def measure(db_url: str, rounds: int, warmup: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as home:
        (proc_a, url_a), (proc_b, url_b) = await asyncio.gather(
            start_replica(db_url, home), start_replica(db_url, home)
        )
        try:
            modes = {"one replica": url_a, "two replicas": url_b}
            agents, answerers = {}, []
            for mode, answer_url in modes.items():
                session = await new_session(url_a)
                agents[mode] = (client(url_a, session["agent_token"]), session["session_id"])
                answerer = Answerer(
                    client(answer_url, session["answer_token"]), session["session_id"]
                )
                answerer.task = asyncio.create_task(answerer.run())
                answerers.append(answerer)
            times: dict[str, list[float]] = {mode: [] for mode in modes}
            for n in range(warmup + rounds):
                for mode in modes:
                    agent, session_id = agents[mode]
                    elapsed = await round_trip(agent, session_id)
                    if n >= warmup:
                        times[mode].append(elapsed)
            for answerer in answerers:
                assert answerer.task is not None
                answerer.task.cancel()
                await asyncio.gather(answerer.task, return_exceptions=True)
                await answerer.client.aclose()
            for agent, _ in agents.values():
                await agent.aclose()
            return times
        finally:
            for process in (proc_a, proc_b):
                process.send_signal(signal.SIGTERM)
            await asyncio.gather(proc_a.wait(), proc_b.wait())


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--db", default="postgresql://postgres@127.0.0.1:5432/test")
    arguments = parser.parse_args()
    schema = f"bench_replicas_{uuid.uuid4().hex[:8]}"
    try:
        times = await measure(f"{arguments.db}?schema={schema}", arguments.rounds, arguments.warmup)
    finally:
        connection = await asyncpg.connect(arguments.db)
        await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await connection.close()

    print(
        f"gateway round trip (ask via A, wait on A, SSE + answer via X), "
        f"{arguments.rounds} rounds each, interleaved"
    )
    print(f"{'':<14}{'median':>10}{'p90':>10}{'mean':>10}")
    for mode, values in times.items():
        print(
            f"{mode:<14}{statistics.median(values) * 1e3:>8.2f}ms"
            f"{quantile(values, 0.9) * 1e3:>8.2f}ms{statistics.fmean(values) * 1e3:>8.2f}ms"
        )
    anchor, tested = times["one replica"], times["two replicas"]
    median_ratio = statistics.median(tested) / statistics.median(anchor)
    p90_ratio = quantile(tested, 0.9) / quantile(anchor, 0.9)
    print(
        f"two replicas / one replica: median {median_ratio:.2f}x, p90 {p90_ratio:.2f}x "
        "(goal <= 1.5x)"
    )


if __name__ == "__main__":
    asyncio.run(main())
