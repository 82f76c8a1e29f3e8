"""Store benchmark: what a parked ask costs in memory, and how fast SQLite creates and
settles, each beside an anchor measured in the same run.

    .venv/bin/python bench/store.py [--asks 100000] [--rows 2000]

- memory://: bytes per parked ask (its indexes and its `user_question_requested` event)
  beside the anchor, the bytes of the Interaction and NewEvent handed to the store.
- sqlite: creates and settles per second through the store, each with one event in its
  transaction, beside the anchor, the same transactions written with the standard
  library's sqlite3 directly (no models, no JSON, no thread hop); and the process CPU
  time (all threads, user + system) of each, steadier than the rate on a busy machine.
- sqlite: WAL frames (one per b-tree page a transaction writes) per park and per settle
  of the runtime's cycle (`Runtime.ask`, `Runtime.answer`: the events it writes, the
  queue read, the turn check), with the background checkpoints held off meanwhile.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import sqlite3
import tempfile
import time
import tracemalloc
from pathlib import Path

from midturn import Runtime
from midturn.contract._interactions import Interaction, NewEvent
from midturn.contract._models import Ask, Option, Question
from midturn.store import _sqlite_conn, open_store

ASK = Ask(
    questions=(
        Question(
            id="db",
            header="Database",
            question="Which database should the service use?",
            options=(Option(label="SQLite"), Option(label="PostgreSQL")),
        ),
    )
)


def interaction(n: int) -> Interaction:
    return Interaction(
        id=f"ask-{n:07d}",
        kind="ask",
        session_id=f"session-{n % 1000}",
        turn_id=f"turn-{n}",
        tool_call_id=f"call-{n}",
        ask=ASK,
    )


def event(item: Interaction, kind: str = "user_question_requested") -> NewEvent:
    return NewEvent(
        type=kind,  # type: ignore[arg-type]
        session_id=item.session_id,
        turn_id=item.turn_id,
        interaction_id=item.id,
    )


async def memory_footprint(count: int) -> tuple[float, float]:
    gc.collect()
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    items = [interaction(n) for n in range(count)]
    events = [event(item) for item in items]
    gc.collect()
    payload = (tracemalloc.get_traced_memory()[0] - start) / count
    async with open_store("memory://") as store:
        before = tracemalloc.get_traced_memory()[0]
        for item, new in zip(items, events, strict=True):
            await store.create_interaction(item, [new])
        gc.collect()
        per_ask = (tracemalloc.get_traced_memory()[0] - before) / count
    tracemalloc.stop()
    return per_ask, payload


Rates = tuple[float, float, float, float]
"""Creates/s, settles/s, then CPU µs per create and per settle."""


def cpu_s() -> float:
    times = os.times()
    return times.user + times.system


def rates(rows: int, start: float, created: float, settled: float, cpu: list[float]) -> Rates:
    return (
        rows / (created - start),
        rows / (settled - created),
        (cpu[1] - cpu[0]) / rows * 1e6,
        (cpu[2] - cpu[1]) / rows * 1e6,
    )


async def sqlite_rates(rows: int, folder: Path) -> Rates:
    items = [interaction(n) for n in range(rows)]
    async with open_store(f"sqlite:///{folder / 'store.db'}") as store:
        cpu = [cpu_s()]
        started = time.perf_counter()
        for item in items:
            await store.create_interaction(item, [event(item)])
        created = time.perf_counter()
        cpu.append(cpu_s())
        for item in items:
            await store.settle(
                item.id, status="cancelled", events=[event(item, "user_question_cancelled")]
            )
        settled = time.perf_counter()
        cpu.append(cpu_s())
    return rates(rows, started, created, settled, cpu)


def sqlite_anchor(rows: int, folder: Path) -> Rates:
    db = sqlite3.connect(folder / "anchor.db", isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("CREATE TABLE i (id TEXT PRIMARY KEY, status TEXT, body TEXT)")
    db.execute("CREATE TABLE e (id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT)")
    body = interaction(0).model_dump_json()
    cpu = [cpu_s()]
    started = time.perf_counter()
    for n in range(rows):
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO i VALUES (?, 'pending', ?)", (f"ask-{n}", body))
        db.execute("INSERT INTO e (body) VALUES ('{}')")
        db.execute("COMMIT")
    created = time.perf_counter()
    cpu.append(cpu_s())
    for n in range(rows):
        db.execute("BEGIN IMMEDIATE")
        db.execute("SELECT body FROM i WHERE id = ?", (f"ask-{n}",)).fetchone()
        db.execute("UPDATE i SET status = 'x' WHERE id = ? AND status = 'pending'", (f"ask-{n}",))
        db.execute("INSERT INTO e (body) VALUES ('{}')")
        db.execute("COMMIT")
    settled = time.perf_counter()
    cpu.append(cpu_s())
    db.close()
    return rates(rows, started, created, settled, cpu)


async def sqlite_frames(rows: int, folder: Path) -> tuple[float, float]:
    """WAL frames appended per park and per settle, over `rows` cycles across 100 sessions
    after as many cycles of history."""
    held = _sqlite_conn.CHECKPOINT_EVERY, _sqlite_conn.AUTOCHECKPOINT_PAGES
    _sqlite_conn.CHECKPOINT_EVERY = _sqlite_conn.AUTOCHECKPOINT_PAGES = 10**9
    wal = folder / "frames.db-wal"
    try:
        async with (
            open_store(f"sqlite:///{folder / 'frames.db'}") as store,
            Runtime(store) as runtime,
        ):
            with contextlib.closing(sqlite3.connect(folder / "frames.db")) as db:
                page = int(db.execute("PRAGMA page_size").fetchone()[0])

            def frames() -> int:
                return (wal.stat().st_size - 32) // (page + 24)

            answer = {"answers": {"db": "SQLite"}}
            parks = settles = 0
            for n in range(2 * rows):
                tool_input = ASK.model_dump(mode="json", exclude_none=True)
                before = frames()
                asked, _ = await runtime.ask(f"s{n % 100}", tool_input, turn_id=f"t{n}")
                parked = frames()
                await runtime.answer(asked.id, answer)
                if n >= rows:  # the first half builds the history
                    parks += parked - before
                    settles += frames() - parked
    finally:
        _sqlite_conn.CHECKPOINT_EVERY, _sqlite_conn.AUTOCHECKPOINT_PAGES = held
    return parks / rows, settles / rows


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asks", type=int, default=100_000)
    parser.add_argument("--rows", type=int, default=2_000)
    args = parser.parse_args()

    per_ask, payload = await memory_footprint(args.asks)
    print(f"memory://  {args.asks} parked asks")
    print(f"  store cost per ask (indexes + event)  {per_ask:8.0f} B")
    print(
        f"  anchor: the Interaction + NewEvent    {payload:8.0f} B   ratio {per_ask / payload:.2f}"
    )

    with tempfile.TemporaryDirectory() as folder:
        creates, settles, create_cpu, settle_cpu = await sqlite_rates(args.rows, Path(folder))
        anchor = sqlite_anchor(args.rows, Path(folder))
        park_frames, settle_frames = await sqlite_frames(args.rows // 4, Path(folder))
    anchor_creates, anchor_settles, anchor_create_cpu, anchor_settle_cpu = anchor
    print(f"sqlite     {args.rows} creates, then {args.rows} settles, one event each")
    print(
        f"  creates/s  store {creates:8.0f}   anchor sqlite3 {anchor_creates:8.0f}"
        f"   ratio {creates / anchor_creates:.2f}"
    )
    print(
        f"  settles/s  store {settles:8.0f}   anchor sqlite3 {anchor_settles:8.0f}"
        f"   ratio {settles / anchor_settles:.2f}"
    )
    print(
        f"  CPU per create  store {create_cpu:6.0f} µs   anchor {anchor_create_cpu:6.0f} µs"
        f"   per settle  store {settle_cpu:6.0f} µs   anchor {anchor_settle_cpu:6.0f} µs"
    )
    print(
        f"  WAL frames per park {park_frames:.1f}, per settle {settle_frames:.1f} (the runtime's)"
    )


if __name__ == "__main__":
    asyncio.run(main())
