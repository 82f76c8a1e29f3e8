"""`midturn prune`: deletes settled interactions older than `--older-than`, after
appending their decision records to the export file; never a pending one; `--dry-run`
only counts. Run as a real command on a SQLite file seeded through the store API."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from midturn.contract._interactions import utcnow
from midturn.store import open_store
from midturn.testing.conformance._data import RESULT, make_ask, requested

from ._pty import child_env


def _prune(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "midturn.cli", "prune", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=60,
        check=False,
    )


async def _seed(url: str) -> None:
    """`old` settled 40 days ago, `recent` a day ago, `pending` never."""
    now = utcnow()
    async with open_store(url) as store:
        for name in ("old", "recent", "pending"):
            interaction = make_ask(name, created_at=now - timedelta(days=50))
            await store.create_interaction(interaction, [requested(interaction)])
        for name, days in (("old", 40), ("recent", 1)):
            await store.settle(
                name, status="answered", result=RESULT, settled_at=now - timedelta(days=days)
            )


async def _ids(url: str) -> list[str]:
    async with open_store(url) as store:
        return [item.id for item in await store.list_interactions()]


def test_prune_exports_then_deletes_only_what_settled_before_the_age(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    asyncio.run(_seed(url))
    export = tmp_path / "records.jsonl"

    dry = _prune("--older-than", "30d", "--store", url, "--dry-run", "--export", str(export))
    assert dry.returncode == 0, dry.stderr
    assert "would prune 1 settled interactions" in dry.stdout
    assert not export.exists() and asyncio.run(_ids(url)) == ["old", "recent", "pending"]

    done = _prune("--older-than", "30d", "--store", url, "--export", str(export))
    assert done.returncode == 0, done.stderr
    assert "pruned 1 settled interactions and 1 events" in done.stdout
    assert asyncio.run(_ids(url)) == ["recent", "pending"]
    (record,) = [json.loads(line) for line in export.read_text().splitlines()]
    assert record["interaction_id"] == "old" and record["status"] == "answered"
    assert record["decided"]["answers"][0]["answer"] == "SQLite"
    assert "sk-live" not in export.read_text()  # the record holds no secret value

    again = _prune("--older-than", "12h", "--store", url, "--export", str(export))
    assert "pruned 1 settled" in again.stdout
    assert asyncio.run(_ids(url)) == ["pending"]  # pending, 50 days old, stays
    assert len(export.read_text().splitlines()) == 2  # appended, not overwritten


def test_prune_writes_the_records_beside_the_database_by_default(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'data' / 'm.db'}"
    asyncio.run(_seed(url))
    done = _prune("--older-than", "30d", "--store", url)
    assert done.returncode == 0, done.stderr
    records = tmp_path / "data" / "pruned-decisions.jsonl"
    assert str(records) in done.stdout
    assert [json.loads(line)["interaction_id"] for line in records.read_text().splitlines()] == [
        "old"
    ]
    assert (records.stat().st_mode & 0o777) == 0o600


def test_prune_usage_errors(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    bad_age = _prune("--older-than", "soon", "--store", url)
    assert bad_age.returncode == 2 and "not an age" in bad_age.stderr
    both = _prune("--older-than", "1d", "--store", url, "--export", "x", "--no-export")
    assert both.returncode == 2 and "not both" in both.stderr
    missing = _prune("--store", url)
    assert missing.returncode == 2 and "--older-than" in missing.stderr


def test_prune_on_a_store_that_cannot_be_opened_says_why(tmp_path: Path) -> None:
    (tmp_path / "notes").write_text("a file, not a folder\n")
    done = _prune("--older-than", "30d", "--store", f"sqlite:///{tmp_path}/notes/midturn.db")
    assert done.returncode == 2, done.stderr
    message = done.stderr.strip()
    assert message.startswith("midturn prune: cannot open the store sqlite:///")
    assert f"{tmp_path}/notes is a file, not a folder" in message
    assert "Traceback" not in done.stderr and "\n" not in message
