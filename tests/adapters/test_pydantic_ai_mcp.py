"""pydantic-ai's `MCPToolset` with midturn's elicitation handler: a `FunctionModel` calls
a real `MCPServer` tool that elicits (pushed on a legacy session), and a scripted person
answers through a `Runtime` on SQLite; the tool's result reaches the model."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client as FastMCPClient
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from tests._eliciting import CASES, eliciting_server, sides

from midturn.adapters.pydantic_ai_mcp import elicitation_handler
from midturn.testing import ScriptedResponder

SAFETY_S = 20.0


def calls_deploy(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Call the eliciting tool once, then say what it returned."""
    returned = [
        part
        for message in messages
        for part in message.parts
        if isinstance(part, ToolReturnPart) and part.tool_name == "deploy"
    ]
    if not returned:
        return ModelResponse(parts=[ToolCallPart("deploy", {"service": "billing"}, "call-1")])
    return ModelResponse(parts=[TextPart(str(returned[0].content))])


@pytest.mark.parametrize("where", ["runtime", "gateway"])
@pytest.mark.parametrize("case", sorted(CASES))
async def test_the_model_gets_the_persons_answer_to_the_servers_form(
    tmp_path: Path, case: str, where: str
) -> None:
    step, expected = CASES[case]
    async with (
        sides(where, tmp_path) as (session_id, asker, answerer),
        ScriptedResponder(answerer, [step], session_id=session_id) as person,
    ):
        handler = elicitation_handler(asker, session_id, turn_id="t1")
        client = FastMCPClient(eliciting_server(), mode="legacy", elicitation_handler=handler)
        agent = Agent(FunctionModel(calls_deploy), toolsets=[MCPToolset(client)])
        result = await asyncio.wait_for(agent.run("Deploy billing"), SAFETY_S)
        returns = [
            part.content
            for message in result.all_messages()
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]
        assert len(returns) == 1
        content: Any = returns[0]
        assert json.loads(content if isinstance(content, str) else json.dumps(content)) == expected
        # the person's answer is recorded once its own response is in, which over HTTP
        # may come after the agent's (the gateway answers a woken long-poll first)
        await asyncio.wait_for(person.finished(), SAFETY_S)
        [response] = person.responses
        assert response.interaction.dialect == "mcp-elicitation"
        assert response.interaction.turn_id == "t1"


def test_without_pydantic_ai_the_import_says_what_to_install() -> None:
    code = (
        "import sys\n"
        "sys.modules['fastmcp'] = None\n"
        "sys.modules['fastmcp.client.elicitation'] = None\n"
        "try:\n"
        "    import midturn.adapters.pydantic_ai_mcp\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert 'pip install "midturn[pydantic-ai]"' in out.stdout


async def test_a_form_midturn_cannot_ask_raises_for_fastmcp_to_report(tmp_path: Path) -> None:
    import mcp_types

    from midturn import InvalidAsk

    async with sides("runtime", tmp_path) as (session_id, asker, answerer):
        handler = elicitation_handler(asker, session_id)
        params = mcp_types.ElicitRequestFormParams(
            message="Nested",
            requested_schema={"type": "object", "properties": {"a": {"type": "object"}}},
        )
        with pytest.raises(InvalidAsk, match="requestedSchema"):
            await handler("Nested", None, params, None)
        assert await answerer.queue(session_id) == []
