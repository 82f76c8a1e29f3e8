"""Store benchmark: what a parked ask costs in memory, and how fast SQLite creates and
settles, each beside an anchor measured in the same run.

    .venv/bin/python bench/store.py [--asks 100000] [--rows 2000]
        [--postgres postgresql://postgres@127.0.0.1:5432/test] [--no-postgres]

- memory://: bytes per parked ask (its indexes and its `user_question_requested` event)
  beside the anchor, the bytes of the Interaction and NewEvent handed to the store.
- sqlite: creates and settles per second through the store, each with one event in its
  transaction, beside the anchor, the same transactions written with the standard
  library's sqlite3 directly (no models, no JSON, no thread hop); and the process CPU
  time (all threads, user + system) of each, steadier than the rate on a busy machine.
- sqlite: WAL frames (one per b-tree page a transaction writes) per park and per settle
  of the runtime's cycle (`Runtime.ask`, `Runtime.answer`: the events it writes, the
  queue read, the turn check), with the background checkpoints held off meanwhile.
- postgresql: statements sent per park and per settle of the same runtime cycle (the
  store's own, and the runtime's ask and answer in all, counted on the client around
  asyncpg's Connection), and milliseconds per park and per settle beside the anchor,
  one bare `SELECT 1` round trip on the same pool, taken in turn with the cycles.
  A fresh schema, dropped afterwards.
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
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _postgres import drop_schema
from midturn import Runtime
from midturn.contract._interactions import Interaction, NewEvent
from midturn.contract._models import Ask, Option, Question
from midturn.store import Store, _sqlite_conn, open_store

POSTGRES_URL = os.environ.get(
    "MIDTURN_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)

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


class Statements:
    """Counts the statements asyncpg connections send, from `install()` on: `execute`
    without arguments is one simple query, every other call goes through `_execute`."""

    def __init__(self) -> None:
        self.count = 0

    def install(self) -> None:
        from asyncpg.connection import Connection

        execute, extended = Connection.execute, Connection._execute

        async def counted_execute(connection: Any, query: str, *args: Any, **kw: Any) -> Any:
            if not args:
                self.count += 1
            return await execute(connection, query, *args, **kw)

        async def counted_extended(connection: Any, *args: Any, **kw: Any) -> Any:
            self.count += 1
            return await extended(connection, *args, **kw)

        Connection.execute = counted_execute
        Connection._execute = counted_extended


class CountedStore:
    """Counts the statements of the store's park and settle, as the runtime calls them."""

    def __init__(self, store: Store, statements: Statements) -> None:
        self.parks = self.settles = 0
        for name in ("create_queued", "settle_in_turn"):
            setattr(store, name, self._counted(getattr(store, name), name, statements))

    def _counted(
        self, method: Callable[..., Awaitable[Any]], name: str, statements: Statements
    ) -> Callable[..., Awaitable[Any]]:
        async def counted(*args: Any, **kwargs: Any) -> Any:
            before = statements.count
            try:
                return await method(*args, **kwargs)
            finally:
                if name == "create_queued":
                    self.parks += statements.count - before
                else:
                    self.settles += statements.count - before

        return counted


def backend_cpu_s(pids: list[int]) -> float | None:
    """CPU time (user + system) the server processes `pids` have used, from /proc: the
    server must run on this machine (None otherwise)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


async def postgres_cycle(url: str, rows: int) -> dict[str, float]:
    """Over `rows` runtime cycles across 100 sessions (after as many of history), per
    cycle: the store's statements per park and settle, the runtime's per ask and
    answer, milliseconds per ask, per answer and per bare `SELECT 1`, and the CPU time
    of this process and of the pool's server processes (a pool of two, both held once
    to learn their pids)."""
    statements = Statements()
    statements.install()
    async with open_store(f"{url}&pool_min=2&pool_max=2") as store, Runtime(store) as runtime:
        counted = CountedStore(store, statements)
        pool = store._db()  # type: ignore[attr-defined]
        held = [await pool.acquire(), await pool.acquire()]
        pids = [connection.get_server_pid() for connection in held]
        for connection in held:
            await pool.release(connection)
        answer = {"answers": {"db": "PostgreSQL"}}
        tool_input = ASK.model_dump(mode="json", exclude_none=True)
        totals = dict.fromkeys(("ask", "answer", "ask_ms", "answer_ms", "bare_ms"), 0.0)
        for n in range(2 * rows):
            measured = n >= rows  # the first half builds the history
            if n == rows:
                cpu = (time.process_time(), backend_cpu_s(pids))
            if measured:
                counted.parks = counted.settles = 0
            started, before = time.perf_counter(), statements.count
            asked, _ = await runtime.ask(f"s{n % 100}", tool_input, turn_id=f"t{n}")
            parked, after_ask = time.perf_counter(), statements.count
            await runtime.answer(asked.id, answer)
            settled, after_answer = time.perf_counter(), statements.count
            await pool.fetchval("SELECT 1")
            if measured:
                totals["ask"] += after_ask - before
                totals["answer"] += after_answer - after_ask
                totals["ask_ms"] += 1000 * (parked - started)
                totals["answer_ms"] += 1000 * (settled - parked)
                totals["bare_ms"] += 1000 * (time.perf_counter() - settled)
                totals["park"] = totals.get("park", 0.0) + counted.parks
                totals["settle"] = totals.get("settle", 0.0) + counted.settles
        totals["client_cpu_ms"] = 1000 * (time.process_time() - cpu[0])
        backend = backend_cpu_s(pids)
        if backend is not None and cpu[1] is not None:
            totals["server_cpu_ms"] = 1000 * (backend - cpu[1])
    return {name: value / rows for name, value in totals.items()}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asks", type=int, default=100_000)
    parser.add_argument("--rows", type=int, default=2_000)
    parser.add_argument("--postgres", default=POSTGRES_URL)
    parser.add_argument("--no-postgres", action="store_true")
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
    if args.no_postgres:
        return
    url = f"{args.postgres}?schema=bench_store_{uuid.uuid4().hex[:10]}"
    try:
        pg = await postgres_cycle(url, args.rows // 4)
    finally:
        await drop_schema(url)
    print(f"postgresql {args.rows // 4} runtime cycles (ask, answer) over 100 sessions")
    print(
        f"  statements per park {pg['park']:.2f}, per settle {pg['settle']:.2f} (the store's);"
        f" per ask {pg['ask']:.2f}, per answer {pg['answer']:.2f} (the runtime's in all)"
    )
    print(
        f"  ms per ask {pg['ask_ms']:.2f}, per answer {pg['answer_ms']:.2f}"
        f"   anchor: one bare SELECT 1 {pg['bare_ms']:.2f} ms"
        f"   ratios {pg['ask_ms'] / pg['bare_ms']:.1f}, {pg['answer_ms'] / pg['bare_ms']:.1f}"
    )
    server = pg.get("server_cpu_ms")
    print(
        f"  CPU per cycle: this process {pg['client_cpu_ms']:.2f} ms, the pool's server"
        f" processes {'n/a (not local)' if server is None else f'{server:.2f} ms'}"
    )


if __name__ == "__main__":
    asyncio.run(main())
