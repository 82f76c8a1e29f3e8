"""Lenient answers from a client (docs/contract.md#answers) and the results made without one."""

from __future__ import annotations

from typing import Any

import pytest

import midturn
from midturn import SECRET_MARK, InvalidAnswer
from midturn.contract._answers import timeout_result, uniform_result


def parse(data: dict[str, Any]) -> midturn.Ask:
    return midturn.parse_ask(data, dialect="midturn")


@pytest.fixture
def ask() -> midturn.Ask:
    return parse(
        {
            "questions": [
                {
                    "id": "db",
                    "header": "Database",
                    "question": "Which database should the service use?",
                    "options": [
                        {"label": "PostgreSQL", "id": "pg"},
                        {"label": "SQLite"},
                        {"label": "MySQL"},
                    ],
                    "recommended": "SQLite",
                },
                {
                    "id": "features",
                    "header": "Features",
                    "question": "Which features should it have?",
                    "options": ["Auth", "Billing", "Search"],
                    "multi": True,
                },
                {"id": "name", "header": "Name", "question": "What should it be called?"},
            ]
        }
    )


def summary(result: midturn.AskResult) -> list[tuple[str, tuple[str, ...], str | None]]:
    return [(a.status, a.selected, a.text) for a in result.answers]


def test_keyed_by_id_header_or_question_text(ask: midturn.Ask) -> None:
    expected = [
        ("answered", ("PostgreSQL",), None),
        ("answered", ("Auth", "Search"), None),
        ("answered", (), "billing-api"),
    ]
    by_id = {"db": "PostgreSQL", "features": ["Auth", "Search"], "name": "billing-api"}
    by_header = {"Database": "PostgreSQL", "Features": ["Auth", "Search"], "Name": "billing-api"}
    by_text = {q.question: by_id[q.id] for q in ask.questions}
    for answers in (by_id, by_header, by_text):
        result = midturn.parse_answer(ask, {"answers": answers})
        assert (result.outcome, summary(result)) == ("answered", expected)
    assert summary(midturn.parse_answer(ask, by_id)) == expected  # without the wrapper


def test_the_result_has_the_spec_shape(ask: midturn.Ask) -> None:
    result = midturn.parse_answer(ask, {"answers": {"db": "pg", "name": "billing-api"}})
    assert result.model_dump(mode="json") == {
        "outcome": "answered",
        "message": None,
        "answers": [
            {
                "id": "db",
                "header": "Database",
                "question": "Which database should the service use?",
                "status": "answered",
                "selected": ["PostgreSQL"],
                "text": None,
                "answer": "PostgreSQL",
                "auto_selected": False,
            },
            {
                "id": "features",
                "header": "Features",
                "question": "Which features should it have?",
                "status": "skipped",
                "selected": [],
                "text": None,
                "answer": None,
                "auto_selected": False,
            },
            {
                "id": "name",
                "header": "Name",
                "question": "What should it be called?",
                "status": "answered",
                "selected": [],
                "text": "billing-api",
                "answer": "billing-api",
                "auto_selected": False,
            },
        ],
    }


def test_positional_answers(ask: midturn.Ask) -> None:
    result = midturn.parse_answer(ask, {"answers": ["SQLite", None, "api"]})
    assert summary(result) == [
        ("answered", ("SQLite",), None),
        ("skipped", (), None),
        ("answered", (), "api"),
    ]
    assert summary(midturn.parse_answer(ask, [1, [0, 1], None]))[1] == (
        "answered",
        ("Auth", "Billing"),
        None,
    )


@pytest.mark.parametrize("answers", [["SQLite"], ["SQLite", None, "api", None], []])
def test_positional_length_must_match(ask: midturn.Ask, answers: list[Any]) -> None:
    with pytest.raises(InvalidAnswer) as caught:
        midturn.parse_answer(ask, {"answers": answers})
    assert f"{len(answers)} positional answers given for 3 questions; send exactly 3" in str(
        caught.value
    )


