"""The neo dialect: the gateway's one-question `ask_user`; a timeout is an error."""

from __future__ import annotations

import json
from typing import Any

import pytest

import midturn

from . import _payloads as p
from ._results import uniform


def test_input_maps_title_kind_timeout_and_max_choices() -> None:
    ask = midturn.parse_ask(p.NEO, dialect="neo")
    (question,) = ask.questions
    assert question.id == "db_choice"
    assert question.question == f"{p.DB}\n\nThe service stores invoices and customer records."
    assert question.header == "Database"
    assert (question.kind, question.multi, question.labels) == (
        "choice",
        False,
        ["PostgreSQL", "SQLite"],
    )
    assert ask.timeout_s == 120.0
    multi = midturn.parse_ask(p.NEO_MULTI, dialect="neo").questions[0]
    assert (multi.multi, multi.max_choices) == (True, 2)
    text = midturn.parse_ask(p.NEO_TEXT, dialect="neo").questions[0]
    assert (text.id, text.kind) == ("service_name", "text")


def test_answered_choice() -> None:
    ask = midturn.parse_ask(p.NEO, dialect="neo")
    action = {"question_id": "db_choice", "status": "answered", "values": ["PostgreSQL"]}
    result = midturn.parse_answer(ask, {**action, "message": None})
    out = midturn.render(result, dialect="neo")
    expected = {
        "status": "answered",
        "question_id": "db_choice",
        "values": ["PostgreSQL"],
        "message": None,
    }
    assert out.data == expected
    assert out.text == json.dumps(expected)
    assert out.is_error is False
    assert midturn.parse_answer(ask, out.data) == result  # the result reads back as an action


def test_multi_choice_and_text_answers() -> None:
    multi = midturn.parse_ask(p.NEO_MULTI, dialect="neo")
    answer = {"question_id": "features", "answer_type": "multi_choice"}
    result = midturn.parse_answer(multi, {**answer, "selected_option_ids": ["Auth", "Search"]})
    assert midturn.render(result, dialect="neo").data["values"] == ["Auth", "Search"]
    with pytest.raises(midturn.InvalidAnswer):  # max_choices 2
        midturn.parse_answer(multi, {"answers": {"features": ["Auth", "Billing", "Search"]}})
    text = midturn.parse_ask(p.NEO_TEXT, dialect="neo")
    out = midturn.render(midturn.parse_answer(text, "billing-api"), dialect="neo")
    assert out.data == {
        "status": "answered",
        "question_id": "service_name",
        "values": [],
        "message": "billing-api",
    }
    assert midturn.parse_answer(text, out.data).answers[0].text == "billing-api"


def test_skipped() -> None:
    ask = midturn.parse_ask(p.NEO, dialect="neo")
    result = midturn.parse_answer(ask, {"question_id": "db_choice", "status": "skipped"})
    out = midturn.render(result, dialect="neo")
    assert out.data == {
        "status": "skipped",
        "question_id": "db_choice",
        "values": [],
        "message": None,
    }
    assert out.is_error is False


def test_a_timeout_is_an_error_result() -> None:
    ask = midturn.parse_ask(p.NEO, dialect="neo")
    out = midturn.render(uniform(ask, "timed_out", "timed_out"), dialect="neo")
    assert out.is_error is True
    assert out.data == {
        "status": "timeout",
        "question_id": "db_choice",
        "values": [],
        "message": None,
    }
    assert json.loads(out.text) == out.data


