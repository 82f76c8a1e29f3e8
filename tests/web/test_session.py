"""The session view: the composer slot, reloads, drafts, live settles from elsewhere,
chat instead of an answer, and the lock while a submit is in flight."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, Route, expect
from tests.web.conftest import SAFETY_S, Agent, LiveGateway, Session, answer_url

ONE = {
    "questions": [
        {
            "id": "name",
            "header": "Name",
            "question": "What should the service be called?",
            "options": [{"label": "billing-api"}, {"label": "payments"}],
        }
    ]
}
DRAFT = "Half a thought about the schema:\n  - keep invoices immutable"


def composer_is_back_with_the_draft(page: Page) -> None:
    expect(page.locator(".tray")).to_have_count(0)
    expect(page.locator("#composer")).to_be_visible()
    expect(page.locator("#draft")).to_have_value(DRAFT)


def test_the_draft_survives_allow_deny_answer_stop_and_a_reload(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    page.goto(answer_url(gateway, session))
    expect(page.locator("#conn")).to_have_text("Live")
    page.locator("#draft").fill(DRAFT)

    # A permission takes over the slot; a reload in the middle shows it again.
    first = agent.request_permission(tool="bash", summary="make test", turn_id="t1")
    waiter = agent.wait(first)
    expect(page.locator(".tray-permission .summary")).to_have_text("make test")
    expect(page.locator("#composer")).to_be_hidden()
    page.reload()
    expect(page.locator(".tray-permission .summary")).to_have_text("make test")
    page.get_by_role("button", name="Allow", exact=True).click()
    assert waiter.result(SAFETY_S).status == "allowed"
    composer_is_back_with_the_draft(page)

    # Deny, with a note for the agent.
    second = agent.request_permission(tool="bash", summary="rm -rf /", risk="high", turn_id="t2")
    waiter = agent.wait(second)
    page.get_by_label("Note for the agent, sent with Deny").fill("Never the root folder.")
    page.get_by_role("button", name="Deny").click()
    denied = waiter.result(SAFETY_S)
    assert denied.status == "denied"
    assert denied.decision is not None
    assert denied.decision.message == "Never the root folder."
    composer_is_back_with_the_draft(page)

    # An answer (a one-question ask submits on the question itself).
    third = agent.ask(ONE, turn_id="t3")
    waiter = agent.wait(third)
    page.get_by_role("radio", name="payments").check()
    page.get_by_role("button", name="Submit").click()
    answered = waiter.result(SAFETY_S)
    assert answered.result is not None
    assert answered.result.answers[0].selected == ("payments",)
    composer_is_back_with_the_draft(page)

    # Stop turn cancels everything the turn parked.
    fourth = agent.ask(ONE, turn_id="t4")
    fifth = agent.request_permission(tool="deploy", summary="ship it", turn_id="t4")
    waiters = [agent.wait(fourth), agent.wait(fifth)]
    expect(page.locator(".tray-ask .more")).to_have_text("1 more waiting")
    page.get_by_role("button", name="Stop turn").click()
    assert [w.result(SAFETY_S).status for w in waiters] == ["cancelled", "cancelled"]
    composer_is_back_with_the_draft(page)

    # And the draft outlives a reload too.
    page.reload()
    expect(page.locator("#draft")).to_have_value(DRAFT)


def test_an_interaction_settled_elsewhere_disappears(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    page.goto(answer_url(gateway, session))
    asked = agent.ask(ONE, turn_id="t1")
    expect(page.locator(".tray-ask")).to_be_visible()
    page.get_by_role("radio", name="billing-api").check()

    # Another answerer (a second tab, the terminal) answers first.
    agent.as_answerer(lambda client: client.answer(asked.id, {"answers": {"name": "payments"}}))
    expect(page.locator(".tray")).to_have_count(0)
    expect(page.locator("#slot-notice")).to_have_text("That request was settled elsewhere.")
    expect(page.locator("#composer")).to_be_visible()


def test_a_chat_message_instead_of_an_answer_redirects(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    asked = agent.ask(ONE, turn_id="t1")
    waiter = agent.wait(asked)
    page.goto(answer_url(gateway, session))
    page.get_by_label("Reply in chat instead").fill("Actually, let's use MySQL and stop asking")
    page.get_by_role("button", name="Send").click()
    settled = waiter.result(SAFETY_S)
    assert settled.status == "redirected"
    assert settled.result is not None
    assert settled.result.outcome == "redirected"
    assert settled.result.message == "Actually, let's use MySQL and stop asking"
    expect(page.locator(".tray")).to_have_count(0)


def test_controls_are_locked_while_a_submit_is_in_flight(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    asked = agent.ask(ONE, turn_id="t1")
    waiter = agent.wait(asked)
    held: list[Route] = []
    page.route("**/v1/asks/*/answer", lambda route: held.append(route))
    page.goto(answer_url(gateway, session))
    tray = page.locator(".tray-ask")
    tray.get_by_role("radio", name="billing-api").check()
    tray.get_by_role("button", name="Submit").click()

    expect(tray).to_have_attribute("aria-busy", "true")
    controls = tray.locator("button, input, textarea")
    assert controls.count() > 4
    for index in range(controls.count()):
        expect(controls.nth(index)).to_be_disabled()
    assert not waiter.done()

    for _ in range(200):  # each round trip lets Playwright deliver the routed request
        if held:
            break
        page.evaluate("0")
    assert len(held) == 1
    held[0].continue_()
    assert waiter.result(SAFETY_S).status == "answered"
    expect(tray).to_have_count(0)


def test_too_many_choices_are_refused_before_sending(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    ask: dict[str, Any] = {
        "questions": [
            {
                "id": "tags",
                "header": "Tags",
                "question": "Which tags?",
                "options": [{"label": "a"}, {"label": "b"}, {"label": "c"}],
                "multi": True,
                "max_choices": 2,
            }
        ]
    }
    agent.ask(ask, turn_id="t1")
    page.goto(answer_url(gateway, session))
    tray = page.locator(".tray-ask")
    expect(tray.locator(".hint")).to_have_text("Choose 1–2.")
    for label in ("a", "b", "c"):
        tray.get_by_role("checkbox", name=label, exact=True).check()
    tray.get_by_role("button", name="Submit").click()
    expect(tray.get_by_role("alert")).to_have_text("Choose at most 2.")
    tray.get_by_role("checkbox", name="c", exact=True).uncheck()
    expect(tray.get_by_role("alert")).to_be_hidden()
    expect(tray.get_by_role("button", name="Submit")).to_be_enabled()


def test_text_secret_and_multi_select_answers(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    ask: dict[str, Any] = {
        "questions": [
            {
                "id": "about",
                "header": "About",
                "question": "Describe the service in a few lines.",
                "kind": "text",
                "placeholder": "What it does, who uses it",
            },
            {
                "id": "key",
                "header": "Key",
                "question": "Paste the API key.",
                "kind": "text",
                "secret": True,
            },
            {
                "id": "tags",
                "header": "Tags",
                "question": "Which tags apply?",
                "options": [{"label": "internal"}, {"label": "beta"}, {"label": "billing"}],
                "multi": True,
            },
        ]
    }
    asked = agent.ask(ask, turn_id="t1")
    waiter = agent.wait(asked)
    page.goto(answer_url(gateway, session))
    tray = page.locator(".tray-ask")
    about = tray.get_by_role("textbox", name="Describe the service in a few lines.")
    expect(about).to_have_attribute("placeholder", "What it does, who uses it")
    about.fill("Bills customers.\nMonthly.")
    about.press("Control+Enter")
    expect(tray.locator(".progress")).to_have_text("2 / 3")
    key = tray.locator("input[type=password]")
    key.fill("sk-test-123")
    key.press("Enter")
    expect(tray.locator(".progress")).to_have_text("3 / 3")
    tray.get_by_role("checkbox", name="beta").check()
    tray.get_by_role("checkbox", name="internal").check()
    tray.get_by_role("button", name="Review").click()
    review = tray.locator(".review-answer")
    expect(review).to_have_text(['"Bills customers.\nMonthly."', "[secret]", "internal, beta"])
    assert "sk-test-123" not in tray.inner_text()
    tray.get_by_role("button", name="Submit").click()

    settled = waiter.result(SAFETY_S)
    assert settled.result is not None
    about_answer, key_answer, tags_answer = settled.result.answers
    assert about_answer.text == "Bills customers.\nMonthly."
    assert key_answer.answer == "[secret provided]"
    assert tags_answer.selected == ("internal", "beta")
    assert tags_answer.answer == "internal, beta"


def test_requests_settled_before_the_page_opened_stay_in_the_history(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    asked = agent.ask(ONE, turn_id="t1")
    agent.as_answerer(lambda client: client.answer(asked.id, {"answers": {"name": "payments"}}))
    page.goto(answer_url(gateway, session))
    history = page.locator("#history li")
    expect(history).to_have_count(2)
    expect(history.nth(1)).to_contain_text("Answered — Name: payments")
    expect(page.locator("#conn")).to_have_text("Live")
    # The replayed request never shows as a tray, nor as "settled elsewhere".
    expect(page.locator(".tray")).to_have_count(0)
    expect(page.locator("#slot-notice")).to_be_hidden()
    expect(page.locator("#composer")).to_be_visible()


def test_a_request_that_times_out_or_is_cancelled_says_so(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    page.goto(answer_url(gateway, session))
    expect(page.locator("#conn")).to_have_text("Live")
    notice = page.locator("#slot-notice")

    agent.request_permission(tool="bash", summary="make", turn_id="t1", timeout_s=1)
    expect(page.locator(".tray-permission .deadline")).to_contain_text("denied in 0:0")
    expect(notice).to_have_text("That request timed out.")
    expect(page.locator(".tray")).to_have_count(0)

    asked = agent.ask(ONE, turn_id="t2")
    expect(page.locator(".tray-ask")).to_be_visible()
    agent.now(lambda client: client.cancel(asked.id))
    expect(notice).to_have_text("That request was cancelled.")
    expect(page.locator(".tray")).to_have_count(0)


def test_the_typed_answer_of_a_secret_select_is_masked(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    """pi-legacy `sensitivity: secret` on a select: its Other field is a secret field."""
    secret_select = {
        "question": "Which vault holds the key?",
        "kind": "select",
        "options": ["vault-a", "vault-b"],
        "allowCustom": True,
        "sensitivity": "secret",
    }
    asked = agent.ask(secret_select, dialect="pi-legacy", turn_id="t1")
    waiter = agent.wait(asked)
    page.goto(answer_url(gateway, session))
    tray = page.locator(".tray-ask")
    other = tray.locator(".other-text")
    expect(other).to_have_attribute("type", "password")
    other.fill("sk-vault-123")
    assert "sk-vault-123" not in tray.inner_text()
    tray.get_by_role("button", name="Submit").click()
    settled = waiter.result(SAFETY_S)
    assert settled.result is not None
    assert settled.result.answers[0].answer == "[secret provided]"
    assert "sk-vault-123" not in page.locator("body").inner_text()
