"""Live updates: the admin inbox, the stream's parser, and a gateway restart (the page
reconnects and resumes with Last-Event-ID)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from tests.web.conftest import (
    ADMIN_TOKEN,
    SAFETY_S,
    Agent,
    LiveGateway,
    Session,
    answer_url,
    create_session,
    start_gateway,
)

ONE = {
    "questions": [
        {
            "id": "go",
            "header": "Go",
            "question": "Ship it?",
            "options": [{"label": "Yes"}, {"label": "No"}],
        }
    ]
}


def test_the_admin_inbox_lists_sessions_live_and_opens_one(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    page.goto(f"{gateway.url}/#token={ADMIN_TOKEN}")
    expect(page.locator("#inbox-view")).to_be_visible()
    assert ADMIN_TOKEN not in page.url
    row = page.locator(".inbox-row", has_text=session.session_id)
    expect(row).to_have_count(0)

    agent.request_permission(tool="bash", summary="make release", turn_id="t1")
    agent.ask(ONE, turn_id="t1")
    expect(row).to_be_visible()
    expect(row.locator(".inbox-count")).to_have_text("2 waiting")
    expect(row.locator(".inbox-head")).to_have_text("Permission to run bash: make release")
    expect(page.locator("#announcer")).to_contain_text("New in session")

    row.locator("a").click()
    expect(page.locator(".tray-permission .summary")).to_have_text("make release")
    page.get_by_role("button", name="Allow", exact=True).click()
    expect(page.locator(".tray-ask .question")).to_have_text("Ship it?")
    page.get_by_role("link", name="← Inbox").click()
    expect(row.locator(".inbox-count")).to_have_text("1 waiting")


SPLITS = [
    ['id: 7\nevent: user_question_requested\ndata: {"a":1}\n\n'],
    ["id: 7\r\nevent: user_question_requested\r", '\ndata: {"a"', ":1}\r\n\r\n"],
    [
        ": keepalive\n\nretry: 2000\n\n",
        "id: 7\nevent: user_question_requested\n",
        'data: {"a":1}\n',
        "\n",
    ],
]


@pytest.mark.parametrize("chunks", SPLITS, ids=["whole", "crlf-split", "comments"])
def test_the_stream_parser_handles_any_chunking(
    page: Page, gateway: LiveGateway, chunks: list[str]
) -> None:
    page.goto(f"{gateway.url}/")
    frames = page.evaluate(
        """async (chunks) => {
            const { SseParser } = await import("/static/sse.js");
            const parser = new SseParser();
            return chunks.flatMap((chunk) => parser.push(chunk)).filter((f) => f.data !== null);
        }""",
        chunks,
    )
    assert frames == [
        {"id": "7", "type": "user_question_requested", "data": '{"a":1}', "retry": None}
    ]


@pytest.fixture
def restartable(tmp_path: Path) -> Iterator[list[LiveGateway]]:
    servers = [start_gateway(f"sqlite:///{tmp_path / 'midturn.db'}")]
    yield servers
    for server in servers:
        server.stop()


def test_the_page_reconnects_after_a_restart_and_resumes_the_stream(
    page: Page, restartable: list[LiveGateway]
) -> None:
    first = restartable[0]
    session = create_session(first)
    agent = Agent(first, session)
    try:
        asked = agent.ask(ONE, turn_id="t1")
        page.goto(answer_url(first, session))
        expect(page.locator(".tray-ask .question")).to_have_text("Ship it?")
        expect(page.locator("#conn")).to_have_text("Live")
        history = page.locator("#history li")
        expect(history).to_have_count(1)

        first.stop()
        expect(page.locator("#conn")).to_have_text("Reconnecting…")
        second = start_gateway(first.db_url, port=first.port)
        restartable.append(second)
        agent.gateway = second

        # Settled while the page was away: it disappears once the stream resumes; a new
        # request appears; the history holds each event once (nothing replayed twice).
        agent.as_answerer(lambda client: client.answer(asked.id, {"answers": {"go": "No"}}))
        agent.request_permission(tool="bash", summary="make clean", turn_id="t2")
        expect(page.locator("#conn")).to_have_text("Live", timeout=SAFETY_S * 1000)
        expect(page.locator(".tray-permission .summary")).to_have_text("make clean")
        expect(history.filter(has_text="Ship it?")).to_have_count(1)
        expect(history.filter(has_text="Answered")).to_have_count(1)
    finally:
        agent.close()
