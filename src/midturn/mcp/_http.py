"""`/mcp` on `midturn serve`: the MCP server over streamable HTTP, behind the gateway's
bearer tokens. An agent token asks in its own session; the admin token in the default
session (`mcp`); an answer token is refused (it answers, it does not ask)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any, Protocol

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Receive, Scope, Send

from midturn.errors import Unauthorized
from midturn.mcp._server import Ctx, McpOptions, create_server
from midturn.runtime import Runtime

__all__ = ["Authority", "Caller", "McpEndpoint"]


class Caller(Protocol):
    """Who a bearer token is: its role and, for a session token, its session."""

    @property
    def role(self) -> str: ...

    @property
    def session_id(self) -> str | None: ...


class Authority(Protocol):
    """What resolves a bearer token (the gateway's token authority): the MCP surface
    knows this shape, not the gateway."""

    async def resolve(self, token: str | None) -> Caller: ...


def _bearer(headers: Any) -> str | None:
    value = headers.get("authorization") if headers is not None else None
    if not isinstance(value, str):
        return None
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


class McpEndpoint:
    """An ASGI app: check the bearer token, then hand the request to the SDK's
    streamable HTTP session manager (started on first use, stopped when `closing` is
    set, so open MCP streams never hold up the gateway's shutdown)."""

    def __init__(
        self,
        runtime: Runtime,
        authority: Authority,
        closing: asyncio.Event,
        *,
        state_key: bytes,
        public_url: Callable[[], str],
    ) -> None:
        self._runtime = runtime
        self._authority = authority
        self._closing = closing
        self._key = state_key
        self._public_url = public_url
        self._options = McpOptions()
        self._manager: StreamableHTTPSessionManager | None = None
        self._running: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def _session_for(self, ctx: Ctx) -> str:
        principal = await self._authority.resolve(_bearer(getattr(ctx.request, "headers", None)))
        return principal.session_id or self._options.session_id

    async def _run(self, manager: StreamableHTTPSessionManager) -> None:
        async with manager.run():
            self._ready.set()
            await self._closing.wait()

    async def _started(self) -> StreamableHTTPSessionManager:
        """The running session manager, made on first use (when the gateway's address is
        known, for the inbox links in URL mode)."""
        if self._manager is None:
            self._options = McpOptions(public_url=self._public_url())
            server = create_server(
                self._runtime,
                state_key=self._key,
                options=self._options,
                session_for=self._session_for,
            )
            self._manager = StreamableHTTPSessionManager(app=server)
            self._running = asyncio.ensure_future(self._run(self._manager))
        assert self._running is not None
        ready = asyncio.ensure_future(self._ready.wait())
        await asyncio.wait({ready, self._running}, return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():
            ready.cancel()
            self._running.result()  # it failed to start: raise why
        return self._manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # pragma: no cover - the route is HTTP only
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            principal = await self._authority.resolve(_bearer(headers))
        except Unauthorized as error:
            await _refuse(send, 401, "unauthorized", str(error))
            return
        if not _may_ask(principal):
            await _refuse(
                send,
                403,
                "forbidden",
                "an answer token cannot use /mcp (it asks); use the session's agent token",
            )
            return
        if self._closing.is_set():
            await _refuse(send, 503, "unavailable", "the gateway is shutting down; retry")
            return
        manager = await self._started()
        await manager.handle_request(scope, receive, send)


def _may_ask(principal: Caller) -> bool:
    return principal.role in ("admin", "agent")


async def _refuse(send: Send, status: int, error: str, message: str) -> None:
    body = json.dumps({"error": error, "message": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
