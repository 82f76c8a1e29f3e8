"""A separate OS process that settles one interaction on a shared SQLite file.

Run as `python _settle_worker.py URL INTERACTION_ID NAME`. It opens the store, prints
`ready`, waits for a line on stdin (the starting gun, so every worker settles at once),
settles, and prints the outcome as JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys

from midturn.contract._interactions import NewEvent
from midturn.store import open_store


async def main(url: str, interaction_id: str, name: str) -> None:
    async with open_store(url) as store:
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        outcome = await store.settle(
            interaction_id,
            status="cancelled",
            settled_by=name,
            events=[
                NewEvent(
                    type="user_question_cancelled",
                    session_id="s1",
                    turn_id="t1",
                    interaction_id=interaction_id,
                    data={"by": name},
                )
            ],
        )
        print(
            json.dumps(
                {
                    "won": outcome.won,
                    "settled_by": outcome.interaction.settled_by,
                    "events": [event.id for event in outcome.events],
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
