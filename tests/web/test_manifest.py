"""The inbox installs as a web app: a manifest served as `application/manifest+json`,
icons of its own (SVG, 192 and 512 px PNGs, a maskable one), a theme colour per colour
scheme, and a page that opens without a link asks for one instead of failing."""

from __future__ import annotations

import json
from typing import Any

import httpx
from playwright.sync_api import Page, expect
from tests.web.conftest import ADMIN_TOKEN, LiveGateway


def test_the_manifest_and_its_icons_are_served_with_their_types(gateway: LiveGateway) -> None:
    with httpx.Client(base_url=gateway.url) as http:
        response = http.get("/static/manifest.webmanifest")
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/manifest+json"
        manifest = json.loads(response.text)
        assert manifest["name"] == "midturn inbox"
        assert manifest["short_name"] == "midturn"
        assert manifest["display"] == "standalone"
        assert manifest["start_url"] == "../"  # the inbox page, beside /static/
        sizes = {icon["sizes"] for icon in manifest["icons"]}
        assert {"any", "192x192", "512x512"} <= sizes
        assert any(icon.get("purpose") == "maskable" for icon in manifest["icons"])
        for icon in manifest["icons"]:
            served = http.get(f"/static/{icon['src']}")
            assert served.status_code == 200, icon
            assert served.headers["content-type"].startswith(icon["type"]), icon
            if icon["type"] == "image/png":
                assert served.content.startswith(b"\x89PNG\r\n\x1a\n")
                width = int.from_bytes(served.content[16:20], "big")
                height = int.from_bytes(served.content[20:24], "big")
                assert f"{width}x{height}" == icon["sizes"]


def test_chromium_reads_the_manifest_without_errors(page: Page, gateway: LiveGateway) -> None:
    page.goto(f"{gateway.url}/#token={ADMIN_TOKEN}")
    expect(page.locator("#inbox-view")).to_be_visible()
    cdp = page.context.new_cdp_session(page)
    manifest: dict[str, Any] = cdp.send("Page.getAppManifest")
    assert manifest["url"] == f"{gateway.url}/static/manifest.webmanifest"
    assert manifest["errors"] == []
    parsed = manifest["manifest"]
    assert parsed["startUrl"] == f"{gateway.url}/"
    assert parsed["id"] == f"{gateway.url}/"
    assert parsed["display"] == "kStandalone"
    installable: dict[str, Any] = cdp.send("Page.getInstallabilityErrors")
    # A Playwright context is off the record, which alone keeps it from installing.
    errors = [e["errorId"] for e in installable["installabilityErrors"]]
    assert [e for e in errors if e != "in-incognito"] == [], installable
    colours = page.eval_on_selector_all(
        "meta[name=theme-color]", "ms => ms.map(m => [m.media, m.content])"
    )
    assert colours == [
        ["(prefers-color-scheme: light)", "#ffffff"],
        ["(prefers-color-scheme: dark)", "#18202b"],
    ]


def test_the_app_opened_without_a_link_asks_for_one(page: Page, gateway: LiveGateway) -> None:
    page.goto(f"{gateway.url}/")
    signin = page.locator("#signin")
    expect(signin).to_be_visible()
    expect(page.locator("#signin-text")).to_have_text(
        "Paste the link the gateway printed (it ends in #token=…) or a session's answer_url. "
        "It stays in this tab only."
    )
    signin.get_by_label("Answer link or token").fill(f"{gateway.url}/#token={ADMIN_TOKEN}")
    signin.get_by_role("button", name="Sign in").click()
    expect(page.locator("#inbox-view")).to_be_visible()
    assert "token=" not in page.url
