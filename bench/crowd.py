"""A crowd on one process: many sessions, many parked asks, many open streams, agents
doing round trips, on one `midturn serve` (SQLite, then PostgreSQL).

    .venv/bin/python bench/crowd.py                       # full scale, both stores
    .venv/bin/python bench/crowd.py --sessions 1000 --asks 10000 --streams 200 \\
        --agents 16 --seconds 15 --stores sqlite          # a small run
    .venv/bin/python bench/crowd.py --no-crowd --growth 0,1000,10000,100000

Seeding. The store is filled before the server starts, straight through SQL, with the
rows the stores themselves write: sessions (token hashes of tokens made here, so the
bench can use them), pending asks (`interaction_columns` of real `Interaction`s) and
their `user_question_requested` events (`requested_event`, `dump_event`). The per-session
pending counts (`midturn_queues`) are kept by the schema's own triggers, which fire for
these inserts (and for PostgreSQL's COPY) as for the store's. The server then starts on
that store as it would after a restart. This is equivalent to parking the asks through
the API for everything measured here, and takes seconds instead of the better part of an
hour on this machine (100,000 POSTs, each appending two events).

The crowd, on that server:
- `--streams` SSE streams, each on one session's `/v1/sessions/{id}/events` with that
  session's answer token (an inbox per session: the per-token cap,
  `MIDTURN_MAX_STREAMS_PER_TOKEN`, 32 by default, applies per token and is left as is),
  plus `--all-streams` (default 30, under that cap) on `/v1/events` with the admin
  token, which see every event; each starts with the newest 200 events (`tail=200`, as
  the web inbox does). Half of each kind read slowly: a 4 KiB receive buffer,
  2 KiB a second, in one read. Streams are opened in ten steps, the
  server's RSS read after each (the RSS-against-open-streams chart). They run in a child
  process, so the bench's own loop does not time them.
- `--agents` agents, each in its own seeded session, doing round trips paced at one per
  `--pace` seconds: `POST /v1/sessions/{id}/asks?wait=60`, an answerer following
  `/v1/events?types=user_question_requested` (admin) answers it, the agent's request
  returns the answer. The answerer runs in a process of its own (`AnswererProcess`), for
  the anchor as for the crowd.
- a probe process timing `GET /healthz` back to back (a 10 ms pause between requests).

The agents, the answerer and the probe speak HTTP/1.1 on kept connections through
`_lean_http.Connection` (httptools' parser), for the anchors and the crowd alike: with
httpx they cost about 1 ms of CPU per request, as much as the server's share of this
2-core machine, so the ratio measured the bench's clients as much as the server. The
httpx clients are the base's (`git show 413b8d3:bench/crowd.py`; docs/benchmarks.md,
stop 27).

Anchors, in the same run on the same server before the crowd arrives: the round trip of
one agent alone (paced alike) and `/healthz` alone. Goals (issue 18): server RSS ≤ 2 GiB,
`/healthz` p99 ≤ 50 ms, round-trip p50 ≤ 2× idle, zero errors.

Growth (`--growth`): for each count of pending asks, a fresh store seeded with that many
(ten per session) and a server on it, all running at once; `--growth-trips` round trips
on each, taken in turn (one on each server, then the next round), so that load elsewhere
on the machine falls on every count alike; the p50 of each. The goal is flat, ≤ 1.3×
from 0 to the largest.

Charts (`--charts docs/images`, matplotlib from the `bench` extra): round-trip p50
against pending asks, and server RSS against open streams.

PostgreSQL: `MIDTURN_BENCH_POSTGRES_URL` (default postgresql://postgres@127.0.0.1:5432/
test); each store is a schema of its own, dropped afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import re
import resource
import secrets
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from _lean_http import Connection, LeanHTTPError

from _postgres import drop_schema
from midturn.contract._interactions import Interaction, utcnow
from midturn.contract._models import Ask, Option, Question
from midturn.gateway._auth import hash_token, new_session_tokens
from midturn.runtime._events import requested_event
from midturn.store import SessionRecord, open_store
from midturn.store._codec import dump_event, dump_session, interaction_columns, sort_key_time

ADMIN = "admin-token-for-the-crowd-bench-5e2a"
POSTGRES_URL = os.environ.get(
    "MIDTURN_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
PARKED = Ask(
    questions=(
        Question(
            id="db",
            header="Database",
            question="Which database should the service use for the billing API?",
            options=(Option(label="SQLite"), Option(label="PostgreSQL")),
        ),
    )
)
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
PG_OPTIONS = os.environ.get("MIDTURN_BENCH_POSTGRES_OPTIONS", "")
"""More of the store URL's query, e.g. `&pool_max=20` (docs/storage.md)."""
HEALTH_GOAL_MS = 50.0
RSS_GOAL_MIB = 2048.0
TRIP_GOAL = 2.0
GROWTH_GOAL = 1.3


# -- seeding ---------------------------------------------------------------------------


@dataclass
class Seeded:
    url: str
    sessions: list[tuple[str, str, str]]
    """(session id, agent token, answer token) of every seeded session."""


def _session_rows(count: int) -> tuple[list[tuple[str, str, str]], list[tuple[Any, ...]]]:
    tokens, rows = [], []
    now = utcnow()
    for n in range(count):
        session_id = f"s_crowd_{n:06d}"
        agent, answer = new_session_tokens(session_id)
        tokens.append((session_id, agent, answer))
        record = SessionRecord(
            id=session_id,
            agent_token_hash=hash_token(agent),
            answer_token_hash=hash_token(answer),
            created_at=now,
        )
        rows.append(
            (
                record.id,
                record.agent_token_hash,
                record.answer_token_hash,
                sort_key_time(record.created_at),
                dump_session(record),
            )
        )
    return tokens, rows


def _ask_rows(sessions: int, asks: int) -> Iterator[tuple[tuple[Any, ...], tuple[Any, ...]]]:
    """(interaction row, event row) per pending ask, spread evenly over the sessions, one
    waiting turn per session."""
    now = utcnow()
    for n in range(asks):
        session = n % sessions
        position = n // sessions
        item = Interaction(
            id=f"ia_crowd_{n:07d}",
            kind="ask",
            session_id=f"s_crowd_{session:06d}",
            turn_id="turn-seeded",
            tool_call_id=f"call-{n}",
            created_at=now,
            ask=PARKED,
        )
        new = requested_event(item, position)
        yield (
            tuple(interaction_columns(item).values()),
            (new.type, new.session_id, new.turn_id, new.interaction_id, new),
        )


