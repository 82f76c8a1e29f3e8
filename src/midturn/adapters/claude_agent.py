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

Durable (`durable=True`): a `PreToolUse` hook parks the question and, while it is
pending, answers `defer`, so Claude Code ends the run (`stop_reason: "tool_deferred"`)
with the call kept in its transcript; the host may exit, or die, and a host that resumes
the session gets the same hook for the same `tool_use_id`, which then finds the ask
settled and allows with the answers. Nothing is asked twice.

Each interaction says who is asking (docs/contract.md#who-is-asking): the agent's name
(`agent=`, "Claude Code" by default; a sub-agent's id or type after it), for a permission
the tool call with its input, and in the durable hook what the agent was doing (the last
assistant text of the transcript the hook input names; `can_use_tool` is given none).

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
        DeferredToolUse,
        HookContext,
        HookMatcher,
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
    Interaction,
    InvalidAsk,
    MidturnError,
    QuestionAnswer,
    Settled,
    parse_ask,
    render,
)
from midturn._hook_claude_code import last_assistant_text
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

    `durable=True` adds, through `options(...)`, a `PreToolUse` hook for the question
    tool that defers the call while its ask is pending (the module's docstring); then
    `wait_deferred(result.deferred_tool_use)` waits for the answer, and a query that
    resumes the session (`resume=`) with no new prompt continues the call. A turn whose
    question was deferred is not ended when its block is left: resume it with the same
    turn id.

    `agent` is the name each interaction says is asking (docs/contract.md#who-is-asking).
    """

    def __init__(
        self,
        asker: Asker,
        session_id: str,
        *,
        interactive: bool = True,
        turn_id: str | None = None,
        durable: bool = False,
        agent: str = "Claude Code",
    ) -> None:
        self.asker = asker
        self.session_id = session_id
        self.interactive = interactive
        self.turn_id = turn_id
        self.durable = durable
        self.agent = agent
        self._deferred: set[str] = set()  # the current turn's calls Claude Code deferred
        # The SDK runs each request of a step (`can_use_tool`, a hook) as a task of its
        # own, started in the order Claude Code sent them; they park one at a time, in
        # that order, so a slow ask (a gateway) is not overtaken by the next.
        self._park = asyncio.Lock()

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
        if self.durable:
            hooks = dict(fields.pop("hooks", None) or {})
            matcher = HookMatcher(matcher=QUESTION_TOOL, hooks=[self.pre_tool_use])
            hooks["PreToolUse"] = [*hooks.get("PreToolUse", []), matcher]
            fields["hooks"] = hooks
        return ClaudeAgentOptions(can_use_tool=self, **fields)

    async def pre_tool_use(
        self, input_data: Any, tool_use_id: str | None, context: HookContext
    ) -> Any:
        """The durable mode's `PreToolUse` hook for `AskUserQuestion`: park the question
        (keyed by `tool_use_id`); settled → allow with the answers (or deny), pending →
        `defer`. A question no one can answer here is denied `unavailable` at once."""
        tool_input = input_data.get("tool_input") if isinstance(input_data, dict) else None
        if not isinstance(tool_input, dict):
            return {}  # not a tool call: no opinion
        if not self.interactive or input_data.get("agent_id"):
            return _hook_output(_unavailable(tool_input))
        call_id = tool_use_id or input_data.get("tool_use_id")
        who = self._who(input_data.get("agent_type"))
        doing = last_assistant_text(str(input_data.get("transcript_path") or ""))
        if doing:
            who["doing"] = doing
        try:
            parked = await self._park_ask(tool_input, call_id, who)
        except InvalidAsk as error:
            return _hook_output(PermissionResultDeny(message=str(error)))
        if parked.pending:
            self._deferred.add(str(call_id))
            defer = {"hookEventName": "PreToolUse", "permissionDecision": "defer"}
            return {"hookSpecificOutput": defer}
        settled = await self._settle(parked.id)
        return _hook_output(_ask_result(tool_input, settled))

    async def wait_deferred(
        self, deferred: DeferredToolUse, timeout: float | None = None
    ) -> Settled:
        """Wait for the question Claude Code deferred (`ResultMessage.deferred_tool_use`)
        to settle: found by its `tool_use_id` (asked now if this store has never seen
        it). With `timeout`, what is there after that many seconds (maybe pending)."""
        parked, _ = await self.asker.ask(
            self.session_id,
            deferred.input,
            dialect="claude",
            tool_call_id=deferred.id,
            turn_id=self.turn_id,
            context=self._who(None),
        )
        return await self.asker.wait(parked.id, timeout)

    @contextlib.asynccontextmanager
    async def turn(self, turn_id: str | None = None) -> AsyncIterator[str]:
        """One turn (a query): its grants end when the block does; a cancelled or failed
        block stops the turn, settling what it parked `cancelled`."""
        self.turn_id = turn_id or f"claude-{secrets.token_hex(8)}"
        self._deferred.clear()
        try:
            yield self.turn_id
        except BaseException:
            with contextlib.suppress(MidturnError):
                await asyncio.shield(self.asker.stop_turn(self.session_id, self.turn_id))
            raise
        else:
            if not self._deferred:  # a deferred question goes on in the resumed run
                await self.asker.end_turn(self.session_id, self.turn_id)
        finally:
            self.turn_id = None

    async def __call__(
        self, tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResult:
        if tool_name == QUESTION_TOOL:
            if not self.interactive or context.agent_id:
                return _unavailable(tool_input)
            # asked here, the call was not deferred after all (Claude Code defers only
            # a step's single tool call)
            self._deferred.discard(str(context.tool_use_id))
            return await self._ask(tool_input, context.tool_use_id)
        who = self._who(context.agent_id and f"sub-agent {context.agent_id}")
        return await self._permission(tool_name, tool_input, context.tool_use_id, who)

    def _who(self, sub_agent: str | None) -> dict[str, Any]:
        """Who is asking: the agent's name, and which of its sub-agents when one is."""
        return {"agent": f"{self.agent} · {sub_agent}" if sub_agent else self.agent}

    async def _settle(self, interaction_id: str) -> Settled:
        try:
            return await self.asker.wait(interaction_id)
        except asyncio.CancelledError:
            # the SDK cancelled the request (the CLI interrupted the turn)
            with contextlib.suppress(MidturnError):
                await asyncio.shield(self.asker.cancel(interaction_id))
            raise

    async def _park_ask(
        self, tool_input: dict[str, Any], call_id: str | None, who: dict[str, Any]
    ) -> Interaction:
        """Park an `AskUserQuestion` call, one request at a time (`_park`): the SDK runs
        each request as a task of its own, and they park in the order Claude Code sent
        them."""
        async with self._park:
            parked, _ = await self.asker.ask(
                self.session_id,
                tool_input,
                dialect="claude",
                tool_call_id=call_id,
                turn_id=self.turn_id,
                context=who,
            )
        return parked

    async def _ask(self, tool_input: dict[str, Any], call_id: str | None) -> PermissionResult:
        try:
            parked = await self._park_ask(tool_input, call_id, self._who(None))
        except InvalidAsk as error:
            return PermissionResultDeny(message=str(error))
        return _ask_result(tool_input, await self._settle(parked.id))

    async def _permission(
        self, tool: str, tool_input: dict[str, Any], call_id: str | None, who: dict[str, Any]
    ) -> PermissionResult:
        summary, details = _summary(tool, tool_input)
        risk: Risk = "low" if tool in _READING else "medium"
        async with self._park:
            parked, _ = await self.asker.request_permission(
                self.session_id,
                tool=tool,
                summary=summary,
                risk=risk,
                details=details,
                tool_call_id=call_id,
                turn_id=self.turn_id,
                context={**who, "tool": {"name": tool, "input": tool_input}},
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


def _ask_result(tool_input: dict[str, Any], settled: Settled) -> PermissionResult:
    """A settled question as the SDK's answer: allow with the answers keyed by the full
    question text, else deny with the result text (never consent without answers)."""
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


def _hook_output(decision: PermissionResult) -> dict[str, Any]:
    """A `can_use_tool` answer as `PreToolUse` hook output."""
    specific: dict[str, Any] = {"hookEventName": "PreToolUse"}
    if isinstance(decision, PermissionResultAllow):
        specific.update(permissionDecision="allow", updatedInput=decision.updated_input)
        return {"hookSpecificOutput": specific}
    specific.update(permissionDecision="deny", permissionDecisionReason=decision.message)
    output: dict[str, Any] = {"hookSpecificOutput": specific}
    if decision.interrupt:
        output.update(continue_=False, stopReason="The turn was stopped in midturn.")
    return output


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