def test_a_bare_value_answers_a_one_question_ask() -> None:
    single = parse({"questions": [{"question": "Which?", "options": ["A", "B"]}]})
    assert summary(midturn.parse_answer(single, "B")) == [("answered", ("B",), None)]
    assert summary(midturn.parse_answer(single, 0)) == [("answered", ("A",), None)]
    assert summary(midturn.parse_answer(single, {"selected": ["A"]})) == [
        ("answered", ("A",), None)
    ]
    assert summary(midturn.parse_answer(single, {"answers": "A"})) == [("answered", ("A",), None)]
    assert midturn.parse_answer(single, {"skip": True}).outcome == "skipped"
    assert midturn.parse_answer(single, [None]).outcome == "skipped"  # its one value: null
    several = parse({"questions": [{"question": "Which?", "multi": True, "options": ["A", "B"]}]})
    assert summary(midturn.parse_answer(several, ["A", "B"])) == [("answered", ("A", "B"), None)]
    assert summary(midturn.parse_answer(several, ["B"])) == [("answered", ("B",), None)]


def test_a_bare_value_cannot_answer_several_questions(ask: midturn.Ask) -> None:
    with pytest.raises(InvalidAnswer) as caught:
        midturn.parse_answer(ask, "PostgreSQL")
    assert "a bare value answers only a one-question ask" in caught.value.reason
    assert "'db', 'features', 'name'" in caught.value.reason


def test_neo_style_actions(ask: midturn.Ask) -> None:
    status_form = {"question_id": "db", "status": "answered", "values": ["MySQL"], "message": None}
    assert summary(midturn.parse_answer(ask, status_form))[0] == ("answered", ("MySQL",), None)
    typed_form = {
        "question_id": "features",
        "answer_type": "multi_choice",
        "selected_option_ids": ["Auth"],
        "text": "Audit log",
    }
    result = midturn.parse_answer(ask, typed_form)
    assert summary(result) == [
        ("skipped", (), None),
        ("answered", ("Auth",), "Audit log"),
        ("skipped", (), None),
    ]
    text_form = {
        "question_id": "name",
        "answer_type": "text",
        "selected_option_ids": [],
        "text": "x",
    }
    assert summary(midturn.parse_answer(ask, text_form))[2] == ("answered", (), "x")
    skip = {"question_id": "db", "answer_type": "skip", "selected_option_ids": [], "text": None}
    assert midturn.parse_answer(ask, skip).outcome == "skipped"
    skipped = {"question_id": "db", "status": "skipped", "values": [], "message": None}
    assert midturn.parse_answer(ask, skipped).outcome == "skipped"
    both = midturn.parse_answer(ask, [status_form, text_form])
    assert [a.status for a in both.answers] == ["answered", "skipped", "answered"]


@pytest.mark.parametrize("payload", [{"skip": True}, {"skipped": True}, {"dismiss": True}])
def test_whole_ask_skip(ask: midturn.Ask, payload: dict[str, Any]) -> None:
    result = midturn.parse_answer(ask, payload)
    assert result.outcome == "skipped"
    assert [a.status for a in result.answers] == ["skipped"] * 3


def test_redirect_carries_the_message(ask: midturn.Ask) -> None:
    result = midturn.parse_answer(ask, {"redirect": "  Actually, let's use MySQL  "})
    assert (result.outcome, result.message) == ("redirected", "Actually, let's use MySQL")
    with pytest.raises(InvalidAnswer, match="redirect"):
        midturn.parse_answer(ask, {"redirect": "  "})


def test_missing_keys_are_skipped_and_all_skipped_is_the_skipped_outcome(ask: midturn.Ask) -> None:
    result = midturn.parse_answer(ask, {"answers": {"db": None, "name": "x"}})
    assert (result.outcome, [a.status for a in result.answers]) == (
        "answered",
        ["skipped", "skipped", "answered"],
    )


def test_string_resolution_order() -> None:
    options = [
        {"label": "1", "id": "b"},  # a label that is a digit
        {"label": "b"},  # a label that is another option's id
        {"label": "Beta"},
    ]
    ask = parse({"questions": [{"question": "Which?", "options": options}]})

    def pick(value: str) -> tuple[str, ...] | str | None:
        answer = midturn.parse_answer(ask, value).answers[0]
        return answer.selected or answer.text

    assert pick("b") == ("1",)  # option id before exact label
    assert pick("Beta") == ("Beta",)  # exact label
    assert pick("BETA") == ("Beta",)  # label, any case
    assert pick("1") == ("1",)  # exact label before index
    assert pick("2") == ("Beta",)  # digit string as 0-based index
    assert pick("7") == "7"  # no option by that index: typed text
    assert pick("Gamma") == "Gamma"  # typed text (Other)


