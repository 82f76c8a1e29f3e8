"""The same keys in every tray, as in the terminal picker: 1–9 pick, ↑↓ move, ←→
previous / next question, Space toggles, Enter confirms, Esc backs out (never skips), and
`?` opens a focus-trapped overlay of every shortcut that Esc closes."""

from __future__ import annotations

from playwright.sync_api import Page, expect
from tests.web.conftest import SAFETY_S, Agent, LiveGateway, Session, answer_url

ASK = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database?",
            "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}, {"label": "MySQL"}],
        },
        {
            "id": "features",
            "header": "Features",
            "question": "Which features ship first?",
            "options": [{"label": "Auth"}, {"label": "Billing"}],
            "multi": True,
        },
    ]
}


def active(page: Page) -> str:
    return str(page.evaluate("document.activeElement.outerHTML.slice(0, 120)"))


def test_number_keys_arrows_and_esc_in_the_question_tray(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    asked = agent.ask(ASK, turn_id="t1")
    waiter = agent.wait(asked)
    page.goto(answer_url(gateway, session))
    tray = page.locator(".tray-ask")
    expect(tray.get_by_role("radio", name="PostgreSQL")).to_be_focused()
    # The options show their numbers (to sighted keyboard users; not in their names).
    expect(tray.locator(".option .key-hint")).to_have_text(["1", "2", "3", "4"])

    page.keyboard.press("3")
    expect(tray.get_by_role("radio", name="MySQL")).to_be_checked()
    expect(tray.get_by_role("radio", name="MySQL")).to_be_focused()
    tray.get_by_role("button", name="Stop turn").focus()  # anywhere in the tray
    page.keyboard.press("2")
    expect(tray.get_by_role("radio", name="SQLite")).to_be_checked()
    expect(tray.get_by_role("radio", name="SQLite")).to_be_focused()
    expect(tray.locator(".progress")).to_have_text("1 / 2")  # a pick never moves on

    page.keyboard.press("ArrowRight")  # next question
    expect(tray.locator(".progress")).to_have_text("2 / 2")
    page.keyboard.press("1")
    page.keyboard.press("2")
    expect(tray.get_by_role("checkbox", name="Auth")).to_be_checked()
    expect(tray.get_by_role("checkbox", name="Billing")).to_be_checked()
    page.keyboard.press("1")  # toggles back off
    expect(tray.get_by_role("checkbox", name="Auth")).not_to_be_checked()

    page.keyboard.press("3")  # Other: the focus goes to its field
    expect(tray.get_by_label("Other: your own answer")).to_be_focused()
    page.keyboard.type("Audit 2")  # digits type in a text field
    expect(tray.get_by_label("Other: your own answer")).to_have_value("Audit 2")
    page.keyboard.press("Escape")  # back to the options, nothing skipped
    expect(tray.get_by_role("checkbox", name="Billing")).to_be_focused()
    expect(tray.locator(".progress")).to_have_text("2 / 2")

    page.keyboard.press("ArrowLeft")  # previous question: the pick is kept
    expect(tray.locator(".progress")).to_have_text("1 / 2")
    expect(tray.get_by_role("radio", name="SQLite")).to_be_checked()
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    expect(tray.locator(".progress")).to_have_text("Review")
    page.keyboard.press("Escape")  # backs out of the review
    expect(tray.locator(".progress")).to_have_text("2 / 2")
    page.keyboard.press("Enter")
    expect(tray.locator(".review-answer")).to_have_text(["SQLite", 'Billing, "Audit 2"'])
    assert not waiter.done()
    page.keyboard.press("Enter")

    settled = waiter.result(SAFETY_S)
    assert settled.result is not None
    assert [a.answer for a in settled.result.answers] == ["SQLite", "Billing, Audit 2"]


def test_question_mark_opens_a_focus_trapped_overlay_that_esc_closes(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    agent.ask(ASK, turn_id="t1")
    page.goto(answer_url(gateway, session))
    radio = page.locator(".tray-ask").get_by_role("radio", name="PostgreSQL")
    expect(radio).to_be_focused()

    page.keyboard.press("?")
    overlay = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(overlay).to_be_visible()
    expect(overlay.get_by_role("button", name="Close")).to_be_focused()
    expect(overlay).to_contain_text("Pick that option (toggle it in a multi-select)")
    for key in ["Tab", "Tab", "Tab", "Shift+Tab", "Shift+Tab", "Shift+Tab", "Shift+Tab"]:
        page.keyboard.press(key)
        inside = page.evaluate("document.querySelector('dialog').contains(document.activeElement)")
        assert inside, f"the focus left the overlay after {key}: {active(page)}"
    page.keyboard.press("1")  # the tray behind is inert
    expect(page.locator(".tray-ask").get_by_role("radio", name="PostgreSQL")).not_to_be_checked()
    page.keyboard.press("Escape")
    expect(overlay).to_be_hidden()
    expect(radio).to_be_focused()  # the focus comes back

    # The header's button opens it too; in a text field `?` is just a character.
    page.get_by_role("button", name="Keyboard shortcuts").click()
    expect(overlay).to_be_visible()
    overlay.get_by_role("button", name="Close").click()
    expect(overlay).to_be_hidden()
    # The dialog's close event (which gives the focus back) comes a task after it hides:
    # a field focused before it would lose the focus to the button again.
    expect(page.get_by_role("button", name="Keyboard shortcuts")).to_be_focused()
    other = page.get_by_label("Other: your own answer")
    other.focus()
    page.keyboard.type("why?")
    expect(other).to_have_value("why?")
    expect(overlay).to_be_hidden()


def test_esc_closes_the_permission_details_and_leaves_the_note(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    asked = agent.request_permission(
        tool="bash", summary="make deploy", details="step 1\nstep 2", risk="medium", turn_id="t1"
    )
    waiter = agent.wait(asked)
    page.goto(answer_url(gateway, session))
    tray = page.locator(".tray-permission")
    tray.locator("details summary").click()
    expect(tray.locator(".details-body")).to_be_visible()
    page.keyboard.press("Escape")
    expect(tray.locator(".details-body")).to_be_hidden()
    expect(tray.locator("details summary")).to_be_focused()

    note = tray.get_by_label("Note for the agent, sent with Deny")
    note.focus()
    page.keyboard.type("1 2 3")  # digits type in the note; nothing is pressed
    page.keyboard.press("Escape")
    expect(tray).to_be_focused()
    page.keyboard.press("1")
    expect(tray.get_by_role("button", name="Allow", exact=True)).to_be_focused()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(tray.get_by_role("button", name="Deny")).to_be_focused()
    page.keyboard.press("Enter")
    denied = waiter.result(SAFETY_S)
    assert denied.status == "denied"
    assert denied.decision is not None
    assert denied.decision.message == "1 2 3"
