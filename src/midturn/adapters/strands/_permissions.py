"""Permissions: a `BeforeToolCallEvent` hook that pauses a gated tool call with an
interrupt; the host parks it as a midturn permission (keyed by the tool-use id) and
answers with the decision. Allowed → the tool runs; denied → `cancel_tool` carries the
person's message to the model; the turn stopped → the call is cancelled and the loop ends
before the next model call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from typing import Any

from strands.hooks import BeforeToolCallEvent, HookProvider, HookRegistry
from strands.types.tools import ToolUse

from midturn.adapters.strands._tool import MARK, HostMark
from midturn.types import Risk

__all__ = ["PERMISSION_INTERRUPT", "Permissions"]

PERMISSION_INTERRUPT = "midturn.permission"

_SUMMARY_CHARS = 200
_DETAILS_CHARS = 100_000


def _summary(tool_use: ToolUse) -> str:
    arguments = json.dumps(tool_use.get("input"), ensure_ascii=False, sort_keys=True, default=str)
    line = f"{tool_use['name']} {arguments}".replace("\n", " ")
    return line if len(line) <= _SUMMARY_CHARS else line[: _SUMMARY_CHARS - 1] + "…"


class Permissions(HookProvider):
    """Ask a person before each call of the tools in `tools` (names), or of any tool for
    which `tools(tool_use)` is true. `summary(tool_use)` is the one line shown (default:
    the name and the arguments); `risk` is a fixed level or a function of the call."""

    def __init__(
        self,
        tools: Collection[str] | Callable[[ToolUse], bool],
        *,
        summary: Callable[[ToolUse], str] = _summary,
        risk: Risk | Callable[[ToolUse], Risk] = "medium",
        exempt: Collection[str] = (),
    ) -> None:
        self._gated = (
            tools if callable(tools) else (lambda use, names=frozenset(tools): use["name"] in names)
        )
        self._summary = summary
        self._risk = risk
        self._exempt = frozenset(exempt)

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.before_tool_call)

    def before_tool_call(self, event: BeforeToolCallEvent) -> None:
        tool_use = event.tool_use
        if tool_use["name"] in self._exempt or not self._gated(tool_use):
            return
        mark = event.invocation_state.get(MARK)
        risk = self._risk(tool_use) if callable(self._risk) else self._risk
        details = json.dumps(tool_use.get("input"), ensure_ascii=False, indent=2, default=str)
        reason = {
            "kind": "permission",
            "tool_use_id": tool_use["toolUseId"],
            "turn_id": mark.turn_id if isinstance(mark, HostMark) else None,
            "tool": tool_use["name"],
            "summary": self._summary(tool_use)[:500] or tool_use["name"],
            "risk": risk,
            "details": details[:_DETAILS_CHARS],
        }
        response = event.interrupt(PERMISSION_INTERRUPT, reason=reason)
        if isinstance(response, dict) and response.get("allowed") is True:
            return
        status = response.get("status") if isinstance(response, dict) else None
        message = response.get("message") if isinstance(response, dict) else None
        if status == "cancelled":
            event.agent.cancel(after_current_tools=True)
            event.cancel_tool = "The turn was stopped before this tool ran."
        elif status == "timed_out":
            event.cancel_tool = f"Nobody approved {tool_use['name']} in time; it did not run."
        elif status == "unavailable":
            event.cancel_tool = f"Nobody can approve {tool_use['name']} here; it did not run."
        else:
            event.cancel_tool = message or f"The user denied {tool_use['name']}; it did not run."
