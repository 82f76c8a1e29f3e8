"""The question tool for a host to register directly: validate, park, wait, render."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from midturn.contract._api import render
from midturn.contract._models import ToolOutput
from midturn.errors import InvalidAsk, MidturnError

if TYPE_CHECKING:
    from midturn.runtime._runtime import Runtime

__all__ = ["handle_tool_call"]

log = logging.getLogger("midturn.runtime")


async def handle_tool_call(
    runtime: Runtime,
    session_id: str,
    *,
    name: str,
    tool_call_id: str,
    tool_input: Mapping[str, Any],
    turn_id: str | None,
    dialect: str,
) -> ToolOutput:
    """Run one call of the question tool to its result.

    A malformed call returns the problems as an error result (nothing parked, nothing
    shown). A repeated `tool_call_id` (a resumed turn) reuses the existing ask: a settled
    one returns its result at once, a pending one is waited on. If the caller is
    cancelled (the host aborted the turn), the ask is cancelled too.
    """
    try:
        interaction, created = await runtime.ask(
            session_id, tool_input, turn_id=turn_id, dialect=dialect, tool_call_id=tool_call_id
        )
    except InvalidAsk as error:
        log.info(
            "tool call %s (%s) refused: %d problem(s)", tool_call_id, name, len(error.problems)
        )
        return ToolOutput(text=str(error), is_error=True)
    if not created:
        log.debug("tool call %s resumes interaction %s", tool_call_id, interaction.id)
    try:
        settled = await runtime.wait(interaction.id)
    except asyncio.CancelledError:
        if not runtime.closed:
            with contextlib.suppress(MidturnError):
                await asyncio.shield(runtime.cancel(interaction.id, by="host"))
        raise
    if settled.result is None:  # pragma: no cover - a settled ask always has a result
        raise MidturnError(f"ask {settled.id} settled {settled.status} without a result")
    return render(settled.result, settled.dialect)
