"""The session's history panel: past questions and decisions (what, answered how, by
whom, when), a search that narrows it, a JSON Lines export, and a secret answer in
neither the page nor the file."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Page, expect
from tests.web._labelled import agent_of, titled_session
from tests.web.conftest import LiveGateway, answer_url, screenshot

SECRET = "sk-live-NEVER-ON-SCREEN-9313"
ASK = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database for invoices?",
            "options": ["PostgreSQL", "SQLite"],
        },
        {
            "id": "key",
            "header": "Vendor key",
            "question": "Paste the vendor API key",
            "kind": "text",
            "secret": True,
        },
    ]
}


def test_history_lists_searches_and_exports_without_the_secret(
    page: Page, gateway: LiveGateway
) -> None:
    session = titled_session(gateway, {"title": "Invoices"})
    with agent_of(gateway, session) as agent:
        asked = agent.ask(ASK, turn_id="t1", context={"agent": "ledger-bot"})
        agent.as_answerer(
            lambda c: c.answer(asked.id, {"answers": {"db": "SQLite", "key": SECRET}})
        )
        denied = agent.request_permission(
            tool="bash", summary="rm -rf invoices/", risk="high", turn_id="t1"
        )
        agent.as_answerer(lambda c: c.decide(denied.id, "deny", message="keep the archive"))
        page.goto(answer_url(gateway, session))
        expect(page.locator("#conn")).to_have_text("Live")

        page.get_by_text("History of this session").click()
        entries = page.locator(".past-entry")
        expect(entries).to_have_count(2)
        first, second = entries.nth(0), entries.nth(1)
        expect(first).to_contain_text("Database: Which database for invoices?")
        expect(first.locator("dd").first).to_have_text("SQLite")
        expect(first.locator("dd").nth(1)).to_have_text("[secret provided]")
        expect(first).to_contain_text("ledger-bot")
        expect(first.locator(".past-by")).to_contain_text("Settled by the answer link at")
        expect(second).to_contain_text("Permission to run bash (high risk): rm -rf invoices/")
        expect(second).to_contain_text("Decision: denied — “keep the archive”")
        expect(page.locator(".past-status")).to_have_text("2 shown")

        page.get_by_label("Search history").fill("archive")
        expect(entries).to_have_count(1)
        expect(entries.first).to_contain_text("rm -rf invoices/")
        page.get_by_label("Search history").fill("nothing-like-this")
        expect(page.locator(".past-status")).to_have_text(
            "Nothing settled yet matching “nothing-like-this”."
        )
        page.get_by_label("Search history").fill("")
        expect(entries).to_have_count(2)
        screenshot(page.locator("#past"), "history-panel")

        with page.expect_download() as downloading:
            page.get_by_role("button", name="Export (JSON Lines)").click()
        download = downloading.value
        assert download.suggested_filename == f"midturn-history-{session.session_id}.jsonl"
        text = Path(download.path()).read_text(encoding="utf-8")
        lines = [json.loads(line) for line in text.splitlines()]
        assert [line["id"] for line in lines] == [asked.id, denied.id]
        assert lines[0]["questions"][1]["answer"] == "[secret provided]"
        assert SECRET not in text
        assert SECRET not in page.content()

        # Something settled while the panel is open shows up in it.
        later = agent.request_permission(tool="make", summary="make release", turn_id="t2")
        page.get_by_role("button", name="Allow", exact=True).click()
        expect(entries).to_have_count(3)
        expect(entries.nth(2)).to_contain_text("Decision: allowed")
        assert later.id


def test_labels_and_history_fit_a_phone_screen(page: Page, gateway: LiveGateway) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    session = titled_session(gateway, {"title": "A rather long session title " * 6})
    long_word = "x" * 300
    with agent_of(gateway, session) as agent:
        done = agent.ask(ASK, turn_id="t1")
        agent.as_answerer(lambda c: c.answer(done.id, {"answers": {"db": long_word, "key": "k"}}))
        agent.request_permission(
            tool="bash",
            summary="make deploy",
            turn_id="t2",
            context={
                "agent": "deploy-bot " * 10,
                "doing": long_word,
                "tool": {"name": "bash", "input": long_word},
            },
        )
        page.goto(answer_url(gateway, session))
        expect(page.locator(".asked-by")).to_be_visible()
        page.get_by_text("History of this session").click()
        expect(page.locator(".past-entry")).to_have_count(1)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        for selector in ("#where", "#notify", "#conn", ".asked-by", "#past"):
            box = page.locator(selector).bounding_box()
            if box is not None:  # the Notify me control may be hidden
                assert box["x"] >= 0 and box["x"] + box["width"] <= 390 + 0.5, (selector, box)