def test_a_label_with_its_recommended_suffix_still_resolves(ask: midturn.Ask) -> None:
    result = midturn.parse_answer(ask, {"answers": {"db": "SQLite (Recommended)"}})
    assert result.answers[0].selected == ("SQLite",)


def test_other_text_and_its_display(ask: midturn.Ask) -> None:
    result = midturn.parse_answer(
        ask, {"answers": {"db": "CockroachDB", "features": ["Auth", "Audit log"]}}
    )
    db, features, _ = result.answers
    assert (db.selected, db.text, db.answer) == ((), "CockroachDB", "CockroachDB")
    assert (features.selected, features.text, features.answer) == (
        ("Auth",),
        "Audit log",
        "Auth, Audit log",
    )


@pytest.mark.parametrize(
    "value",
    [
        {"selected": ["Billing"], "text": "Audit"},
        {"labels": ["Billing"], "other": "Audit"},
        {"selected": [1], "text": "Audit"},
        {"selected": "Billing", "other": " Audit "},
    ],
)
def test_selected_and_text_objects_with_aliases(ask: midturn.Ask, value: dict[str, Any]) -> None:
    answer = midturn.parse_answer(ask, {"answers": {"features": value}}).answers[1]
    assert (answer.selected, answer.text) == (("Billing",), "Audit")


def test_an_empty_other_beside_a_selection_is_no_other(ask: midturn.Ask) -> None:
    answer = midturn.parse_answer(ask, {"features": {"selected": [0], "text": ""}}).answers[1]
    assert (answer.selected, answer.text) == (("Auth",), None)


def test_labels_come_back_in_option_order_once(ask: midturn.Ask) -> None:
    answer = midturn.parse_answer(ask, {"features": ["Search", "auth", 0]}).answers[1]
    assert (answer.selected, answer.answer) == (("Auth", "Search"), "Auth, Search")


def test_an_empty_selection_is_valid_when_min_choices_is_zero() -> None:
    ask = parse(
        {
            "questions": [
                {"question": "Extras?", "multi": True, "min_choices": 0, "options": ["A", "B"]}
            ]
        }
    )
    answer = midturn.parse_answer(ask, {"selected": [], "text": None}).answers[0]
    assert (answer.status, answer.selected, answer.answer) == ("answered", (), "")


def test_choice_counts_are_enforced() -> None:
    ask = parse(
        {
            "questions": [
                {"id": "one", "question": "One?", "options": ["A", "B", "C"]},
                {
                    "id": "some",
                    "question": "Some?",
                    "multi": True,
                    "min_choices": 2,
                    "max_choices": 2,
                    "options": ["A", "B", "C"],
                },
            ]
        }
    )
    cases = [
        ({"one": ["A", "B"]}, "one", "2 choices given for a single-choice question"),
        ({"one": {"selected": []}}, "one", "0 choices given for a single-choice question"),
        ({"one": {"selected": ["A"], "text": "D"}}, "one", "2 choices given"),
        ({"some": ["A"]}, "some", "1 choices given; choose 2–2, or send null to skip"),
        ({"some": ["A", "B", "C"]}, "some", "3 choices given; choose 2–2"),
    ]
    for answers, question, fragment in cases:
        with pytest.raises(InvalidAnswer) as caught:
            midturn.parse_answer(ask, {"answers": answers})
        assert caught.value.question == question
        assert fragment in caught.value.reason


