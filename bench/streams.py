"""Stalled event streams: server memory and `/healthz` latency while N streams never read.

    .venv/bin/python bench/streams.py [--streams 200] [--asks 1000]

`midturn serve` runs as a child process on a fresh SQLite file. The anchor: `/healthz`
latency while `--asks` asks are created and answered with no stream open, in the same
run. Then `--streams` raw TCP connections each open `GET /v1/events` from the start
(admin token) and never read a byte (their receive buffers are made small, so the
server's writes stall at once), and `--asks` more asks are created and answered (four
events each, ~2 KiB apiece) while `/healthz` is timed. Last, the streams are closed and
the RSS is read again once the server reports none open.

Goals (issue 10): RSS ≤ 1 GiB with 500 stalled streams; `/healthz` p99 ≤ 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ADMIN = "bench-admin-token-streams-7c1d"
ASK = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use? " + "x" * 400,
            "options": [
                {"label": "PostgreSQL", "description": "Managed, scales out " + "y" * 200},
                {"label": "SQLite", "description": "Embedded, zero setup " + "z" * 200},
            ],
        }
    ]
}
ANSWER = {"answers": {"db": "PostgreSQL"}}


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def start_server(folder: Path, streams: int) -> tuple[subprocess.Popen[bytes], str]:
    db = f"sqlite:///{folder / 'midturn.db'}"
    log = (folder / "serve.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "midturn.cli", "serve", "--db", db, "--port", "0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=log,
        env={**os.environ, "MIDTURN_TOKEN": ADMIN, "MIDTURN_MAX_STREAMS_PER_TOKEN": str(streams)},
    )
    assert process.stdout is not None
    line = process.stdout.readline().decode()
    url = line.removeprefix("midturn gateway on ").split()[0]
    return process, url


def stalled_stream(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, port))
    request = (
        f"GET /v1/events HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {ADMIN}\r\n"
        "Accept: text/event-stream\r\n\r\n"
    )
    sock.sendall(request.encode())
    return sock


async def healthz_ms(client: httpx.AsyncClient, count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        response = await client.get("/healthz")
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200
    return times


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def publish(url: str, asks: int) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=120) as admin:
        sid = (await admin.post("/v1/sessions", json={}, headers=_auth())).json()["session_id"]
        for index in range(asks):
            created = await admin.post(
                f"/v1/sessions/{sid}/asks",
                json={"tool_input": ASK, "tool_call_id": f"c{index}", "turn_id": f"t{index}"},
                headers=_auth(),
            )
            ask_id = created.json()["interaction"]["id"]
            await admin.post(f"/v1/asks/{ask_id}/answer", json=ANSWER, headers=_auth())


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {ADMIN}"}


async def timed_publish(
    client: httpx.AsyncClient, url: str, asks: int, pid: int
) -> tuple[list[float], float]:
    """`asks` asks created and answered while `/healthz` is timed; (times, peak RSS)."""
    publisher = asyncio.create_task(publish(url, asks))
    times: list[float] = []
    peak = rss_mib(pid)
    while not publisher.done():
        times += await healthz_ms(client, 20)
        peak = max(peak, rss_mib(pid))
    await publisher
    return times, peak


async def open_streams(client: httpx.AsyncClient) -> int:
    text = (await client.get("/metrics")).text
    for line in text.splitlines():
        if line.startswith("midturn_open_streams "):
            return int(line.split()[1])
    return -1


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--asks", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        process, url = start_server(Path(folder), args.streams)
        host, port = url.removeprefix("http://").split(":")
        try:
            async with httpx.AsyncClient(base_url=url, timeout=120) as client:
                rss_idle = rss_mib(process.pid)
                # the anchor: the same load with no stream open (it also fills the log
                # that every stream below replays from the start)
                anchor, _ = await timed_publish(client, url, args.asks, process.pid)
                rss_anchor = rss_mib(process.pid)
                sockets = [stalled_stream(host, int(port)) for _ in range(args.streams)]
                during, peak = await timed_publish(client, url, args.asks, process.pid)
                rss_loaded = rss_mib(process.pid)
                for sock in sockets:
                    sock.close()
                for _ in range(600):
                    if await open_streams(client) == 0:
                        break
                    await asyncio.sleep(0.1)
                after = await healthz_ms(client, 100)
                rss_closed = rss_mib(process.pid)
        finally:
            process.terminate()
            process.wait(30)
    print(f"{args.streams} stalled streams; {args.asks} asks created and answered per phase")
    print(f"anchor, no stream: /healthz p50 {p(anchor, 0.5):.2f} ms, p99 {p(anchor, 0.99):.2f} ms")
    print(
        f"stalled streams: /healthz p50 {p(during, 0.5):.2f} ms, p99 {p(during, 0.99):.2f} ms "
        f"({p(during, 0.99) / p(anchor, 0.99):.1f}x the anchor p99), max {max(during):.0f} ms"
    )
    print(f"after closing them: /healthz p99 {p(after, 0.99):.2f} ms")
    print(
        f"RSS MiB: idle {rss_idle:.0f}, after the anchor {rss_anchor:.0f}, peak with streams "
        f"{peak:.0f}, end of load {rss_loaded:.0f}, after closing {rss_closed:.0f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
