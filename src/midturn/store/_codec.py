"""What every backend shares: the checks on a settle, the settled copy of an interaction,
and the JSON text an SQL backend stores (compact, never a secret).

Backend-neutral on purpose: values go in and out as Python models and JSON text, so the
SQLite and PostgreSQL stores encode rows the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from operator import is_, itemgetter
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic_core import from_json
from typing_extensions import TypedDict

from midturn.contract._interactions import (
    DATA_LATER,
    PERMISSION_STATUSES,
    TERMINAL_STATUSES,
    Event,
    EventType,
    Interaction,
    InteractionStatus,
    NewEvent,
    PermissionDecision,
    utcnow,
)
from midturn.contract._models import AskResult, from_fields
from midturn.errors import UsageError
from midturn.store._base import SessionRecord

__all__ = [
    "NOT_OPEN",
    "as_utc",
    "carried_json",
    "check_events",
    "check_identifiers",
    "check_limit",
    "check_new_interaction",
    "check_session",
    "copy_interaction",
    "data_json",
    "dump_event",
    "dump_interaction",
    "dump_session",
    "event_from",
    "event_json",
    "interaction_columns",
    "interaction_data",
    "interaction_event",
    "interaction_json",
    "load_event",
    "load_interaction",
    "load_session",
    "new_event",
    "parse_time",
    "settled_copy",
    "sort_key_time",
    "stored_event",
    "stored_interaction_event",
    "unknown_cursor",
]

_ASK_STATUSES = TERMINAL_STATUSES - {"allowed", "denied"}

NOT_OPEN = (
    "the store is not open; use `async with open_store(url) as store:` "
    "or call `await store.open()` first"
)


def check_identifiers(what: str, **fields: str | None) -> None:
    """Refuse identifiers no backend can keep: PostgreSQL text cannot hold a NUL
    character, so no store accepts one in a column it filters on."""
    for name, value in fields.items():
        if value is not None and "\x00" in value:
            raise UsageError(
                f"{what} {name} {value!r} contains a NUL character (\\x00), which no "
                "store accepts in an identifier; remove it"
            )


def check_events(events: Sequence[NewEvent]) -> None:
    for new in events:
        # the common case in one test; the message is built only for a NUL found
        if "\x00" in f"{new.session_id}{new.turn_id}{new.interaction_id or ''}":
            check_identifiers(
                "event",
                session_id=new.session_id,
                turn_id=new.turn_id,
                interaction_id=new.interaction_id,
            )


def check_session(session: SessionRecord) -> None:
    check_identifiers(
        "session",
        id=session.id,
        agent_token_hash=session.agent_token_hash,
        answer_token_hash=session.answer_token_hash,
    )


def check_new_interaction(interaction: Interaction) -> None:
    """Refuse an interaction a store must not create: anything but a pending one, or one
    whose identifiers hold a NUL character."""
    if (
        "\x00" in interaction.id
        or "\x00" in interaction.session_id
        or "\x00" in interaction.turn_id
        or "\x00" in (interaction.tool_call_id or "")
    ):
        check_identifiers(
            "interaction",
            id=interaction.id,
            session_id=interaction.session_id,
            turn_id=interaction.turn_id,
            tool_call_id=interaction.tool_call_id,
        )
    if interaction.status != "pending":
        raise UsageError(
            f"interaction {interaction.id!r} has status {interaction.status!r}; a store "
            "creates only pending interactions, settle it afterwards with `settle()`"
        )


def check_limit(limit: int | None) -> None:
    if limit is not None and limit < 1:
        raise UsageError(f"limit must be at least 1 (got {limit}); omit it for no limit")


def unknown_cursor(after: str) -> UsageError:
    return UsageError(
        f"no interaction {after[:80]!r} to list after: the cursor is not one this store "
        "gave (or its interaction was pruned); list again from the start"
    )


def settled_copy(
    current: Interaction,
    *,
    status: InteractionStatus,
    result: AskResult | None,
    decision: PermissionDecision | None,
    settled_by: str | None,
    settled_at: datetime | None,
) -> Interaction:
    """The interaction as it stands once settled into `status`. Checks the arguments
    (whatever the current status) and strips any secret value from `result`."""
    if status == "pending":
        raise UsageError(
            "settle() needs a terminal status such as 'answered' or 'denied', not 'pending'"
        )
    if result is not None and current.kind != "ask":
        raise UsageError(
            f"interaction {current.id!r} is a {current.kind}; pass `decision`, not `result`"
        )
    if decision is not None and current.kind != "permission":
        raise UsageError(
            f"interaction {current.id!r} is an {current.kind}; pass `result`, not `decision`"
        )
    allowed = PERMISSION_STATUSES if current.kind == "permission" else _ASK_STATUSES
    if status not in allowed:
        raise UsageError(
            f"interaction {current.id!r} is a{'n' if current.kind == 'ask' else ''} "
            f"{current.kind}, which cannot be {status!r}; use one of {sorted(allowed)}"
        )
    update: dict[str, Any] = {
        "status": status,
        "settled_at": settled_at or utcnow(),
        "settled_by": settled_by,
    }
    if result is not None:
        update["result"] = result.without_secrets()
    if decision is not None:
        update["decision"] = decision
    return copy_interaction(current, update)


# The setters of a model's four slots, taken from `BaseModel` once (as `built()` does):
# calling them costs about half of `object.__setattr__` by name.
_new = object.__new__  # `Interaction` defines no `__new__` of its own
_get_dict = BaseModel.__dict__["__dict__"].__get__  # an event's fields as they are kept
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def copy_interaction(interaction: Interaction, update: dict[str, Any]) -> Interaction:
    """`interaction.model_copy(update=update)` for values the caller made valid: the same
    model, fields in the same order, without pydantic's generic copy (an `Interaction`
    has no extra fields and no private attributes to copy).

    When every updated field is set already (a settle's five are, in any interaction the
    runtime made: it sets all of them) the copy shares its original's fields-set, as
    `from_fields` shares one among a model's instances: an `Interaction` is frozen, so
    nothing adds to a fields-set in place, and a new set per copy is ~1,500 instructions
    and one more object for the garbage collector to track."""
    copied = _new(type(interaction))
    _set_dict(copied, {**interaction.__dict__, **update})
    fields_set = interaction.__pydantic_fields_set__
    if not update.keys() <= fields_set:
        fields_set = fields_set | update.keys()
    _set_fields_set(copied, fields_set)
    _set_extra(copied, None)
    _set_private(copied, None)
    return copied


# -- the JSON of an interaction, made once ------------------------------------------------
#
# A park writes an interaction's JSON (its store row) and its requested event, which
# carries the interaction; a settle does the same for the settled interaction, which the
# runtime and the store each make as a copy of the same fields. `interaction_json` keeps
# the JSON of the last few interactions dumped, so the same interaction (the same object,
# or a copy holding the very same field values) is serialized once. The runtime's events
# carry that JSON and make their data's dict from it only when read
# (`interaction_event`), so a store keeps the event's data as a reference to the row's
# JSON, and a frame or a row is written around it, without parsing or encoding it again
# (`carried_json`).

_INTERACTION_JSON = TypeAdapter(Interaction).serializer.to_json
_KEPT_DUMPS = 8
# Plain dicts, emptied when full: a get, a set and a clear are each atomic, so a store's
# worker thread may dump while the event loop does.
_dumps: dict[str, tuple[Interaction, bytes]] = {}  # by interaction id
_datas: dict[int, tuple[dict[str, Any], bytes]] = {}  # by id() of the dict, which it holds


def _same_values(one: Interaction, other: Interaction) -> bool:
    """Whether two interactions hold the very same objects in the same fields (so their
    JSON is the same bytes); equal values that are other objects do not count (an equal
    datetime in another time zone dumps differently)."""
    if one is other:
        return True
    mine, theirs = one.__dict__, other.__dict__
    return (
        type(one) is type(other)
        and len(mine) == len(theirs)
        and all(map(is_, mine.values(), theirs.values()))
        and all(map(is_, mine, theirs))
    )


def interaction_json(interaction: Interaction) -> bytes:
    """Compact JSON of the whole interaction (`QuestionAnswer.secret_value` is excluded
    from every dump), made once for the same values; a settled copy of the pending one
    dumped last is written from that one's JSON (`_settled_json`)."""
    kept = _dumps.get(interaction.id)
    body: bytes | None = None
    if kept is not None:
        if _same_values(kept[0], interaction):
            return kept[1]
        body = _settled_json(kept[0], kept[1], interaction)
    if body is None:
        body = _INTERACTION_JSON(interaction)
    if len(_dumps) >= _KEPT_DUMPS:
        _dumps.clear()
    _dumps[interaction.id] = (interaction, body)
    return body


