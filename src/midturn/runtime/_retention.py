"""Retention: settled interactions older than an age are pruned, with their events, after
their decision records have been written out (docs/storage.md, "Retention").

`prune_settled` does one pass, in batches: it reads a batch of prunable interactions,
appends their decision records (JSON Lines, as `export_decisions` writes them) to the
record file and makes them durable (`fsync`), and only then deletes that batch. A crash
between the two steps leaves records of interactions that still exist, which the next
pass writes again: a record may repeat (dedupe by `interaction_id`), it is never lost.
Pending interactions are never pruned, whatever their age.

`Retention` runs passes in the background (`midturn serve --retention 30d`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from midturn.contract._interactions import Interaction, utcnow
from midturn.errors import UsageError
from midturn.runtime._audit import decision_record
from midturn.store._base import Store

__all__ = ["PruneReport", "Retention", "parse_age", "prune_settled"]

log = logging.getLogger("midturn.runtime")

BATCH = 500
"""Interactions deleted per store transaction: short write locks, bounded memory."""

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")


def parse_age(text: str) -> timedelta:
    """`30d`, `12h`, `90m`, `45s`, `2w` (a bare number is seconds) as a timedelta."""
    match = _AGE.match(text)
    if match is None:
        raise UsageError(
            f"{text!r} is not an age; write a number and a unit: 30d, 12h, 90m, 45s or 2w"
        )
    seconds = float(match.group(1)) * _UNITS[match.group(2) or "s"]
    if not 0 < seconds <= 100 * 365 * 86400:
        raise UsageError(f"the age {text!r} must be above 0 and at most 100 years")
    return timedelta(seconds=seconds)


@dataclass(frozen=True, slots=True)
class PruneReport:
    """What a pass did (or, in a dry run, would do): interactions and events deleted,
    decision records written."""

    interactions: int = 0
    events: int = 0
    records: int = 0


def _append_records(path: Path, batch: list[Interaction]) -> None:
    """Append the batch's decision records to `path` (created mode 0600) and fsync it."""
    lines = "".join(json.dumps(decision_record(item), ensure_ascii=False) + "\n" for item in batch)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as file:
        file.write(lines)
        file.flush()
        os.fsync(file.fileno())


async def prune_settled(
    store: Store,
    older_than: timedelta,
    *,
    records: Path | None,
    dry_run: bool = False,
    now: datetime | None = None,
    batch: int = BATCH,
) -> PruneReport:
    """Prune what settled more than `older_than` before `now`. Each batch's decision
    records are appended to `records` first (None: the caller has kept them elsewhere,
    or chose to discard them). A dry run counts and writes nothing."""
    cutoff = (now or utcnow()) - older_than
    if dry_run:
        return PruneReport(interactions=await store.count_prunable(cutoff))
    interactions = events = written = 0
    while True:
        found = await store.prunable(cutoff, limit=batch)
        if not found:
            break
        if records is not None:
            await asyncio.to_thread(_append_records, records, found)
            written += len(found)
        pruned = await store.prune([item.id for item in found])
        interactions += pruned.interactions
        events += pruned.events
        if pruned.interactions == 0:  # another pruner took this batch meanwhile
            break
    return PruneReport(interactions=interactions, events=events, records=written)


class Retention:
    """Run `prune_settled` now and then every `interval_s` in a background task (an
    async context manager). A failed pass is logged and retried at the next one."""

    def __init__(
        self,
        store: Store,
        older_than: timedelta,
        *,
        records: Path | None,
        interval_s: float | None = None,
        on_pass: Callable[[PruneReport], None] | None = None,
    ) -> None:
        self._store = store
        self._older_than = older_than
        self._records = records
        # A tenth of the age (an expired interaction lives at most 10% past it), kept
        # between half a second and an hour.
        tenth = older_than.total_seconds() / 10
        self.interval_s = interval_s if interval_s is not None else min(max(tenth, 0.5), 3600)
        self._on_pass = on_pass
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Retention:
        self._task = asyncio.create_task(self._run(), name="midturn-retention")
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            try:
                report = await prune_settled(self._store, self._older_than, records=self._records)
            except asyncio.CancelledError:
                raise
            except Exception:  # the store or the disk failed this time: next pass
                log.exception("pruning settled interactions failed; retrying later")
            else:
                if report.interactions:
                    log.info(
                        "pruned %d settled interactions and %d events",
                        report.interactions,
                        report.events,
                    )
                if self._on_pass is not None:
                    self._on_pass(report)
            await asyncio.sleep(self.interval_s)
