"""A session's title is defined once (`SessionRecord.title`): every surface that names a
session — the inbox, `midturn answer`, notifications — shows the same plain line."""

from __future__ import annotations

from midturn.store import SessionRecord
from midturn.store._base import MAX_TITLE


def record(meta: dict[str, object]) -> SessionRecord:
    return SessionRecord(id="s_1", agent_token_hash="a", answer_token_hash="b", meta=meta)


def test_the_title_is_meta_title_as_one_plain_line() -> None:
    assert record({"title": "  Billing\n refactor\x1b[31m\x07 "}).title == "Billing refactor"
    long = record({"title": "word " * 100}).title
    assert long is not None and len(long) <= MAX_TITLE and long.endswith("…")


def test_no_title_when_meta_has_none_or_not_text() -> None:
    assert record({}).title is None
    assert record({"title": ""}).title is None
    assert record({"title": 7}).title is None
    assert record({"label": "not a title"}).title is None  # only meta.title names it
