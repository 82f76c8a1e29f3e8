"""A notifier with no destination enabled sleeps: the runtime's events do not wake it, and
it does not poll the outbox; a destination made through this process (`wake()`) or
elsewhere (found at the next event once `poll_s` has passed) still gets what follows."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.notify._receiver import Receiver

from midturn import Runtime
from midturn.notify import Notifier, NotifyOptions, create_destination
from midturn.store import open_store
from midturn.store._base import Store

ASK = {"questions": [{"question": "Deploy now?", "header": "Deploy", "options": ["yes", "no"]}]}
IDLE = NotifyOptions(poll_s=0.1, retry_initial=timedelta(seconds=0.1))


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with open_store(f"sqlite:///{tmp_path / 'm.db'}") as opened:
        yield opened


def count_calls(target: Any, name: str) -> list[int]:
    """Count the calls of `target.name` from now on (the list's length)."""
    calls: list[int] = []
    original = getattr(target, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    setattr(target, name, counted)
    return calls


async def cycles(runtime: Runtime, count: int, turn: str) -> None:
    for n in range(count):
        interaction, _ = await runtime.ask("s1", ASK, turn_id=f"{turn}{n}")
        await runtime.answer(interaction.id, {"answers": {"q1": "yes"}})
        await runtime.wait(interaction.id)


async def test_without_destinations_events_do_not_wake_the_fan_out(store: Store) -> None:
    rare = NotifyOptions(poll_s=30.0)  # no look at the destinations is due meanwhile
    async with Runtime(store) as runtime, Notifier(runtime, rare) as notifier:
        await asyncio.sleep(0.05)  # both loops have looked once and gone to sleep
        passes = count_calls(notifier, "_fan_out_once")
        await cycles(runtime, 20, "t")  # 80 events
        await asyncio.sleep(0.05)
        assert passes == []  # before: woken by nearly every one of the 80


async def test_without_destinations_the_send_loop_does_not_poll(store: Store) -> None:
    async with Runtime(store) as runtime, Notifier(runtime, IDLE):
        await asyncio.sleep(0.05)  # both loops have looked once and gone to sleep
        due = count_calls(store, "next_delivery_due")
        await cycles(runtime, 5, "t")
        await asyncio.sleep(IDLE.poll_s * 6)
        assert due == []  # before: once every poll_s


async def test_a_destination_made_elsewhere_is_found_by_an_event_after_poll_s(
    store: Store, receiver: Receiver
) -> None:
    async with Runtime(store) as runtime, Notifier(runtime, IDLE):
        await cycles(runtime, 2, "before")  # idle: nothing to send
        # made as another replica would: straight into the store, no wake() here
        destination = await create_destination(store, receiver.url)
        receiver.secrets.append(destination.secret)
        await asyncio.sleep(IDLE.poll_s * 2)
        await cycles(runtime, 1, "after")
        seen = await receiver.until(lambda got: len(got) >= 1, "the request")
    assert [r.payload["type"] for r in seen] == ["user_question_requested"]
    assert seen[0].payload["data"]["interaction"]["turn_id"] == "after0"


async def test_wake_sends_at_once_to_a_destination_made_here(
    store: Store, receiver: Receiver
) -> None:
    slow = NotifyOptions(poll_s=3600.0)  # nothing would be found by a poll
    async with Runtime(store) as runtime, Notifier(runtime, slow) as notifier:
        await cycles(runtime, 1, "before")
        destination = await create_destination(store, receiver.url)
        receiver.secrets.append(destination.secret)
        notifier.wake()  # what the admin API does
        await cycles(runtime, 1, "after")
        seen = await receiver.until(lambda got: len(got) >= 1, "the request")
    assert seen[0].payload["data"]["interaction"]["turn_id"] == "after0"
