"""MCP benchmark: one question's round trip through midturn's MCP server in memory
(tools/call → input_required → the client's retry with the form's answer → the result),
beside a bare MCP call of an echo tool on a low-level server in the same run (the
anchor), and the same two-call round trip on a bare server that does nothing but return
one form and echo its answer (the protocol's floor).

    .venv/bin/python bench/mcp.py [--rounds 300] [--repeats 7]

Both run on the `mcp` SDK's in-memory 2026-07-28 client (`mcp.Client(server)`), timed
interleaved so that load on the machine weighs on both alike. The midturn side includes
parking the ask in a memory store, sealing and unsealing the `requestState`, reading the
form back and the exactly-once settle. Prints the median time per call (microseconds,
the median of the repeats) and the ratios to the anchor. The goal is a ratio of at most 3.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

# This file is `mcp.py`: run as a script, its folder comes first on sys.path and would
# shadow the `mcp` package it measures.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]

import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.session import ClientRequestContext  # noqa: E402
from mcp.server import Server  # noqa: E402
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity  # noqa: E402

import midturn  # noqa: E402
from midturn.mcp import McpOptions, create_server  # noqa: E402

ASK: dict[str, Any] = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use?",
            "options": [
                {"label": "PostgreSQL", "description": "Managed, scales out"},
                {"label": "SQLite", "description": "Embedded, zero setup"},
            ],
        }
    ]
}


async def _answer(context: ClientRequestContext, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"db": "SQLite"})


def _echo_server() -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        schema = {"type": "object", "properties": {"text": {"type": "string"}}}
        return types.ListToolsResult(tools=[types.Tool(name="echo", input_schema=schema)])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        text = str((params.arguments or {}).get("text", ""))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server("echo", on_list_tools=list_tools, on_call_tool=call_tool)


def _bare_mrtr_server() -> Server[Any]:
    """The protocol's floor for the same round trip: a tool that returns one form and,
    on the retry, echoes the form's answer (no store, no parsing, no settle)."""
    schema = {"type": "object", "properties": {"db": {"type": "string"}}}

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="confirm", input_schema=schema)])

    async def call_tool(
        ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        answer = (params.input_responses or {}).get("form")
        if isinstance(answer, types.ElicitResult) and answer.content:
            text = str(answer.content.get("db"))
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)])
        form = types.ElicitRequestFormParams(message="Which?", requested_schema=schema)
        return types.InputRequiredResult(
            input_requests={"form": types.ElicitRequest(params=form)}, request_state="s"
        )

    server: Server[Any] = Server("mrtr", on_list_tools=list_tools, on_call_tool=call_tool)
    security = RequestStateSecurity.ephemeral()
    server.middleware.append(RequestStateBoundary(security, default_audience="mrtr"))
    return server


async def _time(rounds: int, call: Any) -> float:
    start = time.perf_counter()
    for _ in range(rounds):
        await call()
    return (time.perf_counter() - start) / rounds * 1e6


async def main(rounds: int, repeats: int) -> None:
    async with midturn.open_store("memory://") as store, midturn.Runtime(store) as runtime:
        server = create_server(
            runtime, state_key=b"b" * 64, options=McpOptions(progress_every_s=60)
        )
        async with (
            Client(server, elicitation_callback=_answer) as question,
            Client(_echo_server()) as echo,
            Client(_bare_mrtr_server(), elicitation_callback=_answer) as floor,
        ):

            async def ask() -> None:
                result = await question.call_tool("ask_user_question", ASK)
                assert result.structured_content is not None
                assert result.structured_content["outcome"] == "answered"

            async def bare() -> None:
                await echo.call_tool("echo", {"text": "SQLite"})

            async def mrtr() -> None:
                await floor.call_tool("confirm", {})

            for warm in (ask, bare, mrtr):
                await _time(20, warm)
            asks: list[float] = []
            bares: list[float] = []
            floors: list[float] = []
            ratios: list[float] = []
            floor_ratios: list[float] = []
            for _ in range(repeats):
                a = await _time(rounds, ask)
                b = await _time(rounds, bare)
                f = await _time(rounds, mrtr)
                asks.append(a)
                bares.append(b)
                floors.append(f)
                ratios.append(a / b)
                floor_ratios.append(f / b)
    print(f"rounds {rounds} x repeats {repeats}, mcp {_sdk_version()}")
    print(f"midturn question round trip  p50 {statistics.median(asks):9.1f} µs")
    print(f"bare echo tool call (anchor) p50 {statistics.median(bares):9.1f} µs")
    print(f"bare MRTR round trip (floor) p50 {statistics.median(floors):9.1f} µs")
    print(
        f"floor ratio median {statistics.median(floor_ratios):.2f}x: what the protocol's "
        "two calls and one form cost before midturn does anything"
    )
    print(
        f"ratio median {statistics.median(ratios):.2f}x "
        f"(range {min(ratios):.2f}–{max(ratios):.2f}x), goal ≤ 3x"
    )


def _sdk_version() -> str:
    from importlib.metadata import version

    return version("mcp")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=7)
    options = parser.parse_args()
    asyncio.run(main(options.rounds, options.repeats))
