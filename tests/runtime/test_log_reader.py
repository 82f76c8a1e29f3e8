"""The runtime's reader of the event log: woken for what other runtimes on the store
append, not for this runtime's own parks and settles, whose events it skips."""

from __future__ import annotations

import asyncio

from tests.runtime.conftest import ANSWER, ASK, within

from midturn import Runtime


class _CountedWake(asyncio.Event):
    def __init__(self) -> None:
        super().__init__()
        self.sets = 0

    def set(self) -> None:
        self.sets += 1
        super().set()


async def test_own_parks_and_settles_never_wake_the_reader(runtime: Runtime) -> None:
    parking = runtime._parking
    wake = parking._wake = _CountedWake()
    for n in range(5):
        interaction, _ = await runtime.ask(f"s{n}", ASK)
        await runtime.answer(interaction.id, ANSWER)
        assert (await runtime.wait(interaction.id)).interaction.status == "answered"
    await asyncio.sleep(0)
    assert wake.sets == 0  # the base woke it at each park and each settle: ten
    # and nothing of ours is left behind: the cursor passed every event we appended
    assert parking._own == set()
    assert parking._cursor == await runtime.store.last_event_id()


async def test_a_settle_by_another_runtime_amid_our_writes_reaches_our_waiter(
    runtime: Runtime,
) -> None:
    async with Runtime(runtime.store) as other:
        for n in range(5):
            theirs, _ = await other.ask(f"theirs{n}", ASK)
            waiter = asyncio.create_task(runtime.wait(theirs.id))
            await asyncio.sleep(0)
            # our park and their settle at once (on SQLite their writes interleave)
            ours, settled = await within(
                asyncio.gather(runtime.ask(f"ours{n}", ASK), other.answer(theirs.id, ANSWER))
            )
            assert settled.interaction.status == "answered"
            assert (await within(waiter)).interaction.status == "answered"
            await runtime.answer(ours[0].id, ANSWER)
