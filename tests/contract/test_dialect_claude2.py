"""The claude dialect, Claude Code 2.x: option previews, the result's `annotations` and
`response`, answers keyed by the full question text, and no empty answer that reads as
consent."""

from __future__ import annotations

from typing import Any

import midturn

from . import _payloads as p
from ._schema import errors

LONG = (
    "The migration rewrites every invoice row and takes the billing service offline for "
    "about twenty minutes while it runs; the old schema stays readable until the switch. "
    "Should it run tonight during the maintenance window, or wait for the weekend?"
)
PREVIEWED: dict[str, Any] = {
    "questions": [
        {
            "question": "Which layout should the settings page use?",
            "header": "Layout",
            "multiSelect": False,
            "options": [
                {
                    "label": "Sidebar",
                    "description": "Sections listed on the left",
                    "preview": "+-----+---------+\n| Nav | Content |\n+-----+---------+",
                },
                {"label": "Tabs", "description": "Sections as tabs on top"},
            ],
        },
        {
            "question": LONG,
            "header": "Migration",
            "multiSelect": False,
            "options": [
                {"label": "Tonight", "description": "In the maintenance window"},
                {"label": "Weekend", "description": "Lower traffic"},
            ],
        },
    ]
}


def previewed() -> midturn.Ask:
    return midturn.parse_ask(PREVIEWED, dialect="claude")


def test_an_options_preview_is_carried_on_the_option() -> None:
    ask = previewed()
    sidebar, tabs = ask.questions[0].options
    assert sidebar.preview == PREVIEWED["questions"][0]["options"][0]["preview"]
    assert tabs.preview is None
    assert not any("preview" in warning for warning in ask.warnings)
    assert midturn.parse_ask(PREVIEWED, dialect="auto") == ask


def test_an_over_long_preview_is_refused_by_name() -> None:
    payload = {
        "questions": [
            {
                **PREVIEWED["questions"][0],
                "options": [
                    {"label": "Sidebar", "description": "d", "preview": "x" * 5000},
                    {"label": "Tabs", "description": "d"},
                ],
            }
        ]
    }
    try:
        midturn.parse_ask(payload, dialect="claude")
    except midturn.InvalidAsk as error:
        assert error.problems[0].path == "questions[0].options[0].preview"
    else:
        raise AssertionError("a 5000-character preview was accepted")


def test_answers_are_keyed_by_the_full_question_text() -> None:
    result = midturn.parse_answer(previewed(), {"answers": {"q1": "Tabs", LONG: "Weekend"}})
    out = midturn.render(result, dialect="claude")
    assert out.data["answers"] == {PREVIEWED["questions"][0]["question"]: "Tabs", LONG: "Weekend"}
    assert f'"{LONG}"="Weekend"' in out.text
    assert "annotations" not in out.data and "response" not in out.data


def test_a_skipped_question_is_annotated_as_skipped() -> None:
    result = midturn.parse_answer(previewed(), {"answers": {"q1": "Tabs", "q2": None}})
    out = midturn.render(result, dialect="claude")
    assert out.data["answers"] == {PREVIEWED["questions"][0]["question"]: "Tabs"}
    assert out.data["annotations"] == {LONG: {"unanswered": "skipped"}}
    assert f'The user skipped "{LONG}"' in out.text


def test_text_beside_a_choice_is_the_questions_note() -> None:
    ask = midturn.parse_ask(p.CLAUDE, dialect="claude")
    result = midturn.parse_answer(
        ask, {"answers": {"q1": "SQLite", "q2": {"selected": ["Auth"], "text": "and SSO later"}}}
    )
    out = midturn.render(result, dialect="claude")
    assert out.data["answers"] == {p.DB: "SQLite", p.FEATURES: "Auth"}
    assert out.data["annotations"] == {p.FEATURES: {"notes": "and SSO later"}}
    assert f'"{p.FEATURES}"="Auth" (the user noted: "and SSO later")' in out.text


def test_a_chat_reply_is_the_response_and_every_question_replied_in_chat() -> None:
    result = midturn.parse_answer(previewed(), {"redirect": "Neither; keep the current page"})
    out = midturn.render(result, dialect="claude")
    assert out.data["response"] == "Neither; keep the current page"
    assert out.data["answers"] == {}
    assert out.data["annotations"] == {
        PREVIEWED["questions"][0]["question"]: {"unanswered": "replied_in_chat"},
        LONG: {"unanswered": "replied_in_chat"},
    }
    assert "Neither; keep the current page" in out.text
    assert not out.text.startswith("User has answered")


def test_a_dismissed_ask_is_annotated_as_dismissed() -> None:
    ask = previewed()
    result = midturn.AskResult(
        outcome="cancelled",
        answers=tuple(
            midturn.QuestionAnswer(
                id=q.id, header=q.header, question=q.question, status="cancelled"
            )
            for q in ask.questions
        ),
    )
    out = midturn.render(result, dialect="claude")
    assert out.data["annotations"] == {
        q.question: {"unanswered": "dismissed"} for q in ask.questions
    }


def test_an_empty_selection_never_reads_as_an_answer() -> None:
    optional = {
        "questions": [
            {
                "question": p.FEATURES,
                "header": "Features",
                "multiSelect": True,
                "options": [
                    {"label": "Auth", "description": "Sign-in"},
                    {"label": "Billing", "description": "Invoices"},
                ],
            }
        ]
    }
    ask = midturn.parse_ask(optional, dialect="claude").model_copy()
    ask = ask.model_copy(
        update={"questions": (ask.questions[0].model_copy(update={"min_choices": 0}),)}
    )
    result = midturn.parse_answer(ask, {"answers": {"q1": {"selected": []}}})
    out = midturn.render(result, dialect="claude")
    assert '=""' not in out.text
    assert f'"{p.FEATURES}"=(none of the options: the user selected nothing)' in out.text
    assert out.data["answers"] == {p.FEATURES: ""}


def test_all_skipped_never_reads_as_answered() -> None:
    result = midturn.parse_answer(previewed(), {"skip": True})
    out = midturn.render(result, dialect="claude")
    assert not out.text.startswith("User has answered")
    assert out.data["answers"] == {}
    assert all(note == {"unanswered": "skipped"} for note in out.data["annotations"].values())


def test_the_tool_schema_takes_a_preview_and_bounds_it() -> None:
    schema = midturn.tool_spec("claude", "anthropic")["input_schema"]
    assert errors(PREVIEWED, schema) == []
    first = PREVIEWED["questions"][0]
    huge = {"label": "Sidebar", "description": "d", "preview": "x" * 5000}
    too_long = {"questions": [{**first, "options": [huge, first["options"][1]]}]}
    assert errors(too_long, schema)
