"""Strict validation of a model's ask (docs/contract.md#the-canonical-ask,
docs/contract.md#strict-validation), through `midturn.parse_ask`."""

from __future__ import annotations

from typing import Any

import pytest

import midturn
from midturn import InvalidAsk, Limits


def parse(data: Any, limits: Limits | None = None) -> midturn.Ask:
    return midturn.parse_ask(data, dialect="midturn", limits=limits)


def problems(data: Any, limits: Limits | None = None) -> dict[str, str]:
    with pytest.raises(InvalidAsk) as caught:
        parse(data, limits)
    return {problem.path: problem.message for problem in caught.value.problems}


def choice(
    question: str = "Which database should the service use?", **extra: Any
) -> dict[str, Any]:
    return {
        "question": question,
        "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}],
        **extra,
    }


CANONICAL_EXAMPLE = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use?",
            "options": [
                {"label": "PostgreSQL", "description": "Managed, scales out"},
                {"label": "SQLite", "description": "Embedded, zero setup"},
            ],
            "multi": False,
            "recommended": "PostgreSQL",
        },
        {"id": "name", "question": "What should the service be called?", "kind": "text"},
    ],
    "timeout_s": None,
}


def test_the_spec_example_is_accepted_as_written() -> None:
    ask = parse(CANONICAL_EXAMPLE)
    db, name = ask.questions
    assert (db.id, db.header, db.kind, db.multi, db.recommended) == (
        "db",
        "Database",
        "choice",
        False,
        0,
    )
    assert [(o.label, o.description) for o in db.options] == [
        ("PostgreSQL", "Managed, scales out"),
        ("SQLite", "Embedded, zero setup"),
    ]
    assert (name.id, name.kind, name.options, name.allow_other) == ("name", "text", (), True)
    assert name.header and len(name.header) <= 12
    assert (ask.timeout_s, ask.on_timeout, ask.dialect, ask.warnings) == (
        None,
        "skip",
        "midturn",
        (),
    )


def test_defaults_ids_kinds_and_choices() -> None:
    ask = parse(
        {"questions": [choice(), {"question": "Service name?"}, choice("Features?", multi=True)]}
    )
    assert [q.id for q in ask.questions] == ["q1", "q2", "q3"]
    assert [q.kind for q in ask.questions] == ["choice", "text", "choice"]
    features = ask.questions[2]
    assert (features.min_choices, features.max_choices, features.allow_other) == (1, None, True)


def test_a_default_id_steps_around_a_given_one() -> None:
    ask = parse({"questions": [choice(), choice("Which cache?", id="q1")]})
    assert [q.id for q in ask.questions] == ["q1_2", "q1"]


def test_every_problem_is_reported_at_once() -> None:
    found = problems(
        {
            "questions": [
                {"question": "Pick one", "options": [{"label": "A"}]},
                {"question": "  ", "kind": "list"},
                {"question": "Secret choice?", "secret": True, "options": ["A", "B"]},
                "not an object",
            ],
            "timeout_s": 0,
            "on_timeout": "later",
        }
    )
    assert set(found) == {
        "questions[0].options",
        "questions[1].question",
        "questions[1].kind",
        "questions[2].secret",
        "questions[3]",
        "timeout_s",
        "on_timeout",
    }


def test_too_few_options_reads_as_the_spec_example() -> None:
    found = problems({"questions": [choice(), {"question": "Deploy?", "options": ["Now"]}]})
    assert found["questions[1].options"] == (
        "1 option given; give 2–4 mutually exclusive options. Do not add an "
        '"Other" option: the user can always type their own answer.'
    )


def test_the_error_text_is_written_for_the_model() -> None:
    with pytest.raises(InvalidAsk) as caught:
        parse({"questions": []})
    text = str(caught.value)
    assert text.startswith("The question tool call was not shown to the user.")
    assert "- questions: empty list given; give 1–4 questions" in text
    assert caught.value.to_list() == [
        {"path": "questions", "message": "empty list given; give 1–4 questions"}
    ]


@pytest.mark.parametrize("data", [None, [], "ask me", 3, True])
def test_input_that_is_not_an_object_is_refused(data: Any) -> None:
    with pytest.raises(InvalidAsk) as caught:
        parse(data)
    assert '{"questions": [...]}' in str(caught.value)


@pytest.mark.parametrize(
    ("questions", "message"),
    [
        (None, "missing; give a list of 1–4 questions"),
        ("Which one?", "a string given; give a list of 1–4 questions"),
        ([], "empty list given; give 1–4 questions"),
    ],
)
def test_the_questions_list_itself(questions: Any, message: str) -> None:
    assert problems({"questions": questions}) == {"questions": message}


