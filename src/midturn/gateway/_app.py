"""The ASGI app: routes, auth, SSE, the web inbox's static files, health and metrics."""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, PlainTextResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from midturn.errors import NotFound
from midturn.gateway import (
    _routes_asks,
    _routes_history,
    _routes_permissions,
    _routes_sessions,
    _sse,
)
from midturn.gateway._auth import TokenAuthority, bearer_token
from midturn.gateway._errors import install_error_handlers
from midturn.gateway._express import ExpressLane
from midturn.gateway._health import HEALTH_PATH, HealthLane
from midturn.gateway._middleware import GatewayMiddleware
from midturn.gateway._state import GatewayState, State, StreamLimits
from midturn.runtime import Runtime
from midturn.store import Store

__all__ = ["WEB_DIR", "GatewayApp", "create_app"]

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
# The inbox's web app manifest, whatever the host's MIME table says (browsers want it).
mimetypes.add_type("application/manifest+json", ".webmanifest")


class GatewayApp(FastAPI):
    """The gateway's FastAPI app, with the health lane (`_health.py`) and the express
    lane (`_express.py`) in front of its middleware stack: a request a lane may take goes
    there first, every other one (and any the express lane declines) through the stack
    as in any FastAPI app."""

    express: ExpressLane | None = None
    health: HealthLane | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        health = self.health
        if health is not None and scope["path"] == HEALTH_PATH and health.takes(scope):
            await health.answer(scope, send)
            return
        lane = self.express
        if lane is not None:
            target = lane.front_target(scope)
            if target is not None:
                await lane.front(scope, target, receive, send, super().__call__)
                return
        await super().__call__(scope, receive, send)


def create_app(
    runtime: Runtime,
    *,
    store: Store,
    admin_token: str,
    public_url: str = "http://127.0.0.1:8765",
    web_dir: Path = WEB_DIR,
    mcp_state_key: bytes | None = None,
    stream_limits: StreamLimits | None = None,
    notifier: Any = None,
    slack_signing_secret: str | None = None,
    slack_response_urls: tuple[str, ...] | None = None,
) -> FastAPI:
    """The gateway over an open `runtime` and its `store`. The caller owns both (opens
    and closes them); `admin_token` is the token that reaches everything. With
    `mcp_state_key` (and the `mcp` extra installed) it also serves MCP at `/mcp`.
    `stream_limits` bounds event streams (default: `StreamLimits.from_env()`).
    `/v1/webhooks` (docs/notifications.md) is always served; `notifier`, a running
    `midturn.notify.Notifier`, is woken when a destination changes. With
    `slack_signing_secret` it takes Slack's button clicks at `/v1/slack/interactions`
    (docs/notifications.md#slack); `slack_response_urls` overrides where Slack's
    `response_url` may point (Slack's own hosts by default)."""
    from midturn import __version__

    app = GatewayApp(
        title="midturn gateway",
        version=__version__,
        description="Park an agent's turn on bounded questions and permission requests, "
        "and answer them over HTTP. See docs/protocol.md.",
        docs_url=None,
        redoc_url=None,
    )
    state = GatewayState(
        runtime=runtime,
        store=store,
        authority=TokenAuthority(store, admin_token),
        public_url=public_url.rstrip("/"),
        stream_limits=stream_limits or StreamLimits.from_env(),
    )
    app.state.gateway = state
    install_error_handlers(app)
    # the router tries routes in order: the round trip's routes (asks) first
    for module in (_routes_asks, _routes_permissions, _routes_sessions, _routes_history, _sse):
        app.include_router(module.router)

    if mcp_state_key is not None:
        _mount_mcp(app, state, mcp_state_key)
    _mount_webhooks(app, state, notifier)
    if slack_signing_secret is not None:
        _mount_slack(app, state, slack_signing_secret, slack_response_urls)

    @app.get(HEALTH_PATH, tags=["operations"])
    async def healthz() -> dict[str, str]:
        """Liveness."""
        return {"status": "ok"}

    @app.get("/metrics", response_class=PlainTextResponse, tags=["operations"])
    async def metrics(gateway: State) -> PlainTextResponse:
        """Prometheus metrics (text exposition format 0.0.4). Open, so cheap: the pending
        count is one aggregate query over the store's index of pending rows, never a
        listing of interactions."""
        pending = await gateway.store.count_pending()
        return PlainTextResponse(
            gateway.metrics.render(
                pending,
                streams_dropped=gateway.hub.dropped,
                stream_buffer_bytes=gateway.hub.buffered_bytes,
                event_log_reads=gateway.hub.log_reads,
            ),
            media_type="text/plain; version=0.0.4",
        )

    @app.get("/", include_in_schema=False)
    async def inbox_page() -> FileResponse:
        index = web_dir / "index.html"
        if not index.is_file():
            raise NotFound("the web inbox is not installed here (no index.html)")
        return FileResponse(index, media_type="text/html")

    app.mount("/static", StaticFiles(directory=web_dir, check_dir=False), name="static")

    app.express = ExpressLane(app, state)
    app.health = HealthLane(_get_route(app, HEALTH_PATH), state.metrics, app.express.telemetry_on)
    app.add_middleware(GatewayMiddleware, metrics=state.metrics, express=app.express)
    _declare_bearer_auth(app)
    return app


