"""Model text is text: markup in questions, options and permissions shows literally and
runs nothing; the page carries a CSP without inline script; the token stays out of the
address bar and never reaches the server."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import httpx
from playwright.sync_api import Page, expect
from tests.web.conftest import ADMIN_TOKEN, Agent, LiveGateway, Session, answer_url

IMG = '<img src=x onerror="window.__pwned=1">'
SCRIPT = "<script>window.__pwned=2</script>"


def nothing_ran(page: Page) -> None:
    assert page.evaluate("window.__pwned === undefined")
    assert page.locator("main img, main script").count() == 0


def test_markup_in_an_ask_is_shown_as_text_and_runs_nothing(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    question = f"Which one? {IMG} {SCRIPT}"
    agent.ask(
        {
            "questions": [
                {
                    "id": "pick",
                    "header": "<b>Pick</b>",
                    "question": question,
                    "options": [
                        {"label": f"A {IMG}", "description": SCRIPT},
                        {"label": "<i>B</i>", "description": "plain"},
                    ],
                }
            ]
        },
        turn_id="t1",
    )
    page.goto(answer_url(gateway, session))
    tray = page.locator(".tray-ask")
    expect(tray.locator(".question")).to_have_text(question)
    expect(tray.locator(".chip")).to_have_text("<b>Pick</b>")
    expect(tray.locator(".option .label").first).to_have_text(f"A {IMG}")
    expect(tray.locator(".option .desc").first).to_have_text(SCRIPT)
    expect(tray.locator(".option .label").nth(1)).to_have_text("<i>B</i>")
    assert tray.locator("b, i").count() == 0
    # The history line repeats the question, as text too.
    expect(page.locator("#history")).to_contain_text(question)
    nothing_ran(page)


def test_markup_in_a_permission_is_shown_as_text_and_runs_nothing(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    agent.request_permission(
        tool=f"sh{IMG}", summary=f"run {SCRIPT}", details=f"{IMG}\n{SCRIPT}", turn_id="t1"
    )
    page.goto(answer_url(gateway, session))
    tray = page.locator(".tray-permission")
    expect(tray.locator(".summary")).to_have_text(f"run {SCRIPT}")
    expect(tray.locator(".tool code")).to_have_text(f"sh{IMG}")
    tray.locator("details summary").click()
    expect(tray.locator(".details-body")).to_have_text(f"{IMG}\n{SCRIPT}")
    nothing_ran(page)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.script_text = ""
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.script_text += data.strip()


def test_the_page_forbids_inline_script(gateway: LiveGateway) -> None:
    response = httpx.get(f"{gateway.url}/")
    assert response.status_code == 200
    header = response.headers["content-security-policy"]
    assert "script-src 'self'" in header
    assert "unsafe-inline" not in header
    page = _Tags()
    page.feed(response.text)
    # The page's own copy of the policy agrees with the header on scripts and styles.
    meta = [a for t, a in page.tags if t == "meta" and a.get("http-equiv")]
    assert len(meta) == 1
    policy = meta[0]["content"] or ""
    assert "script-src 'self'" in policy
    assert "style-src 'self'" in policy
    assert "unsafe" not in policy
    # No inline script, event handler or style attribute anywhere.
    scripts = [a for t, a in page.tags if t == "script"]
    assert scripts and all(a.get("src") for a in scripts)
    assert page.script_text == ""
    for tag, attrs in page.tags:
        assert not [name for name in attrs if name.startswith("on") or name == "style"], tag
    # Every asset the page names is served.
    for tag, attrs in page.tags:
        target = attrs.get("src") or (attrs.get("href") if tag == "link" else None)
        if target and not target.startswith("data:"):
            asset = httpx.get(f"{gateway.url}/{target.removeprefix('./')}")
            assert asset.status_code == 200, target


def test_the_token_leaves_the_address_bar_and_survives_a_reload(
    page: Page, gateway: LiveGateway, session: Session
) -> None:
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    page.goto(answer_url(gateway, session))
    expect(page.locator("#conn")).to_have_text("Live")
    assert session.answer_token not in page.url
    # The token goes out only in the Authorization header, never in a URL a log records.
    assert any("/v1/" in url for url in urls)
    assert not [url for url in urls if session.answer_token in url]
    assert page.url.endswith(f"#session={session.session_id}")
    page.reload()
    expect(page.locator("#conn")).to_have_text("Live")
    expect(page.locator("#where")).to_have_text(f"Session {session.session_id}")


def test_a_bad_token_says_what_to_do(page: Page, gateway: LiveGateway) -> None:
    page.goto(f"{gateway.url}/#token=not-a-token")
    expect(page.locator("#problem")).to_be_visible()
    expect(page.locator("#problem-title")).to_have_text("Cannot open the inbox")
    # the gateway's message, worded as a sentence under the title like every other one
    expect(page.locator("#problem-text")).to_have_text(
        re.compile(r"^The bearer token is not valid for this gateway; .*\.$")
    )
    # The refused token is forgotten: with no link the page asks for one.
    page.goto(f"{gateway.url}/#")
    page.reload()
    expect(page.locator("#signin")).to_be_visible()
    expect(page.locator("#signin-text")).to_contain_text("#token=")


def test_an_answer_token_cannot_open_the_admin_inbox(
    page: Page, gateway: LiveGateway, session: Session
) -> None:
    # An answer token always opens its own session, whatever the fragment asks for.
    page.goto(f"{gateway.url}/#token={session.answer_token}")
    expect(page.locator("#session-view")).to_be_visible()
    expect(page.locator("#inbox-view")).to_be_hidden()
    assert ADMIN_TOKEN not in page.content()


BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
"""Bidirectional embeddings, overrides, isolates and marks ("Trojan Source")."""


def _bidi_in_page(page: Page) -> list[str]:
    """Every bidi control in the page's text and attributes, by where it is."""
    found: list[str] = page.evaluate(
        """(controls) => {
          const bad = new RegExp(`[${controls}]`);
          const hits = [];
          const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_ALL);
          for (let node = walker.currentNode; node; node = walker.nextNode()) {
            const text = node.nodeType === Node.TEXT_NODE;
            if (text && bad.test(node.data)) hits.push(`text: ${node.data}`);
            if (node.nodeType === Node.ELEMENT_NODE) {
              for (const attr of node.attributes) {
                if (bad.test(attr.value)) hits.push(`${node.tagName} ${attr.name}`);
              }
            }
          }
          if (bad.test(document.title)) hits.push("title");
          return hits;
        }""",
        BIDI,
    )
    return found


