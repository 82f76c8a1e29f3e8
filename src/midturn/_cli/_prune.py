"""`midturn prune`: delete settled interactions older than an age, after writing their
decision records (docs/storage.md)."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from midturn._cli._common import Usage as _Usage
from midturn._cli._store_wording import on_store as _on_store

__all__ = ["run_prune"]


def run_prune(args: argparse.Namespace) -> int:
    from midturn.gateway import DEFAULT_DB_URL
    from midturn.gateway._serve import RECORDS_FILE, data_dir_for
    from midturn.runtime._retention import parse_age, prune_settled
    from midturn.store import open_store

    age = parse_age(args.older_than)
    url = args.store or DEFAULT_DB_URL
    if args.export and args.no_export:
        raise _Usage("give --export FILE or --no-export, not both")
    records = None if args.no_export else Path(args.export or data_dir_for(url) / RECORDS_FILE)

    async def run() -> int:
        async with open_store(url) as store:
            if records is not None and not args.dry_run:
                records.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            report = await prune_settled(store, age, records=records, dry_run=args.dry_run)
        if args.dry_run:
            print(
                f"would prune {report.interactions} settled interactions older than "
                f"{args.older_than} (and their events); nothing was deleted"
            )
            return 0
        kept = (
            f"; their decision records were appended to {records}"
            if records is not None and report.records
            else ""
        )
        print(f"pruned {report.interactions} settled interactions and {report.events} events{kept}")
        return 0

    return _on_store("prune", url, lambda: asyncio.run(run()))