_INTERACTION_COLUMNS = [
    "id",
    "kind",
    "session_id",
    "turn_id",
    "tool_call_id",
    "status",
    "created_at",
    "settled_at",
    "body",
]
_BATCH = 20_000


def _seed_sqlite(path: Path, session_rows: list[tuple[Any, ...]], sessions: int, asks: int) -> None:
    db = sqlite3.connect(path)
    with db:
        db.executemany(
            "INSERT INTO midturn_sessions (id, agent_token_hash, answer_token_hash, created_at,"
            " body) VALUES (?, ?, ?, ?, ?)",
            session_rows,
        )
        rows = list(_ask_rows(sessions, asks))
        db.executemany(
            f"INSERT INTO midturn_interactions ({', '.join(_INTERACTION_COLUMNS)})"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [interaction for interaction, _ in rows],
        )
        db.executemany(
            "INSERT INTO midturn_events (type, session_id, turn_id, interaction_id, at, body)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                (t, s, tu, i, sort_key_time(new.at), dump_event(new))
                for _, (t, s, tu, i, new) in rows
            ],
        )
    # as a store that has been running: its WAL copied back (else the server's first
    # checkpoint copies ~100 MB while it is measured)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


async def _seed_postgres(
    url: str, session_rows: list[tuple[Any, ...]], sessions: int, asks: int
) -> None:
    import asyncpg  # type: ignore[import-untyped]

    base, _, schema = url.partition("?schema=")
    schema = schema.partition("&")[0]
    connection = await asyncpg.connect(base, server_settings={"search_path": schema})
    try:
        await connection.copy_records_to_table(
            "midturn_sessions",
            records=session_rows,
            columns=["id", "agent_token_hash", "answer_token_hash", "created_at", "body"],
        )
        rows = list(_ask_rows(sessions, asks))
        for start in range(0, len(rows), _BATCH):
            batch = rows[start : start + _BATCH]
            await connection.copy_records_to_table(
                "midturn_interactions",
                records=[interaction for interaction, _ in batch],
                columns=_INTERACTION_COLUMNS,
            )
            await connection.copy_records_to_table(
                "midturn_events",
                records=[(t, s, tu, i, dump_event(new)) for _, (t, s, tu, i, new) in batch],
                columns=["type", "session_id", "turn_id", "interaction_id", "body"],
            )
    finally:
        await connection.close()
    # as a store that has been running: vacuumed and analyzed (else autovacuum starts on
    # the fresh rows while the server is measured); VACUUM runs outside a transaction
    connection = await asyncpg.connect(base, server_settings={"search_path": schema})
    try:
        for table in ("midturn_sessions", "midturn_interactions", "midturn_events"):
            await connection.execute(f"VACUUM ANALYZE {table}")
    finally:
        await connection.close()


@contextlib.asynccontextmanager
async def seeded_store(
    kind: str, work: Path, sessions: int, asks: int
) -> Any:  # AsyncIterator[Seeded]
    if kind == "sqlite":
        folder = Path(tempfile.mkdtemp(dir=work))
        url = f"sqlite:///{folder / 'midturn.db'}"
    else:
        url = f"{POSTGRES_URL}?schema=bench_crowd_{secrets.token_hex(5)}{PG_OPTIONS}"
    try:
        async with open_store(url):
            pass  # the schema, migrated
        tokens, rows = _session_rows(sessions)
        if kind == "sqlite":
            await asyncio.to_thread(_seed_sqlite, folder / "midturn.db", rows, sessions, asks)
        else:
            await _seed_postgres(url, rows, sessions, asks)
        yield Seeded(url, tokens)
    finally:
        if kind == "postgres":
            await drop_schema(url)


# -- the server ------------------------------------------------------------------------


def raise_fd_limit() -> int:
    """The soft open-files limit raised to the hard one (children inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    url: str
    log: Path

    @property
    def host_port(self) -> tuple[str, int]:
        host, port = self.url.removeprefix("http://").split(":")
        return host, int(port)


def start_server(db_url: str, work: Path) -> Server:
    home = Path(tempfile.mkdtemp(dir=work))
    log = home / "serve.log"
    env = {**os.environ, "MIDTURN_TOKEN": ADMIN, "MIDTURN_HOME": str(home)}
    env.pop("MIDTURN_MAX_STREAMS_PER_TOKEN", None)  # the default cap, 32 per token
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "midturn.cli",
            "serve",
            "--db",
            db_url,
            "--port",
            "0",
            "--access-log",  # the in-server times (`in_server`)
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=log.open("wb"),
        env=env,
    )
    assert process.stdout is not None
    for raw in process.stdout:
        line = raw.decode()
        if line.startswith("midturn gateway on "):
            url = line.removeprefix("midturn gateway on ").split()[0]
            break
    else:
        raise SystemExit(f"midturn serve did not start: {log.read_text()[-2000:]}")
    if asyncio.run(_answers_healthz(url)):
        return Server(process, url, log)
    raise SystemExit("midturn serve did not answer /healthz")


async def _answers_healthz(url: str) -> bool:
    """Whether `/healthz` answers 200 within 30 s of tries."""
    for _ in range(3000):
        with contextlib.suppress(LeanHTTPError):
            async with Connection(url) as connection:
                if (await connection.request("GET", "/healthz")).status_code == 200:
                    return True
        await asyncio.sleep(0.01)
    return False


def stop_server(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(30)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


HUB_COUNTERS = ("midturn_event_log_reads_total", "midturn_streams_dropped_total")


async def hub_metrics(url: str) -> dict[str, float]:
    """The event hub's counters, from `/metrics` (admin)."""
    async with Connection(url, headers={"Authorization": f"Bearer {ADMIN}"}) as connection:
        text = (await connection.request("GET", "/metrics")).text
    found = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in HUB_COUNTERS:
            found[name] = float(value)
    return found


