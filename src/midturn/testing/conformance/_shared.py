"""The store conformance suite: two stores on one database. Two store objects
over the same data (SQLite: one file; PostgreSQL: one schema), standing for two
processes or replicas, race parks and settles; every backend that can share a database
must pass it.

What it holds the backend to: a queue position is exact across processes (racing parks
of a session get every position once), a wait is announced once (`turn_waiting`) and
ends once (`turn_resumed`, from the settle of the turn's last pending interaction),
settling is a compare-and-set with one winner, a repeated tool call creates one
interaction, and a reader that reads on after the newest id it has seen misses no event.

It runs for a backend that declares `shares_database` (memory:// keeps its data inside
one store object, so there is no second object that could share it).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import pytest_asyncio

from midturn.contract._interactions import Event, NewEvent
from midturn.store import Store
from midturn.testing.conformance._backend import Backend
from midturn.testing.conformance._data import RESULT, T0, answered, make_ask, requested

ROUNDS = 40
POLL_BOUND = 100_000


def turn_event(kind: str, turn_id: str, session_id: str = "s1") -> NewEvent:
    return NewEvent(type=kind, session_id=session_id, turn_id=turn_id, at=T0)


class Parked:
    """The `events` callback of `create_queued`, as the runtime's: the requested event
    carrying the position, and `turn_waiting` when the turn was not waiting yet."""

    def __init__(self, interaction_id: str, turn_id: str) -> None:
        self.item = make_ask(interaction_id, turn_id=turn_id)

    def __call__(self, position: int, turn_waiting: bool) -> Sequence[NewEvent]:
        event = requested(self.item).model_copy(update={"data": {"position": position}})
        if turn_waiting:
            return [event]
        return [event, turn_event("turn_waiting", self.item.turn_id)]


async def park(store: Store, interaction_id: str, turn_id: str = "t1") -> bool:
    parked = Parked(interaction_id, turn_id)
    _, created, _ = await store.create_queued(parked.item, parked)
    return created


async def settle(store: Store, interaction_id: str, turn_id: str) -> bool:
    outcome = await store.settle_in_turn(
        interaction_id,
        session_id="s1",
        turn_id=turn_id,
        status="answered",
        result=RESULT,
        events=[answered(make_ask(interaction_id, turn_id=turn_id))],
        turn_done=[turn_event("turn_resumed", turn_id)],
    )
    return outcome.won


def waits(events: list[Event], turn_id: str) -> str:
    """The turn's wait events in log order: W for turn_waiting, R for turn_resumed."""
    marks = {"turn_waiting": "W", "turn_resumed": "R"}
    return "".join(
        marks[event.type] for event in events if event.turn_id == turn_id and event.type in marks
    )


