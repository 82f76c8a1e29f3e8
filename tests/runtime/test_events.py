"""The runtime's requested and settle events carry their interaction as its JSON, and make
the dict of `data` only when something reads it: an event nobody reads costs no parse,
and one that is read, dumped, compared, copied or pickled is the event it always was."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import TypeAdapter

from midturn import Runtime
from midturn.contract import parse_answer
from midturn.contract._interactions import Event, Interaction, NewEvent
from midturn.contract._models import Ask, Option, Question
from midturn.runtime._events import interaction_from, requested_event, settled_event
from midturn.store import _codec as codec
from midturn.store import _memory_events as memory_events
from midturn.store import open_store

ASK = Ask(
    questions=(
        Question(
            id="db",
            header="Database",
            question='Which "database"? \U0001f600',
            options=(Option(label="SQLite"), Option(label="PostgreSQL")),
        ),
    )
)
ASK_PAYLOAD = ASK.model_dump(mode="json")


def _pending() -> Interaction:
    return Interaction(
        id="ia_lazy", kind="ask", session_id="s", turn_id="t", tool_call_id="c", ask=ASK
    )


def _settled() -> Interaction:
    result = parse_answer(ASK, {"answers": {"db": "SQLite"}})
    return codec.settled_copy(
        _pending(),
        status="answered",
        result=result,
        decision=None,
        settled_by="person",
        settled_at=None,
    )


def _made_at_once(new: NewEvent, interaction: Interaction) -> NewEvent:
    """The same event with its data made up front, as any caller would make it."""
    data: dict[str, Any] = {"interaction": interaction.model_dump(mode="json")}
    if new.type == "user_question_requested":
        data["position"] = 2
    fields = {name: getattr(new, name) for name in NewEvent.model_fields if name != "data"}
    return NewEvent(**fields, data=data)


def _lazy_events() -> list[tuple[NewEvent, Interaction]]:
    pending, settled = _pending(), _settled()
    announced = settled_event(settled)
    assert announced is not None
    return [(requested_event(pending, 2), pending), (announced, settled)]


READS: dict[str, Callable[[NewEvent], object]] = {
    "data": lambda event: event.data,
    "model_dump": lambda event: event.model_dump(),
    "model_dump json mode": lambda event: event.model_dump(mode="json"),
    "model_dump_json": lambda event: event.model_dump_json(),
    "repr": repr,
    "str": str,
    "iter": lambda event: list(event),
    "copy": lambda event: copy.copy(event).model_dump(),
    "deepcopy": lambda event: copy.deepcopy(event).model_dump(),
    "pickle": lambda event: pickle.loads(pickle.dumps(event)).model_dump(),
    "model_copy": lambda event: event.model_copy(update={"turn_id": "t2"}).model_dump(),
    "in a list": lambda event: TypeAdapter(list[NewEvent]).dump_json([event]),
    "fields set": lambda event: event.model_fields_set,
    "event_json": codec.event_json,
    "dump_event": codec.dump_event,
    "stored": lambda event: codec.event_from(event, 7).model_dump_json(),
    "stored, read": lambda event: codec.event_from(event, 7).data,
    "interaction_from": lambda event: interaction_from(codec.event_from(event, 7)),
}


@pytest.mark.parametrize("read", READS, ids=list(READS))
def test_an_event_whose_data_is_made_when_read_reads_as_one_made_at_once(read: str) -> None:
    for lazy, interaction in _lazy_events():
        eager = _made_at_once(lazy, interaction)
        assert READS[read](lazy) == READS[read](eager)


def test_an_event_whose_data_is_made_when_read_compares_as_one_made_at_once() -> None:
    for lazy, interaction in _lazy_events():
        assert lazy == _made_at_once(lazy, interaction)
    for lazy, interaction in _lazy_events():
        assert _made_at_once(lazy, interaction) == lazy
    for lazy, interaction in _lazy_events():
        assert codec.event_from(lazy, 7) == Event(**_made_at_once(lazy, interaction).__dict__, id=7)
    for lazy, interaction in _lazy_events():
        changed = _made_at_once(lazy, interaction).model_copy(update={"turn_id": "t2"})
        assert lazy != changed
    for lazy, _interaction in _lazy_events():
        with pytest.raises(TypeError):  # a frozen model holding a dict, as before
            hash(lazy)
    for lazy, _interaction in _lazy_events():
        assert lazy.data is lazy.data  # made once, then the event's own dict


async def test_a_cycle_nobody_watches_parses_no_event_data(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In process, on the memory store and with no watcher, nothing reads the requested
    and settle events' data: the store keeps the interaction's JSON, so the events'
    dicts are never made. What the log gives back is the same data."""
    parsed: list[bytes] = []
    real = codec.from_json

    def counted(body: bytes, *args: Any, **kwargs: Any) -> Any:
        parsed.append(body)
        return real(body, *args, **kwargs)

    monkeypatch.setattr(codec, "from_json", counted)
    monkeypatch.setattr(memory_events, "_load_data", counted)
    async with open_store("memory://") as store, Runtime(store) as runtime:
        asked, _ = await runtime.ask("s", ASK_PAYLOAD, turn_id="t", tool_call_id="c")
        await runtime.answer(asked.id, {"answers": {"db": "SQLite"}})
        assert (await runtime.wait(asked.id)).output is not None
        assert parsed == []
        events = await store.read_events(0)
        assert parsed == []  # the log hands out its events with their data made when read
        settled = await store.get_interaction(asked.id)
        assert settled is not None
    carried = [event.data for event in events if event.interaction_id]
    assert carried[0]["position"] == 0
    assert carried[0]["interaction"]["status"] == "pending"
    assert carried[1] == {"interaction": settled.model_dump(mode="json")}


async def test_a_watcher_reads_the_events_data() -> None:
    seen: list[Event] = []
    async with open_store("memory://") as store, Runtime(store) as runtime:
        runtime.watch(seen.append)
        asked, _ = await runtime.ask("s", ASK_PAYLOAD, turn_id="t", tool_call_id="c")
        await runtime.answer(asked.id, {"answers": {"db": "SQLite"}})
        await runtime.wait(asked.id)
        stored = await store.read_events(0)
    assert [event.model_dump() for event in seen] == [event.model_dump() for event in stored]
    assert seen == stored
    requested = next(event for event in seen if event.type == "user_question_requested")
    assert requested.data["interaction"]["id"] == asked.id
