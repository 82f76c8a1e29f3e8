"""The open routes: health, Prometheus metrics, the OpenAPI document, and the web
inbox's static files with their Content-Security-Policy."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from midturn import Interaction, Runtime, open_store
from midturn.gateway import create_app
from midturn.store._sqlite import SqliteStore

from .conftest import ADMIN_TOKEN, ANSWER, ASK, LiveGateway, Session, create_ask


async def test_healthz_needs_no_token(gateway: LiveGateway) -> None:
    async with gateway.client(None) as anonymous:
        response = await anonymous.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


def _metric(text: str, name: str) -> float:
    match = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    assert match, f"{name} missing from:\n{text}"
    return float(match.group(1))


async def test_metrics_count_pending_interactions_settles_and_requests(
    gateway: LiveGateway, session: Session
) -> None:
    asks = [await create_ask(gateway, session, f"c{n}") for n in range(3)]
    async with gateway.client(session.answer_token) as answerer, gateway.client(None) as anon:
        before = (await anon.get("/metrics")).text
        await answerer.post(f"/v1/asks/{asks[0]['id']}/answer", json=ANSWER)
        response = await anon.get("/metrics")
    after = response.text
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert _metric(before, "midturn_pending_interactions") == 3
    assert _metric(after, "midturn_pending_interactions") == 2
    assert _metric(after, "midturn_settle_latency_seconds_count") == 1
    assert _metric(after, 'midturn_settle_latency_seconds_bucket{le="+Inf"}') == 1
    assert _metric(after, "midturn_open_streams") == 0
    assert _metric(after, "midturn_waiting_requests") == 0
    created = 'midturn_http_requests_total{route="/v1/sessions/{session_id}/asks",status="201"}'
    assert _metric(after, created) == 3
    for line in after.splitlines():
        assert line.startswith("#") or re.match(r"^[a-z_]+(\{.*\})? [0-9.e+-]+$", line), line


async def test_the_openapi_document_lists_every_route_with_bearer_auth(
    gateway: LiveGateway,
) -> None:
    async with gateway.client(None) as anonymous:
        spec = (await anonymous.get("/openapi.json")).json()
    assert set(spec["paths"]) >= {
        "/v1/sessions",
        "/v1/sessions/{session_id}/asks",
        "/v1/asks/{interaction_id}",
        "/v1/asks/{interaction_id}/answer",
        "/v1/asks/{interaction_id}/cancel",
        "/v1/sessions/{session_id}/turns/{turn_id}/stop",
        "/v1/sessions/{session_id}/permissions",
        "/v1/permissions/{interaction_id}",
        "/v1/permissions/{interaction_id}/decision",
        "/v1/sessions/{session_id}/interactions",
        "/v1/inbox",
        "/v1/sessions/{session_id}/events",
        "/v1/events",
        "/healthz",
        "/metrics",
    }
    assert spec["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


@pytest.fixture
async def static_app(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    (tmp_path / "index.html").write_text("<!doctype html><title>inbox</title>")
    (tmp_path / "app.js").write_text("console.log('inbox')")
    async with open_store("memory://") as store, Runtime(store) as runtime:
        app = create_app(runtime, store=store, admin_token=ADMIN_TOKEN, web_dir=tmp_path)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            yield client


async def test_the_inbox_is_served_with_a_csp_that_forbids_inline_script(
    static_app: httpx.AsyncClient,
) -> None:
    page = await static_app.get("/")
    script = await static_app.get("/static/app.js")
    api = await static_app.get("/healthz")
    assert page.status_code == 200 and "inbox" in page.text
    assert script.status_code == 200 and "console.log" in script.text
    for response in (page, script):
        policy = response.headers["content-security-policy"]
        script_src = re.search(r"script-src ([^;]*)", policy)
        assert script_src and script_src.group(1).strip() == "'self'"
        assert "unsafe-inline" not in policy
    assert "content-security-policy" not in api.headers
    assert page.headers["referrer-policy"] == "no-referrer"


async def test_the_shipped_web_inbox_and_its_assets_are_served(gateway: LiveGateway) -> None:
    async with gateway.client(None) as browser:
        page = await browser.get("/")
        scripts = re.findall(r'<script[^>]*src="\./(static/[^"]+)"', page.text)
        styles = re.findall(r'<link[^>]*href="\./(static/[^"]+)"', page.text)
        assets = [await browser.get(f"/{path}") for path in scripts + styles]
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "content-security-policy" in page.headers
    assert scripts, "index.html loads no script from /static/"
    assert "<script>" not in page.text  # no inline script: the CSP would block it
    for asset in assets:
        assert asset.status_code == 200, asset.url
        assert "content-security-policy" in asset.headers


class _CountingListings:
    """A store that counts how often interactions are listed (and how many come back)."""

    listings = 0
    listed = 0

    async def list_interactions(self, **filters: Any) -> list[Interaction]:
        found: list[Interaction] = await super().list_interactions(**filters)  # type: ignore[misc]
        self.listings += 1
        self.listed += len(found)
        return found


class _CountingSqlite(_CountingListings, SqliteStore):
    pass


async def test_a_metrics_scrape_counts_pending_without_loading_interactions(
    tmp_path: Path,
) -> None:
    store = _CountingSqlite(f"sqlite:///{tmp_path / 'midturn.db'}")
    async with store, Runtime(store) as runtime:
        asks = [(await runtime.ask(f"s{n % 3}", ASK, turn_id="t1"))[0] for n in range(50)]
        await runtime.request_permission("s1", tool="bash", summary="ls", turn_id="t1")
        await runtime.answer(asks[0].id, ANSWER)
        await runtime.stop_turn("s2", "t1")  # cancels the 16 asks of s2
        app = create_app(runtime, store=store, admin_token=ADMIN_TOKEN, web_dir=tmp_path)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            store.listings = store.listed = 0
            scrapes = [(await client.get("/metrics")).text for _ in range(3)]
        listings, listed = store.listings, store.listed
        pending = len(await runtime.inbox())
    assert pending == 50 + 1 - 1 - 16
    for text in scrapes:
        assert _metric(text, "midturn_pending_interactions") == pending
    assert (listings, listed) == (0, 0)
