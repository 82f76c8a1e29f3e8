"""Enter never skips: the recommended option is preselected (and marked), Enter picks the
focused option and confirms, and skipping stays the explicit Skip question control."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect
from tests.web.conftest import SAFETY_S, Agent, LiveGateway, Session, answer_url


def one_question(recommended: str | None = None) -> dict[str, Any]:
    question: dict[str, Any] = {
        "id": "name",
        "header": "Name",
        "question": "What should the service be called?",
        "options": [
            {"label": "billing-api", "description": "Says what it does"},
            {"label": "payments", "description": "Short"},
        ],
    }
    if recommended is not None:
        question["recommended"] = recommended
    return {"questions": [question]}


def test_one_enter_answers_with_the_recommended_option(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    asked = agent.ask(one_question(recommended="payments"), turn_id="t1")
    waiter = agent.wait(asked)
    page.goto(answer_url(gateway, session))
    tray = page.locator(".tray-ask")
    recommended = tray.get_by_role("radio", name="payments")
    # Preselected, focused, and visibly marked as the recommendation.
    expect(recommended).to_be_checked()
    expect(recommended).to_be_focused()
    expect(tray.locator(".option.recommended .badge")).to_have_text("Recommended")
    expect(tray.locator(".option.recommended .label")).to_have_text("payments")

    page.keyboard.press("Enter")
    settled = waiter.result(SAFETY_S)
    assert settled.status == "answered"
    assert settled.result is not None
    assert settled.result.answers[0].selected == ("payments",)
    assert settled.result.answers[0].status == "answered"


def test_without_a_recommendation_enter_picks_the_focused_option(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    asked = agent.ask(one_question(), turn_id="t1")
    waiter = agent.wait(asked)
    page.goto(answer_url(gateway, session))
    tray = page.locator(".tray-ask")
    first = tray.get_by_role("radio", name="billing-api")
    expect(first).to_be_focused()
    expect(tray.locator("input:checked")).to_have_count(0)

    page.keyboard.press("Enter")
    settled = waiter.result(SAFETY_S)
    assert settled.status == "answered", "Enter must never submit a skip"
    assert settled.result is not None
    assert settled.result.answers[0].selected == ("billing-api",)


def test_enter_with_nothing_chosen_in_the_other_field_does_not_skip(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    asked = agent.ask(one_question(), turn_id="t1")
    waiter = agent.wait(asked)
    page.goto(answer_url(gateway, session))
    tray = page.locator(".tray-ask")
    tray.get_by_label("Other: your own answer").focus()
    page.keyboard.press("Enter")
    expect(tray.locator(".error")).to_have_text(
        "Nothing is chosen yet. Choose an option, or press Skip question to leave it unanswered."
    )
    expect(tray).to_be_visible()
    assert not waiter.done()

    # The same for the Submit button: a single question never goes in as a silent skip.
    tray.get_by_role("button", name="Submit").click()
    expect(tray.locator(".error")).to_be_visible()
    assert not waiter.done()

    # Skipping is the explicit control.
    tray.get_by_role("button", name="Skip question").click()
    settled = waiter.result(SAFETY_S)
    assert settled.status == "skipped"


def test_a_multi_select_preselects_the_recommendation_and_enter_confirms_it(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    ask = {
        "questions": [
            {
                "id": "features",
                "header": "Features",
                "question": "Which features ship first?",
                "options": [{"label": "Auth"}, {"label": "Billing"}, {"label": "Search"}],
                "multi": True,
                "recommended": "Billing",
            }
        ]
    }
    asked = agent.ask(ask, turn_id="t1")
    waiter = agent.wait(asked)
    page.goto(answer_url(gateway, session))
    tray = page.locator(".tray-ask")
    expect(tray.get_by_role("checkbox", name="Billing")).to_be_checked()
    expect(tray.get_by_role("checkbox", name="Billing")).to_be_focused()
    page.keyboard.press("Space")  # Space toggles
    expect(tray.get_by_role("checkbox", name="Billing")).not_to_be_checked()
    page.keyboard.press("Space")
    page.keyboard.press("ArrowDown")  # arrows move between checkboxes too
    expect(tray.get_by_role("checkbox", name="Search")).to_be_focused()
    page.keyboard.press("Space")
    page.keyboard.press("Enter")
    settled = waiter.result(SAFETY_S)
    assert settled.result is not None
    assert settled.result.answers[0].selected == ("Billing", "Search")
