"""The Claude Agent SDK (`claude-agent-sdk`): a `can_use_tool` callback over the asker port
(docs/adapters/claude-agent.md).

Claude Code asks its host through one callback for both of its pauses: the built-in
`AskUserQuestion` (the model's questions) and a permission for any other tool. The
callback here turns the first into a midturn ask in the `claude` dialect and the second
into a midturn permission, each keyed by the SDK's `tool_use_id`, and answers the SDK:

- questions answered → `PermissionResultAllow(updated_input={questions, answers,
  annotations?})`, answers keyed by the full question text;
- skipped, nothing chosen, answered in chat, timed out → `PermissionResultDeny` whose
  message is the result text the model reads (an empty answer never reads as consent);
- a permission allowed (or allowed for this turn) → allow; denied → deny with the
  person's message; timed out or unavailable → deny; the turn stopped → deny with
  `interrupt=True`;
- a malformed question → deny with the problems, worded for the model to fix.

Runs the same on `midturn.Runtime` and `midturn.AsyncClient`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import secrets
from collections.abc import AsyncIterator
from typing import Any

try:
    from claude_agent_sdk import (
        AgentDefinition,
        ClaudeAgentOptions,
        PermissionResultAllow,
        PermissionResultDeny,
        ToolPermissionContext,
    )
except ImportError as error:  # pragma: no cover - exercised in a subprocess
    raise ImportError(
        "midturn.adapters.claude_agent needs the Claude Agent SDK: "
        'pip install "midturn[claude-agent]"'
    ) from error

from midturn import (
    Asker,
    AskResult,
    InvalidAsk,
    MidturnError,
    QuestionAnswer,
    Settled,
    parse_ask,
    render,
)
from midturn.types import Risk

__all__ = ["QUESTION_TOOL", "MidturnPermissions"]

QUESTION_TOOL = "AskUserQuestion"
PermissionResult = PermissionResultAllow | PermissionResultDeny
_READING = {"Read", "Glob", "Grep", "LS", "WebSearch", "TodoWrite"}
_KEYS = ("command", "file_path", "notebook_path", "url", "pattern", "query")


def _summary(tool: str, tool_input: dict[str, Any]) -> tuple[str, str]:
    key = next((k for k in _KEYS if isinstance(tool_input.get(k), str)), None)
    line = " ".join((f"{tool}: {tool_input[key]}" if key else f"Use {tool}").split())
    details = json.dumps(tool_input, indent=2, ensure_ascii=False, default=str)
    return line[:499] + ("…" if len(line) > 499 else ""), details[:60_000]


class MidturnPermissions:
    """`ClaudeAgentOptions(can_use_tool=MidturnPermissions(asker, session_id))`.

    `interactive=False` (a headless run) answers every `AskUserQuestion` `unavailable` at
    once, asking no one; a call from a sub-agent (the context's `agent_id` is set) does the
    same. Wrap each query in `async with permissions.turn():` so "allow for this turn"
    covers that query and ends with it (`end_turn`; `stop_turn` when it is cancelled).
    `options(...)` builds the `ClaudeAgentOptions` that offer the question tool only where
    a person answers.
    """

    def __init__(
        self,
        asker: Asker,
        session_id: str,
        *,
        interactive: bool = True,
        turn_id: str | None = None,
    ) -> None:
        self.asker = asker
        self.session_id = session_id
        self.interactive = interactive
        self.turn_id = turn_id

    def options(self, **fields: Any) -> ClaudeAgentOptions:
        """`ClaudeAgentOptions(**fields)` with this callback as `can_use_tool`, and
        `AskUserQuestion` offered only where a person can answer: disallowed for every
        sub-agent in `agents`, and for the whole run when it is not interactive."""
        if "can_use_tool" in fields:
            raise TypeError("options() sets can_use_tool itself; leave it out")
        agents: dict[str, AgentDefinition] | None = fields.pop("agents", None)
        if agents is not None:
            fields["agents"] = {
                name: dataclasses.replace(
                    agent, disallowedTools=_without_question(agent.disallowedTools)
                )
                for name, agent in agents.items()
            }
        if not self.interactive:
            fields["disallowed_tools"] = _without_question(fields.get("disallowed_tools"))
        return ClaudeAgentOptions(can_use_tool=self, **fields)

    @contextlib.asynccontextmanager
    async def turn(self, turn_id: str | None = None) -> AsyncIterator[str]:
        """One turn (a query): its grants end when the block does; a cancelled or failed
        block stops the turn, settling what it parked `cancelled`."""
        self.turn_id = turn_id or f"claude-{secrets.token_hex(8)}"
        try:
            yield self.turn_id
        except BaseException:
            with contextlib.suppress(MidturnError):
                await asyncio.shield(self.asker.stop_turn(self.session_id, self.turn_id))
            raise
        else:
            await self.asker.end_turn(self.session_id, self.turn_id)
        finally:
            self.turn_id = None

    async def __call__(
        self, tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResult:
        if tool_name == QUESTION_TOOL:
            if not self.interactive or context.agent_id:
                return _unavailable(tool_input)
            return await self._ask(tool_input, context.tool_use_id)
        return await self._permission(tool_name, tool_input, context.tool_use_id)

    async def _settle(self, interaction_id: str) -> Settled:
        try:
            return await self.asker.wait(interaction_id)
        except asyncio.CancelledError:
            # the SDK cancelled the request (the CLI interrupted the turn)
            with contextlib.suppress(MidturnError):
                await asyncio.shield(self.asker.cancel(interaction_id))
            raise

    async def _ask(self, tool_input: dict[str, Any], call_id: str | None) -> PermissionResult:
        try:
            parked, _ = await self.asker.ask(
                self.session_id,
                tool_input,
                dialect="claude",
                tool_call_id=call_id,
                turn_id=self.turn_id,
            )
        except InvalidAsk as error:
            return PermissionResultDeny(message=str(error))
        settled = await self._settle(parked.id)
        result, output = settled.interaction.result, settled.output
        if result is None or output is None:  # pragma: no cover - a settled ask has both
            return PermissionResultDeny(message="The question got no result.")
        data = output.data if isinstance(output.data, dict) else {}
        if result.outcome == "answered" and data.get("answers"):
            updated = {**tool_input, "answers": data["answers"]}
            if data.get("annotations"):
                updated["annotations"] = data["annotations"]
            return PermissionResultAllow(updated_input=updated)
        return PermissionResultDeny(message=output.text, interrupt=result.outcome == "cancelled")

    async def _permission(
        self, tool: str, tool_input: dict[str, Any], call_id: str | None
    ) -> PermissionResult:
        summary, details = _summary(tool, tool_input)
        risk: Risk = "low" if tool in _READING else "medium"
        parked, _ = await self.asker.request_permission(
            self.session_id,
            tool=tool,
            summary=summary,
            risk=risk,
            details=details,
            tool_call_id=call_id,
            turn_id=self.turn_id,
        )
        settled = await self._settle(parked.id)
        interaction = settled.interaction
        if settled.allowed:
            return PermissionResultAllow(updated_input=tool_input)
        if interaction.status == "denied":
            message = interaction.decision.message if interaction.decision else None
            return PermissionResultDeny(message=message or "The user denied this tool call.")
        if interaction.status == "cancelled":
            return PermissionResultDeny(message="The user stopped the turn.", interrupt=True)
        return PermissionResultDeny(
            message=f"No one allowed this tool call ({interaction.status}); it did not run."
        )


def _without_question(tools: list[str] | None) -> list[str]:
    """A disallowed-tools list that holds the question tool."""
    found = list(tools or [])
    return found if QUESTION_TOOL in found else [*found, QUESTION_TOOL]


def _unavailable(tool_input: dict[str, Any]) -> PermissionResult:
    """No one can answer here: the `unavailable` result, decided without asking."""
    try:
        ask = parse_ask(tool_input, "claude")
    except InvalidAsk as error:
        return PermissionResultDeny(message=str(error))
    answers = tuple(
        QuestionAnswer(id=q.id, header=q.header, question=q.question, status="unavailable")
        for q in ask.questions
    )
    output = render(AskResult(outcome="unavailable", answers=answers), "claude")
    return PermissionResultDeny(message=output.text)
