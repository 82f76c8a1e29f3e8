"""Instructions per operation of `bench/gateway.py`'s load generator, and of each server
under that generator's concurrent callers, by valgrind's callgrind (counts that do not
move with the machine's load; user space only).

    .venv/bin/python bench/gateway_generator.py generator --side trip   (64 workers x 10)
    .venv/bin/python bench/gateway_generator.py generator --side bare --workers 16 --each 20
    .venv/bin/python bench/gateway_generator.py server --side trip --each 5   (64 x 5)
    ... --client httpx   (the generator's clients as at stop 27)

`generator`: this process (the callers, the answerer and their loop) under callgrind,
the servers outside it. `server`: the bare endpoint or the gateway under callgrind,
driven by `--workers` concurrent callers, so that it is saturated as in the 64-concurrent
phase (`bench/gateway.py --callgrind` counts sequential operations instead). Either way
each worker first makes a few operations uncounted, then `--each` counted ones; SQLite
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
UNDER_CALLGRIND = "MIDTURN_BENCH_CALLGRIND_OUT"  # set in the re-run of `generator`


def _callgrind(out: Path) -> tuple[str, ...]:
    return (
        "valgrind",
        "-q",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}",
    )


def _instrument(pid: int, switch: str) -> None:
    subprocess.run(["callgrind_control", "-i", switch, str(pid)], check=True, capture_output=True)


def _instructions(out: Path) -> int:
    for line in out.read_text().splitlines():
        if line.startswith("totals:"):
            return int(line.split()[1])
    raise SystemExit(f"no totals in {out}")


async def _drive(
    side: str,
    workers: int,
    each: int,
    server_prefix: tuple[str, ...],
    counted: Callable[[int, bool], None],
) -> None:
    """Start `side`'s server (under `server_prefix`), make `WARM_UP` operations a worker,
    then `each` with `counted(server_pid, True)` before and `(…, False)` after."""
    workdir = Path(tempfile.mkdtemp(prefix="midturn-bench-"))
    answerer = None
    sessions: list[dict[str, str]] = []
    if side == "bare":
        process, url = gateway._start_bare(server_prefix)
    else:
        process, url = gateway._start_gateway(f"sqlite:///{workdir / 'bench.db'}", server_prefix)
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

    async def worker(index: int, count: int) -> None:
        for _ in range(count):
            await call(index)

    try:
        await asyncio.gather(*(worker(i, WARM_UP) for i in range(workers)))
        server_cpu, own_cpu = gateway._cpu_seconds(process.pid), time.process_time()
        counted(process.pid, True)
        await asyncio.gather(*(worker(i, each) for i in range(workers)))
        counted(process.pid, False)
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
    parser.add_argument("what", choices=("generator", "server"), help="which one is counted")
    parser.add_argument("--side", choices=("bare", "trip"), required=True)
    parser.add_argument("--workers", type=int, default=64)
    parser.add_argument("--each", type=int, default=10, help="counted operations a worker")
    parser.add_argument("--client", choices=("lean", "httpx"), default="lean")
    parser.add_argument("--tool", choices=("callgrind", "none"), default="callgrind")
    args = parser.parse_args()
    gateway.CLIENT = args.client
    operations = args.workers * args.each
    out = Path(tempfile.mkdtemp(prefix="midturn-bench-")) / f"{args.what}.callgrind"
    if args.tool == "none":
        asyncio.run(_drive(args.side, args.workers, args.each, (), lambda pid, on: None))
        return 0
    if args.what == "server":
        prefix = (*_callgrind(out), sys.executable)

        def counted(pid: int, on: bool) -> None:
            _instrument(pid, "on" if on else "off")

        asyncio.run(_drive(args.side, args.workers, args.each, prefix, counted))
        time.sleep(1)  # the server's counts written as it exits
    elif UNDER_CALLGRIND in os.environ:  # the re-run: count this process itself
        own = os.getpid()
        asyncio.run(
            _drive(
                args.side,
                args.workers,
                args.each,
                (),
                lambda pid, on: _instrument(own, "on" if on else "off"),
            )
        )
        return 0
    else:
        env = {**os.environ, UNDER_CALLGRIND: str(out)}
        command = [*_callgrind(out), sys.executable, __file__, *sys.argv[1:]]
        subprocess.run(command, check=True, env=env)
    per_op = _instructions(out) / operations
    print(
        f"{args.what} instructions per operation ({args.side}, {args.client} clients, "
        f"{args.workers} workers x {args.each}): {per_op / 1e6:.3f} M"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
