"""Runtime benchmark: one in-process ask -> answer -> result cycle, beside LangGraph's
interrupt() / Command(resume=...) measured in the same run; and what 100,000 parked asks
cost in memory beyond what the store holds for them.

    .venv/bin/python bench/roundtrip.py [--cycles 2000] [--sqlite-cycles 300] [--asks 100000]
        [--runs 3]

Cycle, midturn: `runtime.ask` (validate, persist with its requested event), `answer`
(parse, compare-and-set settle with its event), `wait` (the settled result) and `render`
(the text for the model). Cycle, LangGraph: a one-node graph whose node calls
`interrupt(questions)`; `invoke` runs to the interrupt (checkpointed), `invoke(Command(
resume=answer))` resumes it to the end. Both on an in-memory store/saver and on a SQLite
file. Anchors need `pip install "midturn[bench]"` (langgraph, langgraph-checkpoint-sqlite).

Memory: tracemalloc over 100,000 asks parked through the runtime (across 1,000 sessions),
minus the same 100,000 interactions and events written to a memory store directly: the
difference is the runtime's own cost per parked ask. Then the same with a deadline each
(the timer heap) and with a waiter each (one `wait()` task per ask, as a host would hold).
The store's own cost is the store alone minus the payload, the ask's JSON (goal ≤ 2 KiB).

Goals (docs/benchmarks.md): p50 and p99 both ≥ 20× LangGraph on memory and ≥ 10× on
SQLite, in each of `--runs` runs.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sqlite3
import statistics
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from midturn import Runtime, open_store, parse_ask
from midturn.contract._interactions import Interaction
from midturn.runtime._events import requested_event, turn_event

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
ANSWER = {"answers": {"db": "PostgreSQL"}}


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return p50 * 1e6, p99 * 1e6


def _schedstat(tid: int | str) -> tuple[int, int]:
    """A thread's time on a CPU and waiting on a run queue, in ns (/proc schedstat)."""
    try:
        with open(f"/proc/self/task/{tid}/schedstat") as file:
            ran, waited, _ = file.read().split()
    except OSError:  # the thread ended
        return 0, 0
    return int(ran), int(waited)


def _switches() -> int:
    """The calling thread's involuntary context switches so far."""
    with open("/proc/thread-self/status") as file:
        for line in file:
            if line.startswith("nonvoluntary_ctxt_switches"):
                return int(line.split()[1])
    return 0


