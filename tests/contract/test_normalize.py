"""Normalization before validation (docs/contract.md#normalization): each fix applied and
reported."""

from __future__ import annotations

from typing import Any

import pytest

import midturn
from midturn import InvalidAsk


def parse(data: Any) -> midturn.Ask:
    return midturn.parse_ask(data, dialect="midturn")


def one(question: dict[str, Any]) -> midturn.Ask:
    return parse({"questions": [question]})


def labels(ask: midturn.Ask, position: int = 0) -> list[str]:
    return [option.label for option in ask.questions[position].options]


def test_whitespace_is_trimmed_and_newlines_folded_in_labels_and_headers() -> None:
    ask = one(
        {
            "header": " Data\nbase ",
            "question": "  Which database?\n",
            "options": [
                {"label": "  Postgre\n SQL "},
                {"label": "SQLite", "description": " fast "},
            ],
        }
    )
    question = ask.questions[0]
    assert (question.header, question.question) == ("Data base", "Which database?")
    assert labels(ask) == ["Postgre SQL", "SQLite"]
    assert question.options[1].description == "fast"
    assert ask.warnings == (
        "questions[0].header: folded line breaks into spaces",
        "questions[0].options[0].label: folded line breaks into spaces",
    )


def test_question_text_keeps_its_line_breaks() -> None:
    ask = one({"question": "Which plan?\nA is cheap, B is fast.", "options": ["A", "B"]})
    assert ask.questions[0].question == "Which plan?\nA is cheap, B is fast."


@pytest.mark.parametrize(
    "escape",
    [
        "Other",
        "other",
        "Other (please specify)",
        "Other (type your own)",
        "Other…",
        "other:",
        "Other - write in",
        "Something else",
        "None of the above",
        "None of these",
        "Skip",
        "Skip this question",
        "No preference",
        "Not sure",
        "I'm not sure",
        "I don't know",
        "I don’t know / Not sure",
        "Unsure",
        "You decide",
        "Up to you",
        "Either is fine",
        "Doesn't matter",
        "Custom (type your own)",
    ],
)
def test_escape_options_are_dropped_and_reported(escape: str) -> None:
    ask = one({"question": "Which database?", "options": ["PostgreSQL", "SQLite", escape]})
    assert labels(ask) == ["PostgreSQL", "SQLite"]
    assert ask.warnings[-1] == (
        f"questions[0].options[2]: dropped {escape!r}: the client offers Other and Skip itself"
    )


@pytest.mark.parametrize(
    "label",
    ["Other teams' repos", "Skip tests", "Something different", "None", "Custom domain", "Any"],
)
def test_real_options_that_look_like_escapes_are_kept(label: str) -> None:
    ask = one({"question": "Which one?", "options": [label, "Keep it as it is"]})
    assert labels(ask) == [label, "Keep it as it is"]
    assert ask.warnings == ("questions[0].options: options given as strings; read each as a label",)


def test_the_recommended_suffix_moves_to_recommended() -> None:
    ask = one({"question": "Which database?", "options": ["PostgreSQL", "SQLite (Recommended)"]})
    assert labels(ask) == ["PostgreSQL", "SQLite"]
    assert ask.questions[0].recommended == 1
    assert "questions[0].options[1].label: moved the '(Recommended)' suffix to recommended" in (
        ask.warnings
    )


def test_the_recommended_suffix_agrees_with_an_explicit_recommendation() -> None:
    ask = one(
        {
            "question": "Which database?",
            "options": [{"label": "PostgreSQL [recommended]"}, {"label": "SQLite"}],
            "recommended": "PostgreSQL",
        }
    )
    assert (labels(ask), ask.questions[0].recommended) == (["PostgreSQL", "SQLite"], 0)


def test_a_repeated_label_is_dropped_keeping_the_first() -> None:
    ask = one(
        {
            "question": "Which database?",
            "options": [
                {"label": "PostgreSQL", "description": "first"},
                {"label": "SQLite"},
                {"label": "postgresql", "description": "second"},
            ],
        }
    )
    assert [(o.label, o.description) for o in ask.questions[0].options] == [
        ("PostgreSQL", "first"),
        ("SQLite", None),
    ]
    assert ask.warnings == (
        "questions[0].options[2]: dropped 'postgresql': the same label as options[0]",
    )


