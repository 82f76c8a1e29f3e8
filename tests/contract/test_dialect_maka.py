"""The maka dialect: 1–3 single-choice questions, answers as a JSON list."""

from __future__ import annotations

import json

import pytest

import midturn

from . import _payloads as p
from ._results import uniform


def ask() -> midturn.Ask:
    return midturn.parse_ask(p.MAKA, dialect="maka")


def test_input_gets_derived_headers_and_default_ids() -> None:
    parsed = ask()
    assert [q.id for q in parsed.questions] == ["q1", "q2"]
    assert [q.header for q in parsed.questions] == ["Database", "Region"]
    assert parsed.questions[1].labels == ["EU", "US", "Asia"]
    assert parsed.warnings == ()


def test_the_ui_answer_is_read_positionally_and_rendered_as_json() -> None:
    result = midturn.parse_answer(ask(), {"requestId": "req-7", "answers": ["SQLite", None]})
    out = midturn.render(result, dialect="maka")
    expected = {
        "answers": [
            {"question": p.DB, "answer": "SQLite"},
            {"question": p.REGION, "answer": None},
        ]
    }
    assert out.data == expected
    assert json.loads(out.text) == expected
    assert out.text == (
        '{"answers": [{"question": "Which database should the billing service use?", '
        '"answer": "SQLite"}, {"question": "Which region should it run in?", "answer": null}]}'
    )
    assert out.is_error is False


def test_typed_other_is_the_answer_string() -> None:
    result = midturn.parse_answer(ask(), {"answers": ["CockroachDB", "EU"]})
    out = midturn.render(result, dialect="maka")
    assert out.data["answers"][0] == {"question": p.DB, "answer": "CockroachDB"}
    answers = [item["answer"] for item in out.data["answers"]]
    assert midturn.parse_answer(ask(), {"answers": answers}) == result


def test_all_skipped_is_all_null() -> None:
    out = midturn.render(midturn.parse_answer(ask(), {"skip": True}), dialect="maka")
    assert [item["answer"] for item in out.data["answers"]] == [None, None]
    assert json.loads(out.text) == out.data


def test_a_timeout_reads_as_a_sentence_with_nulls_as_data() -> None:
    out = midturn.render(uniform(ask(), "timed_out", "timed_out"), dialect="maka")
    assert out.text.startswith("The user did not answer the questions in time.")
    assert [item["answer"] for item in out.data["answers"]] == [None, None]


def test_makas_own_limits_apply_unless_the_host_widens_them() -> None:
    four = {"questions": [*p.MAKA["questions"], *p.MAKA["questions"]]}
    with pytest.raises(midturn.InvalidAsk) as caught:
        midturn.parse_ask(four, dialect="maka")
    assert "at most 3" in str(caught.value)
    wide = {"questions": [{"question": p.DB, "options": [{"label": x} for x in "ABCD"]}]}
    with pytest.raises(midturn.InvalidAsk) as caught:
        midturn.parse_ask(wide, dialect="maka")
    assert caught.value.problems[0].path == "questions[0].options"
    widened = midturn.parse_ask(wide, dialect="maka", limits=midturn.Limits())
    assert len(widened.questions[0].options) == 4