def in_server(log: Path, since: float, until: float) -> dict[str, list[float]]:
    """Each route's request durations (ms) as the server's access log has them, for the
    requests that ended between `since` and `until` (`time.time()`): the time inside the
    app, without what the request waited for before the server read it."""
    routes: dict[str, list[float]] = {}
    with log.open(errors="replace") as lines:
        for line in lines:
            if '"duration_ms"' not in line:
                continue
            try:
                entry = json.loads(line)
                at = datetime.fromisoformat(entry["time"]).timestamp()
            except (ValueError, KeyError):
                continue
            if since <= at <= until:
                key = f"{entry['method']} {entry['route']}"
                routes.setdefault(key, []).append(float(entry["duration_ms"]))
    return routes


def cpu_pressure() -> str:
    """The last 10 s of `/proc/pressure/cpu` (`some avg10`), or "n/a"."""
    try:
        first = Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except (OSError, IndexError):
        return "n/a"
    return first.split()[1].removeprefix("avg10=") + "%"


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# -- round trips -----------------------------------------------------------------------


class Answerer:
    """Follows `/v1/events?types=user_question_requested` (admin) from now on and answers
    every ask of the agents' sessions as soon as it sees it requested, on 16 kept
    connections (`Connection`). The filter spares it the frames of every other event
    (answered, result and the rest), which it would only skip: as an answering bot
    would follow the stream. The crowd's own streams take every event."""

    def __init__(self, url: str, sessions: set[str]) -> None:
        auth = {"Authorization": f"Bearer {ADMIN}"}
        self.sessions = sessions
        self.stream = Connection(url, headers=auth)
        self.clients: asyncio.Queue[Connection] = asyncio.Queue()
        for _ in range(16):
            self.clients.put_nowait(Connection(url, headers=auth))
        self.errors = 0
        self.answered = 0
        self.listening = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._follow: asyncio.Task[None] | None = None

    async def start(self, after: int) -> None:
        self._follow = asyncio.create_task(self._run(after))
        await asyncio.wait_for(self.listening.wait(), 30)

    async def _run(self, after: int) -> None:
        while True:
            try:
                headers = {"Accept": "text/event-stream", "Last-Event-ID": str(after)}
                wanted_only = "/v1/events?types=user_question_requested"
                async with self.stream.stream("GET", wanted_only, headers=headers) as response:
                    if response.status_code != 200:
                        self.errors += 1
                        await asyncio.sleep(1)
                        continue
                    self.listening.set()
                    wanted = False
                    async for line in response.lines():
                        if line.startswith("id: "):
                            after = int(line[4:])
                        elif line.startswith("event: "):
                            wanted = line == "event: user_question_requested"
                        elif wanted and line.startswith("data: "):
                            event = json.loads(line[6:])
                            if event["session_id"] in self.sessions:
                                call = event["data"]["interaction"].get("tool_call_id")
                                SEEN[call] = time.perf_counter()
                                task = asyncio.create_task(self._answer(event["interaction_id"]))
                                self._tasks.add(task)
                                task.add_done_callback(self._tasks.discard)
            except LeanHTTPError:
                self.errors += 1  # the stream broke: resume from the last id seen
                await asyncio.sleep(0.2)

    async def _answer(self, ask_id: str) -> None:
        client = await self.clients.get()
        try:
            response = await client.request("POST", f"/v1/asks/{ask_id}/answer", json_body=ANSWER)
            if response.status_code == 200:
                self.answered += 1
            else:
                self.errors += 1
        except LeanHTTPError:
            self.errors += 1
        finally:
            self.clients.put_nowait(client)

    async def aclose(self) -> None:
        if self._follow is not None:
            self._follow.cancel()
            await asyncio.gather(self._follow, return_exceptions=True)
        await self.stream.aclose()
        while not self.clients.empty():
            await self.clients.get_nowait().aclose()


async def answerer_main(spec_path: str) -> None:
    """The crowd's answerer in a process of its own: follows `/v1/events` from the spec's
    id and answers; prints `ready` once it listens, then, when a line arrives on stdin,
    its tally (answered, errors, when it saw each ask) as JSON."""
    spec = json.loads(Path(spec_path).read_text())  # noqa: ASYNC240 (before any request)
    answerer = Answerer(spec["url"], set(spec["sessions"]))
    await answerer.start(spec["after"])
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    await answerer.aclose()
    tally = {"answered": answerer.answered, "errors": answerer.errors, "seen": SEEN}
    print(json.dumps(tally), flush=True)


