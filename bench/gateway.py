"""The gateway's round trip beside a bare FastAPI POST on uvicorn, measured in one run.

    .venv/bin/python bench/gateway.py [--quick]
    .venv/bin/python bench/gateway.py --profile out.txt [--seconds 20]   (needs py-spy;
        prints the share of each component, then the top functions, inclusive and self)
    .venv/bin/python bench/gateway.py --no-express   (FastAPI's routes only: the lane's gain)
    .venv/bin/python bench/gateway.py --loop uvloop --http httptools   (the `bench` extra)
    .venv/bin/python bench/gateway.py --client httpx   (the generator's clients as at stop 27)
    .venv/bin/python bench/gateway.py --calls 1000   (what each side does per operation,
        counted: event-loop turns, callbacks, tasks, SQL statements, JSON dumps)
    .venv/bin/python bench/gateway.py --callgrind 200   (instructions per operation of each
        side under valgrind's callgrind, which do not move with the machine's load)
    .venv/bin/python bench/gateway.py --callgrind 1280 --workers 64   (the same, 64
        operations at once, as in the timed concurrent phase; also with --calls)
    .venv/bin/python bench/gateway.py --perf 2000 [--workers 64]   (each server's CPU per
        operation by shared object, the kernel's by system call and symbol, under
        `perf record -e cpu-clock`; page faults and context switches from /proc)

A round trip: the agent creates an ask and long-polls for it in the same request
(`POST /v1/sessions/{sid}/asks?wait=60`); an answerer, following the admin event stream,
sees `user_question_requested` and posts the answer; the agent's request returns the
result. The anchor: a bare FastAPI endpoint on uvicorn that
validates a small JSON body and returns one, in its own process, driven by the same
client code (`--client`: the lean client of `bench/_lean_http.py` by default, or httpx).
Both servers run as separate processes on 127.0.0.1; the load generator is this process.

Goals (docs/benchmarks.md, issue 18):
- server CPU per round trip ≤ 4 × the bare POST's per request;
- round-trip p50 ≤ 2.5 × the bare POST's p50;
- 64 concurrent sessions: round trips/s ≥ 40 % of the bare endpoint's requests/s;
- 1,000 concurrent waiting agents and 100 SSE streams held, then all released, with no
  errors.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import _perf_split
import httpx
from _lean_http import Connection, LeanHTTPError

ADMIN = "bench-admin-token-5b8f0c"
ASK = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use?",
            "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}],
        },
        {"id": "name", "question": "What should the service be called?", "kind": "text"},
    ]
}
ANSWER = {"answers": {"db": "PostgreSQL", "name": "billing-api"}}
BARE_BODY = {"tool_input": ASK, "turn_id": "t1", "tool_call_id": None}

BARE_APP = """
import sys
import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel
from typing import Any

app = FastAPI()

class Body(BaseModel):
    tool_input: Any
    turn_id: str = "turn"
    tool_call_id: str | None = None

@app.post("/bare", status_code=201)
async def bare(body: Body) -> dict[str, Any]:
    return {"id": "x", "status": "pending", "turn_id": body.turn_id}

@app.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}

uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning",
            access_log=False, loop=sys.argv[2], http=sys.argv[3])
"""


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_bare(prefix: tuple[str, ...] = ()) -> tuple[subprocess.Popen[bytes], str]:
    """The anchor; `prefix` runs it under a tool (valgrind, the `PROFILED` launcher)."""
    port = _free_port()
    program = Path(tempfile.mkdtemp(prefix="midturn-bench-")) / "bare.py"
    program.write_text(BARE_APP)
    command = [*prefix, str(program)] if prefix else [sys.executable, str(program)]
    process = subprocess.Popen([*command, str(port), LOOP, HTTP])
    url = f"http://127.0.0.1:{port}"
    for _ in range(500):
        try:
            if httpx.get(f"{url}/healthz").status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.02)
    raise SystemExit("the bare server did not start")


WITHOUT_EXPRESS = """
import sys
from midturn.gateway._express import ExpressLane
from midturn.gateway.__main__ import main

async def never(self, *args):
    return None

