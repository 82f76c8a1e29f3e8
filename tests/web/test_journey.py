"""The whole journey in a browser: a permission and a three-question ask made in
parallel, answered from the web inbox, by mouse and by keyboard alone."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect
from tests.web.conftest import SAFETY_S, Agent, LiveGateway, Session, answer_url, screenshot

ASK = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use?",
            "options": [
                {"label": "PostgreSQL", "description": "Managed, scales out"},
                {"label": "SQLite", "description": "Embedded, zero setup"},
            ],
            "recommended": "PostgreSQL",
        },
        {
            "id": "features",
            "header": "Features",
            "question": "Which features ship first?",
            "options": [
                {"label": "Auth", "description": "Sign-in and sessions"},
                {"label": "Billing", "description": "Plans and invoices"},
            ],
            "multi": True,
        },
        {
            "id": "region",
            "header": "Region",
            "question": "Where should it run?",
            "options": [{"label": "eu-west-1"}, {"label": "us-east-1"}],
        },
    ]
}

EXPECTED_ANSWERS = [
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
        "question": "Which features ship first?",
        "status": "answered",
        "selected": [],
        "text": "Audit log",
        "answer": "Audit log",
        "auto_selected": False,
    },
    {
        "id": "region",
        "header": "Region",
        "question": "Where should it run?",
        "status": "skipped",
        "selected": [],
        "text": None,
        "answer": None,
        "auto_selected": False,
    },
]

DETAILS = "\n".join(
    ["--- a/build.sh", "+++ b/build.sh", "@@ -1,3 +1,40 @@"]
    + [f"+echo step {n}: compile module {n}" for n in range(60)]
)


def park_both(agent: Agent) -> tuple[Any, Any]:
    """The agent's two parallel tool calls: the permission first, then the ask."""
    permission = agent.request_permission(
        tool="bash",
        summary="rm -rf build/ && ./build.sh",
        risk="high",
        details=DETAILS,
        tool_call_id="call-perm",
        turn_id="turn-1",
    )
    ask = agent.ask(ASK, tool_call_id="call-ask", turn_id="turn-1")
    return permission, ask


def tray_question(page: Page) -> str:
    return page.locator(".tray-ask .question").inner_text()


