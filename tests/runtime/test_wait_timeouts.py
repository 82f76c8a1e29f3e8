"""A waiting caller's timeout (`Runtime.wait(..., timeout=)`): one loop timer for every
wait, each wait still ending at its own timeout or at the settle, whichever is first."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.runtime.conftest import ANSWER, ASK, within

from midturn import Runtime
from midturn.runtime._timers import WaitTimeouts


def _count_timers(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The `when` of every timer the running loop arms from now on."""
    loop = asyncio.get_running_loop()
    armed: list[float] = []
    call_at = loop.call_at

    def counted(when: float, callback: Any, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
        armed.append(when)
        return call_at(when, callback, *args, **kwargs)

    monkeypatch.setattr(loop, "call_at", counted)
    return armed


async def test_waits_settled_before_their_timeout_arm_one_timer(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop = asyncio.get_running_loop()
    armed = _count_timers(monkeypatch)
    for n in range(5):
        interaction, _ = await runtime.ask(f"s{n + 1}", ASK)
        waiter = asyncio.create_task(runtime.wait(interaction.id, timeout=60))
        await asyncio.sleep(0)
        await runtime.answer(interaction.id, ANSWER)
        settled = (await within(waiter)).interaction
        assert settled.status == "answered"
    assert len([when for when in armed if when > loop.time() + 30]) == 1  # asyncio.timeout: 5


async def test_a_shorter_timeout_after_a_longer_one_ends_at_its_own(runtime: Runtime) -> None:
    long_wait, _ = await runtime.ask("s1", ASK)
    short_wait, _ = await runtime.ask("s2", ASK)
    waiting = asyncio.create_task(runtime.wait(long_wait.id, timeout=60))
    await asyncio.sleep(0)
    assert (await within(runtime.wait(short_wait.id, timeout=0.02))).pending
    assert not waiting.done()
    await runtime.answer(long_wait.id, ANSWER)
    assert (await within(waiting)).interaction.status == "answered"


async def test_a_wait_after_one_timed_out_gets_the_settle(runtime: Runtime) -> None:
    interaction, _ = await runtime.ask("s1", ASK)
    assert (await within(runtime.wait(interaction.id, timeout=0.01))).pending
    waiter = asyncio.create_task(runtime.wait(interaction.id, timeout=60))
    await asyncio.sleep(0)
    await runtime.answer(interaction.id, ANSWER)
    assert (await within(waiter)).interaction.status == "answered"


async def test_timeouts_fall_in_deadline_order_and_ended_waits_are_forgotten() -> None:
    loop = asyncio.get_running_loop()
    timeouts = WaitTimeouts()
    futures = [loop.create_future() for _ in range(4)]
    delays = (0.03, 0.01, 60, 0.02)
    keys = [timeouts.add(future, delay) for future, delay in zip(futures, delays, strict=True)]
    timeouts.remove(keys[3])  # its wait ended: it is never resolved
    fallen: list[int] = []
    for index in (0, 1):
        futures[index].add_done_callback(lambda _, index=index: fallen.append(index))
    await within(asyncio.gather(futures[0], futures[1]))
    assert fallen == [1, 0]
    assert futures[0].result() is None and not futures[2].done() and not futures[3].done()
    assert len(timeouts) == 1
    for _ in range(200):  # waits that end before their timeout leave nothing behind
        timeouts.remove(timeouts.add(loop.create_future(), 60))
    assert len(timeouts) == 1
    timeouts.close()
    assert len(timeouts) == 0 and not futures[2].done()


async def test_a_settled_future_is_left_as_the_settle_made_it() -> None:
    loop = asyncio.get_running_loop()
    timeouts = WaitTimeouts()
    future: asyncio.Future[Any] = loop.create_future()
    timeouts.add(future, 0.01)
    future.set_result("settled")
    later: asyncio.Future[Any] = loop.create_future()
    timeouts.add(later, 0.02)
    assert await within(later) is None
    assert future.result() == "settled"
