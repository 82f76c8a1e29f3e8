"""The codex dialect: Codex's `request_user_input`, answers keyed by id, notes as
`user_note:` entries."""

from __future__ import annotations

import json

import pytest

import midturn

from . import _payloads as p


def ask() -> midturn.Ask:
    return midturn.parse_ask(p.CODEX, dialect="codex")


def test_input_keeps_ids_headers_and_the_recommended_suffix() -> None:
    parsed = ask()
    db, region = parsed.questions
    assert (db.id, db.header, db.labels, db.recommended) == (
        "database",
        "Database",
        ["PostgreSQL", "SQLite"],
        0,
    )
    assert (region.id, region.allow_other, region.multi) == ("region", True, False)


def test_the_clients_own_fields_are_dropped_without_a_warning() -> None:
    first = {**p.CODEX["questions"][0], "isOther": True, "isSecret": False}
    parsed = midturn.parse_ask({"questions": [first]}, dialect="codex")
    assert not any("isOther" in w or "isSecret" in w for w in parsed.warnings)


@pytest.mark.parametrize("options", [None, []])
def test_a_question_without_options_is_refused_in_codexs_words(options: object) -> None:
    question = {"id": "name", "header": "Name", "question": "What name?"}
    if options is not None:
        question["options"] = options
    with pytest.raises(midturn.InvalidAsk) as caught:
        midturn.parse_ask({"questions": [question]}, dialect="codex")
    problem = caught.value.problems[0]
    assert problem.path == "questions[0].options"
    assert "requires non-empty options for every question" in problem.message


def test_at_most_three_questions_of_three_options() -> None:
    four = {"questions": [{**p.CODEX["questions"][1], "id": f"q{i}"} for i in range(4)]}
    with pytest.raises(midturn.InvalidAsk):
        midturn.parse_ask(four, dialect="codex")


def test_answers_keyed_by_id_with_the_note_as_user_note() -> None:
    result = midturn.parse_answer(ask(), {"answers": {"database": "SQLite", "region": "Mars"}})
    out = midturn.render(result, dialect="codex")
    assert out.data == {
        "answers": {
            "database": {"answers": ["SQLite"]},
            "region": {"answers": ["user_note: Mars"]},
        }
    }
    assert json.loads(out.text) == out.data


def test_a_skipped_question_has_an_empty_list() -> None:
    result = midturn.parse_answer(ask(), {"answers": {"database": "PostgreSQL", "region": None}})
    out = midturn.render(result, dialect="codex")
    assert out.data["answers"]["region"] == {"answers": []}


def test_all_skipped_reads_as_the_canonical_sentence() -> None:
    out = midturn.render(midturn.parse_answer(ask(), {"skip": True}), dialect="codex")
    assert out.text.startswith("The user skipped the questions.")
    assert out.data == {"answers": {"database": {"answers": []}, "region": {"answers": []}}}
