"""The question tool for a host to register directly: validate, park, wait, render.

A wrapper over the asker port (`midturn.Asker`): it runs the same on the in-process
`Runtime` and on an `AsyncClient` talking to a gateway."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from midturn.contract._context import ContextInput
from midturn.contract._models import ToolOutput
from midturn.contract._ports import Asker
from midturn.contract.dialects import DIALECTS
from midturn.errors import InvalidAsk, MidturnError, Problem, UsageError

__all__ = ["check_dialect", "handle_tool_call"]

log = logging.getLogger("midturn.runtime")


async def handle_tool_call(
    asker: Asker,
    session_id: str,
    *,
    name: str,
    tool_call_id: str,
    tool_input: Mapping[str, Any] | str,
    turn_id: str | None,
    dialect: str,
    cancel: Callable[[str], Awaitable[object]] | None = None,
    context: ContextInput | None = None,
) -> ToolOutput:
    """Run one call of the question tool to its result.

    A malformed call returns the problems as an error result (nothing parked, nothing
    shown). A repeated `tool_call_id` (a resumed turn) reuses the existing ask: a settled
    one returns its result at once, a pending one is waited on. If the caller is
    cancelled (the host aborted the turn), the ask is cancelled too.

    `tool_input` may be the JSON string OpenAI's tool calls carry as `arguments`. A
    `name` that a registered dialect calls its tool (`AskUserQuestion`: claude, maka)
    must come with that dialect (or "auto"): any other is a `UsageError`, not an answer
    in a shape the model does not expect. `context` (who is asking: the agent, what it
    was doing) is kept with the ask and shown to the person.
    """
    check_dialect(name, dialect)
    if isinstance(tool_input, str):
        try:
            tool_input = json.loads(tool_input)
        except json.JSONDecodeError as error:
            problem = Problem(
                "",
                f"the arguments are not valid JSON ({error.msg} at character {error.pos}); "
                "give the tool input as one JSON object",
            )
            return ToolOutput(text=str(InvalidAsk([problem])), is_error=True)
    try:
        interaction, created = await asker.ask(
            session_id,
            tool_input,
            turn_id=turn_id,
            dialect=dialect,
            tool_call_id=tool_call_id,
            context=context,
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


def check_dialect(name: str, dialect: str) -> None:
    """`UsageError` when `name` is the tool name of registered dialects and `dialect` is
    none of them (nor "auto")."""
    if dialect == "auto":
        return
    owners = [d.name for d in DIALECTS.values() if d.tool_name == name]
    if owners and dialect not in owners:
        choices = " or ".join(f"dialect={owner!r}" for owner in owners)
        raise UsageError(
            f"the tool {name!r} is the question tool of the {', '.join(owners)} dialect, "
            f"but the call is handled as dialect={dialect!r}: the model would get its answer "
            f"in a shape it does not expect; pass {choices} (or 'auto'), or register your "
            "own tool under another name"
        )