ExpressLane.respond = never  # every request through FastAPI's routes, as before the lane
main(sys.argv[1:])
"""
EXPRESS = True

# The event loop and HTTP parser of both servers (the anchor runs on the same pair, so
# the ratio compares midturn with FastAPI, not one parser with another).
LOOP, HTTP = "asyncio", "h11"


def _start_gateway(
    db_url: str, prefix: tuple[str, ...] = ()
) -> tuple[subprocess.Popen[bytes], str]:
    """The gateway; `prefix` as for `_start_bare` (then always with the express lane)."""
    env = {**os.environ, "MIDTURN_TOKEN": ADMIN, "PYTHONUNBUFFERED": "1"}
    if prefix:
        command = [*prefix, "-m", "midturn.gateway"]
    else:
        program = ["-m", "midturn.gateway"] if EXPRESS else ["-c", WITHOUT_EXPRESS]
        command = [sys.executable, *program]
    process = subprocess.Popen(
        [*command, "--db", db_url, "--port", "0", "--loop", LOOP, "--http", HTTP],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert process.stdout is not None
    for raw in process.stdout:
        line = raw.decode()
        if line.startswith("midturn gateway on "):
            return process, line.removeprefix("midturn gateway on ").split()[0]
    raise SystemExit("the gateway did not start")


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# How long the answerer's httpx clients keep an idle connection: below the gateway's own
# keep-alive (75 s, `_serve.py`), above httpx's 5 s, which a client of the answerer's
# free list reaches whenever 64 round trips take more than 5 s (under callgrind, cProfile
# or a loaded machine): it then opened a connection for every answer, counted in the
# server's turns, callbacks, tasks and instructions per round trip. (The lean client
# keeps a connection until the server closes it.)
ANSWERER_KEEPALIVE_S = 60.0

# The client code of the timed phases and the counted modes (`--client`): the bare POST's
# callers, the agents and the answerer alike, so that the two sides stay like for like.
# "lean" (`bench/_lean_http.py`: one kept connection, httptools' parser) costs the load
# generator about a tenth of httpx's CPU per request, so that on this 2-core machine the
# 64-concurrent ratio measures the servers rather than the generator's httpx
# (docs/benchmarks.md, stop 28); "httpx" is the client of stop 27 and before.
CLIENT = "lean"
ERRORS = (RuntimeError, httpx.HTTPError, LeanHTTPError)


def _limits(n: int, keepalive_s: float = 5.0) -> httpx.Limits:
    return httpx.Limits(
        max_connections=n, max_keepalive_connections=n, keepalive_expiry=keepalive_s
    )


class _Response(Protocol):
    @property
    def status_code(self) -> int: ...

    @property
    def text(self) -> str: ...

    def json(self) -> Any: ...


class _Lines(Protocol):
    status_code: int

    def lines(self) -> AsyncIterator[str]: ...


class _Client(Protocol):
    """What the generator asks of a client: `Connection`'s two methods."""

    async def request(
        self,
        method: str,
        target: str,
        *,
        json_body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> _Response: ...

    def stream(
        self, method: str, target: str, *, headers: dict[str, str] | None = None
    ) -> contextlib.AbstractAsyncContextManager[_Lines]: ...

    async def aclose(self) -> None: ...


class _HttpxLines:
    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.status_code = response.status_code

    def lines(self) -> AsyncIterator[str]:
        return self.response.aiter_lines()


class _Httpx:
    """An `httpx.AsyncClient` of one connection behind `Connection`'s methods
    (`--client httpx`): what the generator did at stop 27, a call deeper."""

    def __init__(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        timeout: float = 30,
        keepalive_s: float = 5.0,
    ) -> None:
        self.http = httpx.AsyncClient(
            base_url=url, headers=headers, timeout=timeout, limits=_limits(1, keepalive_s)
        )
        self.timeout = timeout

    async def request(
        self,
        method: str,
        target: str,
        *,
        json_body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        return await self.http.request(method, target, json=json_body, headers=headers)

    @contextlib.asynccontextmanager
    async def stream(
        self, method: str, target: str, *, headers: dict[str, str] | None = None
    ) -> AsyncIterator[_HttpxLines]:
        no_read_timeout = httpx.Timeout(self.timeout, read=None)  # a stream waits for events
        async with self.http.stream(
            method, target, headers=headers, timeout=no_read_timeout
        ) as response:
            yield _HttpxLines(response)

    async def aclose(self) -> None:
        await self.http.aclose()


def _client(
    url: str,
    *,
    headers: dict[str, str] | None = None,
    timeout: float = 30,
    keepalive_s: float = 5.0,
) -> _Client:
    """A client of one kept connection, of the `CLIENT` kind."""
    if CLIENT == "httpx":
        return _Httpx(url, headers=headers, timeout=timeout, keepalive_s=keepalive_s)
    return Connection(url, headers=headers, timeout=timeout)


def _clients(
    url: str,
    count: int,
    keepalive_s: float = 5.0,
    *,
    headers: dict[str, str] | None = None,
    timeout: float = 30,
) -> list[_Client]:
    """`count` clients of one kept connection each, one per concurrent caller.
    (httpcore's pool checks every pooled connection on every request, so one httpx
    client shared by 64 callers spends most of the load generator's CPU scanning its
    pool.) Both sides are driven through this same helper."""
    return [
        _client(url, headers=headers, timeout=timeout, keepalive_s=keepalive_s)
        for _ in range(count)
    ]


class _FreeList:
    """Hands out an idle client from a list (for callers not tied to one client)."""

    def __init__(self, clients: list[_Client]) -> None:
        self.clients = clients
        self._idle: asyncio.Queue[_Client] = asyncio.Queue()
        for client in clients:
            self._idle.put_nowait(client)

    async def post(self, target: str, json_body: Any) -> _Response:
        client = await self._idle.get()
        try:
            return await client.request("POST", target, json_body=json_body)
        finally:
            self._idle.put_nowait(client)

    async def aclose(self) -> None:
        for client in self.clients:
            await client.aclose()


# -- the round trip --------------------------------------------------------------------


class Answerer:
    """Follows the admin event stream of asks requested (`?types=`); answers each."""

    def __init__(self, url: str) -> None:
        auth = {"Authorization": f"Bearer {ADMIN}"}
        self.http = _client(url, headers=auth, timeout=30)
        self.posting = _FreeList(_clients(url, 64, ANSWERER_KEEPALIVE_S, headers=auth, timeout=30))
        self.errors = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._follow: asyncio.Task[None] | None = None
        self.listening = asyncio.Event()

    async def start(self, after: int) -> None:
        self._follow = asyncio.create_task(self._run(after))
        await asyncio.wait_for(self.listening.wait(), 10)

    async def _run(self, after: int) -> None:
        headers = {"Last-Event-ID": str(after)}
        wanted_only = "/v1/events?types=user_question_requested"  # the only events it answers
        async with self.http.stream("GET", wanted_only, headers=headers) as response:
            if response.status_code != 200:
                raise RuntimeError(f"the event stream was refused: {response.status_code}")
            self.listening.set()
            wanted = False  # decode only the events it answers (the filter sends no other)
            async for line in response.lines():
                if line.startswith("event: "):
                    wanted = line == "event: user_question_requested"
                elif wanted and line.startswith("data: "):
                    event = json.loads(line[6:])
                    task = asyncio.create_task(self._answer(event["interaction_id"]))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)

    async def _answer(self, ask_id: str) -> None:
        try:
            response = await self.posting.post(f"/v1/asks/{ask_id}/answer", ANSWER)
        except ERRORS:
            self.errors += 1
            return
        if response.status_code != 200:
            self.errors += 1

    async def aclose(self) -> None:
        if self._follow is not None:
            self._follow.cancel()
            await asyncio.gather(self._follow, return_exceptions=True)
        # an answer's response can still be on its way when its agent has its result
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.http.aclose()
        await self.posting.aclose()


async def _new_session(admin: httpx.AsyncClient) -> dict[str, str]:
    response = await admin.post("/v1/sessions", json={})
    response.raise_for_status()
    session: dict[str, str] = response.json()
    return session


async def _round_trip(agent: _Client, session: dict[str, str]) -> float:
    headers = {"Authorization": f"Bearer {session['agent_token']}"}
    started = time.perf_counter()
    created = await agent.request(
        "POST",
        f"/v1/sessions/{session['session_id']}/asks?wait=60",
        json_body={"tool_input": ASK, "turn_id": "t1"},
        headers=headers,
    )
    if created.status_code != 201:
        raise RuntimeError(f"ask refused: {created.status_code} {created.text}")
    interaction = created.json()["interaction"]  # parsed once: a 2 KB body
    if interaction["status"] != "pending":
        return time.perf_counter() - started
    ask_id = interaction["id"]
    while True:
        waited = await agent.request("GET", f"/v1/asks/{ask_id}?wait=60", headers=headers)
        if waited.status_code != 200:
            raise RuntimeError(f"wait refused: {waited.status_code} {waited.text}")
        if waited.json()["interaction"]["status"] != "pending":
            return time.perf_counter() - started


async def _bare_post(client: _Client) -> float:
    started = time.perf_counter()
    response = await client.request("POST", "/bare", json_body=BARE_BODY)
    if response.status_code != 201:
        raise RuntimeError(f"bare POST failed: {response.status_code}")
    return time.perf_counter() - started


# -- phases ----------------------------------------------------------------------------


async def _sequential(call: Callable[[], Awaitable[float]], count: int) -> list[float]:
    return [await call() for _ in range(count)]


async def _concurrent(
    workers: int, seconds: float, call: Callable[[int], Awaitable[float]]
) -> tuple[float, int]:
    """(completed calls per second, errors) with `workers` loops for `seconds`."""
    done = 0
    errors = 0
    stop_at = time.perf_counter() + seconds

    async def worker(index: int) -> None:
        nonlocal done, errors
        while time.perf_counter() < stop_at:
            try:
                await call(index)
                done += 1
            except ERRORS:
                errors += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(workers)))
    return done / (time.perf_counter() - started), errors


