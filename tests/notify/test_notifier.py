"""The notifier's own rules: the backoff's bounds, durations, and a store without an
outbox (a backend of another package) leaves notifications off instead of failing."""

from __future__ import annotations

from datetime import timedelta

import pytest

from midturn import Runtime
from midturn.errors import UsageError
from midturn.notify import Notifier, NotifyOptions, parse_duration
from midturn.store import Store
from midturn.store._memory import MemoryStore


class NoOutbox(MemoryStore):
    """A store whose outbox is the base class's: none."""

    async def outbox_cursor(self) -> int:
        return await Store.outbox_cursor(self)


async def test_a_store_without_an_outbox_leaves_notifications_off() -> None:
    async with NoOutbox() as store, Runtime(store) as runtime:
        notifier = Notifier(runtime)
        await notifier.start()
        assert notifier._tasks == []
        await notifier.aclose()
        with pytest.raises(UsageError, match="keeps no notification outbox"):
            await store.outbox_cursor()


async def test_the_backoff_doubles_with_jitter_up_to_its_cap() -> None:
    options = NotifyOptions(retry_initial=timedelta(seconds=1), retry_max=timedelta(seconds=8))
    async with MemoryStore() as store, Runtime(store) as runtime:
        notifier = Notifier(runtime, options)
        for attempts, full in ((1, 1), (2, 2), (3, 4), (4, 8), (9, 8)):
            for _ in range(50):
                delay = notifier._backoff(attempts, None).total_seconds()
                assert full * 0.5 <= delay <= full
        assert notifier._backoff(1, 30.0) == timedelta(seconds=30)  # Retry-After wins


def test_durations() -> None:
    assert parse_duration("90s") == timedelta(seconds=90)
    assert parse_duration("15m") == timedelta(minutes=15)
    assert parse_duration("24h") == timedelta(hours=24)
    assert parse_duration("2d") == timedelta(days=2)
    assert parse_duration("45") == timedelta(seconds=45)
    for bad in ("soon", "-5m", "1w", ""):
        with pytest.raises(UsageError):
            parse_duration(bad)
    with pytest.raises(UsageError):
        NotifyOptions(retry_window=timedelta(0))
    with pytest.raises(UsageError):
        NotifyOptions(reminders=0)
