"""pydantic-ai's `MCPToolset` elicitation handler, answered through midturn: an MCP server
the agent uses asks its form in midturn's inbox and terminal (docs/mcp.md, "Answering
other MCP servers' elicitations").

    from midturn.adapters.pydantic_ai_mcp import elicitation_handler
    toolset = MCPToolset(server, elicitation_handler=elicitation_handler(runtime, "s1"))

Needs the extra: `pip install "midturn[pydantic-ai]"` (pydantic-ai-slim with `mcp`).
"""

from __future__ import annotations

from typing import Any

try:
    import mcp_types
    from fastmcp.client.elicitation import ElicitRequestParams
except ImportError as error:  # pragma: no cover - exercised by a subprocess test
    raise ImportError(
        "midturn.adapters.pydantic_ai_mcp needs pydantic-ai with MCP: "
        'pip install "midturn[pydantic-ai]"',
        name=error.name,
    ) from error

from midturn.contract._elicit_asker import ElicitationAsker
from midturn.contract._ports import Asker

__all__ = ["ElicitationHandler", "elicitation_handler"]


class ElicitationHandler:
    """A FastMCP-shaped handler, `(message, response_type, params, context) ->
    ElicitResult`, for `MCPToolset(elicitation_handler=...)` or `fastmcp.Client(...,
    elicitation_handler=...)`. A form midturn cannot ask raises `InvalidAsk`, which
    FastMCP returns to the server as an error; a URL-mode request is declined unseen."""

    def __init__(self, asker: ElicitationAsker) -> None:
        self.asker = asker

    async def __call__(
        self, message: str, response_type: Any, params: ElicitRequestParams, context: Any
    ) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult.model_validate(await self.asker(params))


def elicitation_handler(
    asker: Asker,
    session_id: str,
    *,
    turn_id: str | None = None,
    key: str | None = None,
    timeout: float | None = None,
) -> ElicitationHandler:
    """The handler over `asker` (a `Runtime` or an `AsyncClient`). `key` keeps the asks
    stable across a rebuilt handler (a resumed run asks nothing twice); `timeout` bounds
    each wait (then the ask is cancelled and the server gets `cancel`)."""
    return ElicitationHandler(
        ElicitationAsker(asker, session_id, turn_id=turn_id, key=key, timeout=timeout)
    )