# A settle changes five fields of an interaction and keeps every other one (the very same
# objects: `copy_interaction`). Its JSON is then the pending one's with those five written
# in, and the ask, most of the text, is not dumped again. The pending JSON has them at
# known places: `status` right after the strings before it, `settled_at` after
# `created_at`, `settled_by` after `deadline`, and the last three fields at its end; no
# string value can hold these markers, since a quote in a string is always escaped.
_SETTLE_FIELDS = ("status", "settled_at", "settled_by", "result", "decision")
_KEPT_BY_SETTLE = itemgetter(
    *(name for name in Interaction.model_fields if name not in _SETTLE_FIELDS)
)
_STATUS_MARK = b',"status":"pending","created_at":'
_SETTLED_AT_MARK = b',"settled_at":null,"deadline":'
_SETTLED_BY_MARK = b',"settled_by":null,"context":'
_DECISION_END = b',"decision":null}'
_ASK_END = b',"result":null,"permission":null' + _DECISION_END
_TIME_JSON = TypeAdapter(datetime).serializer.to_json
_TEXT_JSON = TypeAdapter(str | None).serializer.to_json
_RESULT_JSON = TypeAdapter(AskResult).serializer.to_json
_DECISION_JSON = TypeAdapter(PermissionDecision).serializer.to_json