def test_a_redirect_carries_the_users_message() -> None:
    ask = midturn.parse_ask(p.NEO, dialect="neo")
    out = midturn.render(midturn.parse_answer(ask, {"redirect": "Use MySQL"}), dialect="neo")
    assert out.data["status"] == "skipped" and out.data["message"] == "Use MySQL"
    assert '"Use MySQL"' in out.text and out.is_error is False


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"kind": "dropdown"}, "kind"),
        ({"title": None}, "title"),
        ({"max_choices": 2}, "max_choices"),
        ({"questions": [{"question": "x"}]}, "questions"),
    ],
)
def test_faults_of_neos_own_shape_name_neos_fields(change: dict[str, Any], path: str) -> None:
    payload = {k: v for k, v in {**p.NEO, **change}.items() if v is not None}
    with pytest.raises(midturn.InvalidAsk) as caught:
        midturn.parse_ask(payload, dialect="neo")
    assert caught.value.problems[0].path == path
    assert any(fix in caught.value.problems[0].message for fix in ("give", "remove"))


def test_question_is_read_as_an_alias_of_title() -> None:
    payload = {k: v for k, v in p.NEO.items() if k not in ("title", "description")}
    ask = midturn.parse_ask({**payload, "question": p.DB}, dialect="auto")
    assert (ask.dialect, ask.questions[0].question) == ("neo", p.DB)


# -- a Go client: every field present, the unset ones zeroed ------------------------------


def go_ask(**fields: Any) -> dict[str, Any]:
    """neo's `ask_user` as a Go struct marshals it: every field present, unset ones `0`,
    `""`, `false` or `null` (a nil slice)."""
    zeroed: dict[str, Any] = {
        "question_id": "",
        "title": "",
        "description": "",
        "kind": "",
        "options": None,
        "required": False,
        "allow_skip": False,
        "max_choices": 0,
        "timeout_sec": 0,
    }
    return {**zeroed, **fields}


def go_option(label: str) -> dict[str, Any]:
    return {"label": label, "description": ""}


def test_a_go_struct_single_choice_reads_its_zero_values_as_unset() -> None:
    options = [go_option("PostgreSQL"), go_option("SQLite")]
    data = go_ask(question_id="db", title=p.DB, kind="single_choice", options=options)
    ask = midturn.parse_ask(data, dialect="neo")
    (question,) = ask.questions
    assert (question.id, question.kind, question.multi, question.max_choices) == (
        "db",
        "choice",
        False,
        None,
    )
    assert [option.description for option in question.options] == [None, None]
    assert question.question == p.DB  # an empty description adds nothing
    assert ask.timeout_s is None  # timeout_sec 0: no timeout, not an instant one


def test_a_go_struct_multi_choice_and_text_read_their_zero_values_as_unset() -> None:
    options = [go_option("Auth"), go_option("Billing"), go_option("Search")]
    multi = midturn.parse_ask(
        go_ask(question_id="f", title=p.FEATURES, kind="multi_choice", options=options),
        dialect="neo",
    )
    assert (multi.questions[0].multi, multi.questions[0].max_choices) == (True, None)
    capped = go_ask(title=p.FEATURES, kind="multi_choice", options=options, max_choices=2)
    assert midturn.parse_ask(capped, dialect="neo").questions[0].max_choices == 2
    text = midturn.parse_ask(go_ask(title="What should it be called?"), dialect="neo")
    (question,) = text.questions
    assert (question.id, question.kind) == ("q1", "text")  # "" id: the default one
    inferred = midturn.parse_ask(go_ask(title=p.DB, options=options[:2]), dialect="neo")
    assert inferred.questions[0].kind == "choice"  # "" kind: inferred from the options
    timed = midturn.parse_ask(go_ask(title="Name?", timeout_sec=30), dialect="neo")
    assert timed.timeout_s == 30


def test_zero_values_never_hide_a_real_fault() -> None:
    with pytest.raises(midturn.InvalidAsk) as caught:
        midturn.parse_ask(go_ask(kind="single_choice"), dialect="neo")
    assert caught.value.problems[0].path == "title"
    with pytest.raises(midturn.InvalidAsk):
        midturn.parse_ask(go_ask(title=p.DB, kind="single_choice", max_choices=2), dialect="neo")
    with pytest.raises(midturn.InvalidAsk):
        midturn.parse_ask(go_ask(title=p.DB, timeout_sec=-5), dialect="neo")
