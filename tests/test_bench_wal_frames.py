"""`bench/wal_frames.py`: the frames of a park and a settle, named by b-tree, on the
store's schema and on one altered by hand."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from tests._bench_script import load_bench_script

wal_frames = load_bench_script("wal_frames")


def test_frame_headers_name_their_pages() -> None:
    page = 512
    frame = wal_frames.FRAME_HEADER + page
    wal = bytearray(wal_frames.WAL_HEADER + 3 * frame)
    for n, number in enumerate((7, 1, 42)):
        struct.pack_into(">I", wal, wal_frames.WAL_HEADER + n * frame, number)
    start = wal_frames.WAL_HEADER
    assert wal_frames.read_frames(bytes(wal), page, start, start + 3 * frame) == [7, 1, 42]
    assert wal_frames.read_frames(bytes(wal), page, start + frame, start + 2 * frame) == [1]


async def _measure(folder: Path, changes: list[str]) -> Any:
    return await wal_frames.measure(
        folder, cycles=20, history=10, sessions=4, one_turn=False, changes=changes
    )


async def test_a_cycle_writes_the_tables_and_indexes_it_changes(tmp_path: Path) -> None:
    frames = await _measure(tmp_path / "real", [])
    park, settle = frames.park, frames.settle
    assert park.transactions == settle.transactions == 20
    for name in (
        "midturn_interactions",
        "sqlite_autoindex_midturn_interactions_1",
        "midturn_interactions_by_time",
        "midturn_interactions_by_session",
        "midturn_interactions_by_turn_status",
        "midturn_interactions_pending_by_time",
        "midturn_queues",
        "midturn_events",
        "midturn_events_by_session",
    ):
        assert park.per(name) >= 1, name
    # migration 11 dropped the events' interaction index: a cycle writes none of it
    assert "midturn_events_of_interaction" not in park.frames | settle.frames
    # a settle leaves the id, the time and the session of its row as they were
    for name in ("midturn_interactions_by_time", "midturn_interactions_by_session"):
        assert settle.per(name) == 0, name
    # no tool call id, no deadline: their partial indexes take no row
    assert "midturn_interactions_by_tool_call" not in park.frames
    assert "midturn_interactions_deadlines" not in park.frames
    assert wal_frames.FREELIST not in park.frames | settle.frames


async def test_an_index_dropped_by_hand_is_written_no_more(tmp_path: Path) -> None:
    real = await _measure(tmp_path / "real", [])
    dropped = await _measure(tmp_path / "dropped", ["DROP INDEX midturn_interactions_by_time"])
    assert real.park.per("midturn_interactions_by_time") >= 1
    for tally in (dropped.park, dropped.settle):
        assert "midturn_interactions_by_time" not in tally.frames
    # about one frame fewer a park (the ids are random, so the other pages' splits vary);
    # a settle never wrote it
    assert dropped.park.total() < real.park.total() - 0.5


async def test_cycles_at_once_share_the_group_commit(tmp_path: Path) -> None:
    frames = await wal_frames.measure(
        tmp_path, cycles=16, history=8, sessions=4, one_turn=True, changes=[], workers=4
    )
    cycles = frames.park
    assert cycles.transactions == 16
    assert cycles.commits < 2 * 16  # one at a time, each park and settle commits alone
    assert cycles.per("midturn_interactions") > 0
    assert cycles.per("midturn_events_by_session") > 0
