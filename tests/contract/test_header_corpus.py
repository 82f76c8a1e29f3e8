"""Headers derived from real-looking questions keep their subject
(docs/contract.md#derived-headers): `Enable caching for the API responses?` is `Caching`,
not `Enable`, so the answer line reads `Caching: No`.

The corpus (data/header_corpus.json) holds each question, the header expected at the
default limit of 12 characters, and the words that say what the question is about: the
header must contain one of them. Yes/no, which/what, "Should I…", "Do you want…",
alternatives and questions of several sentences are all there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import midturn
from midturn import Limits
from midturn.contract._render import canonical_text

CORPUS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "header_corpus.json").read_text(encoding="utf-8")
)


def header_for(question: str, limit: int = 12) -> str:
    ask = midturn.parse_ask(
        {"questions": [{"question": question, "options": ["Yes", "No"]}]},
        dialect="midturn",
        limits=Limits(max_header_chars=limit),
    )
    return ask.questions[0].header


def test_the_corpus_is_large_and_varied() -> None:
    questions = [row["question"] for row in CORPUS]
    assert len(questions) >= 60 and len(set(questions)) == len(questions)
    starts = {question.split()[0].casefold() for question in questions}
    assert {"should", "do", "which", "what", "is", "can", "would", "how"} <= starts
    assert sum(1 for q in questions if ". " in q) >= 4  # several sentences
    assert sum(1 for q in questions if " or " in q) >= 8  # alternatives


@pytest.mark.parametrize("row", CORPUS, ids=[row["question"][:40] for row in CORPUS])
def test_each_header_is_the_expected_one_and_keeps_the_subject(row: dict[str, Any]) -> None:
    header = header_for(row["question"])
    assert header == row["header"]
    assert len(header) <= 12
    assert any(word in header.casefold() for word in row["subject"]), (row, header)


@pytest.mark.parametrize("limit", [16, 20, 30, 40])
def test_with_more_room_no_header_loses_its_subject(limit: int) -> None:
    lost = [
        (row["question"], header)
        for row in CORPUS
        if not any(
            word in (header := header_for(row["question"], limit)).casefold()
            for word in row["subject"]
        )
    ]
    assert lost == []


def test_the_answer_line_reads_as_a_sentence_not_enable_no() -> None:
    ask = midturn.parse_ask(
        {
            "questions": [
                {"question": "Enable caching for the API responses?", "options": ["Yes", "No"]}
            ]
        },
        dialect="midturn",
    )
    result = midturn.parse_answer(ask, {ask.questions[0].id: "No"})
    assert result.answers[0].header == "Caching"
    assert "- Caching: No" in canonical_text(result)  # the line the model reads
