"""`bench/gateway.py`'s load generator against its real servers (a `midturn serve`
child on the memory store, the bare FastAPI anchor): with either client (`--client`),
a round trip is created, seen on the admin stream by the answerer, answered, and
returned to its agent; a bare POST gets its 201; a concurrent phase's tally counts
the operations and the CPU of the server and of the generator; `bench/gateway_generator.py`
drives the same way without valgrind. No timings asserted."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from types import ModuleType

import httpx
import pytest
from tests._bench_script import BENCH, load_bench_script


@pytest.fixture(params=["lean", "httpx"])
def gateway_bench(request: pytest.FixtureRequest) -> Iterator[ModuleType]:
    """`bench/gateway.py`, its clients of the kind the test is for."""
    module = load_bench_script("gateway")
    saved = module.CLIENT
    module.CLIENT = request.param
    yield module
    module.CLIENT = saved


async def test_round_trips_are_answered_through_the_answerer(gateway_bench: ModuleType) -> None:
    bench = gateway_bench
    process, url = await asyncio.to_thread(bench._start_gateway, "memory://")
    try:
        async with httpx.AsyncClient(
            base_url=url, headers={"Authorization": f"Bearer {bench.ADMIN}"}, timeout=30
        ) as admin:
            sessions = [await bench._new_session(admin) for _ in range(3)]
        answerer = bench.Answerer(url)
        await answerer.start(after=0)
        agents = bench._clients(url, 3, timeout=30)
        try:
            tally = bench._Tally(process.pid, workers=3)
            await tally.run(0.5, lambda i: bench._round_trip(agents[i], sessions[i]))
            latencies = await asyncio.gather(
                *(bench._round_trip(agents[i], sessions[i]) for i in range(3))
            )
        finally:
            for agent in agents:
                await agent.aclose()
            await answerer.aclose()
        assert all(latency > 0 for latency in latencies)
        assert answerer.errors == 0
        assert tally.errors == 0
        assert tally.operations >= 1
        assert tally.server > 0 and tally.generator > 0
    finally:
        await asyncio.to_thread(bench._stop, process)
        assert process.stdout is not None
        process.stdout.close()  # the announcement's pipe


async def test_a_bare_post_is_accepted(gateway_bench: ModuleType) -> None:
    bench = gateway_bench
    process, url = await asyncio.to_thread(bench._start_bare)
    try:
        (client,) = bench._clients(url, 1, timeout=30)
        try:
            assert await bench._bare_post(client) > 0
            assert await bench._bare_post(client) > 0  # again, on the kept connection
        finally:
            await client.aclose()
    finally:
        await asyncio.to_thread(bench._stop, process)


def test_the_generator_counter_runs_without_valgrind() -> None:
    """`bench/gateway_generator.py --tool none`: the same drive as its callgrind counts,
    timed only (the counts themselves need valgrind, too slow for the suite)."""
    command = [sys.executable, str(BENCH / "gateway_generator.py"), "--side", "trip"]
    command += ["--workers", "2", "--each", "2", "--tool", "none"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("CPU per operation: generator ")
