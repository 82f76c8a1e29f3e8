"""The mcp-elicitation dialect: an `elicitation/create` form asked as a midturn ask, and
the answer as an ElicitResult typed per the requested schema."""

from __future__ import annotations

from typing import Any

import pytest

import midturn
from midturn.contract.dialects import elicit_result

from . import _payloads as p


def ask(params: dict[str, Any] = p.ELICITATION) -> midturn.Ask:
    return midturn.parse_ask(params, dialect="mcp-elicitation")


def form(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required is not None:
        schema["required"] = required
    return {"message": "Fill this in", "requestedSchema": schema}


def test_one_question_per_property_in_order() -> None:
    parsed = ask()
    ids = [q.id for q in parsed.questions]
    assert ids == ["name", "email", "age", "score", "subscribe", "color", "size", "tags"]
    assert parsed.warnings == ()
    name = parsed.questions[0]
    assert name.kind == "text"
    assert name.question == "Please provide your contact information\n\nYour full name"


def test_each_schema_type_becomes_its_kind_of_question() -> None:
    _, email, age, score, subscribe, color, size, tags = ask().questions
    assert email.kind == "text" and "Give an email address." in email.question
    assert age.kind == "text" and "A whole number, at least 18." in age.question
    assert score.placeholder == "0.5" and "A number from 0 to 1." in score.question
    assert (subscribe.labels, subscribe.recommended, subscribe.allow_other) == (
        ["Yes", "No"],
        0,
        False,
    )
    assert color.labels == ["Red", "Blue"] and color.header == "Colour"  # "Favourite colour"
    assert size.labels == ["Small", "Medium"]  # the legacy enumNames
    assert (tags.multi, tags.min_choices, tags.max_choices, tags.recommended) == (True, 1, 2, 1)


def test_a_titled_multi_select_reads_its_titles() -> None:
    titled = form(
        {
            "langs": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "py", "title": "Python"},
                        {"const": "ts", "title": "TypeScript"},
                    ]
                },
            }
        }
    )
    assert ask(titled).questions[0].labels == ["Python", "TypeScript"]


def test_an_answer_is_an_accept_typed_per_the_schema() -> None:
    result = midturn.parse_answer(
        ask(),
        {
            "answers": {
                "name": "Ada Lovelace",
                "email": "ada@example.com",
                "age": "36",
                "score": "0.75",
                "subscribe": "No",
                "color": "Blue",
                "size": "Medium",
                "tags": ["alpha", "gamma"],
            }
        },
    )
    assert elicit_result(p.ELICITATION, result) == {
        "action": "accept",
        "content": {
            "name": "Ada Lovelace",
            "email": "ada@example.com",
            "age": 36,
            "score": 0.75,
            "subscribe": False,
            "color": "#00f",
            "size": "m",
            "tags": ["alpha", "gamma"],
        },
    }
    out = midturn.render(result, dialect="mcp-elicitation")
    assert out.data["action"] == "accept"
    assert out.data["content"]["color"] == "Blue"  # render alone sees only what was shown


def test_an_unanswered_optional_property_is_left_out() -> None:
    result = midturn.parse_answer(ask(), {"answers": {"name": "Ada", "email": "a@b.c"}})
    assert elicit_result(p.ELICITATION, result) == {
        "action": "accept",
        "content": {"name": "Ada", "email": "a@b.c"},
    }


def test_a_skipped_required_property_or_a_skipped_form_declines() -> None:
    partial = midturn.parse_answer(ask(), {"answers": {"name": "Ada"}})
    assert elicit_result(p.ELICITATION, partial) == {"action": "decline"}
    skipped = midturn.parse_answer(ask(), {"skip": True})
    assert elicit_result(p.ELICITATION, skipped) == {"action": "decline"}
    assert midturn.render(skipped, dialect="mcp-elicitation").data == {"action": "decline"}


@pytest.mark.parametrize("outcome", ["cancelled", "timed_out", "unavailable", "redirected"])
def test_a_dismissed_form_cancels(outcome: str) -> None:
    result = midturn.AskResult(
        outcome=outcome, message="later" if outcome == "redirected" else None
    )  # type: ignore[arg-type]
    assert elicit_result(p.ELICITATION, result) == {"action": "cancel"}
    assert midturn.render(result, dialect="mcp-elicitation").data == {"action": "cancel"}


def test_a_number_that_is_no_number_is_passed_on_as_typed() -> None:
    params = form({"count": {"type": "integer"}})
    result = midturn.parse_answer(ask(params), "a dozen")
    assert elicit_result(params, result) == {"action": "accept", "content": {"count": "a dozen"}}
    assert elicit_result(params, midturn.parse_answer(ask(params), "12.0"))["content"] == {
        "count": 12
    }
    for word in ("NaN", "Infinity", "true"):
        typed = elicit_result(params, midturn.parse_answer(ask(params), word))
        assert typed["content"] == {"count": word}


def test_a_json_rpc_request_is_read_as_its_params() -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": p.ELICITATION}
    assert midturn.parse_ask(request, dialect="auto") == ask()


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"mode": "url", "message": "Sign in", "url": "https://example.com"}, "mode"),
        ({"message": "Hi"}, "requestedSchema"),
        (form({}), "requestedSchema.properties"),
        (form({"first name": {"type": "string"}}), "requestedSchema.properties.first name"),
        (form({"nested": {"type": "object"}}), "requestedSchema.properties.nested.type"),
    ],
)
def test_what_is_no_form_is_refused_by_path(params: dict[str, Any], path: str) -> None:
    with pytest.raises(midturn.InvalidAsk) as caught:
        midturn.parse_ask(params, dialect="mcp-elicitation")
    assert caught.value.problems[0].path == path
