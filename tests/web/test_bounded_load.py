"""What a load costs is bounded: the page starts from the pending queue (read a page at a
time) and a recent window of events, not the whole log; a queue longer than a page still
shows whole, in the session view and the admin inbox."""

from __future__ import annotations

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
            "id": "name",
            "question": "What should the service be called?",
            "options": [{"label": "billing-api"}, {"label": "payments"}],
        }
    ]
}
TAIL = 200  # web/api.js TAIL_EVENTS
PAGE = 100  # web/api.js PAGE_SIZE


def test_a_long_event_log_loads_only_its_newest_events(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    # 130 asks parked and cancelled: 262 events in this session's log
    for index in range(130):
        agent.ask(ONE, turn_id="long", tool_call_id=f"long-{index}")
    cancelled = agent.now(lambda client: client.stop_turn(session.session_id, "long"))
    assert len(cancelled) == 130
    streams: list[str] = []
    page.on(
        "request", lambda request: streams.append(request.url) if "/events" in request.url else None
    )

    page.goto(answer_url(gateway, session))
    expect(page.locator("#conn")).to_have_text("Live")
    history = page.locator("#history li")
    expect(history.last).to_contain_text("cancel", ignore_case=True)
    # the newest 200 of 262 events: turn_resumed (no line), 130 cancels, 69 requests
    expect(history).to_have_count(TAIL - 1)
    assert streams and all(f"tail={TAIL}" in url for url in streams)

    # live events still follow the window
    agent.ask(ONE, turn_id="after", tool_call_id="after-1")
    expect(page.locator(".tray")).to_have_count(1)
    expect(history).to_have_count(TAIL)  # its request (turn_waiting has no line)


def test_a_queue_longer_than_a_page_shows_whole(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    for index in range(PAGE + 3):
        agent.ask(ONE, turn_id=f"t{index}", tool_call_id=f"q-{index}")
    later = create_session(gateway)
    late_agent = Agent(gateway, later)
    try:
        late_agent.ask(ONE, turn_id="late", tool_call_id="late-1")  # 104th in the inbox
    finally:
        late_agent.close()

    page.goto(f"{gateway.url}/#token={ADMIN_TOKEN}")
    expect(page.locator("#conn")).to_have_text("Live")
    row = page.locator(".inbox-row", has_text=later.session_id)
    expect(row.locator(".inbox-count")).to_have_text("1 waiting")
    mine = page.locator(".inbox-row", has_text=session.session_id)
    expect(mine.locator(".inbox-count")).to_have_text(f"{PAGE + 3} waiting")

    page.goto(answer_url(gateway, session))
    page.reload()  # the page keeps the first token's role until it loads again
    expect(page.locator("#waiting-count")).to_have_text(f"{PAGE + 3} waiting")
    expect(page.locator(".tray")).to_have_count(1)