def _machine_seconds() -> tuple[float, float]:
    """(busy, idle) CPU seconds of all the machine's cores since boot (Linux /proc/stat;
    zeros elsewhere). Idle counts I/O wait; busy counts every other state, guests aside
    (already in user time)."""
    try:
        fields = [int(n) for n in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    except OSError:
        return 0.0, 0.0
    idle = fields[3] + fields[4]
    return (sum(fields) - idle) / os.sysconf("SC_CLK_TCK"), idle / os.sysconf("SC_CLK_TCK")


class _Tally:
    """A concurrent phase over its slices: its rates and errors, and what bounded it, as
    the CPU seconds of the server (/proc), of the load generator (this process: the
    callers, the answerer and the loop they share) and of the whole machine, of which
    what is neither is other processes' or idle."""

    def __init__(self, server_pid: int, workers: int = 64) -> None:
        self.server_pid = server_pid
        self.workers = workers
        self.runs: list[tuple[float, int]] = []
        self.operations = self.wall = self.server = self.generator = 0.0
        self.busy = self.idle = 0.0

    async def run(self, seconds: float, call: Callable[[int], Awaitable[float]]) -> None:
        server, generator = _cpu_seconds(self.server_pid), time.process_time()
        busy, idle = _machine_seconds()
        started = time.perf_counter()
        rate, errors = await _concurrent(self.workers, seconds, call)
        wall = time.perf_counter() - started
        busy_after, idle_after = _machine_seconds()
        self.runs.append((rate, errors))
        self.operations += rate * wall
        self.wall += wall
        self.server += _cpu_seconds(self.server_pid) - server
        self.generator += time.process_time() - generator
        self.busy += busy_after - busy
        self.idle += idle_after - idle

    @property
    def rate(self) -> float:
        return statistics.fmean(rate for rate, _ in self.runs)

    @property
    def errors(self) -> int:
        return sum(errors for _, errors in self.runs)

    def per_operation_ms(self, seconds: float) -> float:
        return 1000 * seconds / max(1.0, self.operations)

    def cores(self) -> str:
        """Each one's share of a core over the phase (the machine's cores add up to
        `os.cpu_count()` × 100%)."""
        others = self.busy - self.server - self.generator
        shares = (self.server, self.generator, max(0.0, others), self.idle)
        server, generator, rest, idle = (share / max(self.wall, 1e-9) for share in shares)
        return f"server {server:.0%}, generator {generator:.0%}, others {rest:.0%}, idle {idle:.0%}"


def _p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1] * 1000