def test_the_journey_with_a_mouse(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    permission, ask = park_both(agent)
    permission_waiter = agent.wait(permission)
    ask_waiter = agent.wait(ask)
    page.goto(answer_url(gateway, session))

    # The permission came first, so it holds the composer slot; the ask waits behind it.
    tray = page.locator(".tray-permission")
    expect(tray).to_be_visible()
    expect(tray.locator(".summary")).to_have_text("rm -rf build/ && ./build.sh")
    expect(tray.locator(".risk")).to_have_text("High risk")
    expect(tray.locator(".more")).to_have_text("1 more waiting")
    expect(page.locator(".tray-ask")).to_have_count(0)
    expect(page.locator("#composer")).to_be_hidden()
    expect(page.locator("#announcer")).to_have_text(
        "Permission to run bash: rm -rf build/ && ./build.sh"
    )
    screenshot(tray, "permission-tray")
    tray.get_by_role("button", name="Allow", exact=True).click()
    assert permission_waiter.result(SAFETY_S).status == "allowed"

    # Question 1: an option (descriptions and the recommended mark are shown).
    questions = page.locator(".tray-ask")
    expect(questions).to_be_visible()
    expect(questions.locator(".progress")).to_have_text("1 / 3")
    expect(questions.locator(".chip")).to_have_text("Database")
    expect(questions.locator(".option.recommended .label")).to_have_text("PostgreSQL")
    expect(questions.get_by_text("Embedded, zero setup")).to_be_visible()
    screenshot(questions, "question-tray")
    questions.get_by_role("radio", name="PostgreSQL").check()
    # A choice never advances by itself.
    expect(questions.locator(".progress")).to_have_text("1 / 3")
    questions.get_by_role("button", name="Next").click()

    # Question 2: Other with free text (typing selects Other).
    expect(questions.locator(".progress")).to_have_text("2 / 3")
    questions.get_by_label("Other: your own answer").fill("Audit log")
    expect(questions.get_by_role("checkbox", name="Other")).to_be_checked()
    questions.get_by_role("button", name="Next").click()

    # Question 3: skipped.
    expect(questions.locator(".progress")).to_have_text("3 / 3")
    expect(questions.get_by_role("button", name="Review")).to_be_visible()
    questions.get_by_role("button", name="Skip question").click()
    expect(questions.locator(".progress")).to_have_text("Review")

    # Previous, back to question 1: its answer is kept.
    for step in ("3 / 3", "2 / 3", "1 / 3"):
        questions.get_by_role("button", name="Previous").click()
        expect(questions.locator(".progress")).to_have_text(step)
        if step == "2 / 3":
            expect(questions.get_by_label("Other: your own answer")).to_have_value("Audit log")
    expect(questions.get_by_role("radio", name="PostgreSQL")).to_be_checked()
    questions.get_by_role("button", name="Next").click()
    questions.get_by_role("button", name="Next").click()
    questions.get_by_role("button", name="Review").click()

    # The review lists every answer; one submit.
    review = questions.locator(".review li")
    expect(review).to_have_count(3)
    expect(review.nth(0).locator(".review-answer")).to_have_text("PostgreSQL")
    expect(review.nth(1).locator(".review-answer")).to_have_text('"Audit log"')
    expect(review.nth(2).locator(".review-answer")).to_have_text("(skipped)")
    screenshot(questions, "review")
    questions.get_by_role("button", name="Submit").click()

    settled = ask_waiter.result(SAFETY_S)
    assert settled.status == "answered"
    assert settled.result is not None
    result = settled.result.model_dump(mode="json")
    assert result == {"outcome": "answered", "answers": EXPECTED_ANSWERS, "message": None}
    expect(page.locator(".tray")).to_have_count(0)
    expect(page.locator("#composer")).to_be_visible()


def focused(page: Page) -> str:
    """The focused control's label: its aria-label, else its text without the parts
    hidden from assistive technology (the number-key hints), else its value."""
    return str(
        page.evaluate(
            """() => {
                const node = document.activeElement;
                const copy = node.cloneNode(true);
                for (const hidden of copy.querySelectorAll("[aria-hidden=true]")) hidden.remove();
                const text = copy.textContent.trim();
                return node.getAttribute("aria-label") || text || node.value || "";
            }"""
        )
    )


def tab_to(page: Page, name: str, *, back: bool = False) -> None:
    """Press Tab (Shift+Tab with `back`) until the focused control is `name`."""
    for _ in range(30):
        if focused(page) == name:
            return
        page.keyboard.press("Shift+Tab" if back else "Tab")
    raise AssertionError(f"Tab never reached {name!r}; focus is on {focused(page)!r}")


def test_the_journey_by_keyboard_alone(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    permission, ask = park_both(agent)
    permission_waiter = agent.wait(permission)
    ask_waiter = agent.wait(ask)
    page.goto(answer_url(gateway, session))
    expect(page.locator(".tray-permission")).to_be_focused()

    tab_to(page, "Allow")
    page.keyboard.press("Enter")
    assert permission_waiter.result(SAFETY_S).status == "allowed"

    # The question tray takes the focus, on question 1's first option.
    questions = page.locator(".tray-ask")
    expect(questions.get_by_role("radio", name="PostgreSQL")).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(questions.get_by_role("radio", name="SQLite")).to_be_checked()
    page.keyboard.press("ArrowUp")
    expect(questions.get_by_role("radio", name="PostgreSQL")).to_be_checked()
    page.keyboard.press("Enter")

    expect(questions.locator(".progress")).to_have_text("2 / 3")
    expect(questions.get_by_role("checkbox", name="Auth")).to_be_focused()
    page.keyboard.press("Space")
    expect(questions.get_by_role("checkbox", name="Auth")).to_be_checked()
    page.keyboard.press("Space")
    expect(questions.get_by_role("checkbox", name="Auth")).not_to_be_checked()
    tab_to(page, "Other: your own answer")
    page.keyboard.type("Audit log")
    page.keyboard.press("Enter")

    expect(questions.locator(".progress")).to_have_text("3 / 3")
    tab_to(page, "Skip question")
    page.keyboard.press("Enter")
    expect(questions.locator(".progress")).to_have_text("Review")

    # Back to question 1 by keyboard: its answer is kept.
    expect(questions.get_by_role("button", name="Submit")).to_be_focused()
    for step in ("3 / 3", "2 / 3", "1 / 3"):
        tab_to(page, "Previous", back=step == "3 / 3")
        page.keyboard.press("Enter")
        expect(questions.locator(".progress")).to_have_text(step)
    expect(questions.get_by_role("radio", name="PostgreSQL")).to_be_checked()
    expect(questions.get_by_role("radio", name="PostgreSQL")).to_be_focused()
    page.keyboard.press("Enter")
    expect(questions.locator(".progress")).to_have_text("2 / 3")
    page.keyboard.press("Enter")
    expect(questions.locator(".progress")).to_have_text("3 / 3")
    page.keyboard.press("Enter")
    expect(questions.locator(".progress")).to_have_text("Review")
    page.keyboard.press("Enter")

    settled = ask_waiter.result(SAFETY_S)
    assert settled.result is not None
    result = settled.result.model_dump(mode="json")
    assert result == {"outcome": "answered", "answers": EXPECTED_ANSWERS, "message": None}
    # The composer comes back with the focus.
    expect(page.locator("#draft")).to_be_focused()
