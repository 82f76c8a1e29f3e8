"""Every tray, in light and dark, on a laptop and on a phone (390×844, touch): axe-core
finds no serious or critical violation, nothing scrolls sideways, and on the phone every
tap target is at least 44 px and the actions sit in the bottom half, under the thumb.

With MIDTURN_DOC_IMAGES=1 the screenshots also land in docs/images/ (docs/web-inbox.md
shows them)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from tests.web.conftest import (
    ADMIN_TOKEN,
    Agent,
    LiveGateway,
    answer_url,
    assert_accessible,
    create_session,
    open_page,
    screenshot,
    start_gateway,
)

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
LAPTOP = {"viewport": {"width": 1280, "height": 720}}

SINGLE = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use?",
            "options": [
                {"label": "PostgreSQL", "description": "Managed, scales out, needs a server"},
                {"label": "SQLite", "description": "Embedded, zero setup, one writer"},
                {"label": "MySQL", "description": "What the old service used"},
            ],
            "recommended": "PostgreSQL",
        },
        {"id": "name", "header": "Name", "question": "What should it be called?"},
    ]
}
MULTI = {
    "questions": [
        {
            "id": "features",
            "header": "Features",
            "question": "Which features ship in the first release?",
            "options": [
                {"label": "Auth", "description": "Sign-in and sessions"},
                {"label": "Billing", "description": "Plans and invoices"},
                {"label": "Search", "description": "Full text over invoices"},
            ],
            "multi": True,
            "recommended": "Auth",
        }
    ]
}
TEXT = {
    "questions": [
        {
            "id": "why",
            "header": "Reason",
            "question": "Why did the nightly build start failing on Tuesday?",
            "kind": "text",
            "placeholder": "What you know, in a sentence or two",
        }
    ]
}
SECRET = {
    "questions": [
        {"id": "key", "question": "Paste the deploy API key", "kind": "text", "secret": True}
    ]
}
DIFF = "\n".join(
    [
        "--- a/deploy.sh",
        "+++ b/deploy.sh",
        "@@ -1,4 +1,6 @@",
        " set -e",
        "-make build",
        "+make clean",
        "+make build --release",
        "+./upload.sh --prod",
        " echo done",
    ]
)


@dataclass
class Tray:
    """How to bring one tray on screen: `setup(gateway)` returns the URL to open."""

    name: str
    setup: Callable[[LiveGateway], str]
    shown: str  # a selector that is visible once the tray is up
    thumb: str | None  # the actions that must sit under the thumb on a phone


def _session_with(work: Callable[[Agent], Any]) -> Callable[[LiveGateway], str]:
    def setup(gateway: LiveGateway) -> str:
        agent = Agent(gateway, create_session(gateway))
        try:
            work(agent)
        finally:
            agent.close()
        return answer_url(gateway, agent.session)

    return setup


def _answered(agent: Agent) -> None:
    asked = agent.ask(MULTI, turn_id="t0")
    agent.as_answerer(lambda c: c.answer(asked.id, {"answers": {"features": ["Auth", "Search"]}}))
    allowed = agent.request_permission(tool="bash", summary="make test", risk="low", turn_id="t0")
    agent.as_answerer(lambda c: c.decide(allowed.id, "allow"))


TRAYS = [
    Tray("ask-single", _session_with(lambda a: a.ask(SINGLE, turn_id="t1")), ".tray-ask", ".nav"),
    Tray("ask-multi", _session_with(lambda a: a.ask(MULTI, turn_id="t1")), ".tray-ask", ".nav"),
    Tray("ask-text", _session_with(lambda a: a.ask(TEXT, turn_id="t1")), ".tray-ask", ".nav"),
    Tray("ask-secret", _session_with(lambda a: a.ask(SECRET, turn_id="t1")), ".tray-ask", ".nav"),
    Tray(
        "permission-low",
        _session_with(
            lambda a: a.request_permission(
                tool="read_file", summary="Read src/app.py", risk="low", turn_id="t1"
            )
        ),
        ".tray-permission",
        ".actions",
    ),
    Tray(
        "permission-high",
        _session_with(
            lambda a: a.request_permission(
                tool="bash",
                summary="./deploy.sh --prod (replaces the running release)",
                risk="high",
                details=DIFF,
                turn_id="t1",
            )
        ),
        ".tray-permission",
        ".actions",
    ),
    Tray("session", _session_with(_answered), "#composer", None),
]


@pytest.fixture(scope="module")
def empty_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveGateway]:
    """A gateway of its own, with nothing pending anywhere: the empty inbox."""
    server = start_gateway(f"sqlite:///{tmp_path_factory.mktemp('empty') / 'midturn.db'}")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def busy_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveGateway]:
    """A gateway of its own with two sessions waiting: the inbox as a person sees it."""
    server = start_gateway(f"sqlite:///{tmp_path_factory.mktemp('busy') / 'midturn.db'}")
    _session_with(lambda a: a.ask(SINGLE, turn_id="t1"))(server)
    _session_with(
        lambda a: a.request_permission(
            tool="bash", summary="./deploy.sh --prod", risk="high", turn_id="t1"
        )
    )(server)
    yield server
    server.stop()


def no_sideways_scroll(page: Page, where: str) -> None:
    widths = page.evaluate(
        "() => ({scroll: document.documentElement.scrollWidth, inner: window.innerWidth})"
    )
    assert widths["scroll"] <= widths["inner"], f"{where} scrolls sideways: {widths}"


SMALL_TARGETS = """() => {
    const small = [];
    const targets = document.querySelectorAll(
        "button, a[href], summary, textarea, label.option, label.other-choice, "
        + "input:not([type=radio]):not([type=checkbox])");
    for (const node of targets) {
        if (node.closest(".visually-hidden") || node.getClientRects().length === 0) continue;
        const box = node.getBoundingClientRect();
        if (box.width < 43.5 || box.height < 43.5) {
            small.push(`${node.tagName.toLowerCase()}.${node.className} `
                + `"${(node.textContent || node.placeholder || "").trim().slice(0, 30)}" `
                + `${Math.round(box.width)}x${Math.round(box.height)}`);
        }
    }
    return small;
}"""


def check_phone(page: Page, tray: Tray, where: str) -> None:
    small = page.evaluate(SMALL_TARGETS)
    assert small == [], f"tap targets under 44 px on {where}: {small}"
    if tray.thumb is not None:
        bar = page.locator(f"{tray.shown} {tray.thumb}").bounding_box()
        assert bar is not None
        assert bar["y"] >= 844 / 2, f"the actions are out of the thumb's reach on {where}: {bar}"
        assert bar["y"] + bar["height"] <= 844, f"the actions are off screen on {where}: {bar}"


def look(
    browser: Any, url: str, shown: str, where: str, scheme: str, phone: bool
) -> Iterator[Page]:
    options = dict(PHONE if phone else LAPTOP)
    with open_page(browser, color_scheme=scheme, **options) as page:
        page.goto(url)
        expect(page.locator(shown).first).to_be_visible()
        assert_accessible(page, where)
        no_sideways_scroll(page, where)
        yield page


SCREENSHOTS_ON_A_LAPTOP = {"ask-single", "permission-high"}


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("phone", [False, True], ids=["laptop", "phone"])
@pytest.mark.parametrize("tray", TRAYS, ids=[t.name for t in TRAYS])
def test_every_tray(
    browser: Any, gateway: LiveGateway, tray: Tray, scheme: str, phone: bool
) -> None:
    url = tray.setup(gateway)
    where = f"{tray.name} ({scheme}, {'phone' if phone else 'laptop'})"
    for page in look(browser, url, tray.shown, where, scheme, phone):
        if tray.name == "permission-high":  # the details open too
            page.locator(".tray-permission details summary").click()
            expect(page.locator(".details-body")).to_be_visible()
            assert_accessible(page, f"{where}, details open")
            no_sideways_scroll(page, where)
        if phone:
            check_phone(page, tray, where)
            screenshot(page, f"tray-{tray.name}-{scheme}")
        elif tray.name in SCREENSHOTS_ON_A_LAPTOP:
            screenshot(page, f"laptop-{tray.name}-{scheme}")


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("phone", [False, True], ids=["laptop", "phone"])
def test_the_inboxes(
    browser: Any, busy_gateway: LiveGateway, empty_gateway: LiveGateway, scheme: str, phone: bool
) -> None:
    kind = "phone" if phone else "laptop"
    empty = f"{empty_gateway.url}/#token={ADMIN_TOKEN}"
    for page in look(browser, empty, "#inbox-empty", f"the empty inbox ({scheme})", scheme, phone):
        expect(page.locator("#inbox-empty")).to_have_text(
            "Nothing is waiting for you. New requests appear here as agents make them."
        )
        if phone:
            assert page.evaluate(SMALL_TARGETS) == []
            screenshot(page, f"tray-inbox-empty-{scheme}")

    full = f"{busy_gateway.url}/#token={ADMIN_TOKEN}"
    for page in look(browser, full, ".inbox-row", f"the inbox ({scheme}, {kind})", scheme, phone):
        if phone:
            assert page.evaluate(SMALL_TARGETS) == []
            screenshot(page, f"tray-inbox-{scheme}")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_shortcut_overlay(browser: Any, gateway: LiveGateway, scheme: str) -> None:
    url = TRAYS[0].setup(gateway)
    for page in look(browser, url, ".tray-ask", f"the overlay ({scheme})", scheme, False):
        page.keyboard.press("?")
        expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()
        assert_accessible(page, f"the shortcut overlay ({scheme})")
        screenshot(page, f"laptop-shortcuts-{scheme}")


def test_the_screenshots_are_linked_from_the_docs() -> None:
    docs = Path(__file__).resolve().parents[2] / "docs"
    page = (docs / "web-inbox.md").read_text(encoding="utf-8")
    names = [f"tray-{t.name}-{s}.png" for t in TRAYS for s in ("light", "dark")]
    names += [f"tray-inbox-{s}.png" for s in ("light", "dark")]
    names += [f"tray-inbox-empty-{s}.png" for s in ("light", "dark")]
    names += [f"laptop-{n}-{s}.png" for n in SCREENSHOTS_ON_A_LAPTOP for s in ("light", "dark")]
    names += [f"laptop-shortcuts-{s}.png" for s in ("light", "dark")]
    for name in names:
        assert f"images/{name}" in page, f"docs/web-inbox.md does not show {name}"
        assert (docs / "images" / name).is_file(), f"docs/images/{name} is missing"