async def _hold(url: str, waiters: int, streams: int) -> dict[str, Any]:
    """Hold `waiters` long polls and `streams` SSE streams, check the gateway reports
    them, then answer every ask and check every waiter and stream saw it. Clients are
    split (httpx's pool slows down with a thousand connections in one client)."""
    auth = {"Authorization": f"Bearer {ADMIN}"}

    def client(connections: int) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=url,
            headers=auth,
            timeout=httpx.Timeout(120, read=None),
            limits=_limits(connections),
        )

    admin = client(64)
    pools = [client(100) for _ in range(max(1, waiters // 100))]
    stream_client = client(streams)
    sessions = [await _new_session(admin) for _ in range(streams)]
    asks: list[str] = []
    for n in range(waiters):
        session = sessions[n % streams]
        created = await admin.post(
            f"/v1/sessions/{session['session_id']}/asks", json={"tool_input": ASK}
        )
        asks.append(created.json()["interaction"]["id"])

    stream_events = [0] * streams
    stream_errors = 0
    opened = asyncio.Semaphore(0)

    async def follow(index: int) -> None:
        nonlocal stream_errors
        session = sessions[index]
        try:
            async with stream_client.stream(
                "GET",
                f"/v1/sessions/{session['session_id']}/events",
                headers={"Authorization": f"Bearer {session['answer_token']}"},
            ) as response:
                opened.release()
                if response.status_code != 200:
                    stream_errors += 1
                    return
                async for line in response.aiter_lines():
                    if line.startswith("event: user_question_answered"):
                        stream_events[index] += 1
                        if stream_events[index] == waiters // streams:
                            return
        except httpx.HTTPError:
            stream_errors += 1

    async def wait(index: int, ask_id: str) -> str:
        pool = pools[index % len(pools)]
        while True:  # as an agent does: poll again while it is still pending
            response = await pool.get(f"/v1/asks/{ask_id}", params={"wait": 60})
            if response.status_code != 200:
                return "error"
            status = str(response.json()["interaction"]["status"])
            if status != "pending":
                return status

    followers = [asyncio.create_task(follow(i)) for i in range(streams)]
    for _ in range(streams):
        await opened.acquire()
    waiting = [asyncio.create_task(wait(i, ask_id)) for i, ask_id in enumerate(asks)]
    held: dict[str, float] = {}
    for _ in range(6000):
        text = (await admin.get("/metrics")).text
        held = {
            line.split()[0]: float(line.split()[1])
            for line in text.splitlines()
            if line.startswith(("midturn_waiting_requests", "midturn_open_streams"))
        }
        if held.get("midturn_waiting_requests") == waiters:
            break
    started = time.perf_counter()
    answer_errors = 0
    answering = asyncio.Semaphore(32)

    async def answer(ask_id: str) -> None:
        nonlocal answer_errors
        async with answering:
            response = await admin.post(f"/v1/asks/{ask_id}/answer", json=ANSWER)
        answer_errors += response.status_code != 200

    await asyncio.gather(*(answer(ask_id) for ask_id in asks))
    statuses = await asyncio.gather(*waiting)
    await asyncio.wait_for(asyncio.gather(*followers), 120)
    released = time.perf_counter() - started
    for each in (admin, stream_client, *pools):
        await each.aclose()
    return {
        "held_waiting": held.get("midturn_waiting_requests"),
        "held_streams": held.get("midturn_open_streams"),
        "answered": statuses.count("answered"),
        "wait_errors": len(statuses) - statuses.count("answered"),
        "answer_errors": answer_errors,
        "stream_errors": stream_errors,
        "stream_events": sum(stream_events),
        "release_s": released,
    }


# -- where the server's time goes ----------------------------------------------------

COMPONENTS: list[tuple[str, tuple[str, ...]]] = [
    # (component, path fragments of a frame); a sample is charged to the innermost
    # frame that matches any fragment, so a library called from midturn code is charged
    # to the library (its JSON, its validation), midturn's own lines to midturn
    ("SQLite statements", ("sqlite3", "midturn/store/_sqlite")),
    ("JSON + pydantic (serialize, validate)", ("pydantic", "json/")),
    ("logging (access log)", ("logging/", "midturn/gateway/_serve.py")),
    ("SSE hub and streams", ("midturn/gateway/_hub.py", "midturn/gateway/_sse.py")),
    ("midturn runtime + contract", ("midturn/runtime", "midturn/contract", "midturn/store")),
    ("midturn gateway routes + middleware", ("midturn/gateway",)),
    ("FastAPI (routing, dependencies, params)", ("fastapi/",)),
    ("Starlette (request, response, routing)", ("starlette/",)),
    ("uvicorn + h11/httptools (HTTP parse/write)", ("uvicorn/", "h11/", "httptools/")),
    ("event loop (asyncio/uvloop) + sockets", ("asyncio/", "uvloop/", "selectors", "socket")),
]


def _component(stack: list[str]) -> str:
    for frame in reversed(stack):  # innermost first
        for name, fragments in COMPONENTS:
            if any(fragment in frame for fragment in fragments):
                return name
    return "other"


def _busy_stacks(raw: Path) -> Iterator[tuple[list[str], int]]:
    """(frames, samples) of each stack in a py-spy `--format raw` file, leaving out a
    thread pool's worker waiting for work (py-spy counts it as running)."""
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        if not frames[-1].startswith("_worker (concurrent/futures/thread.py"):
            yield frames, int(count)


def summarize(raw: Path) -> list[tuple[str, float]]:
    """The share of samples per component in a py-spy `--format raw` file. A thread
    pool's worker waiting for work is idle (py-spy counts it as running)."""
    counts: dict[str, int] = {}
    for frames, n in _busy_stacks(raw):
        name = _component(frames)
        counts[name] = counts.get(name, 0) + n
    total = sum(counts.values()) or 1
    return sorted(((name, n / total) for name, n in counts.items()), key=lambda x: -x[1])


def by_function(raw: Path, top: int = 25) -> list[tuple[str, float, float]]:
    """The functions with the most samples in a py-spy raw file: (function, inclusive
    share, self share), line numbers dropped, idle thread-pool workers left out."""
    inclusive: dict[str, int] = {}
    own: dict[str, int] = {}
    total = 0
    for frames, n in _busy_stacks(raw):
        total += n
        names = [frame.rsplit(":", 1)[0] + ")" if ":" in frame else frame for frame in frames]
        for name in set(names):
            inclusive[name] = inclusive.get(name, 0) + n
        own[names[-1]] = own.get(names[-1], 0) + n
    total = total or 1
    ranked = sorted(inclusive.items(), key=lambda item: -item[1])
    # leave out the frames every sample passes through (the loop, the server's entry)
    ranked = [(name, n) for name, n in ranked if n < 0.9 * total][:top]
    return [(name, n / total, own.get(name, 0) / total) for name, n in ranked]


def _spy(pid: int, seconds: float, out: Path) -> subprocess.Popen[bytes]:
    """py-spy sampling process `pid` for `seconds` into `out` (raw stacks)."""
    command = [str(Path(sys.executable).with_name("py-spy")), "record", "--pid", str(pid)]
    command += ["--duration", str(int(seconds)), "--rate", "200", "--format", "raw"]
    return subprocess.Popen([*command, "--output", str(out)], stdout=subprocess.DEVNULL)


async def profile(out: Path, seconds: float, store: str) -> int:
    """64 concurrent round trips for `seconds` while py-spy samples the gateway (not
    idle time: only samples where the server runs Python or C code)."""
    workdir = Path(tempfile.mkdtemp(prefix="midturn-bench-"))
    db_url = f"sqlite:///{workdir / 'bench.db'}" if store == "sqlite" else store
    gateway_process, gateway_url = _start_gateway(db_url)
    try:
        admin = httpx.AsyncClient(
            base_url=gateway_url, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=90
        )
        sessions = [await _new_session(admin) for _ in range(64)]
        answerer = Answerer(gateway_url)
        await answerer.start(after=0)
        agents = _clients(gateway_url, 64, timeout=90)
        await _concurrent(64, 2.0, lambda i: _round_trip(agents[i], sessions[i]))  # warm up
        spy = _spy(gateway_process.pid, seconds, out)
        cpu = _cpu_seconds(gateway_process.pid)
        rate, errors = await _concurrent(
            64, seconds + 1, lambda i: _round_trip(agents[i], sessions[i])
        )
        cpu_ms = 1000 * (_cpu_seconds(gateway_process.pid) - cpu) / max(1.0, rate * (seconds + 1))
        spy.wait(60)
        for each in agents:
            await each.aclose()
        await answerer.aclose()
        await admin.aclose()
    finally:
        _stop(gateway_process)
    print(f"{rate:.1f} round trips/s under the profiler ({errors} errors); samples in {out}")
    print(f"server CPU per round trip {cpu_ms:.2f} ms (sampled, so above the plain run's)")
    for name, share in summarize(out):
        print(f"  {share:6.1%}  {share * cpu_ms * 1000:5.0f} µs  {name}")
    print("functions (inclusive, self):")
    for name, inclusive, own in by_function(out):
        print(f"  {inclusive:6.1%}  {own:6.1%}  {name}")
    return 0


# -- what each operation costs, counted -----------------------------------------------

PROFILED = """
import cProfile, runpy, signal, sys
# SIGUSR1 starts cProfile in the server's main thread (its event loop), SIGUSR2 stops it
# and writes the stats to argv[1]; the rest of argv is the program, as `python` takes it
out, profiler = sys.argv.pop(1), cProfile.Profile()
signal.signal(signal.SIGUSR1, lambda *_: profiler.enable())
signal.signal(signal.SIGUSR2, lambda *_: (profiler.disable(), profiler.dump_stats(out)))
del sys.argv[0]  # "-c"
if sys.argv[0] == "-m":
    del sys.argv[0]
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
else:
    runpy.run_path(sys.argv[0], run_name="__main__")
"""

COUNTED: list[tuple[str, str, str]] = [
    # (what, the function cProfile counts, a fragment of its file: "~" for a builtin)
    ("event-loop turns (an epoll wait each)", "_run_once", "asyncio/base_events.py"),
    ("callbacks the loop runs", "_run", "asyncio/events.py"),
    ("tasks created", "create_task", "asyncio/base_events.py"),
    ("timers scheduled", "call_at", "asyncio/base_events.py"),
    ("socket sends", "<method 'send' of '_socket.socket' objects>", "~"),
    ("SQL statements", "<method 'execute' of 'sqlite3.Connection' objects>", "~"),
    (
        "pydantic JSON dumps",
        "<method 'to_json' of 'pydantic_core._pydantic_core.SchemaSerializer' objects>",
        "~",
    ),
]


def _counted(stats_file: Path, operations: int) -> dict[str, float]:
    """The `COUNTED` calls per operation in a cProfile stats file."""
    import pstats

    stats: dict[tuple[str, int, str], tuple[Any, ...]]
    stats = pstats.Stats(str(stats_file)).stats  # type: ignore[attr-defined]
    counts = dict.fromkeys((what for what, _, _ in COUNTED), 0.0)
    for (file, _, function), (_, calls, *_) in stats.items():
        for what, name, fragment in COUNTED:
            if function == name and fragment in file:
                counts[what] += calls / operations
    return counts


async def _in_workers(
    workers: int, operations: int, call: Callable[[int], Awaitable[float]]
) -> None:
    """`operations` calls, `call(i)` in worker i's loop, `workers` loops at once (the
    operations split between them as evenly as they go)."""
    shares = [operations // workers + (i < operations % workers) for i in range(workers)]

    async def worker(index: int) -> None:
        for _ in range(shares[index]):
            await call(index)

    await asyncio.gather(*(worker(i) for i in range(workers)))


async def _each_side(
    operations: int,
    on: Callable[[subprocess.Popen[bytes]], None],
    off: Callable[[subprocess.Popen[bytes]], None],
    prefix: Callable[[str], tuple[str, ...]],
    store: str,
    workers: int = 1,
    sides: tuple[str, ...] = ("bare", "gateway"),
) -> None:
    """Both servers started under `prefix(side)`; on each, after a warm-up, `on(process)`,
    `operations` operations (bare POSTs, round trips), then `off(process)`: one after
    another, or with `workers` > 1 that many at once, each worker on its own
    connection (and, on the gateway, its own session), as the timed 64-concurrent phase
    runs them."""
    workdir = Path(tempfile.mkdtemp(prefix="midturn-bench-"))
    db_url = f"sqlite:///{workdir / 'bench.db'}" if store == "sqlite" else store
    bare_process, bare_url = _start_bare(prefix("bare"))
    gateway_process, gateway_url = _start_gateway(db_url, prefix("gateway"))
    try:
        admin = httpx.AsyncClient(
            base_url=gateway_url, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=600
        )
        sessions = [await _new_session(admin) for _ in range(workers)]
        answerer = Answerer(gateway_url)
        await answerer.start(after=0)
        bares = _clients(bare_url, workers, timeout=600)
        agents = _clients(gateway_url, workers, timeout=600)
        measured: list[tuple[subprocess.Popen[bytes], Callable[[int], Awaitable[float]]]] = [
            (bare_process, lambda i: _bare_post(bares[i])),
            (gateway_process, lambda i: _round_trip(agents[i], sessions[i])),
        ]
        for process, call in measured:
            if process is bare_process and "bare" not in sides:
                continue
            await _in_workers(workers, max(50, 4 * workers), call)  # warm up
            on(process)
            await _in_workers(workers, operations, call)
            off(process)
        for each in (*bares, *agents):
            await each.aclose()
        await admin.aclose()
        await answerer.aclose()
        if answerer.errors:
            raise SystemExit(f"{answerer.errors} answers refused")
    finally:
        _stop(gateway_process)
        _stop(bare_process)


def _how(operations: int, workers: int) -> str:
    return f"{operations} sequential" if workers == 1 else f"{operations} by {workers} workers"


async def calls(operations: int, store: str, workers: int = 1) -> int:
    """`COUNTED` per operation of each side, by cProfile inside each server for
    `operations` bare POSTs and round trips (by `workers` at once)."""
    workdir = Path(tempfile.mkdtemp(prefix="midturn-bench-"))

    def prefix(side: str) -> tuple[str, ...]:
        return (sys.executable, "-c", PROFILED, str(workdir / f"{side}.pstats"))

    def off(process: subprocess.Popen[bytes]) -> None:
        process.send_signal(signal.SIGUSR2)
        time.sleep(1)  # the stats written

    await _each_side(
        operations, lambda process: process.send_signal(signal.SIGUSR1), off, prefix, store, workers
    )
    bare, trip = (_counted(workdir / f"{side}.pstats", operations) for side in ("bare", "gateway"))
    print(f"per operation, {_how(operations, workers)} (cProfile in each server, {workdir}):")
    print(f"  {'':40} {'bare POST':>10} {'round trip':>11}")
    for what, _, _ in COUNTED:
        print(f"  {what:40} {bare[what]:10.2f} {trip[what]:11.2f}")
    return 0


def callgrind_prefix(out: Path) -> tuple[str, ...]:
    """valgrind's callgrind, writing to `out` and counting nothing until `instrument`
    turns it on."""
    return (
        "valgrind",
        "-q",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}",
    )


def instrument(pid: int, switch: str) -> None:
    """Turn the counting of the process `pid`, under callgrind, "on" or "off"."""
    subprocess.run(["callgrind_control", "-i", switch, str(pid)], check=True, capture_output=True)


def instructions(out: Path) -> int:
    """The instructions counted in the callgrind output file `out`."""
    for line in out.read_text().splitlines():
        if line.startswith("totals:"):
            return int(line.split()[1])
    raise SystemExit(f"no totals in {out}")


async def callgrind(operations: int, store: str, workers: int = 1) -> int:
    """Instructions per operation of each side: each server under valgrind's callgrind,
    instrumented only for `operations` bare POSTs and round trips (after a warm-up),
    one after another or by `workers` at once. User-space instructions only: the
    kernel's side of each system call (a socket's send, an epoll wait) is not in them."""
    workdir = Path(tempfile.mkdtemp(prefix="midturn-bench-"))

    def prefix(side: str) -> tuple[str, ...]:
        return (*callgrind_prefix(workdir / f"{side}.callgrind"), sys.executable)

    def on(process: subprocess.Popen[bytes]) -> None:
        instrument(process.pid, "on")

    def off(process: subprocess.Popen[bytes]) -> None:
        instrument(process.pid, "off")

    await _each_side(operations, on, off, prefix, store, workers)
    bare, trip = (
        instructions(workdir / f"{side}.callgrind") / operations for side in ("bare", "gateway")
    )
    print(f"instructions per operation ({_how(operations, workers)}, callgrind, {workdir}):")
    print(f"  bare POST {bare / 1e6:.3f} M, round trip {trip / 1e6:.3f} M ({trip / bare:.1f}x)")
    return 0


def _thread_cpu(pid: int) -> dict[str, tuple[float, float]]:
    """(user, system) CPU seconds of `pid`'s main thread (the event loop's) and of its
    other threads together (SQLite's worker and checkpoint threads), from Linux /proc.
    (A thread that ended before the read is in neither.)"""
    tick = os.sysconf("SC_CLK_TCK")
    threads: dict[str, tuple[float, float]] = {}
    for name, _, fields in _perf_split.threads_of(pid):
        user, system = threads.get(name, (0.0, 0.0))
        threads[name] = (user + int(fields[11]) / tick, system + int(fields[12]) / tick)
    return threads


async def cpu(operations: int, store: str, workers: int = 1) -> int:
    """User and system CPU per operation of each side, by thread, read from /proc before
    and after `operations` bare POSTs and round trips (by `workers` at once). A timed
    figure (the clock tick is 10 ms): run it with enough operations, beside a base run."""
    before: dict[int, dict[str, tuple[float, float]]] = {}
    spent: list[dict[str, tuple[float, float]]] = []

    def on(process: subprocess.Popen[bytes]) -> None:
        before[process.pid] = _thread_cpu(process.pid)

    def off(process: subprocess.Popen[bytes]) -> None:
        then = before[process.pid]
        spent.append(
            {
                name: (user - then.get(name, (0, 0))[0], system - then.get(name, (0, 0))[1])
                for name, (user, system) in _thread_cpu(process.pid).items()
            }
        )

    await _each_side(operations, on, off, lambda side: (), store, workers)
    print(f"server CPU per operation, µs ({_how(operations, workers)}, /proc, by thread):")
    for side, threads in zip(("bare POST", "round trip"), spent, strict=True):
        per_op = {
            name: (user / operations * 1e6, system / operations * 1e6)
            for name, (user, system) in threads.items()
        }
        user = sum(u for u, _ in per_op.values())
        system = sum(s for _, s in per_op.values())
        print(f"  {side:10} user {user:7.1f}  system {system:7.1f}  total {user + system:7.1f}")
        for name, (u, s) in sorted(per_op.items(), key=lambda item: -sum(item[1])):
            if u + s:
                print(f"    {name:16} user {u:7.1f}  system {s:7.1f}")
    return 0


async def syscalls(operations: int, store: str, workers: int = 1) -> int:
    """System calls per operation of each side, every thread of the server, by strace
    attached for `operations` bare POSTs and round trips (by `workers` at once)."""
    workdir = Path(tempfile.mkdtemp(prefix="midturn-bench-"))
    tracers: dict[int, tuple[subprocess.Popen[bytes], Path]] = {}
    order: list[int] = []

    def on(process: subprocess.Popen[bytes]) -> None:
        out = workdir / f"{process.pid}.strace"
        command = ["strace", "-c", "-f", "-o", str(out), "-p", str(process.pid)]
        tracers[process.pid] = (subprocess.Popen(command, stderr=subprocess.DEVNULL), out)
        order.append(process.pid)
        time.sleep(1)  # attached to every thread

    def off(process: subprocess.Popen[bytes]) -> None:
        tracer, _ = tracers[process.pid]
        tracer.send_signal(signal.SIGINT)
        tracer.wait(30)

    await _each_side(operations, on, off, lambda side: (), store, workers)
    counts: list[dict[str, int]] = []
    for pid in order:
        calls: dict[str, int] = {}
        for line in tracers[pid][1].read_text().splitlines():
            fields = line.split()
            if len(fields) >= 5 and fields[0][0].isdigit() and fields[-1] != "total":
                calls[fields[-1]] = int(fields[3])
        counts.append(calls)
    bare, trip = counts
    print(f"system calls per operation ({_how(operations, workers)}, strace -f, {workdir}):")
    print(f"  {'':18} {'bare POST':>10} {'round trip':>11}")
    for name in sorted({*bare, *trip}, key=lambda n: -(trip.get(n, 0) + bare.get(n, 0))):
        each = (bare.get(name, 0) / operations, trip.get(name, 0) / operations)
        print(f"  {name:18} {each[0]:10.2f} {each[1]:11.2f}")
    total = [sum(each.values()) / operations for each in counts]
    print(f"  {'all':18} {total[0]:10.2f} {total[1]:11.2f}")
    return 0


BATCHES = """
import json, runpy, signal, sys
from midturn.store import _sqlite_conn as conn
# Counts, in the gateway, the writes each COMMIT of the SQLite connection held and why a
# write committed on its own; SIGUSR1 starts counting, SIGUSR2 writes the counts to
# argv[1] as JSON. The connection's methods are wrapped here, so the same count runs on
# any version of the store (the base's too); the rest of argv is as for PROFILED.
out, counting = sys.argv.pop(1), [False]
sizes, why = {}, {}

def count(writes, reason):
    if counting[0]:
        sizes[writes] = sizes.get(writes, 0) + 1
        why[reason] = why.get(reason, 0) + 1

def wrap(name, reason_of, after=False):
    method = getattr(conn.Connection, name, None)
    if method is None:  # not in this version of the store
        return
    def wrapped(self, *args, **kwargs):
        reason = None if after else reason_of(self, *args)
        result = method(self, *args, **kwargs)
        reason = reason_of(self, *args) if after else reason
        if reason is not None:
            count(*reason)
        return result
    setattr(conn.Connection, name, wrapped)

wrap("_commit", lambda self, batch: None if batch.finished else (batch.writes, "batch"))
wrap("_commit_alone", lambda self, *_: (
    1, "alone: no company" if getattr(self, "_batching", True) else "alone: not batching"))
wrap("_patiently", lambda self, *_: (1, "worker thread, alone"))  # the base's
wrap("_run_queued", lambda self, queued: (len(queued.writes), "worker thread, queued"), True)
run = conn.Connection.run
async def counted_run(self, operation):
    if counting[0]:
        key = "reads while a batch is open" if self._batch is not None else "reads"
        why[key] = why.get(key, 0) + 1
    return await run(self, operation)
conn.Connection.run = counted_run

def start(*_):
    sizes.clear(), why.clear()
    counting[0] = True

def stop(*_):
    counting[0] = False
    with open(out, "w") as file:
        json.dump({"sizes": sizes, "why": why}, file)

signal.signal(signal.SIGUSR1, start)
signal.signal(signal.SIGUSR2, stop)
del sys.argv[0]  # "-c"
del sys.argv[0]  # "-m"
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


async def batches(operations: int, store: str, workers: int = 1) -> int:
    """The SQLite store's commits in the gateway over `operations` round trips (by
    `workers` at once): a histogram of the writes each COMMIT held, and why writes
    committed alone (`BATCHES`). Counts, not timed."""
    if not store.startswith("sqlite"):
        raise SystemExit("--batches counts the SQLite store's commits: use --store sqlite")
    out = Path(tempfile.mkdtemp(prefix="midturn-bench-")) / "batches.json"

    def prefix(side: str) -> tuple[str, ...]:
        return (sys.executable, "-c", BATCHES, str(out)) if side == "gateway" else ()

    def on(process: subprocess.Popen[bytes]) -> None:
        process.send_signal(signal.SIGUSR1)

    def off(process: subprocess.Popen[bytes]) -> None:
        process.send_signal(signal.SIGUSR2)
        for _ in range(100):
            if out.exists():
                return
            time.sleep(0.05)

    await _each_side(operations, on, off, prefix, store, workers, sides=("gateway",))
    counted = json.loads(out.read_text())
    sizes = {int(writes): n for writes, n in counted["sizes"].items()}
    commits, writes = sum(sizes.values()), sum(w * n for w, n in sizes.items())
    print(f"SQLite commits in the gateway ({_how(operations, workers)}, {out}):")
    print(
        f"  commits {commits} ({commits / operations:.2f} a trip), writes {writes} "
        f"({writes / operations:.2f} a trip), {writes / max(commits, 1):.2f} writes a commit"
    )
    print("  writes a commit: commits (writes)")
    for size in sorted(sizes):
        print(f"    {size:4} {sizes[size]:7} ({size * sizes[size]})")
    print("  by path (commits), and reads:")
    for reason, n in sorted(counted["why"].items()):
        print(f"    {reason:32} {n:7} ({n / operations:.2f} a trip)")
    return 0


async def perf(operations: int, store: str, workers: int = 1, top: int = 15) -> int:
    """Each server's CPU per operation split by shared object (the kernel, libpython,
    libsqlite3…) and by thread, the kernel's by what entered it (a system call, a page
    fault, an interrupt) and by symbol, sampled by `perf record -e cpu-clock -g` for
    `operations` bare POSTs and round trips (by `workers` at once); beside them the
    page faults and context switches per operation, counted from /proc. The samples are a
    timed figure (interleave runs with a base); the /proc counts are counts."""
    workdir = Path(tempfile.mkdtemp(prefix="midturn-bench-"))
    recorders: list[_perf_split.Recorder] = []
    before: dict[int, tuple[dict[str, dict[str, int]], dict[str, int]]] = {}
    counted: list[dict[str, dict[str, float]]] = []
    written: list[dict[str, float]] = []
    wal: list[int] = []

    def on(process: subprocess.Popen[bytes]) -> None:
        recorder = _perf_split.Recorder(process.pid, workdir / f"{process.pid}.perf")
        recorder.start()
        recorders.append(recorder)
        before[process.pid] = (_perf_split.counters(process.pid), _perf_split.io(process.pid))

    def off(process: subprocess.Popen[bytes]) -> None:
        after, after_io = _perf_split.counters(process.pid), _perf_split.io(process.pid)
        recorders[-1].stop()
        then, then_io = before[process.pid]
        counted.append(_perf_split.counted_since(then, after, operations))
        written.append({name: (after_io[name] - then_io[name]) / operations for name in after_io})
        wal.append(_perf_split.wal_size(process.pid))

    await _each_side(operations, on, off, lambda side: (), store, workers)
    splits = [recorder.split(operations) for recorder in recorders]
    sides = ("bare POST", "round trip")
    print(f"server CPU per operation, µs ({_how(operations, workers)}, perf cpu-clock, {workdir}):")
    print(f"  {'':32} {sides[0]:>10} {sides[1]:>11}")

    def rows(tables: list[dict[str, float]], limit: int | None = None) -> None:
        names = sorted({*tables[0], *tables[1]}, key=lambda n: -(tables[1].get(n, 0.0)))
        for name in names[:limit]:
            bare, trip = (table.get(name, 0.0) for table in tables)
            print(f"  {name[:32]:32} {bare:10.1f} {trip:11.1f}")

    rows([each.by_dso for each in splits])
    bare, trip = (each.total for each in splits)
    print(f"  {'all':32} {bare:10.1f} {trip:11.1f}  ({trip / bare:.2f}x)")
    print(f"  samples {splits[0].samples} and {splits[1].samples}")
    print("by thread:")
    rows([each.by_thread for each in splits])
    print("the kernel's, by what entered it:")
    rows([each.kernel_by_entry for each in splits])
    print(f"the kernel's top {top} symbols (where the sample fell):")
    rows([each.kernel_by_symbol for each in splits], top)
    print("per operation, /proc (all threads; loop thread + other threads):")
    for counter in _perf_split.COUNTERS:
        cells = []
        for threads in counted:
            loop = threads.get("loop thread", {}).get(counter, 0.0)
            others = threads.get("other threads", {}).get(counter, 0.0)
            cells.append(f"{loop + others:6.2f} ({loop:5.2f} + {others:5.2f})")
        print(f"  {counter:32} {cells[0]:>22} {cells[1]:>22}")
    for name in _perf_split.IO.values():
        print(f"  {name:32} {written[0][name]:22.1f} {written[1][name]:22.1f}")
    print(f"  {'WAL file at the end':32} {wal[0]:22,} {wal[1]:22,}")
    return 0


async def main(quick: bool, store: str) -> int:
    sequential_n = 60 if quick else 200
    seconds = 4.0 if quick else 12.0
    slices = 2 if quick else 4
    waiters, streams = (200, 20) if quick else (1000, 100)
    workdir = Path(tempfile.mkdtemp(prefix="midturn-bench-"))
    bare_process, bare_url = _start_bare()
    db_url = f"sqlite:///{workdir / 'bench.db'}" if store == "sqlite" else store
    gateway_process, gateway_url = _start_gateway(db_url)
    print(f"gateway store: {db_url}")
    print(f"both servers on loop={LOOP} http={HTTP} (the anchor on the same pair)")
    try:
        admin = httpx.AsyncClient(
            base_url=gateway_url, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=90
        )
        sessions = [await _new_session(admin) for _ in range(64)]
        answerer = Answerer(gateway_url)
        await answerer.start(after=0)
        bares = _clients(bare_url, 64, timeout=90)
        agents = _clients(gateway_url, 64, timeout=90)
        bare, agent = bares[0], agents[0]
        try:
            # The machine is shared: measure both sides interleaved, so that a burst of
            # load elsewhere falls on both alike.
            await _sequential(lambda: _bare_post(bare), 30)
            await _sequential(lambda: _round_trip(agent, sessions[0]), 20)
            bare_lat: list[float] = []
            trip_lat: list[float] = []
            for _ in range(sequential_n):
                bare_lat.append(await _bare_post(bare))
                trip_lat.append(await _round_trip(agent, sessions[0]))
            bare_phase = _Tally(bare_process.pid)
            trip_phase = _Tally(gateway_process.pid)
            for _ in range(slices):
                await bare_phase.run(seconds / slices, lambda i: _bare_post(bares[i]))
                await trip_phase.run(
                    seconds / slices, lambda i: _round_trip(agents[i], sessions[i])
                )
        finally:
            for each in (*bares, *agents):
                await each.aclose()
        await answerer.aclose()
        await admin.aclose()
        held = await _hold(gateway_url, waiters, streams)
    finally:
        _stop(gateway_process)
        _stop(bare_process)

    bare_p50, trip_p50 = _p(bare_lat, 50), _p(trip_lat, 50)
    print(f"bare FastAPI POST     p50 {bare_p50:7.2f} ms  p95 {_p(bare_lat, 95):7.2f} ms")
    print(f"gateway round trip    p50 {trip_p50:7.2f} ms  p95 {_p(trip_lat, 95):7.2f} ms")
    print(f"  ratio p50 {trip_p50 / bare_p50:.2f}x (goal <= 2.5x)")
    bare_rps, trip_rps = bare_phase.rate, trip_phase.rate
    print(f"64 concurrent: bare {bare_rps:8.1f} req/s  ({bare_phase.errors} errors)")
    print(
        f"64 concurrent: trip {trip_rps:8.1f} round trips/s  ({trip_phase.errors} errors, "
        f"{answerer.errors} answer errors)"
    )
    print(f"  ratio {trip_rps / bare_rps:.1%} (goal >= 40%)")
    bare_ms = bare_phase.per_operation_ms(bare_phase.server)
    trip_ms = trip_phase.per_operation_ms(trip_phase.server)
    print(
        f"server CPU per operation: bare POST {bare_ms:.2f} ms, round trip {trip_ms:.2f} ms "
        f"({trip_ms / bare_ms:.1f}x, goal <= 4x)"
        if bare_ms
        else "server CPU per operation: not measured (no /proc)"
    )
    print(
        f"load generator CPU ({CLIENT} clients): {bare_phase.generator / bare_phase.wall:.0%} "
        f"of a core during the bare POSTs, {trip_phase.generator / trip_phase.wall:.0%} during "
        f"the round trips; per operation {bare_phase.per_operation_ms(bare_phase.generator):.3f}"
        f" ms and {trip_phase.per_operation_ms(trip_phase.generator):.3f} ms"
    )
    print(f"cores during the bare POSTs: {bare_phase.cores()}")
    print(f"cores during the round trips: {trip_phase.cores()}")
    print(
        f"held {held['held_waiting']:.0f} waiting agents and {held['held_streams']:.0f} "
        f"streams (of {waiters} and {streams}); answered {held['answered']}, "
        f"wait errors {held['wait_errors']}, answer errors {held['answer_errors']}, "
        f"stream errors {held['stream_errors']}, stream events {held['stream_events']}, "
        f"all released in {held['release_s']:.2f} s"
    )
    ok = (
        trip_p50 <= 2.5 * bare_p50
        and trip_rps >= 0.40 * bare_rps
        and (not bare_ms or trip_ms <= 4 * bare_ms)
        and held["answered"] == waiters
        and held["wait_errors"] == held["answer_errors"] == held["stream_errors"] == 0
        and held["held_waiting"] == waiters
        and held["held_streams"] >= streams
    )
    print("goals met" if ok else "goals NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller, faster run")
    parser.add_argument(
        "--store",
        default="sqlite",
        help="'sqlite' (a fresh file, the default), 'memory://', or a postgresql:// URL",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        help="instead: sample the gateway with py-spy under 64 concurrent round trips, "
        "write the raw stacks here and print the share of each component",
    )
    parser.add_argument("--seconds", type=float, default=20.0, help="with --profile")
    parser.add_argument(
        "--calls",
        type=int,
        metavar="N",
        help="instead: count event-loop turns, callbacks, tasks, timers, socket sends, SQL "
        "statements and JSON dumps per operation of each side, over N sequential ones",
    )
    parser.add_argument(
        "--callgrind",
        type=int,
        metavar="N",
        help="instead: instructions per operation of each side under valgrind's callgrind, "
        "over N sequential ones (needs valgrind)",
    )
    parser.add_argument(
        "--client",
        choices=("lean", "httpx"),
        default="lean",
        help="the client code of both sides' callers and of the answerer: lean "
        "(bench/_lean_http.py, the default) or httpx (as at stop 27)",
    )
    parser.add_argument(
        "--cpu",
        type=int,
        metavar="N",
        help="instead: each server's user and system CPU per operation, by thread, over N",
    )
    parser.add_argument(
        "--syscalls",
        type=int,
        metavar="N",
        help="instead: each server's system calls per operation over N (needs strace)",
    )
    parser.add_argument(
        "--perf",
        type=int,
        metavar="N",
        help="instead: each server's CPU per operation by shared object and the kernel's "
        "by system call and symbol (perf record -e cpu-clock), page faults and context "
        "switches from /proc, over N (needs perf)",
    )
    parser.add_argument(
        "--batches",
        type=int,
        metavar="N",
        help="instead: the SQLite store's commits in the gateway over N round trips: writes "
        "a commit holds (a histogram) and why writes committed alone",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="W",
        help="with --calls, --callgrind, --cpu, --syscalls, --perf or --batches: W operations "
        "at once, each worker on its own connection and session (64: the timed concurrent "
        "phase's load)",
    )
    parser.add_argument(
        "--no-express",
        action="store_true",
        help="serve every request through FastAPI's routes (the express lane off), to "
        "measure what the lane saves",
    )
    parser.add_argument(
        "--loop",
        choices=("asyncio", "uvloop"),
        default="asyncio",
        help="the event loop of both servers (uvloop: the bench extra)",
    )
    parser.add_argument(
        "--http",
        choices=("h11", "httptools"),
        default="h11",
        help="uvicorn's HTTP implementation for both servers (httptools: midturn[fast])",
    )
    args = parser.parse_args()
    CLIENT = args.client
    EXPRESS = not args.no_express
    LOOP, HTTP = args.loop, args.http
    if args.profile is not None:
        raise SystemExit(asyncio.run(profile(args.profile, args.seconds, args.store)))
    if args.calls is not None:
        raise SystemExit(asyncio.run(calls(args.calls, args.store, args.workers)))
    if args.callgrind is not None:
        raise SystemExit(asyncio.run(callgrind(args.callgrind, args.store, args.workers)))
    if args.cpu is not None:
        raise SystemExit(asyncio.run(cpu(args.cpu, args.store, args.workers)))
    if args.syscalls is not None:
        raise SystemExit(asyncio.run(syscalls(args.syscalls, args.store, args.workers)))
    if args.perf is not None:
        raise SystemExit(asyncio.run(perf(args.perf, args.store, args.workers)))
    if args.batches is not None:
        raise SystemExit(asyncio.run(batches(args.batches, args.store, args.workers)))
    raise SystemExit(asyncio.run(main(args.quick, args.store)))