def _get_route(app: FastAPI, path: str) -> APIRoute:
    for route in app.router.routes:
        if isinstance(route, APIRoute) and route.path == path and "GET" in (route.methods or ()):
            return route
    raise LookupError(f"the gateway has no GET route {path}")  # pragma: no cover


def _mount_mcp(app: FastAPI, state: GatewayState, key: bytes) -> None:
    """`/mcp`: streamable HTTP MCP behind the same bearer tokens (docs/mcp.md)."""
    from starlette.routing import Route

    from midturn.mcp._http import McpEndpoint

    endpoint = McpEndpoint(
        state.runtime,
        state.authority,
        state.closing,
        state_key=key,
        public_url=lambda: state.public_url,
    )
    app.router.routes.append(Route("/mcp", endpoint, methods=["GET", "POST", "DELETE"]))


def _mount_webhooks(app: FastAPI, state: GatewayState, notifier: Any) -> None:
    """`/v1/webhooks`: the notifications' admin API, behind the admin token."""
    from midturn.notify._routes import webhook_router

    async def admin_only(request: Request) -> None:
        principal = await state.authority.resolve(bearer_token(request))
        request.state.role = principal.role
        principal.require(set(), "manage webhooks")

    app.include_router(
        webhook_router(
            state.store,
            admin_only,
            options=getattr(notifier, "options", None),
            wake=getattr(notifier, "wake", None),
        )
    )


def _mount_slack(
    app: FastAPI, state: GatewayState, secret: str, response_urls: tuple[str, ...] | None
) -> None:
    """`/v1/slack/interactions`: Slack's button clicks, checked by Slack's request
    signature instead of a bearer token (docs/notifications.md#slack)."""
    from starlette.routing import Route

    from midturn.notify._slack import SLACK_RESPONSE_URLS, SlackInteractions

    endpoint = SlackInteractions(
        state.runtime, secret, response_urls=response_urls or SLACK_RESPONSE_URLS
    )
    app.router.routes.append(Route("/v1/slack/interactions", endpoint, methods=["POST"]))


def _declare_bearer_auth(app: FastAPI) -> None:
    """Declare the bearer scheme on every `/v1` operation of the OpenAPI document. (The
    routes read the token themselves, in one dependency: an `HTTPBearer` dependency
    would document it too, but costs a dependency level on every request.)"""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = generate()
        schema.setdefault("components", {})["securitySchemes"] = {
            "HTTPBearer": {
                "type": "http",
                "scheme": "bearer",
                "description": "admin, agent or answer token",
            }
        }
        for path, operations in schema["paths"].items():
            if path.startswith("/v1/"):
                for operation in operations.values():
                    operation["security"] = [{"HTTPBearer": []}]
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
