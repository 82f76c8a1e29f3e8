"""`Runtime.subscribe()`: the in-process tap on published events — a callback or a
bounded async iterator; this process's events at once, another process's through the
store's listener; no store read for its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from midturn import Event, Runtime, Store, open_store
from midturn.runtime import SubscriptionLagged

from .conftest import ANSWER, ASK, within


class _CountingReads:
    """Counts the store's event-log reads (wrapping the bound method)."""

    def __init__(self, store: Store) -> None:
        self.count = 0
        original = store.read_events

        async def read_events(*args: object, **kwargs: object) -> list[Event]:
            self.count += 1
            return await original(*args, **kwargs)  # type: ignore[arg-type]

        store.read_events = read_events  # type: ignore[method-assign]


async def test_a_callback_sees_every_event_at_once_without_a_store_read(
    runtime: Runtime, store: Store
) -> None:
    heard: list[Event] = []
    reads = _CountingReads(store)
    subscription = runtime.subscribe(heard.append)
    ask, _ = await runtime.ask("s1", ASK, turn_id="t1")
    await runtime.answer(ask.id, ANSWER)
    subscription.close()
    await runtime.ask("s1", ASK, turn_id="t2")  # after close: not heard

    assert [event.type for event in heard] == [
        "user_question_requested",
        "turn_waiting",
        "user_question_answered",
        "turn_resumed",
    ]
    assert [event.id for event in heard] == [1, 2, 3, 4]
    assert reads.count == 0
    subscription.close()  # twice is harmless


async def test_the_iterator_form_filters_by_session_and_ends_on_close(runtime: Runtime) -> None:
    async with runtime.subscribe(session_id="mine") as events:
        await runtime.ask("other", ASK)
        mine, _ = await runtime.ask("mine", ASK)
        first = await within(anext(events))
        events.close()
        rest = [event async for event in events]
    assert (first.type, first.interaction_id) == ("user_question_requested", mine.id)
    assert [event.type for event in rest] == ["turn_waiting"]


async def test_a_subscriber_that_falls_behind_its_buffer_is_told_where_to_resume(
    runtime: Runtime,
) -> None:
    events = runtime.subscribe(buffer=3)
    for index in range(3):  # six events, the buffer holds three
        await runtime.ask("s1", ASK, turn_id=f"t{index}")
    first = await within(anext(events))
    with pytest.raises(SubscriptionLagged) as lagged:
        while True:
            await within(anext(events))
    assert first.id == 1 and lagged.value.last_event_id == 3  # handed 1, 2, 3
    missed = runtime.events(after=lagged.value.last_event_id, follow=False)
    assert [event.id async for event in missed] == [4, 5, 6]


async def test_another_processs_events_arrive_through_the_store(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    async with (
        open_store(url) as here_store,
        Runtime(here_store) as here,
        open_store(url) as there_store,
        Runtime(there_store) as there,
    ):
        async with here.subscribe() as events:
            ask, _ = await there.ask("s1", ASK)
            heard = await within(anext(events))
        assert (heard.type, heard.interaction_id) == ("user_question_requested", ask.id)


async def test_subscribing_needs_an_open_runtime(store: Store) -> None:
    from midturn.errors import UsageError

    with pytest.raises(UsageError):
        Runtime(store).subscribe()
