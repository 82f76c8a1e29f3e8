"""Strands' `MCPClient(elicitation_callback=...)`, answered through midturn: an MCP server
the agent uses asks its form in midturn's inbox and terminal (docs/mcp.md, "Answering
other MCP servers' elicitations").

    from midturn.adapters.strands_mcp import elicitation_callback
    client = MCPClient(transport, elicitation_callback=elicitation_callback(runtime, "s1"))

Strands runs each MCP connection on an event loop of its own, in a background thread,
and calls the callback there. An asker is bound to the loop it was opened on (its store,
its HTTP client), so the callback runs each ask on the loop it was built on and awaits
the result from Strands' loop. Build it where the asker lives, and keep that loop free
while the agent runs: drive Strands with its async calls (`call_tool_async`,
`invoke_async`), not the blocking ones from the asker's loop.

Needs the extra: `pip install "midturn[strands]"`.
"""

from __future__ import annotations

import asyncio
from typing import Any

try:
    import mcp_types
    import strands.tools.mcp  # noqa: F401 - only to fail early with the install hint
except ImportError as error:  # pragma: no cover - exercised by a subprocess test
    raise ImportError(
        'midturn.adapters.strands_mcp needs Strands: pip install "midturn[strands]"',
        name=error.name,
    ) from error

from midturn.contract._elicit_asker import ElicitationAsker
from midturn.contract._ports import Asker
from midturn.errors import InvalidAsk

__all__ = ["ElicitationCallback", "elicitation_callback"]


class ElicitationCallback:
    """The `mcp` client callback shape, `(context, params) -> ElicitResult | ErrorData`,
    that hops to `loop` (the asker's) for each ask."""

    def __init__(self, asker: ElicitationAsker, loop: asyncio.AbstractEventLoop) -> None:
        self.asker = asker
        self.loop = loop

    async def __call__(
        self, context: Any, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        try:
            if asyncio.get_running_loop() is self.loop:
                result = await self.asker(params)
            else:
                future = asyncio.run_coroutine_threadsafe(self.asker(params), self.loop)
                result = await asyncio.wrap_future(future)
        except InvalidAsk as error:
            return mcp_types.ErrorData(code=mcp_types.INVALID_PARAMS, message=str(error))
        return mcp_types.ElicitResult.model_validate(result)


def elicitation_callback(
    asker: Asker,
    session_id: str,
    *,
    turn_id: str | None = None,
    key: str | None = None,
    timeout: float | None = None,
    loop: asyncio.AbstractEventLoop | None = None,
) -> ElicitationCallback:
    """The callback over `asker` (a `Runtime` or an `AsyncClient`), its asks run on
    `loop` (default: the running loop, so call this from the asker's loop). `key` keeps
    the asks stable across a rebuilt callback; `timeout` bounds each wait."""
    home = loop if loop is not None else asyncio.get_running_loop()
    asking = ElicitationAsker(asker, session_id, turn_id=turn_id, key=key, timeout=timeout)
    return ElicitationCallback(asking, home)
