"""Browser notifications and the tab title: a new interaction reaching the head of the
queue raises one Notification while the tab is in the background (never for what was
waiting at load, never twice, never while the person looks at the tab), the permission
is asked from the "Notify me" button, and the title counts what waits."""

from __future__ import annotations

import re
import time
from typing import Any

from playwright.sync_api import Page, expect
from tests.web._labelled import agent_of, titled_session
from tests.web.conftest import ADMIN_TOKEN, SAFETY_S, LiveGateway, answer_url

# Keeps the real Notification (a Proxy forwards everything to it) and records each one
# constructed, after the real constructor accepted it.
RECORD = """
(() => {
  const Real = window.Notification;
  window.__notes = [];
  window.__made = [];
  window.Notification = new Proxy(Real, {
    construct(target, args) {
      const made = Reflect.construct(target, args);
      window.__made.push(made);
      window.__notes.push({title: args[0], body: (args[1] || {}).body, tag: (args[1] || {}).tag,
                           real: made instanceof Real});
      return made;
    },
  });
})();
"""


def ask(question: str) -> dict[str, Any]:
    return {"questions": [{"question": question, "options": ["Yes", "No"]}]}


def until(page: Page, expression: str, value: Any) -> None:
    """Until `expression` (evaluated by Playwright, outside the page's CSP) is `value`,
    bounded by the suite's safety timeout."""
    deadline = time.monotonic() + SAFETY_S
    while page.evaluate(expression) != value:
        assert time.monotonic() < deadline, f"{expression} never became {value!r}"
        page.wait_for_timeout(50)


def until_notes(page: Page, count: int) -> None:
    until(page, "window.__notes.length", count)


def notes(page: Page) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = page.evaluate("window.__notes")
    return found


def test_a_new_head_raises_one_notification_in_the_background_and_the_title_counts(
    page: Page, gateway: LiveGateway
) -> None:
    page.context.grant_permissions(["notifications"], origin=gateway.url)
    page.add_init_script(RECORD)
    session = titled_session(gateway, {"title": "Payments"})
    with agent_of(gateway, session) as agent:
        waiting = agent.ask(ask("Already waiting at load?"), turn_id="t1")
        page.goto(answer_url(gateway, session))
        expect(page.locator("#notify")).to_have_text("Notifications on")
        expect(page).to_have_title(re.compile(r"^\(1\) midturn"))
        # In front of the person: a new head is on screen, not notified.
        agent.as_answerer(lambda c: c.answer(waiting.id, "Yes"))
        expect(page).to_have_title(re.compile(r"^midturn"))
        looked_at = agent.ask(ask("Seen on screen?"), turn_id="t1")
        expect(page.locator(".tray .question")).to_have_text("Seen on screen?")
        agent.as_answerer(lambda c: c.answer(looked_at.id, "No"))
        expect(page.locator(".tray")).to_have_count(0)
        assert notes(page) == []

        # The window loses focus: the next head is notified, once.
        page.evaluate("window.dispatchEvent(new Event('blur'))")
        first = agent.ask(
            ask("Deploy to production now?"), turn_id="t2", context={"agent": "deploy-bot"}
        )
        until_notes(page, 1)
        (note,) = notes(page)
        assert note["real"] is True
        assert note["title"] == "deploy-bot asks · Payments"
        assert "Deploy to production now?" in note["body"]
        assert note["tag"] == f"midturn-{first.id}"

        # Behind the head: no notification; the title counts both.
        second = agent.request_permission(tool="bash", summary="make deploy", turn_id="t2")
        expect(page).to_have_title(re.compile(r"^\(2\) midturn"))
        page.reload()  # a reload raises nothing for what is already waiting
        page.evaluate("window.dispatchEvent(new Event('blur'))")
        expect(page).to_have_title(re.compile(r"^\(2\) midturn"))
        agent.as_answerer(lambda c: c.answer(first.id, "Yes"))
        until_notes(page, 1)
        (after,) = notes(page)
        assert after["tag"] == f"midturn-{second.id}"
        assert "Permission to run bash: make deploy" in after["body"]
        expect(page).to_have_title(re.compile(r"^\(1\) midturn"))

        # Back in front: nothing more.
        page.evaluate("window.dispatchEvent(new Event('focus'))")
        agent.as_answerer(lambda c: c.decide(second.id, "allow"))
        agent.ask(ask("One more?"), turn_id="t3")
        expect(page.locator(".tray .question")).to_have_text("One more?")
        assert len(notes(page)) == 1


def test_notify_me_asks_for_permission_only_when_pressed(page: Page, gateway: LiveGateway) -> None:
    page.add_init_script(
        """
        window.__asked = 0;
        const real = Notification.requestPermission.bind(Notification);
        Notification.requestPermission = () => { window.__asked += 1; return real(); };
        """
    )
    page.goto(f"{gateway.url}/#token={ADMIN_TOKEN}")
    button = page.locator("#notify")
    expect(button).to_have_text("Notify me")
    expect(button).to_be_enabled()
    assert page.evaluate("window.__asked") == 0
    button.click()
    until(page, "window.__asked", 1)
    # Headless Chromium refuses a prompt nobody can see: the button says so and stays off.
    expect(button).not_to_have_text("Notify me")
    expect(button).to_be_disabled()


def test_the_admin_inbox_notifies_each_sessions_new_head(page: Page, gateway: LiveGateway) -> None:
    page.context.grant_permissions(["notifications"], origin=gateway.url)
    page.add_init_script(RECORD)
    one = titled_session(gateway, {"title": "Alpha"})
    two = titled_session(gateway, {"title": "Beta"})
    page.goto(f"{gateway.url}/#token={ADMIN_TOKEN}")
    expect(page.locator("#conn")).to_have_text("Live")
    page.evaluate("window.dispatchEvent(new Event('blur'))")
    with agent_of(gateway, one) as alpha, agent_of(gateway, two) as beta:
        before = alpha.now(lambda c: len(c.inbox()), token=ADMIN_TOKEN)  # other tests'
        alpha.ask(ask("Alpha first?"), turn_id="t1")
        until_notes(page, 1)
        alpha.ask(ask("Alpha second?"), turn_id="t1")  # behind Alpha's head
        beta.ask(ask("Beta first?"), turn_id="t1")
        until_notes(page, 2)
        expect(page).to_have_title(re.compile(rf"^\({before + 3}\) midturn"))
    titles = sorted(note["title"] for note in notes(page))
    assert titles == ["An agent asks · Alpha", "An agent asks · Beta"]
    # A click on Alpha's notification opens Alpha's session.
    page.evaluate("window.__made[0].dispatchEvent(new Event('click'))")
    expect(page.locator("#where .session-title")).to_have_text("Session: Alpha")
    expect(page.locator(".tray .question")).to_have_text("Alpha first?")
