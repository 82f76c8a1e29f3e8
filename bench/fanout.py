"""What fanning events out to open streams costs the server, per round trip.

    .venv/bin/python bench/fanout.py --streams 0,30 --trips 400 --repeats 3

One `midturn serve` on SQLite per count of `/v1/events` streams (admin, each seeing
every event; half of them read slowly, as in `bench/crowd.py`, whose stream clients and
answerer this uses), then one agent doing round trips back to back, each answered by
the answerer in a process of its own. The figure is the server's CPU time (user and
system, `/proc`) per round trip over `--trips` trips after a warm-up, which load on the
machine changes much less than it changes wall-clock times. The anchor is the same
server with no stream but the answerer's; the difference is the fan-out's cost. With
`--repeats`, the counts are run in turn, round after round, so load elsewhere falls on
every count alike.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import crowd
import httpx


async def one(streams: int, trips: int) -> tuple[float, float, float]:
    """(user, system, p50) in ms per round trip, on a fresh server with `streams`."""
    work = Path(tempfile.mkdtemp(prefix="midturn-fanout-"))
    async with crowd.seeded_store("sqlite", work, 10, 0) as seeded:
        server = await asyncio.to_thread(crowd.start_server, seeded.url, work)
        pid = server.process.pid
        children = None
        try:
            session_id, token, _ = seeded.sessions[0]
            after = await crowd.last_event_id(server.url)
            answerer = await crowd.AnswererProcess.start(server.url, {session_id}, after, work)
            if streams:
                host, port = server.host_port
                spec = work / "streams.json"
                spec.write_text(
                    json.dumps({"host": host, "port": port, "sessions": [], "all_streams": streams})
                )
                children = await asyncio.create_subprocess_exec(
                    sys.executable,
                    crowd.__file__,
                    "--streams-child",
                    str(spec),
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                )
                assert children.stdout is not None
                while True:
                    _, opened, refused = (await children.stdout.readline()).decode().split()
                    if int(opened) + int(refused) >= streams:
                        break
            async with httpx.AsyncClient(base_url=server.url, timeout=90) as client:
                for _ in range(30):  # warm-up
                    await crowd.round_trip(client, session_id, token, next(crowd.TRIP_NUMBERS))
                before = _user_system(pid)
                times = [
                    await crowd.round_trip(client, session_id, token, next(crowd.TRIP_NUMBERS))
                    for _ in range(trips)
                ]
                after_user, after_system = _user_system(pid)
            await answerer.stop()
            if children is not None:
                await children.communicate(b"stop\n")
        finally:
            crowd.stop_server(server)
    user, system = (after_user - before[0]) / trips, (after_system - before[1]) / trips
    return 1000 * user, 1000 * system, crowd.pct(times, 0.5)


def _user_system(pid: int) -> tuple[float, float]:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


async def main(args: argparse.Namespace) -> None:
    counts = [int(text) for text in args.streams.split(",")]
    if 0 not in counts:
        counts.insert(0, 0)
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
    figures: dict[int, list[float]] = {count: [] for count in counts}
    for round_ in range(args.repeats):
        for count in counts:
            user, system, p50 = await one(count, args.trips)
            figures[count].append(user + system)
            print(
                f"  round {round_ + 1}, {count:>4} /v1/events streams: server CPU per round "
                f"trip {user + system:.2f} ms (user {user:.2f}, system {system:.2f}); "
                f"round-trip p50 {p50:.2f} ms",
                flush=True,
            )
    anchor = statistics.median(figures[0])
    for count in counts:
        median = statistics.median(figures[count])
        print(
            f"{count:>4} streams: median server CPU per round trip {median:.2f} ms, "
            f"{median - anchor:+.2f} ms beyond the anchor (no stream but the answerer's, "
            f"{anchor:.2f} ms)"
        )
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", default="0,30", help="counts of /v1/events streams")
    parser.add_argument("--trips", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=3)
    asyncio.run(main(parser.parse_args()))
