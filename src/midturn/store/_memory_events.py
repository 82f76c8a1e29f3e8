"""The memory store's event log: a column per field, not an object per event.

Each event kept as an object of its own (a slotted row) was one more object for the
garbage collector for as long as the store lives: a runtime's cycle keeps four events,
and they were most of what brought a young collection every hundred-odd cycles. In
columns an event adds an entry to each list, and no object the collector tracks (its
values are strings, numbers, bytes, datetimes or `None`). The columns are also smaller:
eight list slots instead of a row object with its header and the collector's links.

An event's data is kept as JSON, and when it is its interaction's (`{"interaction": <the
interaction>}`, with or without a queue position) as a reference to the interaction row's
JSON: see `pack`.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from pydantic import BaseModel, TypeAdapter

from midturn.contract._interactions import Event, EventType, NewEvent
from midturn.store._codec import carried_json, stored_event, stored_interaction_event

__all__ = ["EventLog", "pack"]

_DATA: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
# their serializer and validator called directly: the adapter's wrappers cost more than
# the work on these small values
_dump_data = _DATA.serializer.to_json
_load_data = _DATA.validator.validate_json
_fields_of = BaseModel.__dict__["__dict__"].__get__  # a model's fields, as kept
_EMPTY, _OWN, _WHOLE = -1, -2, -3
"""An event's `shape`: no data; its own JSON; `{"interaction": <the JSON it references>}`.
A shape of 0 or more is `{"interaction": ..., "position": <shape>}`."""
_OPEN_DATA = b'{"interaction":'
_POSITION = b',"position":'


def pack(event: NewEvent, body: bytes | None) -> tuple[bytes | None, int]:
    """`(json, shape)` for an event's data; a reference to `body` (the JSON of the
    event's interaction) when the data is that interaction, with or without a position."""
    if body is not None:
        # The runtime's events carry their interaction as this very JSON: no dict made.
        carried = carried_json(event)
        if carried is not None and (carried[0] is body or carried[0] == body):
            position = carried[1]
            if position is None:
                return body, _WHOLE
            if position >= 0:
                return body, position
    data = event.data
    if not data:
        return None, _EMPTY
    encoded = _dump_data(data)
    if body is not None and encoded.startswith(_OPEN_DATA):
        end = len(_OPEN_DATA) + len(body)
        if encoded[len(_OPEN_DATA) : end] == body:
            rest = encoded[end:]
            if rest == b"}":
                return body, _WHOLE
            digits = rest[len(_POSITION) : -1]
            if (
                rest.startswith(_POSITION)
                and rest.endswith(b"}")
                and digits.isdigit()
                and (digits == b"0" or not digits.startswith(b"0"))
            ):
                return body, int(digits)
    return encoded, _OWN


def _unpack(data: bytes | None, shape: int) -> dict[str, Any]:
    if shape == _EMPTY or data is None:
        return {}
    if shape == _OWN:
        own: dict[str, Any] = _load_data(data)
        return own
    if shape == _WHOLE:
        return {"interaction": _load_data(data)}
    return {"interaction": _load_data(data), "position": shape}


_COLUMNS = ("ids", "types", "session_ids", "turn_ids", "interaction_ids", "ats", "datas", "shapes")


