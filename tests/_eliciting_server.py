"""The eliciting `MCPServer` of tests/_eliciting.py, alone, so a stdio child starts it
without importing midturn: `python -m tests._eliciting_server`."""

from __future__ import annotations

import json
from typing import Annotated, Literal

from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Elicit, MCPServer, Resolve
from pydantic import BaseModel, Field


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


if __name__ == "__main__":
    eliciting_server().run()
