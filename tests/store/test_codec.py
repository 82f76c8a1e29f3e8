"""The JSON a store writes for an interaction is the model's own, however it was made: a
settled copy's is written from its pending interaction's JSON, and must be the very
bytes `model_dump_json()` gives."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from midturn.contract import parse_answer
from midturn.contract._context import InteractionContext
from midturn.contract._interactions import Interaction, PermissionDecision, PermissionRequest
from midturn.contract._models import Ask, Option, Question
from midturn.store import _codec as codec

ASK = Ask(
    questions=(
        Question(
            id="db",
            header="Database",
            question='Which "database"? ,"status":"pending","created_at": \\',
            options=(Option(label="SQLite"), Option(label="PostgreSQL")),
        ),
        Question(id="name", header="Name", question="Its name?", kind="text", secret=True),
    )
)
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=30)


def _ask(**fields: object) -> Interaction:
    return Interaction.model_validate(
        {"id": "ia_codec", "kind": "ask", "session_id": "s", "turn_id": "t", "ask": ASK, **fields}
    )


def _permission(**fields: object) -> Interaction:
    request = PermissionRequest(tool="Bash", summary='rm -rf "/"', details=',"decision":null}')
    return Interaction.model_validate(
        {
            "id": "ip_codec",
            "kind": "permission",
            "session_id": "s",
            "turn_id": "t",
            "permission": request,
            **fields,
        }
    )


def _settles(current: Interaction, by: str | None, at: datetime | None) -> list[Interaction]:
    if current.kind == "permission":
        return [
            codec.settled_copy(
                current, status=status, result=None, decision=decision, settled_by=by, settled_at=at
            )
            for status, decision in (
                ("allowed", PermissionDecision(outcome="allowed", decision="allow")),
                ("denied", PermissionDecision(outcome="denied", decision="deny", message='"no"')),
                ("timed_out", PermissionDecision(outcome="timed_out")),
                ("cancelled", None),
            )
        ]
    assert current.ask is not None
    answered = parse_answer(current.ask, {"answers": {"db": "SQLite", "name": "hunter2"}})
    skipped = parse_answer(current.ask, {"skip": True})
    return [
        codec.settled_copy(
            current, status=status, result=result, decision=None, settled_by=by, settled_at=at
        )
        for status, result in (("answered", answered), ("skipped", skipped), ("cancelled", None))
    ]


@given(
    session=TEXT.filter(bool),
    tool_call=st.none() | TEXT,
    by=st.none() | TEXT,
    hours=st.integers(min_value=-12, max_value=12),
    deadline=st.booleans(),
)
def test_a_settled_interactions_json_is_its_own_dump(
    session: str, tool_call: str | None, by: str | None, hours: int, deadline: bool
) -> None:
    zone = timezone(timedelta(hours=hours))
    created = datetime(2026, 12, 2, 3, 4, 5, 678901, tzinfo=zone)
    context = InteractionContext(agent='the "agent"')
    for make in (_ask, _permission):
        pending = make(
            session_id=session,
            tool_call_id=tool_call,
            created_at=created,
            deadline=created + timedelta(minutes=5) if deadline else None,
            context=context,
        )
        body = codec.interaction_json(pending)
        assert body == pending.model_dump_json().encode()
        for settled in _settles(pending, by, datetime(2026, 12, 2, 4, tzinfo=UTC)):
            codec.interaction_json(pending)  # the pending one dumped last, as in a settle
            assert codec.interaction_json(settled) == settled.model_dump_json().encode()


@pytest.mark.parametrize("make", [_ask, _permission])
def test_a_copy_changed_beyond_a_settle_is_dumped_whole(make: object) -> None:
    assert callable(make)
    pending = make()
    codec.interaction_json(pending)
    settled = _settles(pending, "person", None)[0]
    moved = codec.copy_interaction(settled, {"turn_id": "elsewhere"})
    assert codec.interaction_json(moved) == moved.model_dump_json().encode()
    codec.interaction_json(pending)
    retimed = codec.copy_interaction(settled, {"created_at": pending.created_at + timedelta(1)})
    assert codec.interaction_json(retimed) == retimed.model_dump_json().encode()


@pytest.mark.parametrize("make", [_ask, _permission])
def test_a_copy_has_the_fields_set_model_copy_gives(make: object) -> None:
    """A copy's fields-set is its original's and the updated fields, as `model_copy`'s
    (a dump with `exclude_unset` reads it); the original's never changes. A copy that
    sets no field not set already shares its original's set instead of making one."""
    assert callable(make)
    pending = make()  # validated from a few fields: the others are unset
    given = set(pending.model_fields_set)
    update = {"status": "cancelled", "settled_at": datetime(2026, 12, 3, tzinfo=UTC)}
    copied = codec.copy_interaction(pending, update)
    assert copied.model_fields_set == pending.model_copy(update=update).model_fields_set
    assert copied.model_fields_set == given | update.keys()
    assert pending.model_fields_set == given
    assert copied.model_dump_json(exclude_unset=True) == pending.model_copy(
        update=update
    ).model_dump_json(exclude_unset=True)
    again = codec.copy_interaction(copied, {"settled_by": None, "status": "cancelled"})
    assert again.model_fields_set == copied.model_fields_set | {"settled_by"}
    resettled = codec.copy_interaction(again, {"status": "cancelled"})
    assert resettled.model_fields_set is again.model_fields_set