class SharedDatabaseConformance:
    """Two stores on one database (for a backend that declares `shares_database`)."""

    @pytest_asyncio.fixture
    async def pair(self, backend: Backend) -> AsyncIterator[tuple[Store, Store]]:
        """Two store objects open at once on the backend's one database."""
        backend.require("shares_database", "two store objects on one database")
        async with backend.new_store() as first, backend.new_store() as second:
            yield first, second

    async def test_racing_parks_get_every_position_once_and_one_turn_waiting(
        self,
        pair: tuple[Store, Store],
    ) -> None:
        first, second = pair

        created = await asyncio.gather(
            *(park(first if n % 2 else second, f"a{n:02d}") for n in range(ROUNDS))
        )

        assert all(created)
        events = await first.read_events()
        positions = [event.data["position"] for event in events if event.interaction_id]
        assert positions == list(range(ROUNDS))  # in log order: each one after the ones before
        assert waits(events, "t1") == "W"
        queue = await second.list_interactions(session_id="s1", status="pending")
        parked_order = [event.interaction_id for event in events if event.interaction_id]
        assert [item.id for item in queue] == parked_order  # head first is position order

    async def test_racing_settles_of_a_turns_last_two_resume_it_once(
        self,
        pair: tuple[Store, Store],
    ) -> None:
        first, second = pair
        for turn in range(ROUNDS):
            for name in ("x", "y"):
                await first.create_interaction(make_ask(f"{name}{turn}", turn_id=f"t{turn}"))

        won = await asyncio.gather(
            *(
                settle(store, f"{name}{turn}", f"t{turn}")
                for turn in range(ROUNDS)
                for store, name in ((first, "x"), (second, "y"))
            )
        )

        assert all(won)
        events = await second.read_events()
        assert [waits(events, f"t{turn}") for turn in range(ROUNDS)] == ["R"] * ROUNDS

    async def test_waits_alternate_while_parks_race_settles_in_one_turn(
        self,
        pair: tuple[Store, Store],
    ) -> None:
        """Each round parks the turn's next ask on one store while the other settles the
        one before: whichever commits first, the turn's waits must alternate W R W R …,
        ending in W exactly when something of the turn is pending."""
        first, second = pair
        turns = [f"t{n}" for n in range(4)]
        for turn in turns:
            assert await park(first, f"{turn}-0", turn)

        for round_ in range(ROUNDS // 4):
            await asyncio.gather(
                *(
                    step
                    for n, turn in enumerate(turns)
                    for step in (
                        park(second if n % 2 else first, f"{turn}-{round_ + 1}", turn),
                        settle(first if n % 2 else second, f"{turn}-{round_}", turn),
                    )
                )
            )

        events = await first.read_events()
        for turn in turns:
            pending = await second.list_interactions(
                session_id="s1", turn_id=turn, status="pending"
            )
            assert [item.id for item in pending] == [f"{turn}-{ROUNDS // 4}"]
            marks = waits(events, turn)
            assert marks == "WR" * (len(marks) // 2) + "W", (turn, marks)

    async def test_racing_settles_of_one_interaction_over_two_stores_have_one_winner(
        self,
        pair: tuple[Store, Store],
    ) -> None:
        first, second = pair
        item = make_ask("i1")
        await first.create_interaction(item, [requested(item)])

        outcomes = await asyncio.gather(
            *(
                (first if n % 2 else second).settle(
                    "i1",
                    status="answered",
                    result=RESULT,
                    settled_by=f"responder-{n}",
                    events=[answered(item)],
                )
                for n in range(ROUNDS)
            )
        )

        winners = [outcome for outcome in outcomes if outcome.won]
        assert len(winners) == 1
        assert all(outcome.interaction == winners[0].interaction for outcome in outcomes)
        assert all(outcome.events == () for outcome in outcomes if not outcome.won)
        for store in pair:
            assert await store.get_interaction("i1") == winners[0].interaction
            types = [event.type for event in await store.read_events()]
            assert types == ["user_question_requested", "user_question_answered"]

    async def test_racing_parks_of_one_tool_call_over_two_stores_make_one(
        self,
        pair: tuple[Store, Store],
    ) -> None:
        first, second = pair

        async def attempt(store: Store, n: int) -> tuple[str, bool]:
            parked = Parked(f"i{n}", "t1")
            item = parked.item.model_copy(update={"tool_call_id": "call-1"})
            stored, created, _ = await store.create_queued(item, parked)
            return stored.id, created

        results = await asyncio.gather(
            *(attempt(first if n % 2 else second, n) for n in range(ROUNDS))
        )

        winners = [stored for stored, created in results if created]
        assert len(winners) == 1
        assert {stored for stored, _ in results} == set(winners)
        assert len(await second.list_interactions()) == 1
        events = await first.read_events()
        assert [event.type for event in events] == ["user_question_requested", "turn_waiting"]

    async def test_a_reader_reading_on_after_the_newest_id_misses_nothing(
        self,
        pair: tuple[Store, Store],
    ) -> None:
        first, second = pair
        seen: list[int] = []
        done = asyncio.Event()

        async def read_on(reader: Store) -> None:
            for _ in range(POLL_BOUND):
                finished = done.is_set()  # read once more after the writers are done
                batch = await reader.read_events(seen[-1] if seen else 0)
                seen.extend(event.id for event in batch)
                if finished:
                    return
                await asyncio.sleep(0)
            raise AssertionError("the reader did not finish within its bound")

        async def write(store: Store, prefix: str) -> None:
            for n in range(ROUNDS // 2):
                await park(store, f"{prefix}{n}", f"{prefix}-turn")
            await asyncio.gather(
                *(settle(store, f"{prefix}{n}", f"{prefix}-turn") for n in range(ROUNDS // 2))
            )

        async def writers() -> None:
            try:
                await asyncio.gather(write(first, "a"), write(second, "b"))
            finally:
                done.set()

        await asyncio.gather(read_on(first), writers())

        every = [event.id for event in await second.read_events(limit=10_000)]
        assert len(every) == 2 * (ROUNDS // 2 * 2 + 2)  # per writer: asks, answers, W and R
        assert seen == every
        assert every == sorted(set(every))
