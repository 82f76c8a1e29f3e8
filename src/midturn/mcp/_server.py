"""The MCP server: a low-level `mcp.server.Server` whose tools park ordinary midturn
interactions, and settle them however the client lets the person answer (docs/mcp.md).

- 2026-07-28 clients that declare elicitation get an `InputRequiredResult` with one form
  (or, for a secret, one URL) and a sealed `requestState` naming the interaction; their
  retry settles it. Replays and concurrent retries return the one settled result.
- 2025 clients that declare elicitation get `elicitation/create` pushed, while the ask
  also stays answerable in the inbox (whichever answers first settles it).
- Any other client waits for the inbox, with progress notifications, up to a bound;
  then the result says the question is still open and how to collect it.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.request_state import RequestStateBoundary
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from midturn.contract._interactions import Interaction, Risk
from midturn.contract._prompt import SYSTEM_PROMPT
from midturn.errors import Forbidden, GatewayError, InvalidAsk, NotFound, UsageError
from midturn.mcp._backend import AskerAnswerer, Backend
from midturn.mcp._elicit import Elicitor
from midturn.mcp._form import has_secret
from midturn.mcp._options import McpOptions
from midturn.mcp._results import error_result, pending_result, settled_result, started_result
from midturn.mcp._state import CallState, state_security
from midturn.mcp._tools import PERMISSION_TOOL, QUESTION_TOOL, START_TOOL, WAIT_TOOL, tool_list

__all__ = ["McpOptions", "create_server"]

Ctx = ServerRequestContext[Any, Any]
SessionFor = Callable[[Ctx], Awaitable[str]]

SERVER_NAME = "midturn"
_RISKS: dict[str, Risk] = {"low": "low", "medium": "medium", "high": "high"}


def _new_call_id() -> str:
    """MCP has no tool-call id: the first call of a question gets one; its retries carry
    the interaction in their sealed state instead."""
    return "mcp_" + secrets.token_urlsafe(12)


def _who_asks(ctx: Ctx) -> dict[str, Any] | None:
    """Who is asking, as far as MCP says: the client's name from its `initialize`
    (`clientInfo`: its title, else its name), shown to the person beside the question
    (docs/contract.md#who-is-asking). None when the client gave none."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    if info is None:
        return None
    name = info.title or info.name
    return {"agent": name} if name and name.strip() else None


class _Tools:
    def __init__(self, backend: Backend, options: McpOptions, session_for: SessionFor) -> None:
        self.backend = backend
        self.options = options
        self.session_for = session_for
        self.elicitor = Elicitor(backend, options)
        self._parking: dict[str, tuple[asyncio.Lock, int]] = {}  # session → (lock, users)

    async def list_tools(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list(self.options.max_wait_s))

    async def call_tool(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        arguments: dict[str, Any] = dict(params.arguments or {})
        try:
            if params.name in (QUESTION_TOOL, PERMISSION_TOOL):
                return await self._interactive(ctx, params, arguments)
            if params.name == START_TOOL:
                return await self._start(ctx, arguments)
            if params.name == WAIT_TOOL:
                return await self._wait(ctx, arguments)
        except (NotFound, Forbidden, UsageError, InvalidAsk) as error:
            return error_result(str(error))
        except (GatewayError, httpx.TransportError) as error:  # a remote backend's gateway
            return error_result(
                f"midturn's gateway did not answer ({error or type(error).__name__}); nothing "
                "was lost: call the tool again (or wait_for_answer with an interaction_id)"
            )
        known = ", ".join((QUESTION_TOOL, PERMISSION_TOOL, START_TOOL, WAIT_TOOL))
        return error_result(f"no tool named {params.name!r}; this server has {known}")

    async def _interactive(
        self, ctx: Ctx, params: types.CallToolRequestParams, arguments: dict[str, Any]
    ) -> types.CallToolResult | types.InputRequiredResult:
        state = CallState.load(params.request_state) if params.request_state else None
        if params.request_state and state is None:
            return error_result("the requestState is not this server's; call the tool again")
        if state is not None:
            interaction = await self.backend.get(state.interaction_id)
            wanted = "ask" if params.name == QUESTION_TOOL else "permission"
            if interaction.kind != wanted:
                return error_result("the requestState belongs to another tool; call again")
        else:
            interaction = await self._create(ctx, params.name, arguments)
        if not interaction.pending:
            return settled_result(interaction)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return await self.elicitor.modern(ctx, interaction, params.input_responses)
        return await self.elicitor.legacy(ctx, interaction)

    @contextlib.asynccontextmanager
    async def _in_order(self, session_id: str) -> AsyncIterator[None]:
        """Park one call of the session at a time. A client's calls come as tasks of their
        own, started in the order it sent them (a model's parallel tool calls: its order),
        and reach here before their first await (the session of a stdio server is fixed),
        so they park in that order: a slow ask (a store, a gateway) is never overtaken."""
        lock, users = self._parking.get(session_id, (asyncio.Lock(), 0))
        self._parking[session_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._parking[session_id]
            if users == 1:
                del self._parking[session_id]
            else:
                self._parking[session_id] = (lock, users - 1)

    async def _create(self, ctx: Ctx, name: str, arguments: dict[str, Any]) -> Interaction:
        session_id = await self.session_for(ctx)
        async with self._in_order(session_id):
            return await self._park(session_id, ctx, name, arguments)

    async def _park(
        self, session_id: str, ctx: Ctx, name: str, arguments: dict[str, Any]
    ) -> Interaction:
        asker = _who_asks(ctx)
        if name != PERMISSION_TOOL:
            interaction, _ = await self.backend.ask(
                session_id,
                arguments,
                turn_id=self.options.turn_id,
                tool_call_id=_new_call_id(),
                context=asker,
            )
            return interaction
        summary, risk, details = (arguments.get(k) for k in ("summary", "risk", "details"))
        tool = arguments.get("tool", "action")
        unknown = sorted(set(arguments) - {"summary", "risk", "details", "tool"})
        if unknown:
            names = ", ".join(unknown)
            raise UsageError(f"unknown argument(s) {names}; send summary, risk, details, tool")
        risk = "medium" if risk is None else risk
        if risk not in _RISKS:
            raise UsageError(f"risk is {risk!r}; use low, medium or high")
        if not isinstance(summary, str) or not isinstance(tool, str):
            raise UsageError("summary (and tool) must be strings; say what you are about to do")
        if details is not None and not isinstance(details, str):
            raise UsageError("details must be a string (the exact command, diff or payload)")
        interaction, _ = await self.backend.request_permission(
            session_id,
            tool=tool,
            summary=summary,
            risk=_RISKS[risk],
            details=details,
            turn_id=self.options.turn_id,
            tool_call_id=_new_call_id(),
            context=asker,
        )
        return interaction

    async def _start(self, ctx: Ctx, arguments: dict[str, Any]) -> types.CallToolResult:
        interaction = await self._create(ctx, START_TOOL, arguments)
        return started_result(interaction)

    async def _wait(self, ctx: Ctx, arguments: dict[str, Any]) -> types.CallToolResult:
        interaction_id = arguments.get("interaction_id")
        seconds = arguments.get("seconds", self.options.max_wait_s)
        if not isinstance(interaction_id, str) or not interaction_id:
            raise UsageError("interaction_id is required: the id a question returned")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
            raise UsageError(f"seconds must be a number from 0 to {self.options.max_wait_s:g}")
        interaction = await self.backend.get(interaction_id)
        if interaction.session_id != await self.session_for(ctx):
            raise NotFound(f"no interaction with id {interaction_id!r} in this session")
        bound = min(float(seconds), self.options.max_wait_s)
        interaction = await self.elicitor.wait(ctx, interaction, bound)
        if interaction.pending:
            ask = interaction.ask
            return pending_result(interaction, secret=ask is not None and has_secret(ask))
        return settled_result(interaction)


def create_server(
    backend: AskerAnswerer | Backend,
    *,
    state_key: bytes,
    options: McpOptions | None = None,
    session_for: SessionFor | None = None,
) -> Server[Any]:
    """The MCP server over the asker and answerer ports: an open `Runtime`, an
    `AsyncClient` on a gateway (admin token), or a `Backend` (an asker and an answerer
    apart, e.g. an agent token's client and an answer token's). `state_key` seals
    `requestState` (see `load_state_key`); `session_for(ctx)` picks each call's midturn
    session (default: `options.session_id`)."""
    chosen = options or McpOptions()
    ports = backend if isinstance(backend, Backend) else Backend.over(backend)

    async def fixed_session(ctx: Ctx) -> str:
        return chosen.session_id

    tools = _Tools(ports, chosen, session_for or fixed_session)
    server: Server[Any] = Server(
        SERVER_NAME,
        version=_version(),
        title="midturn",
        instructions=SYSTEM_PROMPT,
        on_list_tools=tools.list_tools,
        on_call_tool=tools.call_tool,
    )
    security = state_security(state_key, chosen.state_ttl_s)
    server.middleware.append(RequestStateBoundary(security, default_audience=SERVER_NAME))
    return server


def _version() -> str:
    from midturn import __version__

    return __version__
