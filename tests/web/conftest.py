"""Browser tests of the web inbox: headless Chromium (Playwright) against a real gateway.

`gateway` runs `midturn.gateway.run_server` on uvicorn, on a free port, over a fresh
SQLite file, in a thread of the test process; `start_gateway` starts more (restarts).
The agent side goes through `midturn.Client`, each call in a worker thread (Playwright's
sync API owns the test thread's event loop), so an agent's wait can run while the browser
answers.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests._servers import SAFETY_S, LiveGateway
from tests._servers import start_gateway as start_live_gateway

from midturn import Interaction
from midturn.client import Client

CHROMIUM = os.environ.get("MIDTURN_CHROMIUM") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ADMIN_TOKEN = "web-test-admin-token-0123456789abcdef"
ROOT = Path(__file__).resolve().parents[2]
OUTPUT = ROOT / "test-output" / "web"
DOC_IMAGES = ROOT / "docs" / "images"


def _browser_missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed: pip install -e '.[dev]'"
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM}: install it (apt-get install chromium)"
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    reason = _browser_missing()
    for item in items:
        uses_browser = {"page", "browser"} & set(getattr(item, "fixturenames", ()))
        if item.path.is_relative_to(Path(__file__).parent) and uses_browser:
            item.add_marker(pytest.mark.browser)
            if reason and os.environ.get("CI") != "true":
                item.add_marker(pytest.mark.skip(reason=reason))


# -- the gateway ----------------------------------------------------------------------


def start_gateway(db_url: str, port: int = 0) -> LiveGateway:
    """A gateway with this suite's admin token (tests/_servers.py)."""
    return start_live_gateway(db_url, ADMIN_TOKEN, port)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveGateway]:
    db = tmp_path_factory.mktemp("web") / "midturn.db"
    server = start_gateway(f"sqlite:///{db}")
    yield server
    server.stop()


# -- the agent side -------------------------------------------------------------------


@dataclass
class Session:
    session_id: str
    agent_token: str
    answer_token: str
    answer_url: str


class Agent:
    """An agent (and, with `as_answerer`, a second answerer) of one session, talking to
    the gateway through `midturn.Client` in worker threads."""

    def __init__(self, gateway: LiveGateway, session: Session) -> None:
        self.gateway = gateway
        self.session = session
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="agent")

    def _call(self, token: str, work: Callable[[Client], Any]) -> Future[Any]:
        def run() -> Any:
            with Client(self.gateway.url, token, timeout=SAFETY_S + 65) as client:
                return work(client)

        return self._pool.submit(run)

    def now(self, work: Callable[[Client], Any], *, token: str | None = None) -> Any:
        return self._call(token or self.session.agent_token, work).result(SAFETY_S)

    def ask(self, tool_input: Any, **options: Any) -> Interaction:
        sid = self.session.session_id
        interaction: Interaction = self.now(lambda c: c.ask(sid, tool_input, **options).interaction)
        return interaction

    def request_permission(self, **options: Any) -> Interaction:
        sid = self.session.session_id
        interaction: Interaction = self.now(
            lambda c: c.request_permission(sid, **options).interaction
        )
        return interaction

    def wait(self, interaction: Interaction) -> Future[Interaction]:
        """Start waiting for the interaction to settle; the future holds it settled."""
        return self._call(
            self.session.agent_token,
            lambda c: c.wait(interaction.id, SAFETY_S + 30).interaction,
        )

    def as_answerer(self, work: Callable[[Client], Any]) -> Any:
        return self.now(work, token=self.session.answer_token)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def create_session(gateway: LiveGateway) -> Session:
    """A new session made with the admin token (in a worker thread, like every Client
    call here)."""

    def create() -> Session:
        with Client(gateway.url, ADMIN_TOKEN) as admin:
            credentials = admin.create_session()
        return Session(
            session_id=credentials.session_id,
            agent_token=credentials.agent_token,
            answer_token=credentials.answer_token,
            answer_url=credentials.answer_url,
        )

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(create).result(SAFETY_S)


@pytest.fixture
def session(gateway: LiveGateway) -> Session:
    return create_session(gateway)


@pytest.fixture
def agent(gateway: LiveGateway, session: Session) -> Iterator[Agent]:
    runner = Agent(gateway, session)
    yield runner
    runner.close()


# -- the browser ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium for one test module. Playwright's sync API keeps an event loop marked as
    running in this thread while it is open, so it closes before other modules (whose
    async tests need the thread's loop) run."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass
class PageErrors:
    errors: list[str]
    dialogs: list[str]


@contextmanager
def open_page(browser: Any, **context_options: Any) -> Iterator[Any]:
    """A fresh page in its own context (no shared storage), 1280×720 unless
    `context_options` say otherwise (`viewport`, `has_touch`, `color_scheme`, …). Any
    uncaught script error, CSP violation or dialog on it fails the test."""
    from playwright.sync_api import expect

    expect.set_options(timeout=SAFETY_S * 1000)
    context_options.setdefault("viewport", {"width": 1280, "height": 720})
    context = browser.new_context(**context_options)
    opened = context.new_page()
    seen = PageErrors([], [])
    opened.on("pageerror", lambda error: seen.errors.append(str(error)))

    def console(message: Any) -> None:
        if "Content Security Policy" in message.text:
            seen.errors.append(message.text)

    opened.on("console", console)

    def dialog(d: Any) -> None:
        seen.dialogs.append(d.message)
        d.dismiss()

    opened.on("dialog", dialog)
    opened.page_errors = seen
    yield opened
    context.close()
    assert not seen.errors, f"script errors on the page: {seen.errors}"
    assert not seen.dialogs, f"the page opened dialogs: {seen.dialogs}"


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page at the default 1280×720 (see `open_page`)."""
    with open_page(browser) as opened:
        yield opened


# -- accessibility ----------------------------------------------------------------------

AXE = Path(__file__).parent / "vendor" / "axe.min.js"


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """The serious and critical axe-core violations on the page as it is now. axe-core
    (tests/web/vendor, for the tests only) is evaluated through the DevTools protocol,
    which the page's CSP does not govern, so the page itself stays as shipped."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    found: list[dict[str, Any]] = page.evaluate(
        """async () => {
            const result = await axe.run(document, { resultTypes: ["violations"] });
            return result.violations
                .filter((v) => v.impact === "serious" || v.impact === "critical")
                .map((v) => ({
                    id: v.id,
                    impact: v.impact,
                    help: v.help,
                    nodes: v.nodes.map((n) => n.target.join(" ") + " :: " + n.failureSummary),
                }));
        }"""
    )
    return found


def assert_accessible(page: Any, where: str) -> None:
    found = axe_violations(page)
    assert not found, f"axe-core on {where}: " + "\n".join(
        f"{v['impact']} {v['id']} ({v['help']}): {v['nodes']}" for v in found
    )


def answer_url(gateway: LiveGateway, session: Session) -> str:
    """The session's answer_url on the test gateway (the gateway prints its bound URL)."""
    fragment = session.answer_url.split("#", 1)[1]
    return f"{gateway.url}/#{fragment}"


def screenshot(target: Any, name: str) -> Path:
    """Save a screenshot under test-output/web/; with MIDTURN_DOC_IMAGES=1 also copy it
    into docs/images/ (the copies the README links to)."""
    OUTPUT.mkdir(parents=True, exist_ok=True)
    path = OUTPUT / f"{name}.png"
    target.screenshot(path=str(path))
    if os.environ.get("MIDTURN_DOC_IMAGES") == "1":
        DOC_IMAGES.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOC_IMAGES / path.name)
    return path