class EventLog:
    """Events in ascending ids (pruning leaves gaps), a list per field; and per session
    the ids of its events (the same int objects as the id column's)."""

    __slots__ = (
        "ats",
        "by_session",
        "datas",
        "ids",
        "interaction_ids",
        "session_ids",
        "shapes",
        "turn_ids",
        "types",
    )

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.types: list[EventType] = []
        self.session_ids: list[str] = []
        self.turn_ids: list[str] = []
        self.interaction_ids: list[str | None] = []
        self.ats: list[datetime] = []
        self.datas: list[bytes | None] = []
        self.shapes: list[int] = []
        self.by_session: dict[str, list[int]] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def append(self, event: Event, data: bytes | None, shape: int) -> None:
        # Read from the event's fields as kept (its data made or not): an attribute of a
        # model goes through pydantic's `__getattr__` hook, which Python 3.11 cannot
        # specialize, at about twice the instructions of a dict's item.
        fields = _fields_of(event)
        event_id, session_id = fields["id"], fields["session_id"]
        self.ids.append(event_id)
        self.types.append(fields["type"])
        self.session_ids.append(session_id)
        self.turn_ids.append(fields["turn_id"])
        self.interaction_ids.append(fields["interaction_id"])
        self.ats.append(fields["at"])
        self.datas.append(data)
        self.shapes.append(shape)
        session_ids = self.by_session.get(session_id)
        if session_ids is None:
            self.by_session[session_id] = [event_id]
        else:
            session_ids.append(event_id)

    def event(self, position: int) -> Event:
        shape, interaction_id = self.shapes[position], self.interaction_ids[position]
        data = self.datas[position]
        if (shape == _WHOLE or shape >= 0) and data is not None and interaction_id is not None:
            # its interaction's JSON: the dict is parsed only if the event's data is read
            return stored_interaction_event(
                self.ids[position],
                type=self.types[position],
                session_id=self.session_ids[position],
                turn_id=self.turn_ids[position],
                interaction_id=interaction_id,
                at=self.ats[position],
                body=data,
                position=None if shape == _WHOLE else shape,
            )
        return stored_event(
            self.ids[position],
            type=self.types[position],
            session_id=self.session_ids[position],
            turn_id=self.turn_ids[position],
            interaction_id=self.interaction_ids[position],
            at=self.ats[position],
            data=_unpack(self.datas[position], self.shapes[position]),
        )

    def after(self, after_id: int, session_id: str | None, limit: int) -> list[Event]:
        """Up to `limit` events after `after_id` (of one session, or all), in id order."""
        ids = self.ids
        if session_id is None:
            first = bisect_right(ids, after_id)
            return [self.event(position) for position in range(first, min(len(ids), first + limit))]
        session_ids = self.by_session.get(session_id, [])
        first = bisect_right(session_ids, after_id)
        return [
            self.event(bisect_left(ids, event_id))
            for event_id in session_ids[first : first + limit]
        ]

    def tail_start(self, count: int, session_id: str | None) -> int:
        """The id after which the newest `count` events (of one session, or all) follow."""
        ids = self.ids if session_id is None else self.by_session.get(session_id, [])
        return 0 if len(ids) <= count else ids[-count - 1]

    def _positions(
        self, session_id: str | None, first_id: int, newest_first: bool
    ) -> Iterator[int]:
        """The positions of the events (of one session, or all) with id > `first_id`,
        in id order or newest first."""
        ids = self.ids
        if session_id is None:
            first = bisect_right(ids, first_id)
            return iter(
                range(len(ids) - 1, first - 1, -1) if newest_first else range(first, len(ids))
            )
        session_ids = self.by_session.get(session_id, [])
        first = bisect_right(session_ids, first_id)
        chosen = session_ids[first:]
        return (
            bisect_left(ids, event_id)
            for event_id in (reversed(chosen) if newest_first else chosen)
        )

    def after_of_types(
        self, after_id: int, session_id: str | None, limit: int, types: frozenset[str]
    ) -> list[Event]:
        """Up to `limit` events after `after_id` whose type is one of `types`, in id
        order: only the type column is read for the events passed over."""
        column = self.types
        found: list[Event] = []
        for position in self._positions(session_id, after_id, newest_first=False):
            if column[position] in types:
                found.append(self.event(position))
                if len(found) == limit:
                    break
        return found

    def tail_start_of_types(self, count: int, session_id: str | None, types: frozenset[str]) -> int:
        """The id after which the newest `count` events whose type is one of `types`
        follow, counted back from the newest event."""
        column, seen = self.types, 0
        for position in self._positions(session_id, 0, newest_first=True):
            if column[position] in types:
                if seen == count:
                    return self.ids[position]
                seen += 1
        return 0

    def prune(self, gone: set[str], turns: set[tuple[str, str]], newest: int) -> int:
        """Drop the events of the interactions `gone`, and the turn events of `turns`
        before the first event left of each turn's interactions (all of them when none
        is left); never the `newest`. Returns how many went."""
        kept_from = dict.fromkeys(turns, newest + 1)
        columns = zip(self.ids, self.session_ids, self.turn_ids, self.interaction_ids, strict=True)
        for event_id, session_id, turn_id, interaction_id in columns:
            turn = (session_id, turn_id)
            kept = interaction_id is not None and interaction_id not in gone
            if kept and turn in kept_from and event_id < kept_from[turn]:
                kept_from[turn] = event_id

        def pruned(position: int) -> bool:
            if self.ids[position] == newest:
                return False
            interaction_id = self.interaction_ids[position]
            if interaction_id is not None:
                return interaction_id in gone
            turn = (self.session_ids[position], self.turn_ids[position])
            return turn in kept_from and self.ids[position] < kept_from[turn]

        before = len(self.ids)
        left = [position for position in range(before) if not pruned(position)]
        for name in _COLUMNS:
            column = getattr(self, name)
            setattr(self, name, [column[position] for position in left])
        self.by_session = {}
        for event_id, session_id in zip(self.ids, self.session_ids, strict=True):
            self.by_session.setdefault(session_id, []).append(event_id)
        return before - len(self.ids)
