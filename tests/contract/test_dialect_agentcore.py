"""The agentcore dialect: Strands' ask_user_question, answers reported by header."""

from __future__ import annotations

import pytest

import midturn

from . import _payloads as p
from ._results import uniform


def ask() -> midturn.Ask:
    return midturn.parse_ask(p.AGENTCORE, dialect="agentcore")


def test_input_keeps_headers_and_multiselect() -> None:
    parsed = ask()
    assert [q.header for q in parsed.questions] == ["Database", "Features", "Region"]
    assert [q.multi for q in parsed.questions] == [False, True, False]
    assert parsed.warnings == ()


def test_answers_by_header_render_as_lines_with_typed_text_quoted() -> None:
    result = midturn.parse_answer(
        ask(),
        {
            "answers": {
                "Database": "PostgreSQL",
                "Features": {"selected": ["Auth"], "text": "Audit log"},
                "Region": None,
            }
        },
    )
    out = midturn.render(result, dialect="agentcore")
    assert out.text == (
        "The user answered:\n"
        "- Database: PostgreSQL\n"
        '- Features: Auth, "Audit log"\n'
        "- Region: (no answer — the user skipped this)"
    )
    assert out.data is None
    assert out.is_error is False


def test_all_skipped_reads_one_skipped_line_per_question() -> None:
    out = midturn.render(midturn.parse_answer(ask(), {"skipped": True}), dialect="agentcore")
    assert out.text.splitlines() == [
        "The user answered:",
        "- Database: (no answer — the user skipped this)",
        "- Features: (no answer — the user skipped this)",
        "- Region: (no answer — the user skipped this)",
    ]


def test_a_timeout_reads_as_the_canonical_sentence() -> None:
    out = midturn.render(uniform(ask(), "timed_out", "timed_out"), dialect="agentcore")
    assert out.text.startswith("The user did not answer the questions in time.")


def test_a_missing_header_is_refused_with_its_path() -> None:
    payload = {
        "questions": [
            p.AGENTCORE["questions"][0],
            {k: v for k, v in p.AGENTCORE["questions"][1].items() if k != "header"},
        ]
    }
    with pytest.raises(midturn.InvalidAsk) as caught:
        midturn.parse_ask(payload, dialect="agentcore")
    assert [problem.path for problem in caught.value.problems] == ["questions[1].header"]
    assert "12 characters" in str(caught.value)
