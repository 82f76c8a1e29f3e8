"""The ASGI app: routes, auth, SSE, the web inbox's static files, health and metrics."""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import FileResponse, PlainTextResponse
from fastapi.staticfiles import StaticFiles

from midturn.errors import NotFound
from midturn.gateway import (
    _routes_asks,
    _routes_history,
    _routes_permissions,
    _routes_sessions,
    _sse,
)
from midturn.gateway._auth import TokenAuthority
from midturn.gateway._errors import install_error_handlers
from midturn.gateway._middleware import GatewayMiddleware
from midturn.gateway._state import GatewayState, State, StreamLimits
from midturn.runtime import Runtime
from midturn.store import Store

__all__ = ["WEB_DIR", "create_app"]

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
# The inbox's web app manifest, whatever the host's MIME table says (browsers want it).
mimetypes.add_type("application/manifest+json", ".webmanifest")


def create_app(
    runtime: Runtime,
    *,
    store: Store,
    admin_token: str,
    public_url: str = "http://127.0.0.1:8765",
    web_dir: Path = WEB_DIR,
    mcp_state_key: bytes | None = None,
    stream_limits: StreamLimits | None = None,
) -> FastAPI:
    """The gateway over an open `runtime` and its `store`. The caller owns both (opens
    and closes them); `admin_token` is the token that reaches everything. With
    `mcp_state_key` (and the `mcp` extra installed) it also serves MCP at `/mcp`.
    `stream_limits` bounds event streams (default: `StreamLimits.from_env()`)."""
    from midturn import __version__

    app = FastAPI(
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

    @app.get("/healthz", tags=["operations"])
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

    app.add_middleware(GatewayMiddleware, metrics=state.metrics)
    _declare_bearer_auth(app)
    return app


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