def test_refusals_name_the_question_and_what_to_send(ask: midturn.Ask) -> None:
    strict = parse(
        {
            "questions": [
                {"id": "env", "question": "Env?", "options": ["Dev", "Prod"], "allow_other": False}
            ]
        }
    )
    cases: list[tuple[midturn.Ask, Any, str | None, str]] = [
        (
            ask,
            {"answers": {"region": "eu"}},
            None,
            "no question has the id, header or text 'region'",
        ),
        (strict, "Staging", "env", "'Staging' is not an option and this question takes no typed"),
        (ask, {"answers": {"db": ""}}, "db", "empty Other text given"),
        (ask, {"answers": {"db": {"text": "  "}}}, "db", "empty Other text given"),
        (ask, {"answers": {"name": " "}}, "name", "empty text given; send the typed text, or null"),
        (ask, {"answers": {"db": 3}}, "db", "index 3 given; options are numbered 0–2"),
        (ask, {"answers": {"db": True}}, "db", "a boolean given"),
        (
            ask,
            {"answers": {"db": {"selected": ["Oracle"]}}},
            "db",
            "'Oracle' in selected is not an option",
        ),
        (ask, {"answers": {"db": {"value": "x"}}}, "db", 'needs "selected" and/or "text"'),
        (ask, {"answers": {"name": {"nested": 1}}}, "name", 'an object answer needs "text"'),
        (ask, {"answers": {"features": ["x", "y"]}}, "features", "2 free-text answers given"),
        (ask, {"answers": {"db": "pg", "Database": "pg"}}, "db", "answered twice"),
    ]
    for target, payload, question, fragment in cases:
        with pytest.raises(InvalidAnswer) as caught:
            midturn.parse_answer(target, payload)
        assert caught.value.question == question, payload
        assert fragment in caught.value.reason, payload


def test_secret_answers_stay_in_memory_only() -> None:
    ask = parse({"questions": [{"id": "token", "question": "API token?", "secret": True}]})
    result = midturn.parse_answer(ask, {"answers": {"token": "  sk-123  "}})
    answer = result.answers[0]
    assert (answer.status, answer.answer, answer.text) == ("answered", SECRET_MARK, None)
    assert answer.secret_value is not None
    assert answer.secret_value.get_secret_value() == "sk-123"
    assert "sk-123" not in result.model_dump_json()
    assert "sk-123" not in repr(result)
    assert "sk-123" not in midturn.render(result, dialect="midturn").text


def test_text_answers_take_numbers_and_one_item_lists(ask: midturn.Ask) -> None:
    assert midturn.parse_answer(ask, {"name": 42}).answers[2].text == "42"
    assert midturn.parse_answer(ask, {"name": ["api"]}).answers[2].text == "api"
    assert midturn.parse_answer(ask, {"name": {"selected": [], "text": "x"}}).answers[2].text == "x"


def test_a_refused_answer_changes_nothing(ask: midturn.Ask) -> None:
    before = ask.model_dump()
    with pytest.raises(InvalidAnswer):
        midturn.parse_answer(ask, {"answers": {"nope": 1}})
    assert ask.model_dump() == before
    assert midturn.parse_answer(ask, {"answers": {"db": 0}}).outcome == "answered"


def test_timeout_result_skips_by_default(ask: midturn.Ask) -> None:
    result = timeout_result(ask)
    assert result.outcome == "timed_out"
    assert [a.status for a in result.answers] == ["timed_out"] * 3


def test_timeout_result_can_pick_the_recommended_option() -> None:
    ask = parse(
        {
            "questions": [
                {"question": "Db?", "options": ["PostgreSQL", "SQLite"], "recommended": 1},
                {"question": "Cache?", "options": ["Redis", "None at all"]},
                {"question": "Name?"},
            ],
            "on_timeout": "recommended",
        }
    )
    result = timeout_result(ask)
    assert result.outcome == "timed_out"
    assert [(a.status, a.selected, a.auto_selected) for a in result.answers] == [
        ("answered", ("SQLite",), True),
        ("answered", ("Redis",), True),
        ("timed_out", (), False),
    ]


@pytest.mark.parametrize("outcome", ["cancelled", "unavailable"])
def test_uniform_results(ask: midturn.Ask, outcome: Any) -> None:
    result = uniform_result(ask, outcome)
    assert result.outcome == outcome
    assert [(a.id, a.status) for a in result.answers] == [
        ("db", outcome),
        ("features", outcome),
        ("name", outcome),
    ]


def test_limits_bound_everything_the_person_typed() -> None:
    ask = midturn.parse_ask(
        {
            "questions": [
                {"id": "db", "question": "Which database?", "options": ["PostgreSQL", "SQLite"]},
                {"id": "name", "question": "What name?", "kind": "text"},
            ]
        }
    )
    tight = midturn.Limits(max_text_chars=5)
    for payload in (
        {"answers": {"db": 0, "name": "billing"}},
        {"answers": {"db": "MariaDB", "name": "x"}},
        {"redirect": "use MySQL instead"},
    ):
        with pytest.raises(InvalidAnswer, match="at most 5"):
            midturn.parse_answer(ask, payload, limits=tight)
        assert midturn.parse_answer(ask, payload).outcome in ("answered", "redirected")
    assert midturn.parse_answer(ask, {"redirect": "MySQL"}, limits=tight).message == "MySQL"


