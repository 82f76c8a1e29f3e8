"""The answer body the tray builds (api.js) reads back, through midturn.parse_answer, as
exactly what the person chose: every question kind, Other, skips, and option ids."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page
from tests.web.conftest import LiveGateway

import midturn

ASK = {
    "questions": [
        {
            "id": "db",
            "question": "Which database?",
            "options": [{"label": "PostgreSQL", "id": "pg"}, {"label": "pg", "id": "lite"}],
        },
        {
            "id": "tags",
            "question": "Which tags?",
            "options": [{"label": "a"}, {"label": "b"}, {"label": "c"}],
            "multi": True,
            "min_choices": 0,
        },
        {"id": "name", "question": "Name?", "kind": "text"},
    ]
}


def state(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "touched": True,
        "skipped": False,
        "selected": [],
        "other": False,
        "otherText": "",
        "text": "",
    }
    return {**base, **fields}


CASES = [
    (
        [state(selected=[1]), state(selected=[2, 0], other=True, otherText=" x "), state(text="n")],
        [("answered", ("pg",), None), ("answered", ("a", "c"), "x"), ("answered", (), "n")],
    ),
    (
        [state(other=True, otherText="MySQL"), state(), state(text="  ")],
        [("answered", (), "MySQL"), ("answered", (), None), ("skipped", (), None)],
    ),
    (
        [state(selected=[0], skipped=True), state(touched=False), state(text="x", skipped=True)],
        [("skipped", (), None), ("skipped", (), None), ("skipped", (), None)],
    ),
]


@pytest.mark.parametrize(("states", "expected"), CASES, ids=["chosen", "other-empty", "skipped"])
def test_the_tray_payload_reads_back_as_chosen(
    page: Page,
    gateway: LiveGateway,
    states: list[dict[str, Any]],
    expected: list[tuple[str, tuple[str, ...], str | None]],
) -> None:
    ask = midturn.parse_ask(ASK)
    page.goto(f"{gateway.url}/")
    payload = page.evaluate(
        """async ([ask, states]) => {
            const { answerPayload } = await import("/static/api.js");
            const live = states.map((s) => ({ ...s, selected: new Set(s.selected) }));
            return answerPayload(ask, live);
        }""",
        [ask.model_dump(mode="json"), states],
    )
    result = midturn.parse_answer(ask, payload)
    assert [(a.status, a.selected, a.text) for a in result.answers] == expected
