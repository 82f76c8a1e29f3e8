"""Computed layout: the permission tray is compact, and long details scroll inside a
capped disclosure instead of pushing the page."""

from __future__ import annotations

from playwright.sync_api import Page, expect
from tests.web.conftest import Agent, LiveGateway, Session, answer_url, screenshot

LONG_DETAILS = "\n".join(f"+ line {n}: " + "x" * 60 for n in range(200))


def test_the_permission_tray_is_compact_and_its_details_scroll(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    agent.request_permission(
        tool="apply_patch",
        summary="Rewrite src/app.py (200 changed lines)",
        risk="medium",
        details=LONG_DETAILS,
        turn_id="t1",
    )
    page.goto(answer_url(gateway, session))
    tray = page.locator(".tray-permission")
    expect(tray).to_be_visible()
    closed = tray.bounding_box()
    assert closed is not None
    # About 160 px tall at the default width, details folded away.
    assert 130 <= closed["height"] <= 190, closed

    tray.locator("details summary").click()
    body = tray.locator(".details-body")
    expect(body).to_be_visible()
    style = body.evaluate(
        "e => { const s = getComputedStyle(e); return {maxHeight: s.maxHeight, "
        "overflowY: s.overflowY, scroll: e.scrollHeight, client: e.clientHeight}; }"
    )
    assert style["maxHeight"].endswith("px"), style
    cap = float(style["maxHeight"].removesuffix("px"))
    assert 120 <= cap <= 320, style
    assert style["overflowY"] == "auto", style
    assert style["scroll"] > style["client"], style
    assert style["client"] <= cap
    opened = tray.bounding_box()
    assert opened is not None
    assert opened["height"] <= closed["height"] + cap + 40, (closed, opened)
    # The tray stays on screen: the page did not grow past the viewport.
    assert opened["y"] + opened["height"] <= 720 + 1
    screenshot(tray, "permission-tray-details")


def test_the_tray_fits_a_narrow_screen(
    page: Page, gateway: LiveGateway, session: Session, agent: Agent
) -> None:
    page.set_viewport_size({"width": 360, "height": 640})
    agent.request_permission(tool="bash", summary="make deploy", details="x\n" * 50, turn_id="t1")
    page.goto(answer_url(gateway, session))
    tray = page.locator(".tray-permission")
    expect(tray).to_be_visible()
    box = tray.bounding_box()
    assert box is not None
    assert box["x"] >= 0
    assert box["x"] + box["width"] <= 360
    overflow = page.evaluate("document.documentElement.scrollWidth")
    assert overflow <= 360
