"""History benchmark: one page of a session's history (`Runtime.history`, what
`GET /v1/sessions/{sid}/history` serves) beside the store's own listing of the same
interactions (`Store.list_interactions`, the anchor it is built on), in the same run.

    .venv/bin/python bench/history.py [--interactions 3000] [--rounds 30] [--db sqlite]

A session gets N settled asks (every tenth answered with a rare word). Timed, per call:

- anchor: `list_interactions(session_id, limit=100)` — the bare keyset page of rows;
- page: `history(session_id, limit=100)` — the same page as history entries;
- search: `history(session_id, query=<the rare word>, limit=100)` — a filtered page,
  reading up to 2,000 interactions;
- export: every page of the unfiltered history (what `?format=jsonl` walks), per
  interaction.

Prints p50 per call and each ratio to the anchor's p50.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from midturn import Runtime, open_store

ASK = {"questions": [{"question": "Which colour?", "options": ["Red", "Blue", "Green"]}]}


async def _p50(work: Callable[[], Awaitable[Any]], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        await work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def main(interactions: int, rounds: int, db: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        url = "memory://" if db == "memory" else f"sqlite:///{Path(folder) / 'h.db'}"
        async with open_store(url) as store, Runtime(store) as runtime:
            for index in range(interactions):
                parked, _ = await runtime.ask("s", ASK, tool_call_id=f"c{index}")
                await runtime.answer(
                    parked.id,
                    {"answers": [{"selected": [], "text": "ultramarine"}]}
                    if index % 10 == 0
                    else "Red",
                )

            async def export() -> None:
                cursor = None
                while True:
                    page = await runtime.history("s", limit=500, after=cursor)
                    if page.next_cursor is None:
                        return
                    cursor = page.next_cursor

            anchor = await _p50(lambda: store.list_interactions(session_id="s", limit=100), rounds)
            page = await _p50(lambda: runtime.history("s", limit=100), rounds)
            search = await _p50(
                lambda: runtime.history("s", query="ultramarine", limit=100), rounds
            )
            whole = await _p50(export, max(3, rounds // 10))
    print(f"{db}, {interactions} settled interactions in one session, p50 per call:")
    print(f"  anchor list_interactions(limit=100) {anchor * 1e3:8.2f} ms")
    print(f"  history page (100)                  {page * 1e3:8.2f} ms  {page / anchor:5.2f}x")
    print(f"  history search (rare word, 100)     {search * 1e3:8.2f} ms  {search / anchor:5.2f}x")
    per = whole / interactions
    print(
        f"  whole export, per interaction       {per * 1e6:8.1f} µs  "
        f"{per / (anchor / 100):5.2f}x the anchor's per-row cost"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interactions", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--db", choices=["sqlite", "memory"], default="sqlite")
    options = parser.parse_args()
    asyncio.run(main(options.interactions, options.rounds, options.db))
