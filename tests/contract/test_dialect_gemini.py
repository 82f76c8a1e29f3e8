"""The gemini dialect: Gemini CLI's `ask_user`, typed questions, answers keyed by index."""

from __future__ import annotations

import json

import pytest

import midturn

from . import _payloads as p

PROCEED = "Proceed with your best judgement, state the assumptions you made, and do not ask again."


def ask() -> midturn.Ask:
    return midturn.parse_ask(p.GEMINI, dialect="gemini")


def test_each_type_becomes_its_question_kind() -> None:
    db, name, retry = ask().questions
    assert (db.kind, db.labels, db.header) == ("choice", ["PostgreSQL", "SQLite"], "Database")
    assert (name.kind, name.header) == ("text", "Project Name")  # 12 characters
    assert (retry.kind, retry.labels, retry.allow_other) == ("choice", ["Yes", "No"], True)
    assert retry.question == "The build failed.\nRetry it?"  # the literal \n read as a break
    assert ask().warnings == ()


def test_a_header_of_sixteen_characters_is_geminis_bound() -> None:
    payload = {
        "questions": [{"question": "Proceed?", "header": "Deploy approval!", "type": "yesno"}]
    }
    assert midturn.parse_ask(payload, dialect="gemini").questions[0].header == "Deploy approval!"
    too_long = {"questions": [{**payload["questions"][0], "header": "Deployment approval"}]}
    with pytest.raises(midturn.InvalidAsk) as caught:
        midturn.parse_ask(too_long, dialect="gemini")
    assert caught.value.problems[0].path == "questions[0].header"


def test_multiselect_and_the_other_hint() -> None:
    (docs,) = midturn.parse_ask(p.GEMINI_MULTI, dialect="gemini").questions
    assert docs.multi and docs.labels == ["User Guide", "API Reference"]
    assert docs.placeholder is None  # the Other hint has no canonical place


@pytest.mark.parametrize(
    ("question", "path"),
    [
        ({"question": "Pick one?", "header": "Choice", "type": "dropdown"}, "questions[0].type"),
        ({"question": "Pick one?", "header": "Choice", "type": "choice"}, "questions[0].options"),
        (
            {
                "question": "Pick one?",
                "header": "Choice",
                "type": "choice",
                "options": [{"label": "A", "description": "a"}],
            },
            "questions[0].options",
        ),
    ],
)
def test_what_gemini_refuses_is_refused(question: dict[str, object], path: str) -> None:
    with pytest.raises(midturn.InvalidAsk) as caught:
        midturn.parse_ask({"questions": [question]}, dialect="gemini")
    assert caught.value.problems[0].path == path


def test_a_text_or_yesno_questions_options_are_ignored() -> None:
    options = [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}]
    payload = {
        "questions": [
            {"question": "Name?", "header": "Name", "type": "text", "options": options},
            {"question": "Go?", "header": "Go", "type": "yesno", "options": options},
        ]
    }
    name, go = midturn.parse_ask(payload, dialect="gemini").questions
    assert name.kind == "text" and go.labels == ["Yes", "No"]


def test_answers_are_keyed_by_question_index() -> None:
    result = midturn.parse_answer(ask(), {"answers": ["SQLite", "my-app", "Yes"]})
    out = midturn.render(result, dialect="gemini")
    assert out.data == {"answers": {"0": "SQLite", "1": "my-app", "2": "Yes"}}
    assert json.loads(out.text) == out.data


def test_a_skipped_question_is_left_out_and_several_choices_are_joined() -> None:
    multi = midturn.parse_ask(p.GEMINI_MULTI, dialect="gemini")
    result = midturn.parse_answer(multi, {"answers": [["User Guide", "API Reference"]]})
    assert midturn.render(result, dialect="gemini").data == {
        "answers": {"0": "User Guide, API Reference"}
    }
    partial = midturn.parse_answer(ask(), {"answers": [None, "my-app", "No"]})
    assert midturn.render(partial, dialect="gemini").data == {"answers": {"1": "my-app", "2": "No"}}


def test_all_skipped_reads_as_geminis_dismissal_with_the_nudge() -> None:
    out = midturn.render(midturn.parse_answer(ask(), {"skip": True}), dialect="gemini")
    assert out.text == f"User dismissed ask_user dialog without answering. {PROCEED}"
    assert out.data == {"answers": {}}