def _settled_json(pending: Interaction, body: bytes, settled: Interaction) -> bytes | None:
    """The JSON of `settled` from `body`, the JSON of `pending`, when `settled` is a copy
    of it that a settle made (every field but the five a settle sets the very same
    object); None otherwise."""
    mine, theirs = pending.__dict__, settled.__dict__
    if (
        type(pending) is not type(settled)
        or len(mine) != len(theirs)
        or mine["status"] != "pending"
        or theirs["status"] == "pending"
        or not all(map(is_, _KEPT_BY_SETTLE(mine), _KEPT_BY_SETTLE(theirs)))
        or mine["settled_at"] is not None
        or mine["settled_by"] is not None
        or mine["result"] is not None
        or mine["decision"] is not None
    ):
        return None
    status_at = body.find(_STATUS_MARK)
    settled_at = body.find(_SETTLED_AT_MARK, status_at)
    settled_by = body.find(_SETTLED_BY_MARK, settled_at)
    if status_at < 0 or settled_at < 0 or settled_by < 0:
        return None
    result, decision = theirs["result"], theirs["decision"]
    if result is not None and decision is None and body.endswith(_ASK_END):
        end = len(body) - len(_ASK_END)
        tail = b',"result":' + _RESULT_JSON(result) + _ASK_END[len(',"result":null') :]
    elif result is None and body.endswith(_DECISION_END):
        end = len(body) - len(_DECISION_END)
        written = b"null" if decision is None else _DECISION_JSON(decision)
        tail = b',"decision":' + written + b"}"
    else:
        return None
    when = theirs["settled_at"]
    return b"".join(
        (
            body[:status_at],
            b',"status":"' + theirs["status"].encode() + b'","created_at":',
            body[status_at + len(_STATUS_MARK) : settled_at],
            b',"settled_at":',
            b"null" if when is None else _TIME_JSON(when),
            b',"deadline":',
            body[settled_at + len(_SETTLED_AT_MARK) : settled_by],
            b',"settled_by":',
            _TEXT_JSON(theirs["settled_by"]),
            b',"context":',
            body[settled_by + len(_SETTLED_BY_MARK) : end],
            tail,
        )
    )


