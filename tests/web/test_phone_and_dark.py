"""Two whole journeys: one on a phone (390×844, by touch alone), one in dark mode."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect
from tests.web.conftest import (
    SAFETY_S,
    Agent,
    LiveGateway,
    Session,
    answer_url,
    assert_accessible,
    open_page,
)

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
            "options": [{"label": "Auth"}, {"label": "Billing"}, {"label": "Search"}],
            "multi": True,
        },
    ]
}


def fits(page: Page) -> None:
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], f"the page scrolls sideways: {width}"


def test_a_phone_journey_by_touch(
    browser: Any, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    permission = agent.request_permission(
        tool="bash", summary="make test", risk="medium", turn_id="t1"
    )
    asked = agent.ask(ASK, turn_id="t1")
    permission_waiter, ask_waiter = agent.wait(permission), agent.wait(asked)
    phone = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
    with open_page(browser, **phone) as page:
        page.goto(answer_url(gateway, session))
        tray = page.locator(".tray-permission")
        expect(tray).to_be_visible()
        fits(page)
        tray.get_by_role("button", name="Allow", exact=True).tap()
        assert permission_waiter.result(SAFETY_S).status == "allowed"

        questions = page.locator(".tray-ask")
        expect(questions.locator(".progress")).to_have_text("1 / 2")
        expect(questions.get_by_role("radio", name="PostgreSQL")).to_be_checked()
        fits(page)
        questions.locator(".option", has_text="SQLite").tap()
        expect(questions.get_by_role("radio", name="SQLite")).to_be_checked()
        questions.get_by_role("button", name="Next").tap()

        expect(questions.locator(".progress")).to_have_text("2 / 2")
        questions.locator(".option", has_text="Billing").tap()
        questions.locator(".option", has_text="Search").tap()
        expect(questions.get_by_role("checkbox", name="Billing")).to_be_checked()
        fits(page)
        questions.get_by_role("button", name="Review").tap()

        expect(questions.locator(".review-answer")).to_have_text(["SQLite", "Billing, Search"])
        fits(page)
        questions.get_by_role("button", name="Change the answer to Features").tap()
        questions.locator(".option", has_text="Search").tap()  # off again
        questions.get_by_role("button", name="Review").tap()
        expect(questions.locator(".review-answer")).to_have_text(["SQLite", "Billing"])
        submit = questions.get_by_role("button", name="Submit")
        box = submit.bounding_box()
        assert box is not None and box["y"] > 844 / 2  # under the thumb
        submit.tap()

        settled = ask_waiter.result(SAFETY_S)
        assert settled.result is not None
        assert [a.answer for a in settled.result.answers] == ["SQLite", "Billing"]
        expect(page.locator("#composer")).to_be_visible()
        page.locator("#draft").tap()
        page.keyboard.type("thanks")
        expect(page.locator("#draft")).to_have_value("thanks")
        fits(page)


def luminance(rgb: str) -> float:
    """The relative luminance of a computed `rgb(r, g, b)` colour."""
    parts = [int(p) for p in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3]]

    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in parts)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def colours(page: Page, selector: str) -> tuple[float, float]:
    style = page.locator(selector).first.evaluate(
        "e => { const s = getComputedStyle(e); return [s.backgroundColor, s.color]; }"
    )
    return luminance(style[0]), luminance(style[1])


def test_a_dark_mode_journey(
    browser: Any, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    permission = agent.request_permission(
        tool="bash", summary="rm -rf build/", risk="high", details="rm -rf build/", turn_id="t1"
    )
    asked = agent.ask(ASK, turn_id="t1")
    permission_waiter, ask_waiter = agent.wait(permission), agent.wait(asked)
    with open_page(browser, color_scheme="dark") as page:
        page.goto(answer_url(gateway, session))
        tray = page.locator(".tray-permission")
        expect(tray).to_be_visible()
        # Light text on dark surfaces, from prefers-color-scheme alone.
        background, text = colours(page, "body")
        assert background < 0.05 < text, (background, text)
        panel, ink = colours(page, ".tray")
        assert panel < 0.05 < ink, (panel, ink)
        assert_accessible(page, "the high-risk permission in dark mode")
        tray.locator("details summary").click()
        assert_accessible(page, "its details in dark mode")
        page.keyboard.press("2")
        page.keyboard.press("Enter")
        assert permission_waiter.result(SAFETY_S).decision is not None

        questions = page.locator(".tray-ask")
        expect(questions.get_by_role("radio", name="PostgreSQL")).to_be_focused()
        assert_accessible(page, "a question in dark mode")
        page.keyboard.press("Enter")
        page.keyboard.press("1")
        page.keyboard.press("Enter")
        expect(questions.locator(".progress")).to_have_text("Review")
        assert_accessible(page, "the review in dark mode")
        page.keyboard.press("Enter")
        settled = ask_waiter.result(SAFETY_S)
        assert settled.result is not None
        assert [a.answer for a in settled.result.answers] == ["PostgreSQL", "Auth"]
        expect(page.locator("#draft")).to_be_focused()
        assert_accessible(page, "the session view in dark mode")


def test_a_tall_question_scrolls_inside_the_tray_and_the_actions_stay_on_a_phone(
    browser: Any, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    long = "A description long enough to wrap onto three or four lines on a phone screen. " * 2
    ask = {
        "questions": [
            {
                "id": "plan",
                "header": "Plan",
                "question": "Which migration plan should the agent follow tonight?",
                "options": [{"label": f"Plan {n}", "description": long} for n in "ABCD"],
            },
            {"id": "why", "header": "Why", "question": "Anything the agent should know?"},
        ]
    }
    agent.ask(ask, turn_id="t1")
    phone = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
    with open_page(browser, **phone) as page:
        page.goto(answer_url(gateway, session))
        tray = page.locator(".tray-ask")
        expect(tray).to_be_visible()
        step = tray.locator(".step").evaluate("e => [e.scrollHeight, e.clientHeight]")
        assert step[0] > step[1], f"the question should scroll inside the tray: {step}"
        nav = tray.locator(".nav").bounding_box()
        assert nav is not None
        assert nav["y"] > 844 / 2 and nav["y"] + nav["height"] <= 844, nav
        page_height = page.evaluate("[document.documentElement.scrollHeight, innerHeight]")
        assert page_height[0] <= page_height[1], f"the page itself scrolls: {page_height}"
        fits(page)
        # The last option is reachable by touch: scroll it into view and tap it.
        last = tray.locator(".option", has_text="Plan D")
        last.scroll_into_view_if_needed()
        last.tap()
        expect(tray.get_by_role("radio", name="Plan D")).to_be_checked()
        tray.get_by_role("button", name="Next").tap()
        expect(tray.locator(".progress")).to_have_text("2 / 2")
