"""What `midturn ask` prints for an ask that cannot be shown: the validator's facts in a
person's words and flags, each with its field path; the model's own text is unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import midturn

from .test_ask import run_plain

MODEL_WORDS = ("tool call", "call again", "the user", "Fix these")


def test_one_choice_says_what_to_add_in_flags() -> None:
    done = run_plain("ask", "Which database?", "-o", "PostgreSQL")
    assert done.returncode == 2
    said = done.stderr
    assert said.startswith("midturn ask: nothing was asked: the question needs fixing first.")
    assert "the choices (-o), at questions[0].options: 1 choice given; give 2–4" in said
    assert "Other (type your own answer) is always offered: leave it out." in said
    assert not any(words in said for words in MODEL_WORDS), said


def test_a_long_header_names_the_flag() -> None:
    done = run_plain("ask", "Which database?", "--header", "Database engine", "-o", "A", "-o", "B")
    assert done.returncode == 2
    assert "--header, at questions[0].header: 'Database engine' is 15 characters" in done.stderr
    assert "leave --header out to make one from the question" in done.stderr


def test_a_long_choice_names_its_number_and_the_way_to_describe_it() -> None:
    done = run_plain("ask", "Which?", "-o", "x" * 100, "-o", "B")
    assert done.returncode == 2
    assert "choice 1 (the -o number 1), at questions[0].options[0].label" in done.stderr
    assert "use --file" in done.stderr


def test_a_file_lists_every_problem_by_path_and_question(tmp_path: Path) -> None:
    bad = {
        "questions": [
            {"question": "Which one?", "options": [{"label": "a"}]},
            {"question": "", "header": "way too long a header"},
        ]
    }
    path = tmp_path / "ask.json"
    path.write_text(json.dumps(bad))
    done = run_plain("ask", "--file", str(path))
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert lines[0] == f"midturn ask: nothing was asked: the ask in {path} needs fixing first."
    assert lines[1].startswith("  - questions[0].options (question 1): 1 option given")
    assert any(line.startswith("  - questions[1].header (question 2):") for line in lines)
    assert any(line.startswith("  - questions[1].question (question 2): empty") for line in lines)
    assert not any(words in done.stderr for words in MODEL_WORDS)


def test_the_model_still_reads_its_own_words() -> None:
    with pytest.raises(midturn.InvalidAsk) as raised:
        midturn.parse_ask({"questions": [{"question": "Q?", "options": ["A"]}]}, dialect="midturn")
    text = str(raised.value)
    assert text.startswith("The question tool call was not shown to the user.")
    assert 'Do not add an "Other" option: the user can always type their own answer.' in text