class AnswererProcess:
    """`Answerer` in a child process (`answerer_main`), so that the agents' loop and the
    answerer's do not wait for each other: in one process, each hop of a crowded round
    trip on the bench's side (the agent's send, the answerer's read of the stream, its
    answer, the agent's read of the response) queued behind the other 63 agents' and the
    answerer's work. The anchor (one agent alone) uses the same arrangement."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.errors = 0

    @classmethod
    async def start(cls, url: str, sessions: set[str], after: int, work: Path) -> AnswererProcess:
        spec = work / f"answerer-{secrets.token_hex(4)}.json"
        spec.write_text(json.dumps({"url": url, "sessions": sorted(sessions), "after": after}))
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--answerer-child",
            str(spec),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        assert process.stdout is not None
        if (await process.stdout.readline()).strip() != b"ready":
            raise SystemExit("the answerer did not start")
        return cls(process)

    async def stop(self) -> None:
        """Stop it; its errors are counted and what it saw is added to `SEEN`."""
        out, _ = await self.process.communicate(b"stop\n")
        tally = json.loads(out.decode().splitlines()[-1])
        self.errors = tally["errors"]
        SEEN.update(tally["seen"])


async def last_event_id(url: str) -> int:
    """The newest event id, from a one-event tail of `/v1/events`."""
    connection = Connection(url, headers={"Authorization": f"Bearer {ADMIN}"})
    async with connection.stream("GET", "/v1/events?tail=1") as response:
        newest = 0
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):  # the read's bound
                async for line in response.lines():
                    if line.startswith("id: "):
                        newest = int(line[4:])
                        break
                    if line.startswith(": keepalive"):
                        break
        return newest


TRIP_NUMBERS = itertools.count(1)
"""Every round trip's number, hence its tool call id, unique in the run: a tool call id
used again in a session is answered at once with the first ask (idempotency), which
would time no round trip at all."""
SENT: dict[str, float] = {}
SEEN: dict[str, float] = {}
"""When each round trip's ask was sent, and when the answerer saw it requested (by
tool call id): the part of a round trip spent before the answerer hears of it."""


def seen_after_ms(times: dict[str, float]) -> list[float]:
    return [(SEEN[call] - sent) * 1000 for call, sent in times.items() if call in SEEN]


@dataclass
class Trips:
    times_ms: list[float] = field(default_factory=list)
    errors: int = 0


async def round_trip(client: Connection, session_id: str, token: str, n: int) -> float:
    headers = {"Authorization": f"Bearer {token}"}
    started = time.perf_counter()
    SENT[f"trip-{n}"] = started
    created = await client.request(
        "POST",
        f"/v1/sessions/{session_id}/asks?wait=60",
        json_body={"tool_input": ASK, "turn_id": f"turn-{n}", "tool_call_id": f"trip-{n}"},
        headers=headers,
    )
    if created.status_code not in (200, 201):
        raise RuntimeError(f"ask refused: {created.status_code} {created.text[:200]}")
    interaction = created.json()["interaction"]
    while interaction["status"] == "pending":
        waited = await client.request(
            "GET", f"/v1/asks/{interaction['id']}?wait=60", headers=headers
        )
        if waited.status_code != 200:
            raise RuntimeError(f"wait refused: {waited.status_code}")
        interaction = waited.json()["interaction"]
    if interaction["status"] != "answered":
        raise RuntimeError(f"the ask ended {interaction['status']}")
    return (time.perf_counter() - started) * 1000


async def agents(
    url: str,
    sessions: list[tuple[str, str, str]],
    *,
    seconds: float,
    pace: float,
    count: int | None = None,
) -> Trips:
    """Each agent in its own session, on a kept connection of its own (`Connection`): a
    round trip, then a pause to make one per `pace` seconds, until `seconds` have passed
    (or `count` trips each)."""
    trips = Trips()
    stop_at = time.perf_counter() + seconds

    async def agent(index: int, session_id: str, token: str) -> None:
        async with Connection(url, timeout=90) as client:
            await asyncio.sleep(random.random() * pace)
            n = 0
            while time.perf_counter() < stop_at and (count is None or n < count):
                n += 1
                started = time.perf_counter()
                try:
                    trips.times_ms.append(
                        await round_trip(client, session_id, token, next(TRIP_NUMBERS))
                    )
                except (RuntimeError, LeanHTTPError) as error:
                    trips.errors += 1
                    print(f"  agent {index}: {error}", file=sys.stderr)
                await asyncio.sleep(max(0.0, pace - (time.perf_counter() - started)))

    await asyncio.gather(
        *(
            agent(i, session_id, agent_token)
            for i, (session_id, agent_token, _) in enumerate(sessions)
        )
    )
    return trips


# -- the probe (a child process) -------------------------------------------------------


async def probe_main(url: str) -> None:
    """Time `GET /healthz` on a kept connection (`Connection`, as the agents') until a
    line (or the end) arrives on stdin; print the latencies (ms) and errors as JSON."""
    times: list[float] = []
    errors = 0
    async with Connection(url) as client:
        await client.request("GET", "/healthz")
        print("ready", flush=True)
        stopped = asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        while not stopped.done():
            started = time.perf_counter()
            try:
                ok = (await client.request("GET", "/healthz")).status_code == 200
            except LeanHTTPError:
                ok = False
            times.append((time.perf_counter() - started) * 1000)
            errors += not ok
            await asyncio.sleep(0.01)  # a 10 ms pause
    print(json.dumps({"times": times, "errors": errors}), flush=True)


def start_probe(url: str) -> subprocess.Popen[bytes]:
    """The probe, once it has made its first request (blocking: run it in a thread)."""
    process = subprocess.Popen(
        [sys.executable, __file__, "--probe", url], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdout is not None
    if process.stdout.readline().strip() != b"ready":
        raise SystemExit("the /healthz probe did not start")
    return process


def stop_probe(process: subprocess.Popen[bytes]) -> tuple[list[float], int]:
    out, _ = process.communicate(b"stop\n", timeout=600)
    result = json.loads(out)
    return result["times"], result["errors"]


# -- the streams (a child process) -----------------------------------------------------

TAIL = 200
SLOW_READ = 2048
SLOW_PAUSE_S = 1.0
"""A slow reader takes 2 KiB a second (after its 4 KiB receive buffer)."""
"""A new stream starts with the newest 200 events, as the web inbox's does."""
_LAST_ID = re.compile(rb'"last_event_id": (\d+)')


@dataclass
class StreamTally:
    opened: int = 0
    refused: int = 0
    broken: int = 0
    resumed: int = 0
    bytes: int = 0
    statuses: dict[str, int] = field(default_factory=dict)


async def one_stream(
    host: str,
    port: int,
    path: str,
    token: str,
    slow: bool,
    tally: StreamTally,
    opened: asyncio.Event,
    stopping: asyncio.Event,
) -> None:
    """One SSE client: opens `path`, reads it (slowly if `slow`), and when the server
    drops it for falling behind, reconnects with `Last-Event-ID` as a client does."""
    resume: int | None = None
    first = True
    while not stopping.is_set():
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if slow:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        writer: asyncio.StreamWriter | None = None
        try:
            await asyncio.get_running_loop().sock_connect(sock, (host, port))
            # a slow reader buffers little, so the server meets its slowness at once
            limit = 4096 if slow else 1 << 16
            reader, writer = await asyncio.open_connection(sock=sock, limit=limit)
            resume_header = f"Last-Event-ID: {resume}\r\n" if resume is not None else ""
            target = path if resume is not None else path + f"?tail={TAIL}"
            writer.write(
                f"GET {target} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
                f"Accept: text/event-stream\r\n{resume_header}\r\n".encode()
            )
            status = (await reader.readline()).decode().split(" ")
            code = status[1] if len(status) > 1 else "none"
            tally.statuses[code] = tally.statuses.get(code, 0) + 1
            if first:
                first = False
                opened.set()
            if code != "200":
                tally.refused += 1
                return
            tally.opened += 1
            tail = b""
            while not stopping.is_set():
                chunk = await reader.read(SLOW_READ if slow else 1 << 16)
                if not chunk:
                    break
                tally.bytes += len(chunk)
                tail = (tail + chunk)[-400:]
                if slow:
                    await asyncio.sleep(SLOW_PAUSE_S)
            if stopping.is_set():
                return
            found = _LAST_ID.findall(tail)
            if b"stream_dropped" in tail and found:
                tally.resumed += 1
                resume = int(found[-1])
                continue
            tally.broken += 1  # the server ended a stream it had no reason to end
            return
        except (OSError, asyncio.IncompleteReadError):
            if stopping.is_set():
                return
            tally.broken += 1
            opened.set()
            return
        finally:
            if writer is not None:
                writer.close()
            else:
                sock.close()


async def streams_main(spec_path: str) -> None:
    """The stream crowd: opens the streams in steps (printing `opened N` after each),
    holds them until a line arrives on stdin, then prints its tally as JSON."""
    spec = json.loads(Path(spec_path).read_text())  # noqa: ASYNC240 (before any stream)
    host, port = spec["host"], spec["port"]
    targets: list[tuple[str, str]] = [
        (f"/v1/sessions/{sid}/events", token) for sid, token in spec["sessions"]
    ] + [("/v1/events", ADMIN)] * spec["all_streams"]
    tally = StreamTally()
    stopping = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []
    steps = max(1, min(10, len(targets)))
    per_step = -(-len(targets) // steps) if targets else 0
    if not targets:
        print("opened 0 0", flush=True)  # nothing to open
    for step in range(-(-len(targets) // per_step) if targets else 0):
        batch = targets[step * per_step : (step + 1) * per_step]
        events = []
        for index, (path, token) in enumerate(batch, start=step * per_step):
            opened = asyncio.Event()
            events.append(opened)
            tasks.append(
                asyncio.create_task(
                    one_stream(host, port, path, token, index % 2 == 1, tally, opened, stopping)
                )
            )
            if index % 50 == 49:
                await asyncio.sleep(0.05)  # a crowd arrives, not a flood of SYNs
        await asyncio.gather(*(event.wait() for event in events))
        print(f"opened {tally.opened} {tally.refused}", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.readline)
    stopping.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps(tally.__dict__), flush=True)


# -- one crowd run ---------------------------------------------------------------------


@dataclass
class CrowdResult:
    store: str
    rss_idle: float = 0.0
    rss_by_streams: list[tuple[int, float]] = field(default_factory=list)
    rss_peak: float = 0.0
    idle_trips: list[float] = field(default_factory=list)
    idle_health: list[float] = field(default_factory=list)
    crowd_trips: list[float] = field(default_factory=list)
    idle_seen: list[float] = field(default_factory=list)
    idle_after: list[float] = field(default_factory=list)
    crowd_seen: list[float] = field(default_factory=list)
    crowd_health: list[float] = field(default_factory=list)
    arrival_health: list[float] = field(default_factory=list)
    """`/healthz` while the streams arrive (every inbox reconnecting, as after a restart)."""
    errors: dict[str, int] = field(default_factory=dict)
    streams: dict[str, Any] = field(default_factory=dict)
    seed_s: float = 0.0
    server_cpu: float = 0.0
    bench_cpu: float = 0.0
    """Share of one core the agents (this process) used meanwhile."""
    answerer_cpu: float = 0.0
    """Share of one core the answerer's process used meanwhile."""
    streams_cpu: float = 0.0
    """Share of one core the stream crowd's process used meanwhile."""
    """Share of one core the server used during the crowd phase."""
    server_cpu_s: float = 0.0
    """Server CPU seconds over the crowd phase (per round trip: the steadiest figure)."""
    crowd_s: float = 0.0
    """How long the crowd phase lasted (wall clock seconds)."""
    idle_cpu_s: float = 0.0
    """Server CPU seconds over the anchor's round trips (one agent alone)."""
    idle_health_cpu_s: float = 0.0
    """Server CPU seconds while the probe ran alone (its `/healthz` requests)."""
    hub: dict[str, float] = field(default_factory=dict)
    """The event hub's counters over the crowd phase (`/metrics`)."""
    idle_server: dict[str, list[float]] = field(default_factory=dict)
    crowd_server: dict[str, list[float]] = field(default_factory=dict)
    """Request durations in the server by route (access log), alone and under the crowd."""


async def crowd(kind: str, args: argparse.Namespace, work: Path) -> CrowdResult:
    result = CrowdResult(kind)
    started = time.perf_counter()
    async with seeded_store(kind, work, args.sessions, args.asks) as seeded:
        result.seed_s = time.perf_counter() - started
        server = await asyncio.to_thread(start_server, seeded.url, work)
        pid = server.process.pid
        try:
            await asyncio.sleep(1.0)
            result.rss_idle = rss_mib(pid)
            agent_sessions = seeded.sessions[: args.agents]
            answerer = await AnswererProcess.start(
                server.url,
                {sid for sid, _, _ in agent_sessions},
                await last_event_id(server.url),
                work,
            )
            # the anchors: one agent alone, then /healthz alone
            idle_since = time.time()
            idle_cpu = cpu_s(pid)
            idle = await agents(
                server.url,
                agent_sessions[:1],
                seconds=1e9,
                pace=args.pace / 4,
                count=args.idle_trips,
            )
            result.idle_trips = idle.times_ms
            result.idle_cpu_s = cpu_s(pid) - idle_cpu
            idle_sent = dict(SENT)
            SENT.clear()
            probe = await asyncio.to_thread(start_probe, server.url)
            probe_cpu = cpu_s(pid)
            await asyncio.sleep(args.probe_seconds)
            result.idle_health, idle_probe_errors = await asyncio.to_thread(stop_probe, probe)
            result.idle_health_cpu_s = cpu_s(pid) - probe_cpu
            idle_until = time.time()
            result.rss_by_streams.append((0, rss_mib(pid)))

            # the crowd arrives: streams, in steps
            host, port = server.host_port
            streamed = seeded.sessions[args.agents :][: args.streams]
            if len(streamed) < args.streams:  # fewer sessions than streams: wrap around
                streamed = [seeded.sessions[i % len(seeded.sessions)] for i in range(args.streams)]
            spec = work / "streams.json"
            spec.write_text(
                json.dumps(
                    {
                        "host": host,
                        "port": port,
                        "sessions": [(sid, answer) for sid, _, answer in streamed],
                        "all_streams": args.all_streams,
                    }
                )
            )
            arrival_probe = await asyncio.to_thread(start_probe, server.url)
            crowd_process = await asyncio.create_subprocess_exec(
                sys.executable,
                __file__,
                "--streams-child",
                str(spec),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
            assert crowd_process.stdout is not None and crowd_process.stdin is not None
            total = args.streams + args.all_streams
            while True:
                line = (await crowd_process.stdout.readline()).decode().split()
                if not line:
                    raise SystemExit("the stream crowd exited early")
                opened, refused = int(line[1]), int(line[2])
                await asyncio.sleep(0.5)
                result.rss_by_streams.append((opened, rss_mib(pid)))
                print(
                    f"  {kind}: {opened} streams open ({refused} refused), "
                    f"RSS {result.rss_by_streams[-1][1]:.0f} MiB",
                    flush=True,
                )
                if opened + refused >= total:
                    break

            result.arrival_health, arrival_errors = await asyncio.to_thread(
                stop_probe, arrival_probe
            )
            # the agents and the probe, together
            probe = await asyncio.to_thread(start_probe, server.url)
            peak = [rss_mib(pid)]

            async def sample() -> None:
                while True:
                    peak.append(rss_mib(pid))
                    await asyncio.sleep(0.5)

            sampler = asyncio.create_task(sample())
            spy = None
            if args.py_spy:
                spy = subprocess.Popen(  # noqa: ASYNC220 (returns at once)
                    [
                        str(Path(sys.executable).with_name("py-spy")),
                        "record",
                        "-p",
                        str(pid),
                        "-d",
                        str(int(args.seconds)),
                        "-f",
                        "raw",
                        "-o",
                        f"{args.py_spy}.{kind}.txt",
                        "-r",
                        "200",
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            hub_before = await hub_metrics(server.url)
            crowd_since = time.time()
            cpu_before, cpu_at = cpu_s(pid), time.perf_counter()
            own_before, crowd_before = time.process_time(), cpu_s(crowd_process.pid)
            answerer_before = cpu_s(answerer.process.pid)
            loaded = await agents(server.url, agent_sessions, seconds=args.seconds, pace=args.pace)
            result.crowd_health, crowd_probe_errors = await asyncio.to_thread(stop_probe, probe)
            elapsed = time.perf_counter() - cpu_at
            crowd_until = time.time()
            hub_after = await hub_metrics(server.url)
            result.hub = {name: hub_after[name] - hub_before.get(name, 0) for name in hub_after}
            result.server_cpu = (cpu_s(pid) - cpu_before) / elapsed
            result.server_cpu_s = cpu_s(pid) - cpu_before
            result.crowd_s = elapsed
            result.bench_cpu = (time.process_time() - own_before) / elapsed
            result.answerer_cpu = (cpu_s(answerer.process.pid) - answerer_before) / elapsed
            result.streams_cpu = (cpu_s(crowd_process.pid) - crowd_before) / elapsed
            sampler.cancel()
            if spy is not None:
                spy.wait(60)
            result.rss_peak = max(peak)
            result.crowd_trips = loaded.times_ms
            crowd_sent = dict(SENT)
            crowd_process.stdin.write(b"stop\n")
            await crowd_process.stdin.drain()
            line = b"opened"
            while line.startswith(b"opened"):  # past any progress line not yet read
                line = await crowd_process.stdout.readline()
            tally = json.loads(line.decode())
            await crowd_process.wait()
            result.streams = tally
            # the anchor again, the crowd gone: how far the machine drifted meanwhile
            after = await agents(
                server.url,
                agent_sessions[:1],
                seconds=1e9,
                pace=args.pace / 4,
                count=args.idle_trips,
            )
            result.idle_after = after.times_ms
            await answerer.stop()
            result.idle_seen = seen_after_ms(idle_sent)
            result.crowd_seen = seen_after_ms(crowd_sent)
            result.errors = {
                "idle round trips": idle.errors + after.errors,
                "crowd round trips": loaded.errors,
                "answerer": answerer.errors,
                "/healthz": idle_probe_errors + arrival_errors + crowd_probe_errors,
                "streams refused": tally["refused"],
                "streams broken": tally["broken"],
            }
        finally:
            stop_server(server)
        errors_logged = [
            line
            for line in server.log.read_text(errors="replace").splitlines()
            if "Traceback" in line or '"level": "error"' in line.lower()
        ]
        result.errors["server log errors"] = len(errors_logged)
        result.idle_server = in_server(server.log, idle_since, idle_until)
        result.crowd_server = in_server(server.log, crowd_since, crowd_until)
    return result


IN_SERVER = (
    ("GET /healthz", "GET /healthz"),
    ("the ask POST (until answered)", "POST /v1/sessions/{session_id}/asks"),
    ("the answer POST", "POST /v1/asks/{interaction_id}/answer"),
)


def report(result: CrowdResult, args: argparse.Namespace) -> bool:
    idle_p50, crowd_p50 = pct(result.idle_trips, 0.5), pct(result.crowd_trips, 0.5)
    health_p99 = pct(result.crowd_health, 0.99)
    errors = sum(result.errors.values())
    s = result.streams
    print(
        f"\n== {result.store}: {args.sessions} sessions, {args.asks} parked asks "
        f"(seeded in {result.seed_s:.1f} s), {args.streams} session streams + "
        f"{args.all_streams} /v1/events, {args.agents} agents at one trip per {args.pace} s"
    )
    print(
        f"server RSS: idle {result.rss_idle:.0f} MiB, with the streams "
        f"{result.rss_by_streams[-1][1]:.0f} MiB, peak under the crowd {result.rss_peak:.0f} MiB"
        f" (goal <= {RSS_GOAL_MIB:.0f} MiB)"
    )
    print(
        f"/healthz: alone p50 {pct(result.idle_health, 0.5):.2f} ms p99 "
        f"{pct(result.idle_health, 0.99):.2f} ms; under the crowd p50 "
        f"{pct(result.crowd_health, 0.5):.2f} ms p99 {health_p99:.2f} ms, max "
        f"{max(result.crowd_health, default=0):.0f} ms (goal p99 <= {HEALTH_GOAL_MS:.0f} ms)"
    )
    print(
        f"/healthz while the {result.streams.get('opened', 0)} streams arrived: p50 "
        f"{pct(result.arrival_health, 0.5):.2f} ms p99 {pct(result.arrival_health, 0.99):.2f} ms, "
        f"max {max(result.arrival_health, default=0):.0f} ms"
    )
    print(
        f"round trip: alone p50 {idle_p50:.2f} ms ({len(result.idle_trips)} trips); "
        f"under the crowd p50 {crowd_p50:.2f} ms p99 {pct(result.crowd_trips, 0.99):.2f} ms "
        f"({len(result.crowd_trips)} trips): {crowd_p50 / idle_p50:.2f}x "
        f"(goal <= {TRIP_GOAL:.0f}x)"
    )
    print(
        f"  of which until the answerer saw the ask requested: alone p50 "
        f"{pct(result.idle_seen, 0.5):.2f} ms, under the crowd p50 "
        f"{pct(result.crowd_seen, 0.5):.2f} ms"
    )
    print(
        f"  alone again after the crowd left: p50 {pct(result.idle_after, 0.5):.2f} ms "
        f"(the machine's drift over the run)"
    )
    for label, route in IN_SERVER:
        alone, crowded = result.idle_server.get(route, []), result.crowd_server.get(route, [])
        print(
            f"  in the server (access log), {label}: alone p50 {pct(alone, 0.5):.2f} ms p99 "
            f"{pct(alone, 0.99):.2f} ms; under the crowd p50 {pct(crowded, 0.5):.2f} ms p99 "
            f"{pct(crowded, 0.99):.2f} ms ({len(crowded)} requests)"
        )
    print(
        f"  the event hub under the crowd: {result.hub.get(HUB_COUNTERS[0], 0):.0f} reads of "
        f"the log to fill a gap, {result.hub.get(HUB_COUNTERS[1], 0):.0f} streams dropped "
        f"for falling behind ({len(result.crowd_trips)} round trips)"
    )
    print(
        f"CPU under the crowd, share of one core: server {result.server_cpu:.0%}, agents "
        f"{result.bench_cpu:.0%}, answerer {result.answerer_cpu:.0%}, stream clients "
        f"{result.streams_cpu:.0%}; server CPU "
        f"per round trip {1000 * result.server_cpu_s / max(1, len(result.crowd_trips)):.2f} ms "
        f"(with its share of the streams' fan-out)"
    )
    crowd_trips = max(1, len(result.crowd_trips))
    print(
        f"  the bench's own CPU per round trip under the crowd: agents "
        f"{1000 * result.bench_cpu * result.crowd_s / crowd_trips:.2f} ms, answerer "
        f"{1000 * result.answerer_cpu * result.crowd_s / crowd_trips:.2f} ms"
    )
    health_ms = 1000 * result.idle_health_cpu_s / max(1, len(result.idle_health))
    print(
        f"  server CPU alone: {1000 * result.idle_cpu_s / max(1, len(result.idle_trips)):.2f} ms "
        f"per round trip (one agent), {health_ms:.2f} ms per /healthz (the probe alone); "
        f"the crowd's {len(result.crowd_health)} /healthz at that cost: "
        f"{health_ms * len(result.crowd_health) / crowd_trips:.2f} ms per round trip"
    )
    print(
        f"the machine: load average {os.getloadavg()[0]:.1f}, CPU pressure {cpu_pressure()} "
        "(PSI: share of time something waited for a core; a quiet machine is near 0%)"
    )
    print(
        f"streams: {s['opened']} opened, {s['resumed']} resumed after a drop, "
        f"{s['bytes'] / 1e6:.1f} MB read, statuses {s['statuses']}"
    )
    print("errors: " + ", ".join(f"{k} {v}" for k, v in result.errors.items()) + " (goal 0 in all)")
    ok = (
        result.rss_peak <= RSS_GOAL_MIB
        and health_p99 <= HEALTH_GOAL_MS
        and crowd_p50 <= TRIP_GOAL * idle_p50
        and errors == 0
    )
    print("goals met" if ok else "goals NOT met", flush=True)
    return ok


# -- growth ----------------------------------------------------------------------------


async def growth(kind: str, args: argparse.Namespace, work: Path) -> list[tuple[int, float]]:
    """One server per count of pending asks, all up at once; the round trips go to them
    in turn (one each, round after round), so a burst of load elsewhere on the machine
    falls on every count alike."""
    depths = sorted({0, *(int(text) for text in args.growth.split(",") if text)})
    async with contextlib.AsyncExitStack() as stack:
        targets = []
        for depth in depths:
            seeded = await stack.enter_async_context(
                seeded_store(kind, work, max(1, -(-depth // 10)), depth)
            )
            server = await asyncio.to_thread(start_server, seeded.url, work)
            stack.callback(stop_server, server)
            session = seeded.sessions[0]
            answerer = Answerer(server.url, {session[0]})
            await answerer.start(await last_event_id(server.url))
            stack.push_async_callback(answerer.aclose)
            client = await stack.enter_async_context(Connection(server.url, timeout=90))
            targets.append((depth, server, session, client))
        times: dict[int, list[float]] = {depth: [] for depth in depths}
        errors = dict.fromkeys(depths, 0)
        spies = [
            _spy(args, server, f"growth-{depth}.{kind}", 10) for depth, server, _, _ in targets
        ]
        for n in range(20 + args.growth_trips):  # the first 20 of each warm it up
            for depth, _, (session_id, agent_token, _), client in targets:
                try:
                    took = await round_trip(client, session_id, agent_token, next(TRIP_NUMBERS))
                except (RuntimeError, LeanHTTPError):
                    errors[depth] += 1
                    continue
                if n >= 20:
                    times[depth].append(took)
        for spy in spies:
            if spy is not None:
                spy.wait(60)
    points = []
    for depth in depths:
        p50 = pct(times[depth], 0.5)
        points.append((depth, p50))
        print(
            f"  {kind}: {depth:>7} pending: round-trip p50 {p50:.2f} ms, p99 "
            f"{pct(times[depth], 0.99):.2f} ms ({errors[depth]} errors) "
            f"{p50 / points[0][1]:.2f}x the empty store",
            flush=True,
        )
    return points


def _spy(
    args: argparse.Namespace, server: Server, name: str, seconds: float
) -> subprocess.Popen[bytes] | None:
    """py-spy recording the server for `seconds` (with `--py-spy PREFIX`)."""
    if not args.py_spy:
        return None
    return subprocess.Popen(
        [
            str(Path(sys.executable).with_name("py-spy")),
            "record",
            "-p",
            str(server.process.pid),
            "-d",
            str(int(seconds)),
            "-f",
            "raw",
            "-r",
            "200",
            "-o",
            f"{args.py_spy}.{name}.txt",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


# -- charts ----------------------------------------------------------------------------


def charts(
    folder: Path,
    grown: dict[str, list[tuple[int, float]]],
    crowds: list[CrowdResult],
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    if grown:
        figure, axes = plt.subplots(figsize=(6.4, 4.0))
        for kind, points in grown.items():
            xs = [max(depth, 1) for depth, _ in points]
            axes.plot(xs, [p50 for _, p50 in points], marker="o", label=kind)
        axes.set_xscale("log")
        axes.set_xlabel("pending asks in the store (0 drawn at 1)")
        axes.set_ylabel("round-trip p50, ms")
        axes.set_ylim(bottom=0)
        axes.set_title("Round-trip cost against pending asks")
        axes.grid(True, alpha=0.3)
        axes.legend()
        figure.tight_layout()
        figure.savefig(folder / "bench-crowd-growth.png", dpi=110)
        plt.close(figure)
        print(f"wrote {folder / 'bench-crowd-growth.png'}")
    if crowds:
        figure, axes = plt.subplots(figsize=(6.4, 4.0))
        for result in crowds:
            axes.plot(
                [n for n, _ in result.rss_by_streams],
                [mib for _, mib in result.rss_by_streams],
                marker="o",
                label=result.store,
            )
        axes.set_xlabel("open SSE streams")
        axes.set_ylabel("server RSS, MiB")
        axes.set_ylim(bottom=0)
        axes.set_title("Server memory against open streams")
        axes.grid(True, alpha=0.3)
        axes.legend()
        figure.tight_layout()
        figure.savefig(folder / "bench-crowd-rss.png", dpi=110)
        plt.close(figure)
        print(f"wrote {folder / 'bench-crowd-rss.png'}")


# -- main ------------------------------------------------------------------------------


async def main(args: argparse.Namespace) -> int:
    limit = raise_fd_limit()
    needed = args.streams + args.all_streams + args.agents + 200
    if limit < needed:
        raise SystemExit(f"open-files limit {limit} < {needed} needed; raise `ulimit -n`")
    print(f"open-files limit {limit}; load average {os.getloadavg()[0]:.1f}", flush=True)
    stores = [name for name in args.stores.split(",") if name]
    work = Path(tempfile.mkdtemp(prefix="midturn-crowd-"))
    try:
        return await _run(args, stores, work)
    finally:
        if args.keep:
            print(f"kept the stores and the server logs in {work}")
        else:  # the SQLite stores are ~60 MB each at full scale
            shutil.rmtree(work, ignore_errors=True)


async def _run(args: argparse.Namespace, stores: list[str], work: Path) -> int:
    ok = True
    crowds: list[CrowdResult] = []
    grown: dict[str, list[tuple[int, float]]] = {}
    for kind in stores:
        if not args.no_crowd:
            crowds.append(await crowd(kind, args, work))
            ok &= report(crowds[-1], args)
    for kind in stores:
        if args.growth:
            print(f"\n== {kind}: growth, {args.growth_trips} round trips per count, taken in turn")
            grown[kind] = await growth(kind, args, work)
            first, last = grown[kind][0][1], grown[kind][-1][1]
            print(
                f"{kind}: {grown[kind][-1][0]} pending / empty = {last / first:.2f}x "
                f"(goal <= {GROWTH_GOAL}x)"
            )
            ok &= last <= GROWTH_GOAL * first
    print(f"load average at the end {os.getloadavg()[0]:.1f} (a shared 2-core machine)")
    if args.charts:
        charts(Path(args.charts), grown, crowds)
    return 0 if ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", default="sqlite,postgres")
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--asks", type=int, default=100_000)
    parser.add_argument("--streams", type=int, default=2_000)
    parser.add_argument("--all-streams", type=int, default=30)
    parser.add_argument("--agents", type=int, default=64)
    parser.add_argument("--pace", type=float, default=1.0, help="seconds per round trip")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--idle-trips", type=int, default=60)
    parser.add_argument("--probe-seconds", type=float, default=5.0)
    parser.add_argument("--no-crowd", action="store_true")
    parser.add_argument("--growth", default="", help="pending counts, e.g. 0,1000,10000,100000")
    parser.add_argument("--growth-trips", type=int, default=100)
    parser.add_argument("--keep", action="store_true", help="keep the stores and server logs")
    parser.add_argument("--charts", default="", help="a folder to write the PNG charts into")
    parser.add_argument(
        "--py-spy", default="", help="PREFIX: record the server with py-spy (pip install py-spy)"
    )
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    parser.add_argument("--streams-child", help=argparse.SUPPRESS)
    parser.add_argument("--answerer-child", help=argparse.SUPPRESS)
    parsed = parser.parse_args()
    if parsed.probe:
        asyncio.run(probe_main(parsed.probe))
    elif parsed.streams_child:
        asyncio.run(streams_main(parsed.streams_child))
    elif parsed.answerer_child:
        asyncio.run(answerer_main(parsed.answerer_child))
    else:
        raise SystemExit(asyncio.run(main(parsed)))