def test_too_many_questions_respects_the_host_limits() -> None:
    five = {"questions": [choice(f"Question {i}?") for i in range(5)]}
    assert "5 questions given; ask at most 4" in problems(five)["questions"]
    assert len(parse(five, Limits(max_questions=8)).questions) == 5
    assert (
        "ask at most 2"
        in problems({"questions": five["questions"][:3]}, Limits(max_questions=2))["questions"]
    )


@pytest.mark.parametrize("bad", ["has space", "", "x" * 65, "émoji", 1.5, ["a"]])
def test_question_ids_must_be_short_plain_strings(bad: Any) -> None:
    assert "questions[0].id" in problems({"questions": [choice(id=bad)]})


def test_question_ids_must_be_unique() -> None:
    found = problems({"questions": [choice(id="db"), choice("Which cache?", id="db")]})
    assert found == {
        "questions[1].id": "'db' is also the id of questions[0]; give each question a unique "
        "id, or leave ids out"
    }


def test_a_numeric_id_is_read_as_a_string() -> None:
    ask = parse({"questions": [choice(id=7)]})
    assert ask.questions[0].id == "7"
    assert ask.warnings == ("questions[0].id: number 7 read as the id '7'",)


def test_a_long_header_is_refused_not_cut() -> None:
    found = problems({"questions": [choice(header="Database engine")]})
    assert found["questions[0].header"].startswith("'Database engine' is 15 characters")
    assert parse({"questions": [choice(header="Database")]}).questions[0].header == "Database"


def test_question_text_length_counts_after_trimming() -> None:
    assert parse({"questions": [{"question": "  " + "x" * 500 + "\n"}]}).questions[0].question == (
        "x" * 500
    )
    assert (
        "501 characters"
        in problems({"questions": [{"question": "x" * 501}]})["questions[0].question"]
    )
    assert problems({"questions": [{"question": 42}]}) == {
        "questions[0].question": "a number given; give a string"
    }
    assert problems({"questions": [{"header": "Name"}]}) == {
        "questions[0].question": "missing; give a non-empty string"
    }


def test_kind_and_options_must_agree() -> None:
    assert (
        "remove them"
        in problems({"questions": [{"question": "Name?", "kind": "text", "options": ["A", "B"]}]})[
            "questions[0].options"
        ]
    )
    assert problems({"questions": [{"question": "Which?", "kind": "choice"}]}) == {
        "questions[0].options": 'no options given; give 2–4 options, or set kind to "text"'
    }
    assert parse({"questions": [{"question": "Name?", "options": []}]}).questions[0].kind == "text"


def test_option_limits() -> None:
    many = {"question": "Pick?", "options": [f"Choice {i}" for i in range(5)]}
    assert problems({"questions": [many]})["questions[0].options"] == (
        "5 options given; give at most 4: keep the likeliest"
    )
    assert len(parse({"questions": [many]}, Limits(max_options=10)).questions[0].options) == 5
    tight = Limits(max_options=3)
    assert (
        "give at most 3"
        in problems({"questions": [{**many, "options": many["options"][:4]}]}, tight)[
            "questions[0].options"
        ]
    )
    long_label = {"question": "Pick?", "options": ["x" * 81, "B"]}
    assert "81 characters" in problems({"questions": [long_label]})["questions[0].options[0].label"]
    long_text = {"question": "Pick?", "options": [{"label": "A", "description": "d" * 241}, "B"]}
    assert (
        "241 characters"
        in problems({"questions": [long_text]})["questions[0].options[0].description"]
    )
    ok = {"question": "Pick?", "options": [{"label": "x" * 80, "description": "d" * 240}, "B"]}
    assert parse({"questions": [ok]}).questions[0].options[0].description == "d" * 240


def test_option_ids_must_be_unique() -> None:
    options = [{"label": "A", "id": "a"}, {"label": "B", "id": "a"}]
    found = problems({"questions": [{"question": "Pick?", "options": options}]})
    assert list(found) == ["questions[0].options[1].id"]


def test_options_must_be_objects() -> None:
    found = problems({"questions": [{"question": "Pick?", "options": [1, "B", "C"]}]})
    assert found == {"questions[0].options[0]": 'a number given; give an object {"label": ...}'}
    assert problems({"questions": [{"question": "Pick?", "options": "A or B"}]}) == {
        "questions[0].options": "a string given; give a list of 2–4 options"
    }


