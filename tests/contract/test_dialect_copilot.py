"""The copilot dialect: VS Code Copilot's ask-questions tool, answers keyed by header."""

from __future__ import annotations

import json

import pytest

import midturn

from . import _payloads as p


def ask() -> midturn.Ask:
    return midturn.parse_ask(p.COPILOT, dialect="copilot")


def test_input_reads_flags_free_text_and_six_options() -> None:
    db, name, features = ask().questions
    assert (db.kind, db.recommended, db.allow_other) == ("choice", 0, True)
    assert db.options[0].description == "Managed, scales out"
    assert name.kind == "text"
    assert features.multi and len(features.options) == 6
    assert features.allow_other is False  # allowFreeformInput defaults to false
    assert not any("recommended" in w or "allowFreeformInput" in w for w in ask().warnings)


def test_an_empty_option_list_is_a_free_text_question() -> None:
    payload = {"questions": [{"header": "Name", "question": "What name?", "options": []}]}
    assert midturn.parse_ask(payload, dialect="copilot").questions[0].kind == "text"


def test_one_option_or_seven_are_refused() -> None:
    for count in (1, 7):
        options = [{"label": f"Option {i}"} for i in range(count)]
        payload = {"questions": [{"header": "Pick", "question": "Which?", "options": options}]}
        with pytest.raises(midturn.InvalidAsk) as caught:
            midturn.parse_ask(payload, dialect="copilot")
        assert caught.value.problems[0].path == "questions[0].options"


def test_the_first_recommended_option_is_the_recommended_one() -> None:
    options = [
        {"label": "A"},
        {"label": "B", "recommended": True},
        {"label": "C", "recommended": True},
    ]
    payload = {"questions": [{"header": "Pick", "question": "Which?", "options": options}]}
    assert midturn.parse_ask(payload, dialect="copilot").questions[0].recommended == 1


def test_answers_keyed_by_header_with_selected_free_text_and_skipped() -> None:
    result = midturn.parse_answer(
        ask(),
        {
            "answers": {
                "Database": "CockroachDB",
                "Name": "billing-api",
                "Features": ["Dark mode", "Export"],
            }
        },
    )
    out = midturn.render(result, dialect="copilot")
    assert out.data == {
        "answers": {
            "Database": {"selected": [], "freeText": "CockroachDB", "skipped": False},
            "Name": {"selected": [], "freeText": "billing-api", "skipped": False},
            "Features": {"selected": ["Dark mode", "Export"], "freeText": None, "skipped": False},
        }
    }
    assert json.loads(out.text) == out.data


def test_a_selection_with_free_text_keeps_both() -> None:
    payload = {
        "questions": [
            {**p.COPILOT["questions"][2], "allowFreeformInput": True},
            p.COPILOT["questions"][1],
        ]
    }
    parsed = midturn.parse_ask(payload, dialect="copilot")
    result = midturn.parse_answer(
        parsed, {"answers": {"Features": {"selected": ["Search"], "text": "and PDF"}, "Name": None}}
    )
    answers = midturn.render(result, dialect="copilot").data["answers"]
    assert answers["Features"] == {"selected": ["Search"], "freeText": "and PDF", "skipped": False}
    assert answers["Name"] == {"selected": [], "freeText": None, "skipped": True}


def test_all_skipped_marks_every_question_skipped() -> None:
    out = midturn.render(midturn.parse_answer(ask(), {"skip": True}), dialect="copilot")
    assert all(item["skipped"] for item in out.data["answers"].values())
    assert set(out.data["answers"]) == {"Database", "Name", "Features"}
    assert json.loads(out.text) == out.data
