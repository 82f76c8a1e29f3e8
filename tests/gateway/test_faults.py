"""The fault suite: a real `midturn serve` under client threads (asks, waits, answers, an
event-stream follower), SIGKILLed and restarted several times, on SQLite and on
PostgreSQL. Afterwards every ask a client tried to create is either pending and
answerable or settled exactly once, every answer landed on its own ask, and the follower
— which reconnects with `Last-Event-ID` after every kill — saw every event in the log,
once, in order. Bounded: a few seconds per backend.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests._asks import ASK
from tests._postgres import fresh_schema
from tests._servers import SAFETY_S, _announced_url

from midturn.runtime._events import SETTLE_EVENT_TYPES
from midturn.store import open_store

pytestmark = pytest.mark.slow

ADMIN = "admin-token-for-the-fault-suite-0123"
KILLS = 3
ASKS_PER_ROUND = 5  # asks created between two kills, at least
ASKERS = 2


class Cluster:
    """The one `midturn serve` of the test, restarted after each SIGKILL. Clients read its
    current URL; a client whose server died waits for the next one."""

    def __init__(self, db_url: str, tmp_path: Path, stack: tuple[str, ...] = ()) -> None:
        self.db_url = db_url
        self.stack = stack  # `midturn serve --loop ... --http ...`
        self.tmp_path = tmp_path
        self.generation = 0
        self.url = ""
        self.stopping = threading.Event()
        self.changed = threading.Condition()
        self.process: subprocess.Popen[bytes] | None = None
        self.problems: list[str] = []  # 5xx answers, unexpected statuses
        self._local = threading.local()  # each thread's client (one connection pool)

    def start(self) -> None:
        log = self.tmp_path / f"serve-{self.generation}.log"
        env = {**os.environ, "MIDTURN_TOKEN": ADMIN, "PYTHONUNBUFFERED": "1"}
        env["MIDTURN_HOME"] = str(self.tmp_path / "home")
        command = [sys.executable, "-m", "midturn.cli", "serve", "--db", self.db_url]
        with log.open("wb") as errors:
            process = subprocess.Popen(
                [*command, "--port", "0", *self.stack],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=errors,
                env=env,
            )
        url = _announced_url(process, log)
        with self.changed:
            self.process, self.url = process, url
            self.generation += 1
            self.changed.notify_all()

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(SAFETY_S)
        assert self.process.stdout is not None
        self.process.stdout.close()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(SAFETY_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            assert self.process.stdout is not None
            self.process.stdout.close()

    def close_client(self) -> None:
        client = getattr(self._local, "client", None)
        if client is not None:
            self._local.client = None
            client.close()

    def worker(self, target: Callable[..., None], *args: Any) -> threading.Thread:
        """A client thread running `target(*args)`, closing its client at the end."""

        def run() -> None:
            try:
                target(*args)
            finally:
                self.close_client()

        return threading.Thread(target=run, name=target.__name__, daemon=True)

    def current(self) -> tuple[int, str]:
        with self.changed:
            return self.generation, self.url

    def after_failure(self, generation: int) -> None:
        """A request to server `generation` failed: wait (bounded) for its successor,
        unless the test is ending."""
        with self.changed:
            if not self.changed.wait_for(
                lambda: self.generation != generation or self.stopping.is_set(), SAFETY_S
            ):
                raise AssertionError("no server came back after a kill")

    def call(self, method: str, path: str, token: str = ADMIN, **options: Any) -> Any:
        """One request to the current server, retried on the next one after a kill;
        None once the test is ending."""
        while not self.stopping.is_set():
            generation, url = self.current()
            client = getattr(self._local, "client", None)
            if client is None:
                client = self._local.client = httpx.Client(timeout=SAFETY_S)
            try:
                response = client.request(
                    method, url + path, headers={"Authorization": f"Bearer {token}"}, **options
                )
            except httpx.TransportError:
                self.after_failure(generation)
                continue
            if response.status_code >= 500:
                self.problems.append(f"{method} {path}: {response.status_code} {response.text}")
            return response
        return None


def _asker(cluster: Cluster, session: dict[str, str], name: str, tried: list[str]) -> None:
    """Create asks (each tool call id noted before it is sent), wait on each briefly."""
    n = 0
    while not cluster.stopping.is_set():
        tool_call_id = f"{name}-{n}"
        tried.append(tool_call_id)
        created = cluster.call(
            "POST",
            f"/v1/sessions/{session['session_id']}/asks",
            session["agent_token"],
            json={"tool_input": ASK, "tool_call_id": tool_call_id, "turn_id": tool_call_id},
        )
        if created is None:
            return
        if created.status_code not in (200, 201):
            cluster.problems.append(f"create {tool_call_id}: {created.status_code}")
            return
        ask_id = created.json()["interaction"]["id"]
        with cluster.changed:
            cluster.changed.notify_all()  # the killer counts created asks
        cluster.call("GET", f"/v1/asks/{ask_id}", session["agent_token"], params={"wait": 0.2})
        n += 1


def _answer_for(tool_call_id: str) -> dict[str, Any]:
    """The answer meant for the ask of `tool_call_id`: it names that tool call."""
    return {"answers": {"db": "SQLite", "name": tool_call_id}}


def _answerer(cluster: Cluster) -> None:
    """Answer pending asks from the inbox with the answer meant for each, whenever an
    asker has created one (or every half second)."""
    while not cluster.stopping.is_set():
        with cluster.changed:
            cluster.changed.wait(0.5)
        inbox = cluster.call("GET", "/v1/inbox")
        if inbox is None:
            return
        for item in inbox.json()["interactions"][:5]:
            answered = cluster.call(
                "POST", f"/v1/asks/{item['id']}/answer", json=_answer_for(item["tool_call_id"])
            )
            if answered is not None and answered.status_code not in (200, 409):
                cluster.problems.append(f"answer {item['id']}: {answered.status_code}")


def _follower(cluster: Cluster, seen: list[int]) -> None:
    """Follow every event, reconnecting with `Last-Event-ID` after each failure."""
    while not cluster.stopping.is_set():
        generation, url = cluster.current()
        resume = str(seen[-1] if seen else 0)
        headers = {"Authorization": f"Bearer {ADMIN}", "Last-Event-ID": resume}
        try:
            with httpx.stream(
                "GET", f"{url}/v1/events", headers=headers, timeout=httpx.Timeout(SAFETY_S, read=1)
            ) as response:
                for line in response.iter_lines():
                    if line.startswith("data:"):
                        seen.append(json.loads(line.removeprefix("data:"))["id"])
                    if cluster.stopping.is_set():
                        return
        except httpx.ReadTimeout:
            continue  # a quiet second: reconnect from where it was
        except httpx.TransportError:
            cluster.after_failure(generation)


def run_faults(db_url: str, tmp_path: Path, stack: tuple[str, ...] = ()) -> None:
    cluster = Cluster(db_url, tmp_path, stack)
    cluster.start()
    session = cluster.call("POST", "/v1/sessions", json={}).json()
    tried: dict[str, list[str]] = {f"asker{k}": [] for k in range(ASKERS)}
    seen: list[int] = []
    threads = [cluster.worker(_asker, cluster, session, name, ids) for name, ids in tried.items()]
    threads += [cluster.worker(_answerer, cluster), cluster.worker(_follower, cluster, seen)]
    try:
        for thread in threads:
            thread.start()
        for _ in range(KILLS):
            before = sum(map(len, tried.values()))
            with cluster.changed:
                cluster.changed.wait_for(
                    lambda b=before: sum(map(len, tried.values())) >= b + ASKS_PER_ROUND,
                    SAFETY_S,
                )
            cluster.kill()
            cluster.start()
        cluster.stopping.set()
        with cluster.changed:
            cluster.changed.notify_all()
        for thread in threads:
            thread.join(SAFETY_S)
            assert not thread.is_alive(), f"{thread.name} did not finish"
        cluster.stopping.clear()
        _check(cluster, session, [tid for ids in tried.values() for tid in ids], seen)
    finally:
        cluster.stopping.set()
        cluster.close_client()
        cluster.stop()
    assert not cluster.problems, cluster.problems


def _check(cluster: Cluster, session: dict[str, str], tried: list[str], seen: list[int]) -> None:
    """Every tried ask: pending and answerable, or settled once with its own answer."""
    assert len(tried) >= KILLS * ASKS_PER_ROUND
    asks: dict[str, dict[str, Any]] = {}
    for tool_call_id in tried:
        # Re-creating is idempotent: it finds the ask if the killed server stored it.
        again = cluster.call(
            "POST",
            f"/v1/sessions/{session['session_id']}/asks",
            session["agent_token"],
            json={"tool_input": ASK, "tool_call_id": tool_call_id, "turn_id": tool_call_id},
        )
        interaction = again.json()["interaction"]
        if interaction["status"] == "pending":
            answered = cluster.call(
                "POST", f"/v1/asks/{interaction['id']}/answer", json=_answer_for(tool_call_id)
            )
            assert answered.status_code == 200, answered.text
            interaction = answered.json()["interaction"]
        assert interaction["status"] == "answered", interaction
        assert interaction["result"]["answers"][1]["answer"] == tool_call_id  # its own answer
        asks[interaction["id"]] = interaction
    assert len(asks) == len(tried)  # one ask per tool call id, none merged

    events = asyncio.run(_all_events(cluster.db_url))
    ids = [event["id"] for event in events]
    settles: dict[str, int] = {}
    for event in events:
        if event["type"] in SETTLE_EVENT_TYPES:
            settles[event["interaction_id"]] = settles.get(event["interaction_id"], 0) + 1
    assert settles == dict.fromkeys(asks, 1)  # settled exactly once each

    # The follower, resuming after every kill, saw every event in the log, once, in
    # order. (It ran until the test stopped it; what came after is the final checks'.)
    assert seen == sorted(set(seen)), "the follower saw an event twice or out of order"
    assert seen == ids[: len(seen)], "the follower missed events a Last-Event-ID reader needs"
    assert len(seen) > 0


async def _all_events(db_url: str) -> list[dict[str, Any]]:
    async with open_store(db_url) as store:
        events: list[dict[str, Any]] = []
        while page := await store.read_events(events[-1]["id"] if events else 0):
            events.extend(event.model_dump(mode="json") for event in page)
        return events


@pytest.fixture(params=["sqlite", "postgres"])
async def fault_db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'data' / 'midturn.db'}"
    else:
        async with fresh_schema("t_faults", "the fault suite must run on PostgreSQL") as url:
            yield url


# the plain stack and the fastest one (httptools, uvloop: installed with `dev`, never
# skipped)
STACKS = {
    "asyncio-h11": ("--loop", "asyncio", "--http", "h11"),
    "uvloop-httptools": ("--loop", "uvloop", "--http", "httptools"),
}


@pytest.mark.parametrize("stack", list(STACKS))
async def test_sigkill_and_restart_under_load_loses_nothing_and_settles_once(
    fault_db: str, tmp_path: Path, stack: str
) -> None:
    await asyncio.to_thread(run_faults, fault_db, tmp_path, STACKS[stack])
