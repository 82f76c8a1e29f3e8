"""Notification benchmark: event -> signed webhook received, beside a bare httpx POST to
the same receiver in the same run; then a backlog of queued deliveries drained.

    .venv/bin/python bench/notify.py [--rounds 300] [--backlog 10000] [--postgres]

- latency: an in-process `Runtime` on SQLite with a `Notifier` and one destination.
  Each round parks an ask (`runtime.ask`, which writes the request and its event) and
  waits until the receiver has the signed webhook for it, timed from the moment the
  runtime publishes the event (its tap, `runtime.subscribe`) to the moment the receiver
  has read the whole request. The anchor POSTs the same body to the same receiver with a
  plain `httpx.AsyncClient`, timed from the call to the same moment. Prints p50 and p99 and
  the ratio (goal: p50 at most 2x the bare POST).
- backlog: with the notifier stopped, `--backlog` asks are parked (their events wait in
  the log); then the notifier starts and fans them out and sends them. The receiver
  counts arrivals by webhook-id and verifies every signature with `standardwebhooks`:
  prints delivered, distinct, doubled, missing and the drain rate. With `--postgres`
  the same on PostgreSQL with two notifiers (two replicas) sharing the outbox.

The receiver is a bare ASGI app on uvicorn in a thread of its own; it answers 200 at once.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import standardwebhooks
import uvicorn

from _postgres import drop_schema
from midturn import Event, Runtime, open_store
from midturn.notify import Notifier, NotifyOptions, create_destination

ASK: dict[str, Any] = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use?",
            "options": [
                {"label": "PostgreSQL", "description": "Managed, scales out"},
                {"label": "SQLite", "description": "Embedded, zero setup"},
            ],
        }
    ]
}
POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"


@dataclass
class Arrival:
    at: float
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """Records every request (time read, headers, body) and hands it to the bench loop."""

    loop: asyncio.AbstractEventLoop
    arrivals: asyncio.Queue[Arrival] = field(default_factory=asyncio.Queue)
    keep: bool = False
    kept: list[Arrival] = field(default_factory=list)
    port: int = 0
    _server: uvicorn.Server | None = None
    _thread: threading.Thread | None = None

    async def app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        arrival = Arrival(
            time.perf_counter(), {k.decode(): v.decode() for k, v in scope["headers"]}, body
        )
        if self.keep:
            self.kept.append(arrival)  # (one thread writes it)
        else:
            self.loop.call_soon_threadsafe(self.arrivals.put_nowait, arrival)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    def start(self) -> None:
        config = uvicorn.Config(
            self.app,
            interface="asgi3",
            host="127.0.0.1",
            port=0,
            log_level="error",
            lifespan="off",
            access_log=False,
        )
        server = uvicorn.Server(config)
        self._server = server
        self._thread = threading.Thread(target=server.run, daemon=True)
        self._thread.start()
        while not server.started:
            time.sleep(0.01)
        self.port = server.servers[0].sockets[0].getsockname()[1]

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


FAST = NotifyOptions(poll_s=0.2, concurrency=32, batch=100)


@contextlib.asynccontextmanager
async def runtime_on(url: str) -> AsyncIterator[Runtime]:
    async with open_store(url) as store, Runtime(store) as runtime:
        yield runtime


async def latency(db_url: str, rounds: int, warmup: int) -> dict[str, list[float]]:
    receiver = Receiver(asyncio.get_running_loop())
    receiver.start()
    times: dict[str, list[float]] = {"bare": [], "webhook": []}
    try:
        async with runtime_on(db_url) as runtime, httpx.AsyncClient() as bare:
            destination = await create_destination(runtime.store, receiver.url)
            verifier = standardwebhooks.Webhook(destination.secret)
            published: dict[str, float] = {}

            def heard(event: Event) -> None:
                if event.type == "user_question_requested" and event.interaction_id:
                    published[event.interaction_id] = time.perf_counter()

            runtime.subscribe(heard)
            async with Notifier(runtime, FAST):
                body = b""
                for index in range(warmup + rounds):
                    parked = await runtime.ask("s_bench", ASK, tool_call_id=uuid.uuid4().hex)
                    arrival = await asyncio.wait_for(receiver.arrivals.get(), 30)
                    webhook = arrival.at - published[parked.interaction.id]
                    verifier.verify(arrival.body, arrival.headers)
                    body = body or arrival.body
                    started = time.perf_counter()
                    await bare.post(
                        receiver.url, content=body, headers={"content-type": "application/json"}
                    )
                    plain = (await asyncio.wait_for(receiver.arrivals.get(), 30)).at - started
                    if index >= warmup:
                        times["webhook"].append(webhook)
                        times["bare"].append(plain)
    finally:
        receiver.stop()
    return times


async def backlog(db_url: str, count: int, notifiers: int) -> dict[str, float]:
    receiver = Receiver(asyncio.get_running_loop(), keep=True)
    receiver.start()
    try:
        async with contextlib.AsyncExitStack() as stack:
            runtimes = [
                await stack.enter_async_context(runtime_on(db_url)) for _ in range(notifiers)
            ]
            destination = await create_destination(runtimes[0].store, receiver.url)
            for index in range(count):
                await runtimes[0].ask(f"s_{index % 50}", ASK, tool_call_id=f"call-{index}")
            started = time.perf_counter()
            for runtime in runtimes:
                await stack.enter_async_context(Notifier(runtime, FAST))
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline:
                counts = await runtimes[0].store.count_deliveries()
                if counts.get("delivered", 0) >= count and not counts.get("pending"):
                    break
                await asyncio.sleep(0.05)
            drained = time.perf_counter() - started
            counts = await runtimes[0].store.count_deliveries()
    finally:
        receiver.stop()
    verifier = standardwebhooks.Webhook(destination.secret)
    per_id = Counter(arrival.headers.get("webhook-id", "") for arrival in receiver.kept)
    verified = 0
    for arrival in receiver.kept:
        with contextlib.suppress(standardwebhooks.WebhookVerificationError):
            verifier.verify(arrival.body, arrival.headers)
            verified += 1
    return {
        "queued": count,
        "received": len(receiver.kept),
        "distinct": len(per_id),
        "doubled": sum(1 for n in per_id.values() if n > 1),
        "missing": count - len(per_id),
        "verified": verified,
        "delivered_in_store": counts.get("delivered", 0),
        "seconds": drained,
        "per_second": count / drained if drained else 0.0,
    }


def report_backlog(name: str, figures: dict[str, float]) -> None:
    print(
        f"{name}: {int(figures['queued'])} queued -> {int(figures['received'])} received, "
        f"{int(figures['distinct'])} distinct, {int(figures['doubled'])} doubled, "
        f"{int(figures['missing'])} missing, {int(figures['verified'])} verified, "
        f"{int(figures['delivered_in_store'])} delivered in the store; drained in "
        f"{figures['seconds']:.1f} s ({figures['per_second']:.0f}/s)"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--backlog", type=int, default=10_000)
    parser.add_argument(
        "--postgres", action="store_true", help="also the backlog on PostgreSQL, two notifiers"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        times = await latency(f"sqlite:///{Path(folder) / 'latency.db'}", args.rounds, args.warmup)
        bare, webhook = times["bare"], times["webhook"]
        p50 = (statistics.median(bare), statistics.median(webhook))
        p99 = (percentile(bare, 0.99), percentile(webhook, 0.99))
        print(f"event -> webhook received, {args.rounds} rounds on SQLite")
        print(f"  bare httpx POST  p50 {p50[0] * 1e3:7.2f} ms  p99 {p99[0] * 1e3:7.2f} ms")
        print(f"  signed webhook   p50 {p50[1] * 1e3:7.2f} ms  p99 {p99[1] * 1e3:7.2f} ms")
        print(
            f"  ratio            p50 {p50[1] / p50[0]:7.2f}x    p99 {p99[1] / p99[0]:7.2f}x"
            "  (goal p50 <= 2x)"
        )
        if args.backlog:
            figures = await backlog(f"sqlite:///{Path(folder) / 'backlog.db'}", args.backlog, 1)
            report_backlog("SQLite, one notifier", figures)
    if args.backlog and args.postgres:
        url = f"{POSTGRES_URL}?schema=bench_notify_{uuid.uuid4().hex[:8]}"
        try:
            report_backlog("PostgreSQL, two notifiers", await backlog(url, args.backlog, 2))
        finally:
            await drop_schema(url)


if __name__ == "__main__":
    asyncio.run(main())
