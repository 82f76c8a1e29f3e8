"""Strands' `MCPClient` with midturn's elicitation callback: a real Strands `Agent`, driven
by a scripted `strands.models.Model`, calls a real `MCPServer` tool over stdio (a
subprocess) that elicits; a scripted person answers through a `Runtime` on SQLite, and
the tool's result reaches the agent's history. Strands calls the callback on its own
background loop; the callback runs each ask on the runtime's loop."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client
from strands import Agent
from strands.models import Model
from strands.tools.mcp import MCPClient
from tests._eliciting import CASES, doc_blocks, run_example, sides

from midturn.adapters.strands_mcp import elicitation_callback
from midturn.testing import ScriptedResponder

SAFETY_S = 30.0
ROOT = Path(__file__).resolve().parents[2]


class CallsDeploy(Model):
    """A scripted model: call `deploy` once, then end the turn with a short text."""

    def __init__(self) -> None:
        self.calls = 0

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    async def structured_output(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        raise NotImplementedError
        yield

    async def stream(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        self.calls += 1
        yield {"messageStart": {"role": "assistant"}}
        if self.calls == 1:
            use = {"toolUseId": "tooluse_1", "name": "deploy"}
            yield {"contentBlockStart": {"start": {"toolUse": use}}}
            arguments = json.dumps({"service": "billing"})
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": arguments}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        else:
            yield {"contentBlockDelta": {"delta": {"text": "done"}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}


def server_over_stdio() -> Any:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tests._eliciting_server"], cwd=str(ROOT)
    )
    return stdio_client(params)


def tool_results(agent: Agent) -> list[dict[str, Any]]:
    found = []
    for message in agent.messages:
        for block in message["content"]:
            if "toolResult" in block:
                texts = [c["text"] for c in block["toolResult"]["content"] if "text" in c]
                found.append(json.loads(texts[0]))
    return found


@pytest.mark.parametrize("where", ["runtime", "gateway"])
@pytest.mark.parametrize("case", sorted(CASES))
async def test_the_agent_gets_the_persons_answer_to_the_servers_form(
    tmp_path: Path, case: str, where: str
) -> None:
    step, expected = CASES[case]
    async with (
        sides(where, tmp_path) as (session_id, asker, answerer),
        ScriptedResponder(answerer, [step], session_id=session_id) as person,
    ):
        callback = elicitation_callback(asker, session_id, turn_id="t1")
        client = MCPClient(server_over_stdio, elicitation_callback=callback)
        agent = Agent(model=CallsDeploy(), tools=[client], callback_handler=None)
        try:
            await asyncio.wait_for(agent.invoke_async("Deploy billing"), SAFETY_S)
        finally:
            agent.cleanup()
        assert tool_results(agent) == [expected]
        # the person's answer is recorded once its own response is in, which over HTTP
        # may come after the agent's (the gateway answers a woken long-poll first)
        await asyncio.wait_for(person.finished(), SAFETY_S)
        [response] = person.responses
        assert response.interaction.dialect == "mcp-elicitation"
        assert response.interaction.turn_id == "t1"


def test_without_strands_the_import_says_what_to_install() -> None:
    code = (
        "import sys\n"
        "sys.modules['strands'] = None\n"
        "try:\n"
        "    import midturn.adapters.strands_mcp\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert 'pip install "midturn[strands]"' in out.stdout


async def test_a_form_midturn_cannot_ask_is_an_error_to_the_server(tmp_path: Path) -> None:
    import mcp_types

    async with sides("runtime", tmp_path) as (session_id, asker, answerer):
        callback = elicitation_callback(asker, session_id)
        params = mcp_types.ElicitRequestFormParams(
            message="Nested",
            requested_schema={"type": "object", "properties": {"a": {"type": "object"}}},
        )
        reply = await callback(None, params)
        assert isinstance(reply, mcp_types.ErrorData)
        assert "requestedSchema" in reply.message
        assert await answerer.queue(session_id) == []


def test_the_docs_strands_example_runs_as_written(tmp_path: Path) -> None:
    files, examples = doc_blocks()
    [code] = [code for code in examples if "strands" in code]
    run_example(code, files, tmp_path)
