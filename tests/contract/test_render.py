"""The result the model reads (docs/contract.md#results) and the midturn dialect's tool output."""

from __future__ import annotations

import json
from typing import Any

import pytest

import midturn
from midturn.contract._answers import timeout_result, uniform_result
from midturn.contract.dialects._midturn import MidturnDialect

PROCEED = "Proceed with your best judgement, state the assumptions you made, and do not ask again."


@pytest.fixture
def ask() -> midturn.Ask:
    return midturn.parse_ask(
        {
            "questions": [
                {
                    "header": "Database",
                    "question": "Which database?",
                    "options": ["PostgreSQL", "SQLite"],
                },
                {
                    "header": "Features",
                    "question": "Which features?",
                    "multi": True,
                    "min_choices": 0,
                    "options": ["Auth", "Billing", "Search"],
                },
                {"header": "Name", "question": "What is it called?"},
                {
                    "header": "Region",
                    "question": "Where?",
                    "options": ["EU", "US"],
                    "recommended": "US",
                },
            ],
            "on_timeout": "recommended",
        },
        dialect="midturn",
    )


def text_for(ask: midturn.Ask, payload: Any) -> str:
    return midturn.render(midturn.parse_answer(ask, payload), dialect="midturn").text


def test_the_spec_example_byte_for_byte(ask: midturn.Ask) -> None:
    payload = {"Database": "PostgreSQL", "Features": ["Auth", "Billing"], "Name": "billing-api"}
    assert text_for(ask, payload) == (
        "The user answered:\n"
        "- Database: PostgreSQL\n"
        "- Features: Auth, Billing\n"
        '- Name: "billing-api"\n'
        "- Region: (skipped)"
    )


def test_typed_text_is_quoted_json_style(ask: midturn.Ask) -> None:
    payload = {
        "Database": 'Cockroach "DB"',
        "Features": ["Search", "Audit\nlog"],
        "Name": "café ✓",
        "Region": "US",
    }
    assert text_for(ask, payload) == (
        "The user answered:\n"
        '- Database: "Cockroach \\"DB\\""\n'
        '- Features: Search, "Audit\\nlog"\n'
        '- Name: "café ✓"\n'
        "- Region: US"
    )


def test_an_empty_selection_says_so(ask: midturn.Ask) -> None:
    assert "- Features: (none selected)" in text_for(ask, {"Features": []})


def test_all_skipped_is_the_spec_sentence(ask: midturn.Ask) -> None:
    expected = (
        "The user skipped the questions. Proceed with your best judgement, state the "
        "assumptions you made, and do not ask again."
    )
    assert text_for(ask, {"skip": True}) == expected
    assert text_for(ask, [None, None, None, None]) == expected


def test_auto_selected_answers_say_so(ask: midturn.Ask) -> None:
    text = midturn.render(timeout_result(ask), dialect="midturn").text
    assert text == (
        "The user did not answer in time, so these defaults were chosen for them:\n"
        "- Database: PostgreSQL (auto-selected after timeout)\n"
        "- Features: Auth (auto-selected after timeout)\n"
        "- Name: (no answer in time)\n"
        "- Region: US (auto-selected after timeout)"
    )


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        ("timed_out", f"The user did not answer the questions in time. {PROCEED}"),
        ("unavailable", f"No one is available to answer questions here. {PROCEED}"),
        ("cancelled", "The user stopped the turn before answering the questions. Do not continue."),
    ],
)
def test_one_sentence_outcomes(ask: midturn.Ask, outcome: Any, expected: str) -> None:
    assert midturn.render(uniform_result(ask, outcome), dialect="midturn").text == expected


def test_redirect_quotes_the_users_message(ask: midturn.Ask) -> None:
    text = text_for(ask, {"redirect": 'Use "MySQL" and stop asking'})
    assert text == (
        'The user did not answer the questions and wrote instead: "Use \\"MySQL\\" and stop '
        'asking". Continue with that message in mind, and do not ask these questions again.'
    )


def test_a_secret_shows_only_its_mark() -> None:
    ask = midturn.parse_ask(
        {"questions": [{"header": "Token", "question": "API token?", "secret": True}]},
        dialect="midturn",
    )
    output = midturn.render(midturn.parse_answer(ask, "sk-live-123"), dialect="midturn")
    assert output.text == "The user answered:\n- Token: [secret provided]"
    assert "sk-live-123" not in json.dumps(output.data)
    assert output.data["answers"][0]["answer"] == "[secret provided]"


def test_the_tool_output_carries_the_canonical_json(ask: midturn.Ask) -> None:
    result = midturn.parse_answer(ask, {"Database": "SQLite", "Name": "x"})
    output = midturn.render(result, dialect="midturn")
    assert output.is_error is False
    assert output.data == result.model_dump(mode="json")
    assert json.loads(json.dumps(output.data)) == output.data
    again = midturn.render(midturn.parse_answer(ask, {"Database": "SQLite", "Name": "x"}))
    assert (again.text, again.data) == (output.text, output.data)


def test_the_dialect_describes_and_schemas_itself() -> None:
    dialect = MidturnDialect()
    assert (dialect.name, dialect.tool_name) == ("midturn", "ask_user_question")
    schema = dialect.input_schema(dialect.limits)
    assert schema == dialect.input_schema(dialect.limits)
    assert schema is not dialect.input_schema(dialect.limits)
    schema["properties"].clear()
    assert dialect.input_schema(dialect.limits)["properties"]["questions"]["maxItems"] == 4
    question = dialect.input_schema(dialect.limits)["properties"]["questions"]["items"]
    assert question["required"] == ["question"]
    assert question["properties"]["header"]["maxLength"] == 12
    assert question["properties"]["options"]["minItems"] == 2
    description = dialect.description(dialect.limits)
    assert 'Never add an "Other"' in description
    assert "ask once" in description


def test_the_dialect_refuses_input_that_is_not_an_object() -> None:
    with pytest.raises(midturn.InvalidAsk) as caught:
        MidturnDialect().to_canonical(["Which database?"])
    assert caught.value.problems[0].message.startswith("the tool input is a list")


def test_auto_detection_scores() -> None:
    dialect = MidturnDialect()
    assert dialect.matches({"questions": [{"question": "Q?", "kind": "text"}]}) == 3
    assert dialect.matches({"questions": [{"question": "Q?"}], "timeout_s": 5}) == 3
    assert dialect.matches({"questions": [{"question": "Q?", "options": []}]}) == 1
    by_label = {
        "questions": [{"id": "db", "question": "Q?", "options": ["A", "B"], "recommended": "A"}]
    }
    assert dialect.matches(by_label) == 3
    assert midturn.parse_ask(by_label, dialect="auto").dialect == "midturn"
    assert dialect.matches({"question": "Q?"}) == 0
    assert dialect.matches({"questions": []}) == 0
    assert dialect.matches("Q?") == 0
