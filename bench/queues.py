"""Queue benchmark: what one park and one settle cost as a session's queue grows, on
SQLite and PostgreSQL side by side, each beside its own cost at an empty queue measured
in the same run (the anchor: the ratio should stay near 1).

    .venv/bin/python bench/queues.py [--depths 0,2000,20000] [--rounds 50]
        [--postgres postgresql://postgres@127.0.0.1:5432/test] [--no-postgres]

For each depth D, a fresh store: D asks are parked into one session with
`create_queued` (as the runtime parks them; the time this takes is printed as "fill"),
then `--rounds` times one more ask is parked in a new turn of that session and settled
with `settle_in_turn` (requested + turn_waiting, answered + turn_resumed: the runtime's
events). Printed: milliseconds per park and per settle at depth D, and D's cost over the
cost at depth 0. PostgreSQL works in a schema of its own, dropped afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from _postgres import drop_schema
from midturn.contract._interactions import Interaction, NewEvent
from midturn.contract._models import Ask, Option, Question
from midturn.store import Store, open_store

POSTGRES_URL = os.environ.get(
    "MIDTURN_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
SESSION = "bench-session"
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


def ask(name: str, turn: str) -> Interaction:
    return Interaction(
        id=name, kind="ask", session_id=SESSION, turn_id=turn, tool_call_id=name, ask=ASK
    )


def event(item: Interaction, kind: str) -> NewEvent:
    return NewEvent(
        type=kind,  # type: ignore[arg-type]
        session_id=item.session_id,
        turn_id=item.turn_id,
        interaction_id=item.id if kind.startswith("user_") else None,
    )


class Parked:
    """The `create_queued` events the runtime chooses: requested, and turn_waiting
    when the turn was not waiting."""

    def __init__(self, item: Interaction) -> None:
        self.item = item

    def __call__(self, position: int, turn_waiting: bool) -> Sequence[NewEvent]:
        requested = event(self.item, "user_question_requested")
        return [requested] if turn_waiting else [requested, event(self.item, "turn_waiting")]


async def park(store: Store, item: Interaction) -> None:
    _, created, _ = await store.create_queued(item, Parked(item))
    assert created


async def settle(store: Store, item: Interaction) -> None:
    outcome = await store.settle_in_turn(
        item.id,
        session_id=item.session_id,
        turn_id=item.turn_id,
        status="cancelled",
        events=[event(item, "user_question_cancelled")],
        turn_done=[event(item, "turn_resumed")],
    )
    assert outcome.won


@dataclass
class Cost:
    fill_s: float
    park_ms: float
    settle_ms: float


async def measure(url: str, depth: int, rounds: int) -> Cost:
    async with open_store(url) as store:
        started = time.perf_counter()
        for n in range(depth):  # one turn per ten asks, like agents asking in batches
            await park(store, ask(f"queued-{n}", f"turn-{n // 10}"))
        fill_s = time.perf_counter() - started
        parking = settling = 0.0
        for n in range(rounds):
            item = ask(f"probe-{n}", f"probe-turn-{n}")
            started = time.perf_counter()
            await park(store, item)
            parked = time.perf_counter()
            await settle(store, item)
            parking += parked - started
            settling += time.perf_counter() - parked
    return Cost(fill_s, 1000 * parking / rounds, 1000 * settling / rounds)


async def backend_cost(name: str, depth: int, rounds: int, args: argparse.Namespace) -> Cost:
    if name == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            return await measure(f"sqlite:///{Path(folder) / 'queue.db'}", depth, rounds)
    url = f"{args.postgres}?schema=bench_queue_{uuid.uuid4().hex[:10]}"
    try:
        return await measure(url, depth, rounds)
    finally:
        await drop_schema(url)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", default="0,2000,20000")
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--postgres", default=POSTGRES_URL)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    depths = sorted({0, *(int(text) for text in args.depths.split(","))})
    backends = ["sqlite"] + ([] if args.no_postgres else ["postgres"])

    print(f"one session, {args.rounds} parks + settles measured at each queue depth")
    print(f"{'pending':>8}  " + "  ".join(f"{name:^42}" for name in backends))
    header = f"{'park ms':>9} {'x0':>5} {'settle ms':>10} {'x0':>5} {'fill s':>8}"
    print(f"{'':>8}  " + "  ".join(header for _ in backends), flush=True)
    anchors: dict[str, Cost] = {}
    for depth in depths:  # 0 first: the anchor of every other row
        cells = []
        for name in backends:
            cost = await backend_cost(name, depth, args.rounds, args)
            anchor = anchors.setdefault(name, cost)
            cells.append(
                f"{cost.park_ms:9.2f} {cost.park_ms / anchor.park_ms:5.1f} "
                f"{cost.settle_ms:10.2f} {cost.settle_ms / anchor.settle_ms:5.1f} "
                f"{cost.fill_s:8.1f}"
            )
        print(f"{depth:>8}  " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