def test_bidi_controls_in_model_text_never_reach_the_page(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    evil = "\u202eexe.txt\u202c"  # reads as "txt.exe" when the override renders
    agent.ask(
        {
            "questions": [
                {
                    "id": "pick",
                    "header": "Pick\u202e\u2066",
                    "question": f"Open {evil}? {BIDI}",
                    "options": [
                        {"label": f"Yes {evil}", "description": f"runs {evil}"},
                        {"label": f"No{BIDI}", "description": "plain"},
                    ],
                },
                {"id": "why", "question": f"Why {evil}?", "placeholder": f"because {evil}"},
            ]
        },
        turn_id="t1",
    )
    agent.request_permission(
        tool=f"sh{BIDI}", summary=f"run {evil}", details=f"{evil}\n{BIDI}", turn_id="t2"
    )
    page.goto(answer_url(gateway, session))
    tray = page.locator(".tray-ask")
    expect(tray.locator(".question")).to_have_text("Open exe.txt? ")
    expect(tray.locator(".chip")).to_have_text("Pick")
    expect(tray.locator(".option .label").first).to_have_text("Yes exe.txt")
    expect(page.locator("#history")).to_contain_text("Open exe.txt?")
    assert _bidi_in_page(page) == []
    tray.locator(".option").first.click()
    page.get_by_role("button", name="Next").click()
    expect(tray.locator(".question")).to_have_text("Why exe.txt?")
    assert _bidi_in_page(page) == []


def test_an_options_preview_shows_as_text_beside_the_option(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    mock = f"+-----+\n| Nav | {IMG}\n+-----+"
    agent.ask(
        {
            "questions": [
                {
                    "id": "layout",
                    "question": "Which layout?",
                    "options": [
                        {"label": "Sidebar", "description": "Nav left", "preview": mock},
                        {"label": "Tabs", "description": "Tabs on top"},
                    ],
                }
            ]
        },
        turn_id="t1",
    )
    page.goto(answer_url(gateway, session))
    tray = page.locator(".tray-ask")
    expect(tray.locator(".option .preview")).to_have_count(1)
    assert tray.locator(".option .preview").first.text_content() == mock
    nothing_ran(page)
