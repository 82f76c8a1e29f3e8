"""What every route needs, kept on `app.state.gateway`, and the FastAPI dependencies that
hand it (and the caller's identity) to the routes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Annotated, TypeVar

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from midturn.contract._interactions import Interaction, InteractionKind
from midturn.errors import NotFound
from midturn.gateway._auth import Principal, TokenAuthority, bearer_token
from midturn.gateway._hub import EventHub
from midturn.gateway._metrics import Metrics
from midturn.runtime import Runtime
from midturn.store import Store

__all__ = [
    "Caller",
    "GatewayState",
    "State",
    "StreamCaller",
]

T = TypeVar("T")

MAX_WAIT_S = 60.0


@dataclass
class GatewayState:
    runtime: Runtime
    store: Store
    authority: TokenAuthority
    public_url: str = "http://127.0.0.1:8765"
    metrics: Metrics = field(default_factory=Metrics)
    closing: asyncio.Event = field(default_factory=asyncio.Event)
    hub: EventHub = field(init=False)

    def __post_init__(self) -> None:
        self.hub = EventHub(self.runtime, self.store)

    async def aclose(self) -> None:
        """End every stream and long-poll, and stop the event hub."""
        self.closing.set()
        await self.hub.aclose()

    async def interaction(
        self, interaction_id: str, kind: InteractionKind, principal: Principal, action: str
    ) -> Interaction:
        """The interaction by id, checked to be of `kind` and in the caller's session."""
        try:
            found = await self.runtime.get(interaction_id)
        except NotFound:
            found = None
        if found is None or found.kind != kind:
            other = "permission" if kind == "ask" else "ask"
            hint = (
                f" (it is a {other}: use /v1/{other}s/{interaction_id})"
                if found is not None
                else "; check the id returned when it was created"
            )
            raise NotFound(f"no {kind} with id {interaction_id!r}{hint}")
        principal.require({"agent", "answer"}, action, found.session_id)
        return found

    async def until_closing(self, work: Awaitable[T]) -> T | None:
        """Run `work` unless the server starts shutting down first (then None)."""
        task = asyncio.ensure_future(work)
        closing = asyncio.ensure_future(self.closing.wait())
        try:
            await asyncio.wait({task, closing}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closing.cancel()
        if task.done():
            return task.result()
        task.cancel()
        return None


def _gateway(request: Request) -> GatewayState:
    state: GatewayState = request.app.state.gateway
    return state


async def _state(request: Request) -> GatewayState:
    """(async: FastAPI would run a plain function in a worker thread, one hop per call)"""
    return _gateway(request)


_bearer = HTTPBearer(auto_error=False, description="admin, agent or answer token")


async def _caller(
    request: Request,
    _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    principal = await _gateway(request).authority.resolve(bearer_token(request))
    request.state.role = principal.role
    return principal


async def _stream_caller(
    request: Request,
    _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    token = bearer_token(request, allow_query=True)
    principal = await _gateway(request).authority.resolve(token)
    request.state.role = principal.role
    return principal


State = Annotated[GatewayState, Depends(_state)]
Caller = Annotated[Principal, Depends(_caller)]
StreamCaller = Annotated[Principal, Depends(_stream_caller)]
