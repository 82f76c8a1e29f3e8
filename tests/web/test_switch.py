"""A second link opened in the same tab switches cleanly: another session's answer_url
(by a hash change or by navigating to it), or the admin link after a session's. The
header names the new view, the old event stream is closed, "Live" is the new stream's,
and the token leaves the address bar."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect
from tests.web.conftest import (
    ADMIN_TOKEN,
    Agent,
    LiveGateway,
    Session,
    answer_url,
    create_session,
)

ONE = {
    "questions": [
        {
            "id": "go",
            "header": "Go",
            "question": "Ship it today?",
            "options": [{"label": "Yes"}, {"label": "No"}],
        }
    ]
}


@pytest.fixture
def two(gateway: LiveGateway) -> Iterator[tuple[Agent, Agent]]:
    first = Agent(gateway, create_session(gateway))
    second = Agent(gateway, create_session(gateway))
    yield first, second
    first.close()
    second.close()


def open_link(page: Page, url: str, how: str) -> None:
    if how == "hash":
        page.evaluate("url => { window.location.hash = new URL(url).hash; }", url)
    else:
        page.goto(url)


def events_requests(page: Page) -> tuple[list[str], list[str]]:
    """The event-stream requests the page starts, and those that ended (aborted)."""
    started: list[str] = []
    ended: list[str] = []
    page.on("request", lambda r: started.append(r.url) if "/events" in r.url else None)
    page.on("requestfailed", lambda r: ended.append(r.url) if "/events" in r.url else None)
    return started, ended


def shows_session(page: Page, session: Session) -> None:
    expect(page.locator("#problem")).to_be_hidden()
    expect(page.locator("#session-view")).to_be_visible()
    expect(page.locator("#where")).to_contain_text(session.session_id)
    expect(page.locator("#conn")).to_have_text("Live")
    assert "token=" not in page.url, page.url


@pytest.mark.parametrize("how", ["hash", "navigation"])
def test_another_sessions_link_in_the_same_tab(
    page: Page, gateway: LiveGateway, two: tuple[Agent, Agent], how: str
) -> None:
    a, b = two
    started, ended = events_requests(page)
    page.goto(answer_url(gateway, a.session))
    shows_session(page, a.session)

    # Both orders; the second time, A's history also holds the ask answered while B was open.
    for old, new, answered in ((a, b, 1), (b, a, 2)):
        old_stream = f"/v1/sessions/{old.session.session_id}/events"
        new_stream = f"/v1/sessions/{new.session.session_id}/events"
        open_link(page, answer_url(gateway, new.session), how)
        shows_session(page, new.session)
        expect(page.locator("#where")).not_to_contain_text(old.session.session_id)
        # The old stream was closed, the new one opened.
        page.wait_for_function("1")  # one round trip for the events to be delivered
        assert any(old_stream in url for url in ended), (started, ended)
        assert any(new_stream in url for url in started), started
        # The view is live on the new session: its ask shows up without a reload; the
        # old session's does not.
        elsewhere = old.ask(ONE)
        asked = new.ask(ONE)
        tray = page.locator(".tray-ask")
        expect(tray).to_be_visible()
        expect(tray).to_have_count(1)
        assert tray.get_attribute("data-interaction") == asked.id
        new.as_answerer(lambda c, i=asked.id: c.answer(i, {"answers": {"go": "Yes"}}))
        old.as_answerer(lambda c, i=elsewhere.id: c.answer(i, {"answers": {"go": "No"}}))
        expect(page.locator(".tray")).to_have_count(0)
        # Only this session's events reached the history.
        expect(page.locator("#history .event-user_question_answered")).to_have_count(answered)


@pytest.mark.parametrize("how", ["hash", "navigation"])
def test_the_admin_link_after_a_sessions_link_and_back(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent, how: str
) -> None:
    page.goto(answer_url(gateway, session))
    shows_session(page, session)

    admin = f"{gateway.url}/#token={ADMIN_TOKEN}"
    open_link(page, admin, how)
    expect(page.locator("#inbox-view")).to_be_visible()
    expect(page.locator("#session-view")).to_be_hidden()
    expect(page.locator("#where")).to_have_text("Inbox")
    expect(page.locator("#conn")).to_have_text("Live")
    assert "token=" not in page.url

    open_link(page, answer_url(gateway, session), how)
    shows_session(page, session)
    expect(page.locator("#back")).to_be_hidden()  # an answer token has no inbox


def test_a_refused_link_closes_the_old_stream(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    page.goto(answer_url(gateway, session))
    shows_session(page, session)
    page.evaluate("() => { window.location.hash = 'token=not-a-token-at-all'; }")
    expect(page.locator("#problem")).to_be_visible()
    expect(page.locator("#conn")).to_have_text("Not connected")
    expect(page.locator("#where")).not_to_contain_text(session.session_id)
    assert "token=" not in page.url