def test_multi_choice_bounds() -> None:
    three = {"question": "Features?", "multi": True, "options": ["Auth", "Billing", "Search"]}
    ask = parse({"questions": [{**three, "min_choices": 0, "max_choices": 2}]})
    assert (ask.questions[0].min_choices, ask.questions[0].max_choices) == (0, 2)
    assert list(problems({"questions": [{**three, "min_choices": 3, "max_choices": 2}]})) == [
        "questions[0].min_choices"
    ]
    assert list(problems({"questions": [{**three, "max_choices": 4}]})) == [
        "questions[0].max_choices"
    ]
    assert list(problems({"questions": [{**three, "min_choices": -1}]})) == [
        "questions[0].min_choices"
    ]
    assert list(problems({"questions": [{**three, "max_choices": 0}]})) == [
        "questions[0].max_choices"
    ]
    single = {**three, "multi": False, "max_choices": 2}
    assert "set multi: true" in problems({"questions": [single]})["questions[0].max_choices"]
    assert list(problems({"questions": [{**three, "multi": "yes"}]})) == ["questions[0].multi"]


@pytest.mark.parametrize(
    ("recommended", "index"),
    [("SQLite", 1), ("sqlite", 1), (" SQLite (Recommended) ", 1), (0, 0), ("1", 1)],
)
def test_recommended_becomes_an_index(recommended: Any, index: int) -> None:
    assert parse({"questions": [choice(recommended=recommended)]}).questions[0].recommended == index


@pytest.mark.parametrize(
    ("recommended", "fragment"),
    [
        ("MySQL", "'MySQL' is not an option; give one of 'PostgreSQL', 'SQLite'"),
        (2, "index 2 given; give a 0-based index below 2"),
        (-1, "index -1 given"),
        (True, "a boolean given"),
    ],
)
def test_recommended_must_name_an_option(recommended: Any, fragment: str) -> None:
    assert (
        fragment
        in problems({"questions": [choice(recommended=recommended)]})["questions[0].recommended"]
    )


def test_two_recommendations_are_refused() -> None:
    options = [{"label": "A (Recommended)"}, {"label": "B"}]
    found = problems({"questions": [{"question": "Pick?", "options": options, "recommended": "B"}]})
    assert found == {
        "questions[0].recommended": "'A', 'B' are all recommended; recommend at most one option"
    }


def test_text_only_and_choice_only_fields() -> None:
    found = problems(
        {
            "questions": [
                choice(placeholder="type here"),
                {"question": "Name?", "multi": True, "recommended": "x", "min_choices": 1},
            ]
        }
    )
    assert set(found) == {
        "questions[0].placeholder",
        "questions[1].multi",
        "questions[1].recommended",
        "questions[1].min_choices",
    }
    secret = parse(
        {"questions": [{"question": "API token?", "secret": True, "placeholder": "sk-..."}]}
    )
    assert (secret.questions[0].secret, secret.questions[0].placeholder) == (True, "sk-...")


def test_allow_other_is_a_flag() -> None:
    ask = parse({"questions": [choice(allow_other=False)]})
    assert ask.questions[0].allow_other is False
    assert problems({"questions": [choice(allow_other="no")]}) == {
        "questions[0].allow_other": "a string given; give true or false"
    }


@pytest.mark.parametrize("timeout", [0, -5, True, "60", float("inf"), float("nan"), 10**400])
def test_bad_timeouts(timeout: Any) -> None:
    assert list(problems({"questions": [choice()], "timeout_s": timeout})) == ["timeout_s"]


def test_timeout_is_bounded_by_the_host() -> None:
    limits = Limits(max_timeout_s=300)
    assert parse({"questions": [choice()], "timeout_s": 300}, limits).timeout_s == 300.0
    assert problems({"questions": [choice()], "timeout_s": 301}, limits) == {
        "timeout_s": "301 given; give seconds above 0 and at most 300, or null"
    }
    assert parse({"questions": [choice()], "timeout_s": 86_400}).timeout_s == 86_400.0


def test_on_timeout() -> None:
    ask = parse({"questions": [choice()], "on_timeout": "recommended"})
    assert ask.on_timeout == "recommended"
    assert problems({"questions": [choice()], "on_timeout": 1}) == {
        "on_timeout": 'a number given; give "skip" or "recommended"'
    }


def test_a_huge_option_list_is_refused_by_its_length() -> None:
    found = problems({"questions": [{"question": "Pick?", "options": ["same"] * 5000}]})
    assert found == {
        "questions[0].options": "5000 options given; give at most 4: keep the likeliest"
    }


def test_a_recommended_digit_that_is_no_number_is_a_problem_not_a_crash() -> None:
    payload = {"questions": [{"question": "Which one?", "options": ["A", "B"], "recommended": "²"}]}
    with pytest.raises(midturn.InvalidAsk) as caught:
        midturn.parse_ask(payload)
    assert caught.value.problems[0].path == "questions[0].recommended"
