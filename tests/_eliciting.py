"""A real `mcp` server whose tool elicits (a `Resolve` that returns `Elicit`: pushed as
`elicitation/create` on a legacy session, returned as `InputRequiredResult` on a
2026-07-28 one), the
person's scripted replies, and what the tool must return for each: shared by the tests of
the three client handlers (mcp `Client`, pydantic-ai `MCPToolset`, Strands `MCPClient`)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Elicit, MCPServer, Resolve
from pydantic import BaseModel, Field

from midturn.testing import answer, cancel, skip

SESSION = "agent"


class Deploy(BaseModel):
    target: Literal["staging", "production"] = Field(title="Target", description="Where to?")
    regions: list[Literal["eu", "us", "ap"]] = Field(title="Regions", description="Which ones?")


def where(service: str) -> Elicit[Deploy]:
    return Elicit(f"Deploy {service}: where to?", Deploy)


def eliciting_server() -> MCPServer:
    server = MCPServer("deployer")

    @server.tool()
    async def deploy(
        service: str, result: Annotated[ElicitationResult[Deploy], Resolve(where)]
    ) -> str:
        """Deploy a service, asking the user where."""
        if result.action == "accept":
            return json.dumps({"action": "accept", **result.data.model_dump()})
        return json.dumps({"action": result.action})

    return server


# (the person's step, the tool's JSON result): accept with a choice and a multi-select,
# decline (the person skipped the form), cancel (the ask was cancelled, not answered).
CASES: dict[str, tuple[Any, dict[str, Any]]] = {
    "accept": (
        answer({"answers": {"target": "production", "regions": ["eu", "ap"]}}),
        {"action": "accept", "target": "production", "regions": ["eu", "ap"]},
    ),
    "decline": (skip(), {"action": "decline"}),
    "cancel": (cancel(), {"action": "cancel"}),
}


if __name__ == "__main__":  # the same server over stdio, for clients that spawn one
    eliciting_server().run()