def _parsed(body: bytes) -> dict[str, Any]:
    data: dict[str, Any] = from_json(body)
    if len(_datas) >= _KEPT_DUMPS:
        _datas.clear()
    _datas[id(data)] = (data, body)
    return data


def interaction_data(interaction: Interaction) -> dict[str, Any]:
    """The JSON form of `interaction` as Python objects (what `model_dump(mode="json")`
    gives), parsed from `interaction_json`: a new dict each call, whose JSON `data_json`
    returns while it is one of the last few made."""
    return _parsed(interaction_json(interaction))


def data_json(data: Any) -> bytes | None:
    """The JSON `data` was parsed from by `interaction_data`, if it was one of the last
    few it made; None otherwise. (The caller must not have changed the dict since.)"""
    kept = _datas.get(id(data))
    return kept[1] if kept is not None and kept[0] is data else None


def _carried_data(body: bytes, position: int | None) -> dict[str, Any]:
    if position is None:
        return {"interaction": _parsed(body)}
    return {"interaction": _parsed(body), "position": position}


def interaction_event(
    *,
    type: EventType,
    session_id: str,
    turn_id: str,
    interaction_id: str,
    at: datetime,
    body: bytes,
    position: int | None,
) -> NewEvent:
    """A `NewEvent` whose data is `{"interaction": <the interaction>, "position":
    <position>}` (no position when None), the interaction given as its JSON, `body`: the
    dict is parsed from it when the event's data is first read, and `carried_json` gives
    `body` without it (docs/runtime.md#events)."""
    return from_fields(
        NewEvent, _carrying(type, session_id, turn_id, interaction_id, at, body, position)
    )


def _carrying(
    type: EventType,
    session_id: str,
    turn_id: str,
    interaction_id: str,
    at: datetime,
    body: bytes,
    position: int | None,
) -> dict[str, Any]:
    """The fields of an event carrying an interaction as its JSON (`interaction_event`)."""
    return {
        "type": type,
        "session_id": session_id,
        "turn_id": turn_id,
        "interaction_id": interaction_id,
        "at": at,
        DATA_LATER: (_carried_data, body, position),
    }


def stored_interaction_event(
    event_id: int,
    *,
    type: EventType,
    session_id: str,
    turn_id: str,
    interaction_id: str,
    at: datetime,
    body: bytes,
    position: int | None,
) -> Event:
    """`interaction_event` as an `Event` a store kept (its data made when first read)."""
    fields = _carrying(type, session_id, turn_id, interaction_id, at, body, position)
    fields["id"] = event_id
    return from_fields(Event, fields)


def carried_json(event: NewEvent) -> tuple[bytes, int | None] | None:
    """`(the JSON of the interaction the event carries, its queue position or None)`
    when the event's data is `{"interaction": ...}` or `{"interaction": ..., "position":
    <int>}` and that JSON is known without encoding it: an `interaction_event` (its data
    made or not) or data whose interaction `interaction_data` made. None otherwise."""
    fields = _get_dict(event)
    later = fields.get(DATA_LATER)
    if later is not None:
        if later[0] is _carried_data:
            return later[1], later[2]
        return None
    data = fields["data"]
    if not data:
        return None
    body = data_json(data.get("interaction"))
    if body is None or next(iter(data)) != "interaction":
        return None
    if len(data) == 1:
        return body, None
    position = data.get("position")
    if len(data) == 2 and type(position) is int:
        return body, position
    return None


class _Head(TypedDict):
    """An event's fields before its data, for `event_json` to dump without the data."""

    type: EventType
    session_id: str
    turn_id: str
    interaction_id: str | None
    at: datetime


_HEAD_JSON = TypeAdapter(_Head).serializer.to_json  # leaves out the keys it does not name


def event_json(event: NewEvent) -> bytes:
    """Compact JSON of an event: what `event.model_dump_json()` encodes (an `Event`'s id
    last). The interaction a requested or a settle event carries is not dumped again
    (`carried_json`): its JSON is written in, and the rest dumped around it."""
    kind = type(event)
    carried = carried_json(event) if kind is NewEvent or kind is Event else None
    if carried is None:
        whole: bytes = event.__pydantic_serializer__.to_json(event)
        return whole
    body, position = carried
    # `data` is the last field `NewEvent` declares: its fields before it, then the data
    fields = _get_dict(event)
    head = _HEAD_JSON(fields)[:-1] + b',"data":{"interaction":' + body
    # a requested event's position; a settle event has none
    text = head + (b"}" if position is None else b',"position":%d}' % position)
    if kind is Event:
        return text + b',"id":%d}' % fields["id"]
    return text + b"}"


