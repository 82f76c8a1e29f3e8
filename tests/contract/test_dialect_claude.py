"""The claude dialect: Claude Code's AskUserQuestion, answers keyed by question text."""

from __future__ import annotations

import pytest

import midturn

from . import _payloads as p
from ._results import uniform

THEN = "You can now continue with the user's answers in mind."


def ask() -> midturn.Ask:
    return midturn.parse_ask(p.CLAUDE, dialect="claude")


def test_input_maps_multiselect_and_the_recommended_suffix() -> None:
    parsed = ask()
    db, features = parsed.questions
    assert (db.id, db.header, db.question) == ("q1", "Database", p.DB)
    assert db.labels == ["PostgreSQL", "SQLite"] and db.recommended == 0
    assert db.options[0].description == "Managed, scales out"
    assert not db.multi and features.multi
    assert features.labels == ["Auth", "Billing", "Search"]
    assert parsed.dialect == "claude"
    assert not any("multiSelect" in warning for warning in parsed.warnings)
    assert any("Recommended" in warning for warning in parsed.warnings)


def test_answers_are_keyed_by_question_text_in_data_and_text() -> None:
    result = midturn.parse_answer(
        ask(), {"answers": {p.DB: "PostgreSQL", p.FEATURES: ["Auth", "Billing"]}}
    )
    out = midturn.render(result, dialect="claude")
    assert out.text == (
        f'User has answered your questions: "{p.DB}"="PostgreSQL", '
        f'"{p.FEATURES}"="Auth, Billing". {THEN}'
    )
    assert out.data == {
        "questions": [
            {"question": p.DB, "header": "Database"},
            {"question": p.FEATURES, "header": "Features"},
        ],
        "answers": {p.DB: "PostgreSQL", p.FEATURES: "Auth, Billing"},
    }
    assert out.is_error is False
    assert "0" not in out.data["answers"] and "q1" not in out.data["answers"]


def test_the_data_answers_read_back_to_the_same_result() -> None:
    result = midturn.parse_answer(ask(), {"answers": {"q1": "SQLite", "q2": [2]}})
    out = midturn.render(result, dialect="claude")
    single = {p.DB: out.data["answers"][p.DB], p.FEATURES: ["Search"]}
    assert midturn.parse_answer(ask(), {"answers": single}) == result


def test_typed_other_text_is_the_answer_itself() -> None:
    result = midturn.parse_answer(ask(), {"answers": {"q1": "MySQL 8", "q2": ["Auth"]}})
    out = midturn.render(result, dialect="claude")
    assert out.data["answers"][p.DB] == "MySQL 8"
    assert f'"{p.DB}"="MySQL 8"' in out.text


def test_a_skipped_question_is_named_not_left_blank() -> None:
    result = midturn.parse_answer(ask(), ["SQLite", None])
    out = midturn.render(result, dialect="claude")
    assert out.text == (
        f'User has answered your questions: "{p.DB}"="SQLite". The user skipped '
        f'"{p.FEATURES}"; use your best judgement there. {THEN}'
    )
    assert out.data["answers"] == {p.DB: "SQLite"}


def test_other_outcomes_read_as_the_canonical_sentences() -> None:
    skipped = midturn.render(midturn.parse_answer(ask(), {"skip": True}), dialect="claude")
    assert skipped.text.startswith("The user skipped the questions.")
    assert "do not ask again" in skipped.text
    assert skipped.data["answers"] == {}
    timed_out = midturn.render(uniform(ask(), "timed_out", "timed_out"), dialect="claude")
    assert timed_out.text.startswith("The user did not answer the questions in time.")
    assert timed_out.is_error is False


def test_a_malformed_multiselect_is_named_as_multiselect() -> None:
    bad = {"questions": [{**p.CLAUDE["questions"][0], "multiSelect": "yes"}]}
    with pytest.raises(midturn.InvalidAsk) as caught:
        midturn.parse_ask(bad, dialect="claude")
    assert [problem.path for problem in caught.value.problems] == ["questions[0].multiSelect"]
