"""The SQLite retention prune at scale: what each pruned ask costs, in SQLite VM steps
(independent of the machine's load) and in process CPU time, beside the same batches'
`prunable` reads as the anchor. A diagnostic for the store's schema (migration 11 found
an interaction's events among its session's instead of through an index of its own).

    .venv/bin/python bench/prune.py [--asks 10000] [--sessions 100] [--kept 0]
        [--batch 1000] [--one-turn] [--folder DIR] [--file FILE [--open-only]]

A new store file gets `--asks` settled asks, taken in turn by `--sessions` sessions, each
parked with its `turn_waiting` and `user_question_requested` events and settled with
`user_question_answered` and `turn_resumed` (a new turn each, or with `--one-turn` one
turn per session), settled long ago; then `--kept` more per session, settled now, which
the prune keeps (a session's recent history). The retention pass then prunes what is
older than a day, `--batch` at a time, as `prune_settled` does (`prunable`, then `prune`
of those ids), and prints per pruned ask the VM steps of `prune` and of `prunable`
(`sqlite3`'s progress handler, every step) and the CPU time of each.

`--file FILE` keeps the file made (with `--folder`, else a temporary one) at FILE and
prunes it; `--file FILE --open-only` only opens FILE and prunes nothing. Under valgrind,
the instructions of a prune are those of the first less those of the second, each run
on a fresh copy of the same file.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sqlite3
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from midturn.contract._interactions import Interaction, NewEvent
from midturn.store import Store, open_store
from midturn.store._sqlite import SqliteStore

LONG_AGO = datetime(2026, 1, 1, tzinfo=UTC)
CUTOFF = LONG_AGO + timedelta(days=1)


def _events(item: Interaction, *types: str) -> list[NewEvent]:
    return [
        NewEvent(
            type=kind,  # type: ignore[arg-type]
            session_id=item.session_id,
            turn_id=item.turn_id,
            interaction_id=None if kind.startswith("turn_") else item.id,
        )
        for kind in types
    ]


async def _settled(store: Store, n: int, session: int, one_turn: bool, when: datetime) -> None:
    turn = f"t{session}" if one_turn else f"t{n}"
    item = Interaction(
        id=f"i{n}", kind="ask", session_id=f"s{session}", turn_id=turn, created_at=when
    )
    await store.create_interaction(item, _events(item, "turn_waiting", "user_question_requested"))
    outcome = await store.settle(
        item.id,
        status="skipped",
        settled_at=when,
        events=_events(item, "user_question_skipped", "turn_resumed"),
    )
    assert outcome.won


async def build(path: Path, asks: int, sessions: int, kept: int, one_turn: bool) -> None:
    async with open_store(f"sqlite:///{path}") as store:
        for n in range(asks):
            await _settled(store, n, n % sessions, one_turn, LONG_AGO)
        for n in range(asks, asks + kept * sessions):
            await _settled(store, n, n % sessions, one_turn, datetime.now(UTC))


class Steps:
    """SQLite VM steps on one connection, counted while `on`."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.count = 0
        self.on = False
        db.set_progress_handler(self._step, 1)

    def _step(self) -> int:
        if self.on:
            self.count += 1
        return 0


class Phase:
    def __init__(self) -> None:
        self.steps = 0
        self.cpu = 0.0

    def run_start(self, steps: Steps) -> None:
        self._steps_at, self._cpu_at = steps.count, time.process_time()
        steps.on = True

    def run_end(self, steps: Steps) -> None:
        steps.on = False
        self.steps += steps.count - self._steps_at
        self.cpu += time.process_time() - self._cpu_at


async def prune(path: Path, batch: int, *, counted: bool) -> tuple[int, int, Phase, Phase]:
    """Prune everything settled before the cutoff, `batch` at a time: (interactions
    pruned, events pruned, the `prunable` reads' cost, the prunes' cost)."""
    reads, prunes = Phase(), Phase()
    gone = events = 0
    async with open_store(f"sqlite:///{path}") as store:
        assert isinstance(store, SqliteStore)
        connection: Any = store._connection
        steps = Steps(connection.db) if counted else None
        while True:
            if steps:
                reads.run_start(steps)
            due = await store.prunable(CUTOFF, limit=batch)
            if steps:
                reads.run_end(steps)
            if not due:
                break
            if steps:
                prunes.run_start(steps)
            pruned = await store.prune([item.id for item in due])
            if steps:
                prunes.run_end(steps)
            gone += pruned.interactions
            events += pruned.events
    return gone, events, reads, prunes


async def _open_only(path: Path) -> None:
    async with open_store(f"sqlite:///{path}"):
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--asks", type=int, default=10_000)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--kept", type=int, default=0, help="asks per session kept")
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--one-turn", action="store_true")
    parser.add_argument("--folder", type=Path)
    parser.add_argument("--file", type=Path, help="keep the file made here, or prune it")
    parser.add_argument("--open-only", action="store_true", help="with --file: open, no prune")
    args = parser.parse_args()

    if args.file is not None and args.file.exists():
        if args.open_only:
            asyncio.run(_open_only(args.file))
            return
        gone, events, _, _ = asyncio.run(prune(args.file, args.batch, counted=False))
        print(f"pruned {gone} interactions, {events} events (uncounted)")
        return

    folder = Path(args.folder or tempfile.mkdtemp(prefix="midturn-prune-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "prune.db"
    asyncio.run(build(path, args.asks, args.sessions, args.kept, args.one_turn))
    if args.file is not None:
        shutil.copy(path, args.file)
        print(f"made {args.file}")
        return
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT count(*) FROM midturn_events").fetchone()[0]
        version = db.execute("SELECT max(version) FROM midturn_migrations").fetchone()[0]
    db.close()
    gone, events, reads, prunes = asyncio.run(prune(path, args.batch, counted=True))
    shape = "one turn per session" if args.one_turn else "a new turn each"
    print(
        f"schema {version}: {args.asks} asks in {args.sessions} sessions ({shape}), "
        f"{args.kept} kept per session, {rows} events; batches of {args.batch}"
    )
    print(f"pruned {gone} interactions and {events} events")
    per = max(1, gone)
    print(f"{'per pruned ask':24} {'VM steps':>10} {'CPU µs':>10}")
    for name, phase in (("prune", prunes), ("prunable (anchor)", reads)):
        print(f"{name:24} {phase.steps / per:10.1f} {phase.cpu / per * 1e6:10.1f}")


if __name__ == "__main__":
    main()
