"""The chat box says what it does and sends like a chat (a Send button, Enter sends,
Shift+Enter adds a line, nothing to send while empty); a high-risk permission makes no
decision primary and says so in words and an icon, not colour alone."""

from __future__ import annotations

from playwright.sync_api import Page, expect
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


def test_the_chat_box_sends_on_enter_and_keeps_shift_enter_for_a_new_line(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    asked = agent.ask(ONE, turn_id="t1")
    waiter = agent.wait(asked)
    page.goto(answer_url(gateway, session))
    chat = page.locator(".tray-ask .chat")
    expect(chat.locator(".chat-label")).to_have_text("Reply in chat instead")
    expect(chat.locator(".chat-hint")).to_have_text(
        "Your message goes to the agent in place of an answer, "
        "and it carries on with what you wrote."
    )
    field = page.get_by_role("textbox", name="Reply in chat instead")
    send = chat.get_by_role("button", name="Send")
    expect(send).to_be_visible()
    expect(send).to_be_disabled()

    field.focus()
    page.keyboard.press("Enter")  # nothing to send: nothing happens
    page.keyboard.type("   ")
    expect(send).to_be_disabled()
    page.keyboard.press("Enter")
    assert not waiter.done()

    field.fill("")
    page.keyboard.type("Use MySQL,")
    expect(send).to_be_enabled()
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("and stop asking")
    expect(field).to_have_value("Use MySQL,\nand stop asking")
    assert not waiter.done()
    page.keyboard.press("Enter")

    settled = waiter.result(SAFETY_S)
    assert settled.status == "redirected"
    assert settled.result is not None
    assert settled.result.message == "Use MySQL,\nand stop asking"
    expect(page.locator(".tray")).to_have_count(0)


def button_looks(page: Page, name: str) -> dict[str, str]:
    style: dict[str, str] = (
        page.locator(".tray-permission")
        .get_by_role("button", name=name, exact=True)
        .evaluate(
            "b => { const s = getComputedStyle(b); "
            "return {background: s.backgroundColor, color: s.color, weight: s.fontWeight}; }"
        )
    )
    return style


def test_a_high_risk_permission_has_no_primary_action_and_says_it_is_risky(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    asked = agent.request_permission(
        tool="bash", summary="rm -rf build/ && ./deploy.sh --prod", risk="high", turn_id="t1"
    )
    waiter = agent.wait(asked)
    page.goto(answer_url(gateway, session))
    tray = page.locator(".tray-permission")
    expect(tray).to_be_visible()
    banner = tray.locator(".risk-banner")
    expect(banner).to_be_visible()
    expect(banner).to_have_text(
        "⚠High risk. Read the command and its details before you decide; no choice is made for you."
    )
    expect(tray.locator(".primary")).to_have_count(0)
    # Allow and Allow for this turn look alike: neither is the obvious default.
    assert button_looks(page, "Allow") == button_looks(page, "Allow for this turn")
    # The focus is on the tray, not on a decision, and Enter there decides nothing.
    expect(tray).to_be_focused()
    page.keyboard.press("Enter")
    page.keyboard.press("Space")
    assert not waiter.done()
    expect(tray).to_be_visible()
    # 1–4 move to a decision without pressing it; Enter presses the focused one.
    page.keyboard.press("3")
    expect(tray.get_by_role("button", name="Deny")).to_be_focused()
    page.keyboard.press("ArrowLeft")
    expect(tray.get_by_role("button", name="Allow for this turn")).to_be_focused()
    assert not waiter.done()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    assert waiter.result(SAFETY_S).status == "denied"


def test_a_low_risk_permission_keeps_allow_primary(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    agent.request_permission(tool="read_file", summary="Read README.md", risk="low", turn_id="t1")
    page.goto(answer_url(gateway, session))
    tray = page.locator(".tray-permission")
    expect(tray.get_by_role("button", name="Allow", exact=True)).to_have_class("primary")
    expect(tray.locator(".risk-banner")).to_have_count(0)
    assert button_looks(page, "Allow") != button_looks(page, "Allow for this turn")
