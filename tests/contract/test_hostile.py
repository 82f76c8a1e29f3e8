"""Hostile input to the pure contract: every fault is an `InvalidAsk` or an
`InvalidAnswer` naming it, never another exception (which a gateway would turn into a
500), and never a value that cannot be stored or sent."""

from __future__ import annotations

from typing import Any

import pytest

import midturn

from . import _payloads as p

LONE = "\ud800"  # what JSON "\ud800" parses to: a lone UTF-16 surrogate, not text


@pytest.mark.parametrize("kind", [[], ["single_choice"], {}, {"a": 1}])
@pytest.mark.parametrize("dialect", ["neo", "pi-legacy", "midturn", "auto"])
def test_a_kind_that_is_a_list_or_an_object_is_an_invalid_ask(kind: Any, dialect: str) -> None:
    inputs = {
        "neo": {**p.NEO, "kind": kind},
        "pi-legacy": {**p.PI_SELECT, "kind": kind},
        "midturn": {"questions": [{"question": p.DB, "options": ["A", "B"], "kind": kind}]},
    }
    for data in inputs.values() if dialect == "auto" else [inputs[dialect]]:
        with pytest.raises(midturn.InvalidAsk) as caught:
            midturn.parse_ask(data, dialect=dialect)
        assert any(problem.path.endswith("kind") for problem in caught.value.problems)


@pytest.mark.parametrize(
    "tool_input",
    [
        {"questions": [{"question": f"Which one{LONE}?", "options": ["A", "B"]}]},
        {"questions": [{"question": p.DB, "options": ["A", f"B{LONE}"]}]},
        {"questions": [{"question": p.DB, "options": ["A", "B"], f"extra{LONE}": 1}]},
        {**p.NEO, "description": LONE},
    ],
)
def test_a_lone_surrogate_in_an_ask_is_an_invalid_ask(tool_input: dict[str, Any]) -> None:
    with pytest.raises(midturn.InvalidAsk) as caught:
        midturn.parse_ask(tool_input, dialect="auto")
    (problem,) = caught.value.problems
    assert "lone UTF-16 surrogate" in problem.message
    str(caught.value).encode("utf-8")  # the refusal itself is text


def test_a_pair_of_surrogates_is_text() -> None:
    question = "Ship it 😀?"  # JSON "\ud83d\ude00": one character
    ask = midturn.parse_ask({"questions": [{"question": question, "options": ["A", "B"]}]})
    assert ask.questions[0].question == question


@pytest.mark.parametrize(
    "payload",
    [
        LONE,
        {"answers": {"name": f"billing{LONE}"}},
        {"answers": {"db": {"selected": [], "text": LONE}}},
        {"redirect": f"use MySQL{LONE}"},
        {"question_id": "db", "status": "answered", "values": [LONE], "message": None},
    ],
)
def test_a_lone_surrogate_in_an_answer_is_an_invalid_answer(payload: Any) -> None:
    ask = midturn.parse_ask(
        {
            "questions": [
                {"id": "db", "question": p.DB, "options": ["PostgreSQL", "SQLite"]},
                {"id": "name", "question": "What should it be called?"},
            ]
        }
    )
    if payload == LONE:
        ask = midturn.parse_ask({"questions": [{"question": "Name?"}]})
    with pytest.raises(midturn.InvalidAnswer) as caught:
        midturn.parse_answer(ask, payload)
    assert "lone UTF-16 surrogate" in caught.value.reason


def test_a_lone_surrogate_in_a_secret_answer_is_refused_too() -> None:
    ask = midturn.parse_ask({"questions": [{"question": "Token?", "secret": True}]})
    with pytest.raises(midturn.InvalidAnswer):
        midturn.parse_answer(ask, f"hunter{LONE}")


@pytest.mark.parametrize("seconds", [3e11, 1e300, 10**400, 365 * 24 * 3600 + 1])
def test_a_timeout_beyond_a_year_is_an_invalid_ask(seconds: float) -> None:
    with pytest.raises(midturn.InvalidAsk) as caught:
        midturn.parse_ask({"questions": [{"question": "Name?"}], "timeout_s": seconds})
    assert "at most 31536000" in caught.value.problems[0].message
    with pytest.raises(midturn.InvalidAsk):
        midturn.parse_ask({**p.NEO, "timeout_sec": seconds}, dialect="neo")
    with pytest.raises(midturn.InvalidAsk):
        midturn.parse_ask({**p.PI_SELECT, "timeoutMs": seconds * 1000}, dialect="pi-legacy")


def test_a_timeout_of_a_year_is_accepted() -> None:
    ask = midturn.parse_ask({"questions": [{"question": "Name?"}], "timeout_s": 365 * 24 * 3600})
    assert ask.timeout_s == 365 * 24 * 3600