# -- empty bodies and a Go client's zero values ------------------------------------------


@pytest.mark.parametrize("payload", [{}, None, {"answers": {}}, {"answers": None}])
def test_an_empty_body_is_refused_not_read_as_a_skip(ask: midturn.Ask, payload: Any) -> None:
    with pytest.raises(InvalidAnswer) as caught:
        midturn.parse_answer(ask, payload)
    assert '{"skip": true}' in caught.value.reason  # says how to skip on purpose
    assert caught.value.question is None


def test_zeroed_controls_beside_an_answer_are_unset(ask: midturn.Ask) -> None:
    go = {"answers": {"db": "SQLite"}, "skip": False, "skipped": False, "redirect": ""}
    assert summary(midturn.parse_answer(ask, go))[0] == ("answered", ("SQLite",), None)
    keyed = {"db": "SQLite", "redirect": "", "dismiss": False}
    assert summary(midturn.parse_answer(ask, keyed))[0] == ("answered", ("SQLite",), None)
    with pytest.raises(InvalidAnswer, match="empty answer"):  # zeroes alone are no answer
        midturn.parse_answer(ask, {"skip": False, "redirect": ""})
    assert midturn.parse_answer(ask, {"skip": True, "redirect": ""}).outcome == "skipped"


def go_action(question_id: str, **fields: Any) -> dict[str, Any]:
    """One Go struct carrying both neo action shapes, every field present and zeroed."""
    zeroed: dict[str, Any] = {
        "question_id": question_id,
        "status": "",
        "values": None,
        "message": "",
        "answer_type": "",
        "selected_option_ids": None,
        "text": "",
    }
    return {**zeroed, **fields}


def test_a_go_action_with_both_shapes_reads_the_filled_one(ask: midturn.Ask) -> None:
    by_status = go_action("db", status="answered", values=["MySQL"])
    assert summary(midturn.parse_answer(ask, by_status))[0] == ("answered", ("MySQL",), None)
    by_type = go_action("features", answer_type="multi_choice", selected_option_ids=["Auth"])
    assert summary(midturn.parse_answer(ask, by_type))[1] == ("answered", ("Auth",), None)
    typed = go_action("name", answer_type="text", text="billing-api")
    assert summary(midturn.parse_answer(ask, typed))[2] == ("answered", (), "billing-api")
    message = go_action("name", status="answered", message="billing-api")
    assert summary(midturn.parse_answer(ask, message))[2] == ("answered", (), "billing-api")
    skipped = go_action("db", status="skipped")
    assert midturn.parse_answer(ask, skipped).outcome == "skipped"
    several = [by_status, by_type, go_action("name", answer_type="skip")]
    assert [a.status for a in midturn.parse_answer(ask, several).answers] == [
        "answered",
        "answered",
        "skipped",
    ]


def test_both_shapes_filled_must_agree(ask: midturn.Ask) -> None:
    same = go_action(
        "db", status="answered", values=["MySQL"], answer_type="single", selected_option_ids=[2]
    )
    assert summary(midturn.parse_answer(ask, same))[0] == ("answered", ("MySQL",), None)
    for conflict in (
        go_action("db", status="answered", values=["MySQL"], selected_option_ids=["SQLite"]),
        go_action("db", status="skipped", selected_option_ids=["SQLite"]),
        go_action("name", message="a", text="b"),
    ):
        with pytest.raises(InvalidAnswer, match="two different answers") as caught:
            midturn.parse_answer(ask, conflict)
        assert caught.value.question == conflict["question_id"]


def test_an_action_with_no_answer_in_it_is_refused(ask: midturn.Ask) -> None:
    for empty in (go_action("db"), {"question_id": "db"}):
        with pytest.raises(InvalidAnswer, match="carries no answer"):
            midturn.parse_answer(ask, empty)
    with pytest.raises(InvalidAnswer, match="empty text"):  # "answered", but with nothing
        midturn.parse_answer(ask, go_action("name", status="answered"))
    with pytest.raises(InvalidAnswer, match="0 choices"):
        midturn.parse_answer(ask, go_action("db", answer_type="single_choice"))
