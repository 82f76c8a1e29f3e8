"""The host helper: run a Strands agent, turn its `result.interrupts` into midturn
asks and permissions (keyed by the tool-use id, the framework's own call id, as
`tool_call_id`), and resume it with `interruptResponse`s once they settle.

Each interaction says who is asking (docs/contract.md#who-is-asking): the agent's name
(`Agent(name=...)`), what the model said in this turn (the newest assistant text since
the person's last prompt), and for a permission the tool call with its arguments.

A wrapper over the asker port: `asker` is a `midturn.Runtime` in this process or a
`midturn.AsyncClient` on a gateway, unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from strands.agent import Agent, AgentResult
from strands.interrupt import Interrupt
from strands.types.interrupt import InterruptResponse, InterruptResponseContent

from midturn.adapters.strands._permissions import Permissions
from midturn.adapters.strands._tool import MARK, HostMark, question_tool
from midturn.contract import SYSTEM_PROMPT, Asker, Limits
from midturn.errors import InvalidAsk, MidturnError, UsageError

__all__ = ["StrandsHost", "pending_interrupts"]


def pending_interrupts(agent: Agent) -> list[Interrupt]:
    """The interrupts an agent is paused on, unanswered — also after a restart, from
    its session (read through Strands' public snapshot, never a private attribute)."""
    state = agent.take_snapshot(include=["interrupt_state"]).data.get("interrupt_state") or {}
    if not state.get("activated"):
        return []
    found = [Interrupt(**data) for data in (state.get("interrupts") or {}).values()]
    pending = [interrupt for interrupt in found if interrupt.response is None]
    execution = state.get("pending_tool_execution") or {}
    return _in_call_order(pending, execution.get("assistant_message"))


def _in_call_order(interrupts: Sequence[Interrupt], message: Any) -> list[Interrupt]:
    """Interrupts in the order the model made the calls (FIFO in one model step)."""
    order: dict[str, int] = {}
    for block in (message or {}).get("content") or []:
        if "toolUse" in block:
            order.setdefault(block["toolUse"]["toolUseId"], len(order))

    def position(interrupt: Interrupt) -> int:
        reason = interrupt.reason if isinstance(interrupt.reason, dict) else {}
        return order.get(reason.get("tool_use_id", ""), len(order))

    return sorted(interrupts, key=position)


def _midturn_reason(interrupt: Interrupt) -> dict[str, Any] | None:
    reason = interrupt.reason
    if isinstance(reason, dict) and reason.get("kind") in ("ask", "permission"):
        return reason
    return None


def _who(agent: Agent) -> dict[str, Any]:
    """Who is asking: the agent's name and what the model said in this turn (the newest
    assistant text after the person's last prompt; the runtime bounds both)."""
    context: dict[str, Any] = {}
    if isinstance(agent.name, str) and agent.name.strip():
        context["agent"] = agent.name
    for message in reversed(agent.messages):
        texts = [b["text"] for b in message.get("content") or [] if isinstance(b.get("text"), str)]
        text = "\n".join(t.strip() for t in texts if t.strip())
        if message["role"] == "user" and text:
            break  # the person's prompt: what came before is another turn
        if message["role"] == "assistant" and text:
            context["doing"] = text
            break
    return context


def _input(reason: Mapping[str, Any]) -> Any:
    """A permission's tool input, back from the interrupt's `details` (its JSON)."""
    details = reason.get("details")
    try:
        return json.loads(details) if isinstance(details, str) else None
    except ValueError:
        return details  # cut at its bound: the text as it is


class StrandsHost:
    """Drives one session's root agent: `run(agent, prompt, turn_id=...)` to the final
    reply, pausing on every midturn interrupt until it settles; `resume(agent)` after a
    restart. `tools` and `system_prompt` are what to give the root agent (nothing when
    `interactive=False`: a headless run does not see the question tool)."""

    def __init__(
        self,
        asker: Asker,
        session_id: str,
        *,
        dialect: str = "midturn",
        limits: Limits | None = None,
        interactive: bool = True,
    ) -> None:
        self.asker = asker
        self.session_id = session_id
        self.dialect = dialect
        self.interactive = interactive
        self.question_tool = question_tool(dialect, limits=limits)

    @property
    def tools(self) -> list[Any]:
        """The question tool, for the interactive root agent only."""
        return [self.question_tool] if self.interactive else []

    @property
    def system_prompt(self) -> str:
        """`midturn.SYSTEM_PROMPT` for the root agent's instructions (empty when headless)."""
        return SYSTEM_PROMPT if self.interactive else ""

    def permissions(self, tools: Any, **options: Any) -> Permissions:
        """A `Permissions` hook for `tools` (the question tool is never gated)."""
        return Permissions(tools, exempt={self.question_tool.tool_name}, **options)

    async def run(self, agent: Agent, prompt: Any, *, turn_id: str) -> AgentResult:
        """Invoke `agent` with `prompt` and settle its interrupts until it stops for good;
        `end_turn` when it finishes, `stop_turn` when it raises or is cancelled."""
        if pending_interrupts(agent):
            raise UsageError(
                "the agent is paused on interrupts from an earlier run; "
                "call StrandsHost.resume(agent) first"
            )
        return await self._drive(agent, prompt, turn_id)

    async def resume(self, agent: Agent, *, turn_id: str | None = None) -> AgentResult:
        """Resume an agent restored (from its session manager) while paused: the asks it
        paused on are looked up by tool-use id, so nothing is asked twice; once they
        settle it goes on as `run` does."""
        pending = pending_interrupts(agent)
        if not pending:
            raise UsageError("the agent is not paused on an interrupt; nothing to resume")
        if turn_id is None:
            turn_ids = {r.get("turn_id") for i in pending if (r := _midturn_reason(i))}
            turn_ids.discard(None)
            if len(turn_ids) != 1:
                raise UsageError("pass turn_id: the paused interrupts do not name one turn")
            turn_id = str(turn_ids.pop())
        responses = await self.respond(pending, turn_id=turn_id, agent=agent)
        return await self._drive(agent, responses, turn_id)

    async def _drive(self, agent: Agent, prompt: Any, turn_id: str) -> AgentResult:
        state = {MARK: HostMark(agent, self.interactive, turn_id)}
        try:
            result = await agent.invoke_async(prompt, invocation_state=state)
            while result.stop_reason == "interrupt":
                pending = _in_call_order(result.interrupts or [], result.message)
                responses = await self.respond(pending, turn_id=turn_id, agent=agent)
                result = await agent.invoke_async(responses, invocation_state=state)
        except BaseException:
            with contextlib.suppress(MidturnError):
                await asyncio.shield(self.asker.stop_turn(self.session_id, turn_id))
            raise
        await self.asker.end_turn(self.session_id, turn_id)
        return result

    async def respond(
        self, interrupts: Sequence[Interrupt], *, turn_id: str, agent: Agent | None = None
    ) -> list[InterruptResponseContent]:
        """Park each interrupt as a midturn interaction, in order (one FIFO), wait for
        all of them, and return the `interruptResponse`s to resume the agent with.
        `agent` (the one paused) says who is asking."""
        foreign = [i.name for i in interrupts if _midturn_reason(i) is None]
        if foreign:
            raise UsageError(f"interrupts midturn does not own: {foreign}; answer them yourself")
        who = _who(agent) if agent is not None else {}
        parked: list[tuple[Interrupt, str | dict[str, Any]]] = []
        for interrupt in interrupts:
            parked.append((interrupt, await self._park(interrupt, turn_id, who)))
        waits = [self._settle(item) for _, item in parked]
        settled = await asyncio.gather(*waits)
        return [
            InterruptResponseContent(
                interruptResponse=InterruptResponse(interruptId=interrupt.id, response=response)
            )
            for (interrupt, _), response in zip(parked, settled, strict=True)
        ]

    async def _park(
        self, interrupt: Interrupt, turn_id: str, who: Mapping[str, Any]
    ) -> str | dict[str, Any]:
        """The interaction id, or the response itself when nothing was parked."""
        reason = _midturn_reason(interrupt)
        assert reason is not None
        if reason["kind"] == "ask":
            try:
                parked = await self.asker.ask(
                    self.session_id,
                    reason["tool_input"],
                    dialect=reason.get("dialect", self.dialect),
                    tool_call_id=reason["tool_use_id"],
                    turn_id=turn_id,
                    context=who,
                )
            except InvalidAsk as error:  # a host with tighter limits than the tool's
                return {"status": "invalid", "text": str(error), "is_error": True}
            return parked.interaction.id
        parked = await self.asker.request_permission(
            self.session_id,
            tool=reason["tool"],
            summary=reason["summary"],
            risk=reason.get("risk", "medium"),
            details=reason.get("details"),
            tool_call_id=reason["tool_use_id"],
            turn_id=turn_id,
            context={**who, "tool": {"name": reason["tool"], "input": _input(reason)}},
        )
        return parked.interaction.id

    async def _settle(self, item: str | dict[str, Any]) -> dict[str, Any]:
        if isinstance(item, dict):
            return item
        try:
            settled = await self.asker.wait(item)
        except asyncio.CancelledError:
            with contextlib.suppress(MidturnError):
                await asyncio.shield(self.asker.cancel(item))
            raise
        interaction = settled.interaction
        if interaction.kind == "ask":
            output = settled.output
            assert output is not None
            return {"status": interaction.status, "text": output.text, "is_error": output.is_error}
        decision = interaction.decision
        return {
            "status": interaction.status,
            "allowed": settled.allowed,
            "decision": decision.decision if decision else None,
            "message": decision.message if decision else None,
        }