class CycleTrace:
    """`--trace`: what each timed cycle of midturn did beside its work, read before and
    after its timed span (never inside it): the loop thread's CPU time and its wait on a
    run queue (a lost time slice), its involuntary switches, the time the store's other
    threads (checkpoint, worker) ran, and garbage collections. Linux only."""

    def __init__(self) -> None:
        self.rows: list[tuple[float, float, float, int, float, int, bool]] = []
        self.collected = 0
        gc.callbacks.append(self._collection)

    def _collection(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.collected += 1

    def snapshot(self) -> tuple[float, int, int, int, int]:
        others = [
            thread.native_id
            for thread in threading.enumerate()
            if thread.name.startswith("midturn") and thread.native_id is not None
        ]
        _, waited = _schedstat(threading.get_native_id())
        other = sum(_schedstat(tid)[0] for tid in others)
        return time.thread_time(), waited, _switches(), other, self.collected

    def add(self, wall: float, before: tuple[float, int, int, int, int], first: bool) -> None:
        after = self.snapshot()
        changes = (b - a for a, b in zip(before, after, strict=True))
        cpu, waited, switched, other, collected = changes
        self.rows.append(
            (wall, cpu, waited / 1e9, int(switched), other / 1e9, int(collected), first)
        )

    def report(self, top: int = 8) -> None:
        rows = self.rows
        slowest = sorted(rows, key=lambda row: row[0])[int(len(rows) * 0.99) :]
        slowest = sorted(rows, key=lambda row: row[0])[-max(top, len(slowest)) :][::-1]
        print(f"  {'':<8} trace: the {len(slowest)} slowest of midturn's {len(rows)} cycles")
        print(
            f"  {'':<8}   wall µs   cpu µs  run-queue µs  inv. sw.  other threads µs"
            "  collections  first"
        )
        for wall, cpu, waited, switched, other, collected, first in slowest:
            print(
                f"  {'':<8} {wall * 1e6:9.0f} {cpu * 1e6:8.0f} {waited * 1e6:13.0f}"
                f" {switched:9d} {other * 1e6:17.0f} {collected:12d}  {'yes' if first else ''}"
            )
        with_other = sum(1 for row in rows if row[4] > 0)
        switched = sum(1 for row in rows if row[3] > 0)
        print(
            f"  {'':<8}   cycles in which a store thread ran: {with_other}; with an"
            f" involuntary switch: {switched}; collections: {sum(row[5] for row in rows)}"
        )


class MidturnCycles:
    """ask -> answer -> wait -> render on one open runtime."""

    def __init__(self, runtime: Runtime, trace: CycleTrace | None = None) -> None:
        self.runtime = runtime
        self.done = 0
        self.collections = [0, 0, 0]  # garbage collections during the cycles, by generation
        self.trace = trace
        self.timed = False  # set once the warm-up block is over (for the trace)

    async def run(self, count: int) -> list[float]:
        runtime, samples, trace = self.runtime, [], self.trace if self.timed else None
        before = [generation["collections"] for generation in gc.get_stats()]
        for k in range(count):
            n = self.done = self.done + 1
            snapshot = trace.snapshot() if trace is not None else None
            start = time.perf_counter()
            interaction, _ = await runtime.ask("s", ASK, turn_id=f"t{n}", tool_call_id=f"c{n}")
            await runtime.answer(interaction.id, ANSWER)
            settled = await runtime.wait(interaction.id)
            assert settled.output is not None  # rendered in the ask's dialect by wait()
            samples.append(time.perf_counter() - start)
            if trace is not None and snapshot is not None:
                trace.add(samples[-1], snapshot, k == 0)
        after = [generation["collections"] for generation in gc.get_stats()]
        self.collections = [
            n + b - a for n, a, b in zip(self.collections, before, after, strict=True)
        ]
        return samples

    def quiesce(self, limit_s: float = 2.0) -> None:
        """Wait for the store's background checkpoint (SQLite runs it once the writes
        pause), so its fsyncs land in neither side's block, as `gc.collect()` does for
        garbage: otherwise they slow the anchor's next block."""
        connection = getattr(self.runtime.store, "_connection", None)
        pending = getattr(connection, "checkpoint_pending", None)
        deadline = time.monotonic() + limit_s
        while pending is not None and pending() and time.monotonic() < deadline:
            time.sleep(0.002)


class LangGraphCycles:
    """A one-node graph that interrupts with the questions; invoke, then resume."""

    def __init__(self, saver: Any) -> None:
        from typing import TypedDict

        from langgraph.graph import END, START, StateGraph
        from langgraph.types import Command, interrupt

        class State(TypedDict):
            answer: str

        def ask_node(state: State) -> dict[str, str]:
            answer = interrupt(ASK)
            return {"answer": answer["answers"]["db"]}

        builder = StateGraph(State)
        builder.add_node("ask", ask_node)
        builder.add_edge(START, "ask")
        builder.add_edge("ask", END)
        self.graph = builder.compile(checkpointer=saver)
        self.command = Command
        self.done = 0

    def run(self, count: int) -> list[float]:
        samples = []
        for _ in range(count):
            n = self.done = self.done + 1
            config = {"configurable": {"thread_id": f"thread-{n}"}}
            start = time.perf_counter()
            self.graph.invoke({"answer": ""}, config)
            final = self.graph.invoke(self.command(resume=ANSWER), config)
            assert final["answer"] == "PostgreSQL"
            samples.append(time.perf_counter() - start)
        return samples


ROUNDS = 10
"""Blocks of cycles each side runs in turn."""


async def interleaved(
    ours: MidturnCycles, anchor: LangGraphCycles | None, cycles: int, rounds: int = ROUNDS
) -> tuple[list[float], list[float] | None]:
    """Alternate blocks of both, so a change in machine load hits both alike (and
    collect garbage before each, so neither pays for the other's); the first block of
    each warms up and is dropped."""
    block = max(1, cycles // rounds)
    await ours.run(block)
    if anchor is not None:
        ours.quiesce()
        anchor.run(block)
    ours.collections = [0, 0, 0]  # counted over the measured blocks only
    ours.timed = True
    mine: list[float] = []
    theirs: list[float] = []
    for _ in range(rounds):
        gc.collect()  # each block starts with no garbage left by the other side's block
        mine += await ours.run(block)
        if anchor is not None:
            ours.quiesce()  # nor with midturn's checkpoint running
            gc.collect()
            theirs += anchor.run(block)
    return mine, (theirs if anchor is not None else None)


def langgraph_available() -> bool:
    try:
        import langgraph.checkpoint.sqlite
        import langgraph.graph  # noqa: F401
    except ImportError:
        print(
            "LangGraph anchors skipped: install them with\n"
            '    .venv/bin/pip install "midturn[bench]"\n'
            "(langgraph and langgraph-checkpoint-sqlite)."
        )
        return False
    return True


def report(name: str, ours: list[float], anchor: list[float] | None, goal: float) -> None:
    p50, p99 = percentiles(ours)
    line = f"  {name:<8} midturn  p50 {p50:8.1f} µs  p99 {p99:8.1f} µs"
    print(line)
    if anchor is None:
        return
    a50, a99 = percentiles(anchor)
    print(f"  {'':<8} LangGraph p50 {a50:8.1f} µs  p99 {a99:8.1f} µs")
    print(
        f"  {'':<8} ratio     p50 {a50 / p50:7.1f}×    p99 {a99 / p99:7.1f}×"
        f"   (goal ≥ {goal:g}× both)"
    )


def report_firsts(ours: list[float], anchor: list[float] | None, rounds: int = ROUNDS) -> None:
    """How much of the p99 is each block's first cycle, which starts with the caches
    emptied by `gc.collect()` and the other side's block (diagnostic: the goal lines
    above count every cycle)."""
    block = len(ours) // rounds
    firsts = set(range(0, len(ours), block))
    slowest = sorted(range(len(ours)), key=ours.__getitem__)[int(len(ours) * 0.99) :]
    _, rest99 = percentiles([t for n, t in enumerate(ours) if n not in firsts])
    line = (
        f"  {'':<8} of midturn's slowest 1%, {len(firsts & set(slowest))} are a block's first"
        f" cycle ({len(firsts)} in all); p99 without them {rest99:.1f} µs"
    )
    if anchor is not None:
        step = len(anchor) // rounds
        _, anchor99 = percentiles([t for n, t in enumerate(anchor) if n % step])
        line += f", LangGraph's {anchor99:.1f} µs ({anchor99 / rest99:.1f}×)"
    print(line)


def report_cold(ours: list[float], anchor: list[float] | None, rounds: int = ROUNDS) -> None:
    """Each block's first and second cycle beside the rest, medians, for both sides
    (diagnostic): what a cycle pays for starting cold, after `gc.collect()` and the
    other side's block. A cold cycle runs the same instructions as a warm one
    (docs/benchmarks.md, stop 23): the difference is the caches."""

    def medians(samples: list[float]) -> str:
        step = len(samples) // rounds
        first, second, rest = (
            statistics.median(t for n, t in enumerate(samples) if test(n % step)) * 1e6
            for test in (lambda k: k == 0, lambda k: k == 1, lambda k: k > 1)
        )
        return f"1st {first:.0f}, 2nd {second:.0f}, rest {rest:.0f} µs (+{first - rest:.0f} µs)"

    line = f"  {'':<8} a block's cycles, medians: midturn {medians(ours)}"
    if anchor is not None:
        line += f"; LangGraph {medians(anchor)}"
    print(line)


async def roundtrip(cycles: int, sqlite_cycles: int, trace: bool = False) -> None:
    have_langgraph = langgraph_available()
    print(f"ask -> answer -> result, one cycle ({cycles} in memory, {sqlite_cycles} on SQLite)")
    async with open_store("memory://") as store, Runtime(store) as runtime:
        anchor = None
        if have_langgraph:
            from langgraph.checkpoint.memory import InMemorySaver

            anchor = LangGraphCycles(InMemorySaver())
        memory_tracer = CycleTrace() if trace else None
        ours = MidturnCycles(runtime, memory_tracer)
        measured = await interleaved(ours, anchor, cycles)
        report("memory", *measured, 20)
        report_firsts(*measured)
        report_cold(*measured)
        if memory_tracer is not None:
            memory_tracer.report()
        young, middle, old = ours.collections
        print(
            f"  {'':<8} garbage collections in midturn's {cycles} cycles: {young} young, "
            f"{middle} middle, {old} full generation"
        )

    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'midturn.db'}"
        connection = sqlite3.connect(Path(folder) / "lg.db", check_same_thread=False)
        try:
            async with open_store(url) as store, Runtime(store) as runtime:
                anchor = None
                if have_langgraph:
                    from langgraph.checkpoint.sqlite import SqliteSaver

                    anchor = LangGraphCycles(SqliteSaver(connection))
                tracer = CycleTrace() if trace else None
                cycled = await interleaved(MidturnCycles(runtime, tracer), anchor, sqlite_cycles)
                report("sqlite", *cycled, 10)
                report_firsts(*cycled)
                report_cold(*cycled)
                if tracer is not None:
                    tracer.report()
        finally:
            connection.close()


async def traced(build: Callable[[], Awaitable[Any]]) -> tuple[int, Any]:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = await build()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return after - before, kept


async def footprint(asks: int) -> None:
    print(f"\nmemory of {asks:,} parked asks (tracemalloc, across 1,000 sessions)")

    async def store_only() -> Any:
        store = open_store("memory://")
        await store.open()
        for n in range(asks):
            item = Interaction(
                id=f"ia_{n:022d}",
                kind="ask",
                session_id=f"s{n % 1000}",
                turn_id=f"t{n}",
                tool_call_id=f"c{n}",
                ask=parse_ask(ASK),  # each ask its own, as stored
            )
            events = [  # what the runtime writes: each ask is its turn's first
                requested_event(item, n // 1000),
                turn_event("turn_waiting", item.session_id, item.turn_id),
            ]
            await store.create_interaction(item, events)
        return store

    anchor, kept = await traced(store_only)
    del kept
    payload = len(json.dumps(ASK, separators=(",", ":")).encode())
    print(
        f"  the store alone: {anchor / asks:.0f} B/ask, {anchor / asks - payload:.0f} B beyond "
        f"the payload (the ask's JSON, {payload} B) (goal ≤ 2048)"
    )

    async def through_runtime(timeout_s: float | None, waiters: bool) -> Any:
        store = open_store("memory://")
        runtime = Runtime(store)
        await runtime.open()
        tool_input = ASK if timeout_s is None else {**ASK, "timeout_s": timeout_s}
        tasks = []
        for n in range(asks):
            item, _ = await runtime.ask(
                f"s{n % 1000}", tool_input, turn_id=f"t{n}", tool_call_id=f"c{n}"
            )
            if waiters:
                tasks.append(asyncio.create_task(runtime.wait(item.id)))
        await asyncio.sleep(0)  # let every waiter register
        return runtime, store, tasks

    for label, timeout_s, waiters in (
        ("parked", None, False),
        ("parked, deadline each", 3600.0, False),
        ("parked, a wait() task each", None, True),
    ):
        used, kept = await traced(lambda t=timeout_s, w=waiters: through_runtime(t, w))
        runtime, store, tasks = kept
        extra = (used - anchor) / asks
        print(
            f"  {label:<28} {used / asks:8.0f} B/ask  store alone {anchor / asks:6.0f} B/ask"
            f"  runtime's own {extra:6.0f} B/ask"
        )
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await runtime.aclose()
        await store.aclose()
        del kept, runtime, store, tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=2000)
    parser.add_argument("--sqlite-cycles", type=int, default=300)
    parser.add_argument(
        "--asks", type=int, default=100_000, help="parked asks for the memory part; 0: none"
    )
    parser.add_argument("--runs", type=int, default=3, help="cycle comparisons, each reported")
    parser.add_argument(
        "--trace",
        action="store_true",
        help="trace each cycle, memory and SQLite (CPU, run-queue wait, switches, store"
        " threads, GC) and list the slowest; the reads are outside the timed spans, but"
        " change them",
    )
    args = parser.parse_args()
    for run in range(1, args.runs + 1):
        print(f"run {run} of {args.runs}: ", end="")
        asyncio.run(roundtrip(args.cycles, args.sqlite_cycles, args.trace))
    if args.asks:  # `--asks 0` leaves the memory part out
        asyncio.run(footprint(args.asks))


if __name__ == "__main__":
    main()
