"""The counting modes of `bench/gateway.py` (`--calls`, `--callgrind`, `--cpu`,
`--syscalls`): `--workers` runs exactly the operations asked for, that many at once,
each worker on its own index, and `--cpu` reads this process's threads."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
import threading
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _bench_gateway() -> ModuleType:
    """`bench/gateway.py` loaded from its file, with `bench/` on the path for its
    `_lean_http` (as tests/test_bench_gateway.py loads it: the suite's own `gateway` is
    the tests' package)."""
    spec = importlib.util.spec_from_file_location("bench_gateway_modes", BENCH / "gateway.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(BENCH))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH))
    return module


_gateway = _bench_gateway()
_in_workers, _thread_cpu = _gateway._in_workers, _gateway._thread_cpu


async def test_the_operations_are_split_between_the_workers_and_run_at_once() -> None:
    by_worker: dict[int, int] = {}
    running = most = 0

    async def call(index: int) -> float:
        nonlocal running, most
        by_worker[index] = by_worker.get(index, 0) + 1
        running += 1
        most = max(most, running)
        await asyncio.sleep(0)
        running -= 1
        return 0.0

    await _in_workers(4, 10, call)
    assert by_worker == {0: 3, 1: 3, 2: 2, 3: 2}
    assert most == 4


async def test_one_worker_runs_them_one_after_another() -> None:
    order: list[int] = []
    running = 0

    async def call(index: int) -> float:
        nonlocal running
        assert running == 0
        running += 1
        order.append(index)
        await asyncio.sleep(0)
        running -= 1
        return 0.0

    await _in_workers(1, 3, call)
    assert order == [0, 0, 0]


def test_thread_cpu_tells_the_main_thread_from_the_others() -> None:
    started, stop = threading.Event(), threading.Event()

    def idle() -> None:
        started.set()
        stop.wait()

    thread = threading.Thread(target=idle)
    thread.start()
    started.wait()
    try:
        threads = _thread_cpu(os.getpid())
    finally:
        stop.set()
        thread.join()
    assert set(threads) == {"loop thread", "other threads"}
    assert all(user >= 0 and system >= 0 for user, system in threads.values())
