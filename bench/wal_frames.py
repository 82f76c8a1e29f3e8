"""WAL frames by b-tree: which table's or index's pages a park and a settle of the
runtime's cycle write to a SQLite store's WAL. A diagnostic beside `bench/store.py`'s
frame count (no anchor; nothing here is timed).

    .venv/bin/python bench/wal_frames.py [--cycles 300] [--history 300] [--sessions 100]
        [--one-turn] [--workers W] [--alter SQL]... [--plans] [--folder DIR]

The store file is made new (in `--folder`, else a temporary folder) and migrated; each
`--alter` statement then runs on it by hand (`DROP INDEX …`: a schema a migration might
make, measured without changing the store), and the runtime parks and answers
`--history` asks (`Runtime.ask`, `Runtime.answer`, as `bench/store.py`'s frame line does:
session `s{n % sessions}`, a new turn each, or with `--one-turn` one turn per session for
all its asks, as the gateway bench's agent does), then, opened again, `--cycles` more
whose frames are counted. With `--workers W`, W tasks at once, each in a session of its
own, share the group commit's transactions, so only frames per cycle (and commits per
cycle) are counted. The background checkpoints are held off, so the WAL keeps every frame; a
frame's header names its page, and once the cycles are done `dbstat` names the b-tree
each page belongs to (page 1, the file's header, apart; a page in none is the freelist's).

Printed: frames per park and per settle by b-tree, with the syscalls they make (two
`pwrite64` per frame, its header and its page), and what a checkpoint would copy back:
the distinct pages of every `CHECKPOINT_EVERY` writes (one `pwrite64` each). With
`--plans`, the query plan of each statement the store runs on the tables it writes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import sqlite3
import struct
import tempfile
from collections import Counter
from pathlib import Path

from midturn import Runtime
from midturn.store import _sqlite, _sqlite_conn, _sqlite_outbox, open_store

TOOL_INPUT = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use?",
            "options": [{"label": "SQLite"}, {"label": "PostgreSQL"}],
        }
    ]
}
ANSWER = {"answers": {"db": "SQLite"}}
WAL_HEADER = 32
FRAME_HEADER = 24
PAGE_1 = "page 1 (the file header)"
FREELIST = "freelist"


class Tally:
    """Frames by b-tree over some transactions of one kind (parks, or settles)."""

    def __init__(self) -> None:
        self.transactions = 0
        self.commits = 0
        self.frames: Counter[str] = Counter()

    def per(self, name: str) -> float:
        return self.frames[name] / max(1, self.transactions)

    def total(self) -> float:
        return sum(self.frames.values()) / max(1, self.transactions)


class Frames:
    def __init__(
        self, park: Tally, settle: Tally, checkpoint_pages: float, names: list[str]
    ) -> None:
        self.park = park
        self.settle = settle
        self.checkpoint_pages = checkpoint_pages  # distinct pages per `CHECKPOINT_EVERY` writes
        self.names = names  # every table's and index's


def read_frames(wal: bytes, page_size: int, start: int, end: int) -> list[int]:
    """The page number of each frame between the WAL offsets `start` and `end`."""
    size = FRAME_HEADER + page_size
    return [struct.unpack_from(">I", wal, at)[0] for at in range(start, end, size)]


def commits(wal: bytes, page_size: int, start: int, end: int) -> list[int]:
    """The WAL offsets of the commit frames (those that give the database's size)."""
    size = FRAME_HEADER + page_size
    return [at for at in range(start, end, size) if struct.unpack_from(">I", wal, at + 4)[0]]


async def _cycle(
    runtime: Runtime, n: int, sessions: int, one_turn: bool, wal: Path | None = None
) -> int:
    """Park the `n`-th ask and answer it; the WAL's size between the two (0 without it)."""
    turn = f"t{n % sessions}" if one_turn else f"t{n}"
    asked, _ = await runtime.ask(f"s{n % sessions}", TOOL_INPUT, turn_id=turn)
    parked = 0 if wal is None else wal_size(wal)
    await runtime.answer(asked.id, ANSWER)
    return parked


async def _at_once(runtime: Runtime, workers: int, cycles: int, one_turn: bool) -> None:
    """`cycles` cycles by `workers` tasks at once, each in a session of its own (the
    gateway bench's 64 concurrent agents): their writes share the group commit's
    transactions."""

    async def worker(w: int) -> None:
        for n in range(cycles // workers):
            turn = f"t{w}" if one_turn else f"t{w}-{n}"
            asked, _ = await runtime.ask(f"s{w}", TOOL_INPUT, turn_id=turn)
            await runtime.answer(asked.id, ANSWER)

    await asyncio.gather(*(worker(w) for w in range(workers)))


def page_owners(db: sqlite3.Connection) -> dict[int, str]:
    """Each page's b-tree (table or index name) by `dbstat`, page 1 apart."""
    try:
        rows = db.execute("SELECT pageno, name FROM dbstat").fetchall()
    except sqlite3.OperationalError as error:
        raise SystemExit(
            f"this SQLite ({sqlite3.sqlite_version}) has no dbstat table ({error}); "
            "run with a Python whose sqlite3 is built with SQLITE_ENABLE_DBSTAT_VTAB "
            "(Debian's libsqlite3 is)"
        ) from error
    owners = {int(page): str(name) for page, name in rows}
    owners[1] = PAGE_1
    return owners


def scratch_file(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "frames.db"


def wal_size(wal: Path) -> int:
    return wal.stat().st_size


def snapshot(path: Path, wal: Path) -> tuple[int, dict[int, str], list[str], bytes]:
    """The page size, each page's b-tree, every schema name, and the WAL's bytes."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        page_size = int(db.execute("PRAGMA page_size").fetchone()[0])
        owners = page_owners(db)
        names = [str(row[0]) for row in db.execute("SELECT name FROM sqlite_schema")]
    return page_size, owners, names, wal.read_bytes()


def alter(path: Path, statements: list[str]) -> None:
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        for statement in statements:
            db.execute(statement)


async def measure(
    folder: Path,
    *,
    cycles: int,
    history: int,
    sessions: int,
    one_turn: bool,
    changes: list[str],
    workers: int = 1,
) -> Frames:
    path = scratch_file(folder)
    url = f"sqlite:///{path}"
    async with open_store(url):
        pass  # made and migrated
    alter(path, changes)
    # The history with the store's own checkpoints (its WAL stays small however long).
    async with open_store(url) as store, Runtime(store) as runtime:
        if workers > 1:
            await _at_once(runtime, workers, history, one_turn)
        for n in range(history if workers == 1 else 0):
            await _cycle(runtime, n, sessions, one_turn)
    held = _sqlite_conn.CHECKPOINT_EVERY, _sqlite_conn.AUTOCHECKPOINT_PAGES
    _sqlite_conn.CHECKPOINT_EVERY = _sqlite_conn.AUTOCHECKPOINT_PAGES = 10**9
    wal = Path(f"{path}-wal")
    spans: list[tuple[str, int, int]] = []  # (park or settle, WAL offset before, after)
    try:
        async with open_store(url) as store, Runtime(store) as runtime:
            # One cycle not counted: a first write may start a copied-back WAL over from
            # its top, writing over frames without growing the file.
            await _cycle(runtime, history + cycles, sessions, one_turn)
            if workers > 1:
                start = wal_size(wal)
                await _at_once(runtime, workers, cycles, one_turn)
                spans.append(("together", start, wal_size(wal)))
            for n in range(history, history + cycles if workers == 1 else 0):
                before = wal_size(wal)
                parked = await _cycle(runtime, n, sessions, one_turn, wal)
                spans += [("park", before, parked), ("settle", parked, wal_size(wal))]
            # Read while the store is open: its close checkpoints the WAL and removes it.
            page_size, owners, names, content = snapshot(path, wal)
    finally:
        _sqlite_conn.CHECKPOINT_EVERY, _sqlite_conn.AUTOCHECKPOINT_PAGES = held
    tallies = {"park": Tally(), "settle": Tally(), "together": Tally()}
    written: list[set[int]] = []
    for kind, start, end in spans:
        pages = read_frames(content, page_size, start, end)
        tally = tallies[kind]
        tally.transactions += 1
        tally.frames.update(owners.get(page, FREELIST) for page in pages)
        written.append(set(pages))
    if workers > 1:  # per cycle, and how many commits the cycles took
        together = tallies["together"]
        together.transactions = workers * (cycles // workers)
        together.commits = len(commits(content, page_size, *spans[0][1:]))
        return Frames(together, Tally(), 0.0, names)
    every = held[0]
    windows = [written[at : at + every] for at in range(0, len(written), every)]
    copied = sum(len(set().union(*window)) for window in windows if len(window) == every)
    full = sum(1 for window in windows if len(window) == every)
    checkpoint = copied / max(1, full * every / 2)
    return Frames(tallies["park"], tallies["settle"], checkpoint, names)


def statements() -> dict[str, str]:
    """The statements the store runs on the interactions and the events (the module
    constants, `list_sql`'s shapes, and the few written inline in `_sqlite.py`)."""
    found: dict[str, str] = {}
    for module in (_sqlite, _sqlite_outbox):
        for name, value in vars(module).items():
            head = value.lstrip().split(None, 1)[0].upper() if isinstance(value, str) else ""
            if name.startswith("_") and head in {"SELECT", "UPDATE", "DELETE", "WITH"}:
                found[f"{module.__name__.rsplit('.', 1)[-1]}.{name}"] = value
    del found["_sqlite._DEADLINES"]  # the start of the two below
    found["_sqlite._PRUNABLE (prunable)"] = (
        f"SELECT body{_sqlite._PRUNABLE} ORDER BY created_at, seq LIMIT ?"
    )
    found["_sqlite._PRUNABLE (count_prunable)"] = f"SELECT count(*){_sqlite._PRUNABLE}"
    found["prune: the row"] = "DELETE FROM midturn_interactions WHERE id = ?"
    found["list cursor"] = "SELECT created_at, seq FROM midturn_interactions WHERE id = ?"
    found["read_events"] = "SELECT id, body FROM midturn_events WHERE id > ? ORDER BY id LIMIT ?"
    found["read_events of a session"] = (
        "SELECT id, body FROM midturn_events WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?"
    )
    found["tail_start of a session"] = (
        "SELECT id FROM midturn_events WHERE session_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?"
    )
    for label, filters in {
        "every interaction": {},
        "by status (not pending)": {"status": "answered"},
        "inbox (pending)": {"status": "pending"},
        "inbox page": {"status": "pending", "after": "x"},
        "a session's history": {"session_id": "s"},
        "a session's history page": {"session_id": "s", "after": "x"},
        "a session's queue (pending)": {"session_id": "s", "status": "pending"},
        "a turn's pending": {"session_id": "s", "turn_id": "t", "status": "pending"},
        "a turn's allowed permissions": {
            "session_id": "s",
            "turn_id": "t",
            "kind": "permission",
            "status": "allowed",
        },
    }.items():
        sql, _ = _sqlite.list_sql(**filters)  # type: ignore[arg-type]
        found[f"list_interactions: {label}"] = sql
    return found


def plan(db: sqlite3.Connection, sql: str) -> str:
    numbered = [int(n) for n in re.findall(r"\?(\d+)", sql)]
    count = max(numbered) if numbered else sql.count("?")
    try:
        rows = db.execute(f"EXPLAIN QUERY PLAN {sql}", [None] * count).fetchall()
    except sqlite3.Error as error:  # an INDEXED BY naming an index dropped by --alter
        return f"error: {error}"
    return " ; ".join(str(row[3]) for row in rows)


def print_together(frames: Frames) -> None:
    cycles = frames.park
    print(f"{'b-tree':48} {'cycle':>6}")
    for name, count in sorted(cycles.frames.items(), key=lambda item: (-item[1], item[0])):
        print(f"{name:48} {count / cycles.transactions:6.2f}")
    print(f"{'frames':48} {cycles.total():6.2f}")
    print(f"{'pwrite64 of the frames (2 a frame)':48} {2 * cycles.total():6.2f}")
    print(f"commits per cycle: {cycles.commits / cycles.transactions:.2f} (2.00 one at a time)")


def print_frames(frames: Frames) -> None:
    park, settle = frames.park, frames.settle
    used = sorted(
        set(park.frames) | set(settle.frames),
        key=lambda name: (-park.per(name) - settle.per(name), name),
    )
    print(f"{'b-tree':48} {'park':>6} {'settle':>6}")
    for name in used:
        print(f"{name:48} {park.per(name):6.2f} {settle.per(name):6.2f}")
    print(f"{'frames':48} {park.total():6.2f} {settle.total():6.2f}")
    twice = 2 * park.total(), 2 * settle.total()
    print(f"{'pwrite64 of the frames (2 a frame)':48} {twice[0]:6.2f} {twice[1]:6.2f}")
    print(
        f"checkpoint: {frames.checkpoint_pages:.2f} distinct pages per cycle over every"
        f" {_sqlite_conn.CHECKPOINT_EVERY} writes (one pwrite64 each when copied back)"
    )
    untouched = [
        name
        for name in frames.names
        if name not in used and not name.startswith(("sqlite_", "midturn_count_"))
    ]
    print(f"not written: {', '.join(untouched)}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=300)
    parser.add_argument("--history", type=int, default=300)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--one-turn", action="store_true")
    parser.add_argument("--alter", action="append", default=[], metavar="SQL")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--plans", action="store_true")
    parser.add_argument("--folder", type=Path)
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        folder = args.folder or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        frames = await measure(
            folder,
            cycles=args.cycles,
            history=args.history,
            sessions=args.sessions,
            one_turn=args.one_turn,
            changes=args.alter,
            workers=args.workers,
        )
        turns = "one turn per session" if args.one_turn else "a new turn each"
        shape = f"{args.sessions} sessions" if args.workers == 1 else f"{args.workers} at once"
        print(
            f"{args.cycles} cycles after {args.history}, {shape}, {turns}"
            f"; altered by: {'; '.join(args.alter) or 'nothing'}"
        )
        if args.workers > 1:
            print_together(frames)
        else:
            print_frames(frames)
        if args.plans:
            with contextlib.closing(sqlite3.connect(folder / "frames.db")) as db:
                for name, sql in statements().items():
                    print(f"{name}: {plan(db, sql)}")


if __name__ == "__main__":
    asyncio.run(main())
