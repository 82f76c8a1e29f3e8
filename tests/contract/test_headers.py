"""Headers derived from the question: never cut mid-word, always distinct
(docs/contract.md#the-canonical-ask)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import midturn
from midturn import Limits


def parse(data: dict[str, Any], limits: Limits | None = None) -> midturn.Ask:
    return midturn.parse_ask(data, dialect="midturn", limits=limits)


def header_for(question: str, limit: int = 12) -> str:
    ask = parse({"questions": [{"question": question}]}, Limits(max_header_chars=limit))
    return ask.questions[0].header


@pytest.mark.parametrize(
    ("question", "header"),
    [
        ("Which database should the service use?", "Database"),
        ("What should the service be called?", "Service"),
        ("Deploy to production now?", "Deploy"),
        ("Internationalization strategy?", "Strategy"),
        ("Which region do you want?", "Region"),
        ("Auth method for the admin API?", "Auth method"),
        ("Name?", "Name"),
        ("Enable caching for the API responses?", "Caching"),  # not "Enable"
        ("Enable dark mode?", "Dark mode"),
        ("Is it OK to push to main?", "Push to main"),
        ("Tabs or spaces?", "Tabs/spaces"),
    ],
)
def test_derived_headers(question: str, header: str) -> None:
    assert header_for(question) == header


def test_only_a_question_without_any_fitting_word_gets_a_marked_cut() -> None:
    assert header_for("Supercalifragilistic?") == "Supercalifr…"
    assert header_for("Internationalization?", limit=5) == "Inte…"


def test_a_question_without_words_gets_a_numbered_header() -> None:
    assert header_for("???") == "Q1"


words = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=18
)


@settings(max_examples=300, deadline=None)
@given(st.lists(words, min_size=2, max_size=12), st.integers(min_value=1, max_value=40))
def test_derived_headers_never_end_mid_word(parts: list[str], limit: int) -> None:
    question = " ".join(parts) + "?"
    header = header_for(question, limit)
    assert 0 < len(header) <= limit
    if any(len(word) <= limit for word in parts):
        # whole words of the question, in its order (a verb and its object may skip the
        # words between them; alternatives may be joined with "/")
        chosen = header.casefold().replace("/", " ").split(" ")
        remaining = iter(word.casefold() for word in parts)
        assert all(word in remaining for word in chosen), (question, header)
    else:
        assert header.endswith("…") or len(header) == limit


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=200), st.integers(min_value=1, max_value=40))
def test_any_question_gets_a_header_within_the_limit(question: str, limit: int) -> None:
    if not question.strip():
        return
    assert 0 < len(header_for(question, limit)) <= limit


def test_identical_questions_get_distinct_headers() -> None:
    question = {"question": "Which database should the service use?", "options": ["A", "B"]}
    ask = parse({"questions": [question, question, question]})
    assert [q.header for q in ask.questions] == ["Database", "Database 2", "Database 3"]
    assert ask.warnings == tuple(
        f"questions[{i}].options: options given as strings; read each as a label" for i in range(3)
    )


def test_given_headers_that_repeat_get_a_suffix_with_a_warning() -> None:
    ask = parse(
        {
            "questions": [
                {"header": "Database", "question": "Primary database?"},
                {"header": "database", "question": "Replica database?"},
            ]
        }
    )
    assert [q.header for q in ask.questions] == ["Database", "database 2"]
    assert ask.warnings == ("questions[1].header: 'database' repeats; renamed 'database 2'",)


def test_a_derived_header_steps_around_a_given_one() -> None:
    ask = parse(
        {
            "questions": [
                {"question": "Which database should we use?"},
                {"header": "Database", "question": "Name?"},
            ]
        }
    )
    assert [q.header for q in ask.questions] == ["Database 2", "Database"]


def test_a_suffix_shortens_by_whole_words_or_falls_back_to_the_number() -> None:
    same = {"question": "Environments?"}
    ask = parse({"questions": [same, same]})
    assert [q.header for q in ask.questions] == ["Environments", "Q2"]
    pair = {"question": "Auth method for the admin API?"}
    ask = parse({"questions": [pair, pair]})
    assert [q.header for q in ask.questions] == ["Auth method", "Auth 2"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                ["Which database?", "Database?", "Which region?", "Auth method?", "Q2?"]
            ),
            st.one_of(st.none(), st.sampled_from(["Database", "database 2", "Region", "Q2", "A"])),
        ),
        min_size=1,
        max_size=8,
    ),
    st.integers(min_value=2, max_value=40),
)
def test_headers_are_always_distinct_and_fit(
    pairs: list[tuple[str, str | None]], limit: int
) -> None:
    questions = [
        {"question": text, **({"header": header} if header is not None else {})}
        for text, header in pairs
    ]
    try:
        ask = parse({"questions": questions}, Limits(max_questions=8, max_header_chars=limit))
    except midturn.InvalidAsk:
        assert any(header is not None and len(header) > limit for _, header in pairs)
        return
    headers = [q.header.casefold() for q in ask.questions]
    assert len(set(headers)) == len(headers)
    assert all(0 < len(q.header) <= limit for q in ask.questions)


def test_answers_keyed_by_a_suffixed_header_reach_the_right_question() -> None:
    question = {"question": "Which database?", "options": ["PostgreSQL", "SQLite"]}
    ask = parse({"questions": [question, question]})
    result = midturn.parse_answer(ask, {"Database 2": "SQLite", "Database": "PostgreSQL"})
    assert [a.selected for a in result.answers] == [("PostgreSQL",), ("SQLite",)]
