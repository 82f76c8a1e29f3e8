"""The question tool for a host to register directly: validate, park, wait, render.

A wrapper over the asker port (`midturn.Asker`): it runs the same on the in-process
`Runtime` and on an `AsyncClient` talking to a gateway."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from midturn.contract._models import ToolOutput
from midturn.contract._ports import Asker
from midturn.errors import InvalidAsk, MidturnError

__all__ = ["handle_tool_call"]

log = logging.getLogger("midturn.runtime")


async def handle_tool_call(
    asker: Asker,
    session_id: str,
    *,
    name: str,
    tool_call_id: str,
    tool_input: Mapping[str, Any],
    turn_id: str | None,
    dialect: str,
    cancel: Callable[[str], Awaitable[object]] | None = None,
) -> ToolOutput:
    """Run one call of the question tool to its result.

    A malformed call returns the problems as an error result (nothing parked, nothing
    shown). A repeated `tool_call_id` (a resumed turn) reuses the existing ask: a settled
    one returns its result at once, a pending one is waited on. If the caller is
    cancelled (the host aborted the turn), the ask is cancelled too.
    """
    try:
        interaction, created = await asker.ask(
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
        settled = await asker.wait(interaction.id)
    except asyncio.CancelledError:
        # a closed runtime refuses with UsageError, a MidturnError: the ask stays pending
        with contextlib.suppress(MidturnError):
            await asyncio.shield((cancel or asker.cancel)(interaction.id))
        raise
    if settled.output is None:  # pragma: no cover - a settled ask always has an output
        raise MidturnError(f"ask {interaction.id} came back {settled.interaction.status}")
    return settled.output
