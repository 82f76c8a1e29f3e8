"""The timing loop the adapter benches share (bench/adapters_*.py): each side of a
comparison (the framework's bare cycle, the cycle through midturn, ...) runs in turn,
block after block, so that whatever load the machine carries weighs on every side alike.

- `medians_per_cycle(sides, rounds=, repeats=)`: each repeat times `rounds` cycles of each
  side in a row; a side's figure is the median over the repeats of its mean cycle, in ms.
- `cycle_samples(blocks, cycles=, rounds=)`: each side is a block runner that times its
  own cycles and returns them (seconds); after a warm-up block each, the sides alternate
  for `rounds` blocks, garbage collected before each; all of a side's samples come back.
- `p50_p99(samples)`: the median and the 99th percentile (nearest rank), in ms.
- `AnsweredAtOnce(runtime, answer)`: the runtime as the asker, with a person who answers
  each ask with `answer` as it parks.

Run as scripts, the benches find this module beside them (the script's folder is first on
`sys.path`); the ones that drop that folder (its `mcp.py` would shadow the `mcp` package)
import this first.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from midturn import Parked, Runtime

__all__ = ["cycle_samples", "medians_per_cycle", "p50_p99"]

Cycle = Callable[[int], Awaitable[Any]]
"""One cycle of one side, given a number no other cycle of the run had."""

Block = Callable[[int], Awaitable[list[float]]]
"""A block of `n` cycles of one side, each timed by the side itself (seconds)."""


async def medians_per_cycle(
    sides: Mapping[str, Cycle], *, rounds: int, repeats: int
) -> dict[str, float]:
    """Each side's median, over `repeats` interleaved blocks, of its mean cycle (ms)."""
    per_block: dict[str, list[float]] = {name: [] for name in sides}
    index = 0
    for _ in range(repeats):
        for name, cycle in sides.items():
            started = time.perf_counter()
            for _ in range(rounds):
                index += 1
                await cycle(index)
            per_block[name].append((time.perf_counter() - started) * 1000 / rounds)
    return {name: statistics.median(blocks) for name, blocks in per_block.items()}


async def cycle_samples(
    blocks: Mapping[str, Block], *, cycles: int, rounds: int, warm: int = 20
) -> dict[str, list[float]]:
    """Every cycle's time (seconds) of each side: one warm-up block of `warm` cycles each
    (not kept), then `rounds` alternating blocks of `cycles`, garbage collected before each."""
    for block in blocks.values():
        await block(warm)
    samples: dict[str, list[float]] = {name: [] for name in blocks}
    for _ in range(rounds):
        for name, block in blocks.items():
            gc.collect()
            samples[name] += await block(cycles)
    return samples


def p50_p99(samples: list[float]) -> tuple[float, float]:
    """The median and the 99th percentile (nearest rank) of `samples` seconds, in ms."""
    ordered = sorted(samples)
    rank = max(1, math.ceil(0.99 * len(ordered)))
    return statistics.median(ordered) * 1e3, ordered[rank - 1] * 1e3


class AnsweredAtOnce:
    """The runtime as the asker, with a person who answers each ask as it parks."""

    def __init__(self, runtime: Runtime, answer: str) -> None:
        self.runtime = runtime
        self.answer = answer

    async def ask(self, *args: Any, **kwargs: Any) -> Parked:
        parked = await self.runtime.ask(*args, **kwargs)
        if parked.created:
            await self.runtime.answer(parked.interaction.id, self.answer)
        return parked

    def __getattr__(self, name: str) -> Any:
        return getattr(self.runtime, name)
