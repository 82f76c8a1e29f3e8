"""The counting modes of `bench/gateway.py` (`--calls`, `--callgrind`, `--cpu`,
`--syscalls`, `--batches`): `--workers` runs exactly the operations asked for, that many
at once, each worker on its own index, `--cpu` reads this process's threads, and
`--batches` counts every write the gateway's SQLite store commits."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys

from tests._bench_script import BENCH, idle_thread, load_bench_script

_gateway = load_bench_script("gateway")
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
    with idle_thread():
        threads = _thread_cpu(os.getpid())
    assert set(threads) == {"loop thread", "other threads"}
    assert all(user >= 0 and system >= 0 for user, system in threads.values())


def test_batches_counts_every_write_of_the_round_trips_in_some_commit() -> None:
    """A park and a settle a round trip: every one of them is in the histogram (its
    launcher wraps the connection's commit paths; one renamed would lose its writes)."""
    command = [sys.executable, str(BENCH / "gateway.py"), "--batches", "24", "--workers", "4"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r"commits (\d+) .*, writes (\d+) \(2\.00 a trip\)", done.stdout)
    assert found is not None, done.stdout
    commits, writes = int(found[1]), int(found[2])
    assert writes == 48 and 1 <= commits <= writes
    histogram = re.findall(r"^ +(\d+) +(\d+) \((\d+)\)$", done.stdout, re.MULTILINE)
    assert sum(int(count) for _, count, _ in histogram) == commits
    assert sum(int(held) for _, _, held in histogram) == writes
