"""The `mcp` SDK client's `elicitation_callback`, answered through midturn: an MCP server
this agent uses asks its form in midturn's inbox and terminal (docs/mcp.md, "Answering
other MCP servers' elicitations")."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.client.session import ClientRequestContext

from midturn.contract._elicit_asker import ElicitationAsker
from midturn.contract._ports import Asker
from midturn.errors import InvalidAsk

__all__ = ["ElicitationCallback", "elicitation_callback"]


class ElicitationCallback:
    """An `mcp.Client(..., elicitation_callback=...)` (or `ClientSession`) callback that
    asks each form over `asker` (a `Runtime` or an `AsyncClient`) and returns the
    person's answer as an `ElicitResult`. A form midturn cannot ask is an error to the
    server (`-32602`, with the reason); a URL-mode request is declined unseen."""

    def __init__(self, asker: ElicitationAsker) -> None:
        self.asker = asker

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        try:
            result: dict[str, Any] = await self.asker(params)
        except InvalidAsk as error:
            return types.ErrorData(code=types.INVALID_PARAMS, message=str(error))
        return types.ElicitResult.model_validate(result)


def elicitation_callback(
    asker: Asker,
    session_id: str,
    *,
    turn_id: str | None = None,
    key: str | None = None,
    timeout: float | None = None,
) -> ElicitationCallback:
    """The callback for `mcp.Client(server, elicitation_callback=...)`. `key` makes the
    asks stable across a rebuilt callback (a resumed run asks nothing twice); `timeout`
    bounds each wait (then the ask is cancelled and the server gets `cancel`)."""
    return ElicitationCallback(
        ElicitationAsker(asker, session_id, turn_id=turn_id, key=key, timeout=timeout)
    )