def test_a_recommended_index_counts_the_options_that_remain() -> None:
    ask = one(
        {"question": "Which database?", "options": ["Other", "PostgreSQL", "SQLite (Recommended)"]}
    )
    assert ask.questions[0].recommended == 1
    assert labels(ask)[1] == "SQLite"


def test_multiselect_means_multi() -> None:
    ask = one({"question": "Which features?", "multiSelect": True, "options": ["Auth", "Billing"]})
    assert ask.questions[0].multi is True
    assert "questions[0].multiSelect: read as multi: true" in ask.warnings
    single = one({"question": "Which?", "multiSelect": False, "options": ["A", "B"]})
    assert single.questions[0].multi is False


def test_a_choice_question_left_without_options_is_an_error() -> None:
    with pytest.raises(InvalidAsk) as caught:
        one({"question": "Anything else?", "options": ["Other", "Not sure", "Skip"]})
    (problem,) = caught.value.problems
    assert problem.path == "questions[0].options"
    assert problem.message.startswith(
        "0 options left after dropping 'Other', 'Not sure', 'Skip', which the client adds itself"
    )
    assert 'Do not add an "Other" option' in problem.message


def test_one_option_left_after_dropping_explains_why() -> None:
    with pytest.raises(InvalidAsk) as caught:
        one({"question": "Proceed?", "options": ["Yes", "Other (please specify)"]})
    assert caught.value.problems[0].message.startswith(
        "1 option left after dropping 'Other (please specify)', which the client adds itself; "
        "give 2–4 mutually exclusive options."
    )


def test_unknown_keys_are_ignored_with_a_warning() -> None:
    ask = parse(
        {
            "questions": [
                {"question": "Which?", "options": [{"label": "A", "emoji": "x"}, "B"], "why": "..."}
            ],
            "reasoning": "I need to know",
        }
    )
    assert ask.warnings == (
        "reasoning: unknown field, ignored",
        "questions[0].why: unknown field, ignored",
        "questions[0].options[0].emoji: unknown field, ignored",
        "questions[0].options: options given as strings; read each as a label",
    )


def test_one_question_object_is_read_as_a_list_of_one() -> None:
    ask = parse({"questions": {"question": "Which?", "options": ["A", "B"]}})
    assert len(ask.questions) == 1
    assert ask.warnings[0] == "questions: one question object given; read it as a list of one"


def test_an_ask_with_nothing_to_fix_has_no_warnings() -> None:
    ask = one({"question": "Which?", "options": [{"label": "A"}, {"label": "B"}]})
    assert ask.warnings == ()


def test_many_unknown_keys_are_counted_not_listed() -> None:
    data: dict[str, Any] = {"questions": [{"question": "Name?"}]}
    data.update({f"note{i}": i for i in range(8)})
    ask = parse(data)
    assert ask.warnings[:5] == tuple(f"note{i}: unknown field, ignored" for i in range(5))
    assert ask.warnings[5:] == ("(input): 3 more unknown fields, ignored",)


def test_options_left_after_dropping_repeats_say_so() -> None:
    with pytest.raises(InvalidAsk) as caught:
        one({"question": "Which?", "options": ["Yes", "yes", "YES", "Other"]})
    assert caught.value.problems[0].message.startswith(
        "1 option left after dropping 'Other', which the client adds itself and 2 repeated labels;"
    )


@pytest.mark.parametrize(
    ("label", "escape"),
    [
        ("Other", True),
        ("OTHERS", True),
        ("skip", True),
        ("Either", True),
        ("UNSURE", True),
        ("Unsure2", False),
        ("Otherwise", False),
        ("PostgreSQL", False),
        ("S3", False),
        ("Other:", True),
        ("Skip!", True),
        ("Don't", False),
    ],
)
def test_a_one_word_label_is_an_escape_whatever_its_case(label: str, escape: bool) -> None:
    """A label of letters and digits only is compared as it is, lower-cased (nothing in it
    to fold or translate); one with punctuation goes the long way; both agree."""
    ask = one({"question": "Which one?", "options": [label, "Keep it", "Change it"]})
    assert (labels(ask) == ["Keep it", "Change it"]) is escape