def as_utc(moment: datetime) -> datetime:
    """`moment` comparable with any other: a naive datetime is taken to be UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def parse_time(text: str) -> datetime:
    """A datetime as the JSON bodies hold it (ISO 8601, `Z` for UTC), timezone-aware."""
    return as_utc(datetime.fromisoformat(text))


def sort_key_time(moment: datetime) -> str:
    """A fixed-width UTC text for a moment, so text order is time order in any database.
    A naive datetime is taken to be UTC."""
    utc = as_utc(moment)
    if utc.utcoffset():
        utc = utc.astimezone(UTC)
    # isoformat, not strftime: a third of the cost, and the year is always four digits
    return utc.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def dump_interaction(interaction: Interaction) -> str:
    """Compact JSON of the whole interaction. `QuestionAnswer.secret_value` is excluded
    from every dump (so a result with secret values dumps as its `without_secrets()`)."""
    return interaction_json(interaction).decode()


def load_interaction(body: str | bytes) -> Interaction:
    return Interaction.model_validate_json(body)


def new_event(
    *,
    type: EventType,
    session_id: str,
    turn_id: str,
    interaction_id: str | None,
    at: datetime,
    data: dict[str, Any],
) -> NewEvent:
    """A `NewEvent` from fields its maker built itself (valid by construction): no
    validation pass over the data it carries."""
    return from_fields(
        NewEvent,
        {
            "type": type,
            "session_id": session_id,
            "turn_id": turn_id,
            "interaction_id": interaction_id,
            "at": at,
            "data": data,
        },
    )


def stored_event(
    event_id: int,
    *,
    type: EventType,
    session_id: str,
    turn_id: str,
    interaction_id: str | None,
    at: datetime,
    data: dict[str, Any],
) -> Event:
    """An `Event` from fields a store kept (valid when they were stored)."""
    return from_fields(
        Event,
        {
            "type": type,
            "session_id": session_id,
            "turn_id": turn_id,
            "interaction_id": interaction_id,
            "at": at,
            "data": data,
            "id": event_id,
        },
    )


def event_from(new: NewEvent, event_id: int) -> Event:
    """The stored form of `new` under the id the store gave it (already validated)."""
    fields = _get_dict(new).copy()  # its data made or not
    fields["id"] = event_id
    return from_fields(Event, fields)


# -- rows for SQL backends (JSON text in and out) -----------------------------------------


def interaction_columns(interaction: Interaction) -> dict[str, str | None]:
    """The filter columns and JSON body of an interaction row. Times are `sort_key_time`
    text; a backend with real timestamp columns may use the model's datetimes instead."""
    return {
        "id": interaction.id,
        "kind": interaction.kind,
        "session_id": interaction.session_id,
        "turn_id": interaction.turn_id,
        "tool_call_id": interaction.tool_call_id,
        "status": interaction.status,
        "created_at": sort_key_time(interaction.created_at),
        "settled_at": (
            None if interaction.settled_at is None else sort_key_time(interaction.settled_at)
        ),
        "body": dump_interaction(interaction),
    }


def dump_event(new: NewEvent) -> str:
    """Compact JSON of an event without its id (the store assigns it). Refuses an event
    whose identifiers hold a NUL character."""
    check_events((new,))
    return event_json(new).decode()


def load_event(event_id: int, body: str | bytes) -> Event:
    return event_from(NewEvent.model_validate_json(body), event_id)


def dump_session(session: SessionRecord) -> str:
    """Compact JSON of a session. Refuses one whose identifiers hold a NUL character."""
    check_session(session)
    return session.model_dump_json()


def load_session(body: str | bytes) -> SessionRecord:
    return SessionRecord.model_validate_json(body)
