"""The deepagents dialect: deep agents' `ask_user`, Q/A blocks back."""

from __future__ import annotations

import pytest

import midturn

from . import _payloads as p

NAME = "What should the service be called?"


def ask() -> midturn.Ask:
    return midturn.parse_ask(p.DEEPAGENTS, dialect="deepagents")


def test_input_reads_types_and_choice_values() -> None:
    db, name = ask().questions
    assert (db.kind, db.labels, db.allow_other) == ("choice", ["PostgreSQL", "SQLite"], True)
    assert name.kind == "text"
    assert db.header and name.header  # derived: deep agents has none
    assert ask().warnings == ()


@pytest.mark.parametrize(
    ("question", "path", "fragment"),
    [
        ({"question": "Which?", "type": "dropdown"}, "questions[0].type", "'dropdown'"),
        ({"question": "Which?", "type": "multiple_choice"}, "questions[0].choices", "non-empty"),
        (
            {"question": "Name?", "type": "text", "choices": [{"value": "x"}]},
            "questions[0].choices",
            "takes no choices",
        ),
    ],
)
def test_what_deep_agents_refuses_is_refused(
    question: dict[str, object], path: str, fragment: str
) -> None:
    with pytest.raises(midturn.InvalidAsk) as caught:
        midturn.parse_ask({"questions": [question]}, dialect="deepagents")
    problem = caught.value.problems[0]
    assert problem.path == path and fragment in problem.message


def test_answers_read_as_q_and_a_blocks_in_order() -> None:
    result = midturn.parse_answer(ask(), {"answers": ["SQLite", "billing-api"]})
    out = midturn.render(result, dialect="deepagents")
    assert out.text == f"Q: {p.DB}\nA: SQLite\n\nQ: {NAME}\nA: billing-api"
    assert out.data is None


def test_a_skipped_question_reads_no_answer_and_a_cancelled_ask_cancelled() -> None:
    partial = midturn.parse_answer(ask(), {"answers": ["PostgreSQL", None]})
    assert midturn.render(partial, dialect="deepagents").text.endswith(f"Q: {NAME}\nA: (no answer)")
    cancelled = midturn.AskResult(
        outcome="cancelled",
        answers=tuple(
            midturn.QuestionAnswer(
                id=q.id, header=q.header, question=q.question, status="cancelled"
            )
            for q in ask().questions
        ),
    )
    text = midturn.render(cancelled, dialect="deepagents").text
    assert text == f"Q: {p.DB}\nA: (cancelled)\n\nQ: {NAME}\nA: (cancelled)"
