"""The pi-legacy dialect: the Pi extension's askUserQuestion, secrets redacted."""

from __future__ import annotations

import json

import pytest

import midturn

from . import _payloads as p
from ._results import uniform

REDACTED = "[REDACTED:secret-answer]"
PROCEED = "Proceed with your best judgement, state the assumptions you made, and do not ask again."


def test_select_maps_options_default_custom_timeout_and_reason() -> None:
    ask = midturn.parse_ask(p.PI_SELECT, dialect="pi-legacy")
    (question,) = ask.questions
    assert question.id == "select.internal"
    assert question.question == (
        "Which environment should I deploy to?\n\nBoth environments are configured."
    )
    assert question.labels == ["staging", "production"]
    assert (question.recommended, question.allow_other, question.multi) == (0, False, False)
    assert ask.timeout_s == 30.0


def test_select_answer() -> None:
    ask = midturn.parse_ask(p.PI_SELECT, dialect="pi-legacy")
    out = midturn.render(midturn.parse_answer(ask, "production"), dialect="pi-legacy")
    assert out.text == "Answer: production"
    assert out.data == {
        "questionId": "select.internal",
        "value": "production",
        "visibleValue": "production",
        "cancelled": False,
        "timedOut": False,
        "sensitivity": "internal",
    }
    with pytest.raises(midturn.InvalidAnswer):  # allowCustom: false
        midturn.parse_answer(ask, "qa")


def test_multi_select_value_is_a_list() -> None:
    ask = midturn.parse_ask(p.PI_MULTI, dialect="pi-legacy")
    assert ask.questions[0].multi and ask.questions[0].allow_other
    result = midturn.parse_answer(ask, {"selected": ["lint"], "text": "smoke test"})
    out = midturn.render(result, dialect="pi-legacy")
    assert out.text == "Answer: lint, smoke test"
    assert out.data["value"] == ["lint", "smoke test"]
    assert out.data["sensitivity"] == "public"


def test_editor_is_text_with_the_default_as_placeholder() -> None:
    ask = midturn.parse_ask(p.PI_EDITOR, dialect="pi-legacy")
    question = ask.questions[0]
    assert (question.kind, question.placeholder) == ("text", "Bug fixes and improvements")
    out = midturn.render(midturn.parse_answer(ask, "Faster exports."), dialect="pi-legacy")
    assert out.text == "Answer: Faster exports."
    assert out.data["value"] == "Faster exports."


def test_a_secret_answer_is_redacted_and_its_value_absent() -> None:
    ask = midturn.parse_ask(p.PI_SECRET, dialect="pi-legacy")
    assert ask.questions[0].secret
    result = midturn.parse_answer(ask, "tok_live_9f8e7d")
    assert result.answers[0].is_secret
    out = midturn.render(result, dialect="pi-legacy")
    assert out.text == f"Answer: {REDACTED}"
    assert out.data == {
        "questionId": "text.secret",
        "visibleValue": REDACTED,
        "cancelled": False,
        "timedOut": False,
        "sensitivity": "secret",
    }
    assert "tok_live" not in out.text + json.dumps(out.data)


def test_a_secret_select_is_redacted_too() -> None:
    ask = midturn.parse_ask({**p.PI_SELECT, "sensitivity": "secret"}, dialect="pi-legacy")
    out = midturn.render(midturn.parse_answer(ask, "staging"), dialect="pi-legacy")
    assert out.text == f"Answer: {REDACTED}"
    assert "value" not in out.data and out.data["sensitivity"] == "secret"


def test_cancelled_and_timed_out() -> None:
    ask = midturn.parse_ask(p.PI_SELECT, dialect="pi-legacy")
    skipped = midturn.render(midturn.parse_answer(ask, {"skip": True}), dialect="pi-legacy")
    assert skipped.text == f"Answer: (cancelled by the user). {PROCEED}"
    assert skipped.data["cancelled"] is True and skipped.data["value"] is None
    late = midturn.render(uniform(ask, "timed_out", "timed_out"), dialect="pi-legacy")
    assert late.text == f"Answer: (timed out). {PROCEED}"
    assert (late.data["timedOut"], late.data["cancelled"]) == (True, False)


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"kind": "dropdown"}, "kind"),
        ({"sensitivity": "private"}, "sensitivity"),
        ({"timeoutMs": -5}, "timeoutMs"),
        ({"timeoutMs": "soon"}, "timeoutMs"),
    ],
)
def test_faults_of_pis_own_shape_name_pis_fields(change: dict[str, object], path: str) -> None:
    with pytest.raises(midturn.InvalidAsk) as caught:
        midturn.parse_ask({**p.PI_SELECT, **change}, dialect="pi-legacy")
    assert [problem.path for problem in caught.value.problems] == [path]
