"""Sessions are labelled: the session header and the admin inbox show the title given at
creation (the id small, whole in the tooltip), and a tray says who is asking — the
agent's name, what it was doing, the tool call — as text, without bidi controls."""

from __future__ import annotations

import json

from playwright.sync_api import Page, expect
from tests.web._labelled import agent_of, titled_session
from tests.web.conftest import ADMIN_TOKEN, LiveGateway, answer_url, screenshot

IMG = '<img src=x onerror="window.__pwned=1">'
RLO = "\u202e"
ASK = {"questions": [{"question": "Which database?", "options": ["PostgreSQL", "SQLite"]}]}


def test_the_header_and_the_tray_say_which_session_and_who_is_asking(
    page: Page, gateway: LiveGateway
) -> None:
    session = titled_session(
        gateway,
        {
            "title": f"Billing {RLO}service{IMG}",
            "team": "payments",
            "ticket": 42,
            "repo": {"name": f"billing{IMG}"},
        },
    )
    with agent_of(gateway, session) as agent:
        agent.ask(
            ASK,
            turn_id="t1",
            context={
                "agent": f"release-bot{RLO}{IMG}",
                "doing": f"Setting up billing.{RLO} <script>window.__pwned=2</script>",
                "tool": {"name": "ask_user_question", "input": {"why": "db"}},
            },
        )
        page.goto(answer_url(gateway, session))
        where = page.locator("#where")
        expect(where.locator(".session-title")).to_have_text(f"Session: Billing service{IMG}")
        expect(where.locator(".session-id")).to_have_text(session.session_id[:13] + "…")
        assert where.get_attribute("title") == session.session_id
        nested = json.dumps({"name": f"billing{IMG}"}, separators=(",", ":"))
        expect(page.locator(".session-meta")).to_have_text(
            f"team: payments · ticket: 42 · repo: {nested}"
        )
        asked = page.locator(".asked-by")
        expect(asked.locator(".asked-agent")).to_have_text(f"release-bot{IMG} asks")
        expect(asked.locator(".asked-doing")).to_have_text(
            "Setting up billing. <script>window.__pwned=2</script>"
        )
        expect(asked.locator(".asked-tool code")).to_have_text('ask_user_question {"why":"db"}')
        # It sits right above the tray, and goes with it.
        assert page.evaluate(
            "document.querySelector('.asked-by').nextElementSibling.classList.contains('tray')"
        )
        assert not page.evaluate(f"document.body.innerText.includes('{RLO}')")
        assert page.evaluate("window.__pwned === undefined")
        assert page.locator("main img, main script, .bar img").count() == 0
        page.get_by_role("radio", name="SQLite").check()
        page.get_by_role("button", name="Submit").click()
        expect(page.locator(".asked-by")).to_have_count(0)


def test_the_inbox_rows_show_the_title_and_the_agent(page: Page, gateway: LiveGateway) -> None:
    titled = titled_session(gateway, {"title": "Nightly release"})
    untitled = titled_session(gateway, {"owner": "ops"})
    with agent_of(gateway, titled) as one, agent_of(gateway, untitled) as two:
        one.ask(
            ASK,
            turn_id="t1",
            context={
                "agent": "release-bot",
                "doing": "The release branch is ready; the billing migrations need a database.",
                "tool": {"name": "ask_user_question", "input": {"questions": 1}},
            },
        )
        two.request_permission(tool="bash", summary="make deploy", turn_id="t1")
        page.goto(f"{gateway.url}/#token={ADMIN_TOKEN}")
        row = page.locator(".inbox-row", has_text="Nightly release")
        expect(row.locator(".session-title")).to_have_text("Session: Nightly release")
        expect(row.locator(".inbox-agent")).to_have_text("release-bot asks")
        other = page.locator(".inbox-row", has_text="make deploy")
        expect(other.locator(".inbox-session")).to_have_text(f"Session {untitled.session_id}")
        expect(other.locator(".inbox-agent")).to_have_count(0)
        row.locator("a").click()
        expect(page.locator("#where .session-title")).to_have_text("Session: Nightly release")
        expect(page.locator(".asked-by .asked-doing")).to_contain_text("release branch")
        screenshot(page.locator("#slot"), "asked-by")
