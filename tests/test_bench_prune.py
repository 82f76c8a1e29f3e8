"""`bench/prune.py`: a file of settled asks, pruned in batches, its steps counted."""

from __future__ import annotations

from pathlib import Path

from tests._bench_script import load_bench_script

prune_bench = load_bench_script("prune")


async def test_the_old_asks_go_and_the_kept_history_stays(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    await prune_bench.build(path, asks=30, sessions=4, kept=2, one_turn=False)
    gone, events, reads, prunes = await prune_bench.prune(path, 7, counted=True)
    assert gone == 30
    # four events each, but the log's newest (a kept ask's) is never among them
    assert events == 4 * 30
    assert prunes.steps > 0 and reads.steps > 0
    again = await prune_bench.prune(path, 7, counted=False)
    assert again[:2] == (0, 0)
