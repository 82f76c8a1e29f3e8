"""The omp dialect: the OMP-compatible `ask`, one- and several-question results."""

from __future__ import annotations

import midturn

from . import _payloads as p
from ._results import uniform

PROCEED = "Proceed with your best judgement, state the assumptions you made, and do not ask again."


def one() -> midturn.Ask:
    return midturn.parse_ask(p.OMP_ONE, dialect="omp")


def several() -> midturn.Ask:
    return midturn.parse_ask(p.OMP, dialect="omp")


def test_input_keeps_ids_and_reads_the_recommended_index() -> None:
    db, features = several().questions
    assert (db.id, db.recommended, db.multi) == ("db", 0, False)
    assert (features.id, features.header, features.multi) == ("features", "Features", True)


def test_the_reserved_other_label_is_dropped_with_a_warning() -> None:
    payload = {
        "questions": [
            {
                "id": "db",
                "question": p.DB,
                "options": [
                    {"label": "PostgreSQL"},
                    {"label": "SQLite"},
                    {"label": "Other (type your own)"},
                ],
            }
        ]
    }
    parsed = midturn.parse_ask(payload, dialect="omp")
    assert parsed.questions[0].labels == ["PostgreSQL", "SQLite"]
    assert any("Other (type your own)" in warning for warning in parsed.warnings)


def test_one_question_selected() -> None:
    out = midturn.render(midturn.parse_answer(one(), "SQLite"), dialect="omp")
    assert out.text == "User selected: SQLite"
    assert out.data == {"selectedOptions": ["SQLite"]}


def test_one_question_custom_input() -> None:
    out = midturn.render(midturn.parse_answer(one(), "CockroachDB"), dialect="omp")
    assert out.text == "User provided custom input: CockroachDB"
    assert out.data == {"selectedOptions": [], "customInput": "CockroachDB"}


def test_one_question_with_no_selection() -> None:
    optional = midturn.parse_ask(
        {
            "questions": [
                {
                    "id": "extras",
                    "question": p.FEATURES,
                    "options": ["Auth", "Billing"],
                    "multi": True,
                    "min_choices": 0,
                }
            ]
        }
    )
    out = midturn.render(midturn.parse_answer(optional, {"selected": []}), dialect="omp")
    assert out.text == "User answered with no selection."
    assert out.data == {"selectedOptions": []}


def test_one_question_skipped() -> None:
    out = midturn.render(midturn.parse_answer(one(), {"skip": True}), dialect="omp")
    assert out.text == f"User cancelled the question. {PROCEED}"
    assert out.data == {"selectedOptions": [], "cancelled": True}


def test_several_questions_one_line_each() -> None:
    result = midturn.parse_answer(several(), {"answers": {"db": "PostgreSQL", "features": [0, 1]}})
    out = midturn.render(result, dialect="omp")
    assert out.text == "User answers:\ndb: PostgreSQL\nfeatures: [Auth, Billing]"
    assert out.data == {
        "results": [
            {"id": "db", "question": p.DB, "selectedOptions": ["PostgreSQL"]},
            {"id": "features", "question": p.FEATURES, "selectedOptions": ["Auth", "Billing"]},
        ]
    }


def test_several_questions_custom_and_cancelled() -> None:
    result = midturn.parse_answer(several(), {"answers": {"db": "MySQL", "features": None}})
    out = midturn.render(result, dialect="omp")
    assert out.text == 'User answers:\ndb: "MySQL"\nfeatures: (cancelled)'
    assert out.data["results"][0]["customInput"] == "MySQL"
    assert out.data["results"][1] == {
        "id": "features",
        "question": p.FEATURES,
        "selectedOptions": [],
        "cancelled": True,
    }
    mixed = midturn.parse_answer(
        several(), {"answers": {"db": 1, "features": {"selected": ["Search"], "text": "Audit"}}}
    )
    assert midturn.render(mixed, dialect="omp").text == (
        'User answers:\ndb: SQLite\nfeatures: [Search, "Audit"]'
    )


def test_a_timeout_reads_as_the_canonical_sentence() -> None:
    out = midturn.render(uniform(several(), "timed_out", "timed_out"), dialect="omp")
    assert out.text.startswith("The user did not answer the questions in time.")
    assert [r["cancelled"] for r in out.data["results"]] == [True, True]
