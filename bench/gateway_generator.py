"""Instructions per operation of `bench/gateway.py`'s load generator itself, by
valgrind's callgrind (counts that do not move with the machine's load; user space only):
this process (the concurrent callers, the answerer and the loop they share) under
callgrind, the servers outside it. (Each server's own count under the same concurrent
callers is `bench/gateway.py --callgrind N --workers 64`.)

    .venv/bin/python bench/gateway_generator.py --side trip   (64 workers x 10)
    .venv/bin/python bench/gateway_generator.py --side bare --workers 16 --each 20
    ... --client httpx   (the generator's clients as at stop 27)

Each worker first makes a few operations uncounted, then `--each` counted ones; SQLite
store. Without valgrind (`--tool none`) it prints the CPU per operation of both processes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

import gateway

WARM_UP = 3
UNDER_CALLGRIND = "MIDTURN_BENCH_CALLGRIND_OUT"  # set in the re-run under callgrind


async def _drive(side: str, workers: int, each: int, counting: Callable[[str], None]) -> None:
    """Start `side`'s server, make `WARM_UP` operations a worker, then `each` a worker
    between `counting("on")` and `counting("off")`."""
    workdir = Path(tempfile.mkdtemp(prefix="midturn-bench-"))
    answerer = None
    sessions: list[dict[str, str]] = []
    if side == "bare":
        process, url = gateway._start_bare()
    else:
        process, url = gateway._start_gateway(f"sqlite:///{workdir / 'bench.db'}")
        auth = {"Authorization": f"Bearer {gateway.ADMIN}"}
        async with httpx.AsyncClient(base_url=url, headers=auth, timeout=600) as admin:
            sessions = [await gateway._new_session(admin) for _ in range(workers)]
        answerer = gateway.Answerer(url)
        await answerer.start(after=0)
    clients = gateway._clients(url, workers, timeout=600)

    def call(index: int) -> Awaitable[float]:
        if side == "bare":
            return gateway._bare_post(clients[index])
        return gateway._round_trip(clients[index], sessions[index])

    try:
        await gateway._in_workers(workers, workers * WARM_UP, call)
        server_cpu, own_cpu = gateway._cpu_seconds(process.pid), time.process_time()
        counting("on")
        await gateway._in_workers(workers, workers * each, call)
        counting("off")
        operations = workers * each
        server_ms = 1000 * (gateway._cpu_seconds(process.pid) - server_cpu) / operations
        own_ms = 1000 * (time.process_time() - own_cpu) / operations
        print(f"CPU per operation: generator {own_ms:.3f} ms, server {server_ms:.3f} ms")
        for client in clients:
            await client.aclose()
        if answerer is not None:
            await answerer.aclose()
            if answerer.errors:
                raise SystemExit(f"{answerer.errors} answers refused")
    finally:
        gateway._stop(process)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", choices=("bare", "trip"), required=True)
    parser.add_argument("--workers", type=int, default=64)
    parser.add_argument("--each", type=int, default=10, help="counted operations a worker")
    parser.add_argument("--client", choices=("lean", "httpx"), default="lean")
    parser.add_argument("--tool", choices=("callgrind", "none"), default="callgrind")
    args = parser.parse_args()
    gateway.CLIENT = args.client
    if args.tool == "none":
        asyncio.run(_drive(args.side, args.workers, args.each, lambda switch: None))
        return 0
    if UNDER_CALLGRIND in os.environ:  # the re-run: count this process itself
        own = os.getpid()

        def counting(switch: str) -> None:
            gateway.instrument(own, switch)

        asyncio.run(_drive(args.side, args.workers, args.each, counting))
        return 0
    out = Path(tempfile.mkdtemp(prefix="midturn-bench-")) / "generator.callgrind"
    command = [*gateway.callgrind_prefix(out), sys.executable, __file__, *sys.argv[1:]]
    subprocess.run(command, check=True, env={**os.environ, UNDER_CALLGRIND: "1"})
    per_op = gateway.instructions(out) / (args.workers * args.each)
    print(
        f"generator instructions per operation ({args.side}, {args.client} clients, "
        f"{args.workers} workers x {args.each}): {per_op / 1e6:.3f} M"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
