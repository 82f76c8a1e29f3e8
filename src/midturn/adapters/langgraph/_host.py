"""The host side: run a compiled graph, turn its pending interrupts into midturn
interactions in the session's one queue, and resume with `Command(resume={interrupt_id:
...})` once they settle (docs/adapters/langgraph.md).

Three kinds of interrupt are midturn's:

- the question tool's (`{"midturn": "midturn.ask", ...}`): an ask keyed
  `<interrupt id>:<tool call id>`, resumed with the rendered answer addressed to its call;
- `HumanInTheLoopMiddleware`'s per-call `tool_approval`: a permission keyed by the
  interrupt id (allow → approve, deny → reject with the message, allow_for_turn →
  approve, and later calls of that tool in the turn settle at once); for the question
  tool itself, an ask answered with the `respond` decision;
- its batched `HITLRequest`: the same, one interaction per action request, keyed
  `<interrupt id>.<index>`, resumed with the decisions in order.

Anything else is the host's own: `run` refuses it with a `UsageError` rather than guess.

Each interaction says who is asking (docs/contract.md#who-is-asking): the agent's name
(`Host(agent=...)`, else the graph's: `create_agent(name=...)`), what the model last said
in the turn (the newest AI message's text since the last human message of the graph's
`messages`), and for a permission the tool call with its arguments.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.types import Command, Interrupt

from midturn.contract import Asker, Interaction, Settled, tool_spec
from midturn.errors import InvalidAsk, UsageError
from midturn.types import Risk

from ._tool import ASK_MARK, reply

__all__ = ["Host", "Run"]

_KEY = re.compile(r"^[A-Za-z0-9_.-]{1,120}$")
_QUESTION_TOOL = tool_spec("midturn", "openai")["function"]["name"]
_TIMED_OUT = "The permission request timed out, so the tool was not run."
_UNAVAILABLE = "No one can approve tool calls here, so the tool was not run."


def _part(tool_call_id: str) -> str:
    """A tool call id as it may sit in a midturn key (hashed when it has odd characters)."""
    if _KEY.match(tool_call_id):
        return tool_call_id
    return hashlib.sha256(tool_call_id.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Run:
    """What `Host.run` came to: the graph's final `value`, the interactions it settled (in
    the order they were asked), and `stopped` when the turn was stopped (the graph is then
    left paused at its interrupts, not resumed)."""

    value: Any
    settled: tuple[Interaction, ...] = ()
    stopped: bool = False
    interrupts: tuple[Interrupt, ...] = ()


@dataclass(frozen=True)
class _Pending:
    """One midturn interaction opened for (a part of) one interrupt."""

    interrupt_id: str
    kind: str  # "question" | "approval" | "batched"
    interaction: Interaction | None
    tool_call_id: str | None = None
    preset: Any = None  # the decision when nothing was parked (a malformed `respond` ask)


@dataclass
class Host:
    """Drive a compiled LangGraph graph for one midturn session over the asker port
    (`midturn.Runtime` in this process, `midturn.AsyncClient` on a gateway).

    `risk` gives a tool's permission risk (a mapping by tool name, or a function of the
    name and arguments); `question_tool` is the question tool's name, for the HITL
    `respond` path; `agent` is the name shown as who asks (default: the graph's name).
    """

    asker: Asker
    session_id: str
    risk: Mapping[str, Risk] | Callable[[str, Mapping[str, Any]], Risk] = field(
        default_factory=dict
    )
    question_tool: str = _QUESTION_TOOL
    agent: str | None = None

    async def run(self, graph: Any, input: Any, config: Mapping[str, Any], *, turn_id: str) -> Run:
        """Invoke `graph` with `input`, settle every midturn interrupt it pauses on,
        resume, and repeat until it finishes (the turn then ends: `end_turn`) or the
        turn is stopped (`Run.stopped`). With `input=None` (after a restart) it first
        settles the interrupts the checkpoint holds, found again by id: nothing is asked
        twice, and no stale resume value is re-delivered by an `invoke(None)`."""
        settled: list[Interaction] = []
        interrupts: tuple[Interrupt, ...] = ()
        value: Any = None
        if input is None:  # resuming: answer what is pending, never `invoke(None)` (#8837)
            snapshot = await graph.aget_state(config)
            interrupts, value = tuple(snapshot.interrupts), snapshot.values
        if not interrupts:
            out = await graph.ainvoke(input, config, version="v2")
            interrupts, value = tuple(out.interrupts), out.value
        agent = self.agent or getattr(graph, "name", None)
        while interrupts:
            interrupts = _in_call_order(interrupts, value)
            who = _who(agent, value)
            resume, done, stopped = await self.settle(interrupts, turn_id=turn_id, context=who)
            settled.extend(done)
            if stopped:
                await self.asker.stop_turn(self.session_id, turn_id)
                return Run(value, tuple(settled), stopped=True, interrupts=interrupts)
            out = await graph.ainvoke(Command(resume=resume), config, version="v2")
            interrupts, value = tuple(out.interrupts), out.value
        await self.asker.end_turn(self.session_id, turn_id)
        return Run(value, tuple(settled))

    async def settle(
        self,
        interrupts: Sequence[Interrupt],
        *,
        turn_id: str,
        context: Mapping[str, Any] | None = None,
    ) -> tuple[dict[str, Any], list[Interaction], bool]:
        """Park one interaction per pending interrupt (or per action of a batched one),
        in order, wait for all, and build the resume map. Returns `(resume, settled,
        stopped)`; `stopped` when any of them came back cancelled. `context` (who is
        asking: `agent`, `doing`) goes with each; a permission adds its tool call."""
        ids = [item.id for item in interrupts]
        if len(set(ids)) != len(ids):
            raise UsageError(
                "two pending interrupts share one id: parallel tool calls ran in one "
                "ToolNode task (langgraph #6533); route them with "
                "midturn.adapters.langgraph.fan_out or use create_agent"
            )
        opened: list[_Pending] = []
        for item in interrupts:
            opened.extend(await self._open(item, turn_id, context or {}))
        results = await asyncio.gather(*(self._wait(entry) for entry in opened))
        settled = [result.interaction for result in results if result is not None]
        stopped = any(interaction.status == "cancelled" for interaction in settled)
        resume: dict[str, Any] = {}
        batched: dict[str, list[Any]] = {}
        for entry, result in zip(opened, results, strict=True):
            value = entry.preset if result is None else self._value(entry, result)
            if entry.kind == "batched":
                batched.setdefault(entry.interrupt_id, []).append(value)
            else:
                resume[entry.interrupt_id] = value
        for interrupt_id, decisions in batched.items():
            resume[interrupt_id] = {"decisions": decisions}
        return resume, settled, stopped

    async def _wait(self, entry: _Pending) -> Settled | None:
        if entry.interaction is None:
            return None
        return await self.asker.wait(entry.interaction.id)

    # -- opening ----------------------------------------------------------------------

    async def _open(
        self, item: Interrupt, turn_id: str, context: Mapping[str, Any]
    ) -> list[_Pending]:
        value = item.value
        if isinstance(value, Mapping) and value.get("midturn") == ASK_MARK:
            call = str(value["tool_call_id"])
            key = f"{item.id}:{_part(call)}"
            parked = await self._ask(value["tool_input"], key, turn_id, value["dialect"], context)
            return [_Pending(item.id, "question", parked, tool_call_id=call)]
        if isinstance(value, Mapping) and value.get("type") == "tool_approval":
            entry = await self._action(
                item.id,
                "approval",
                value,
                key=item.id,
                turn_id=turn_id,
                respond=_allows_respond(item.response_schema),
                context=context,
            )
            return [entry]
        if isinstance(value, Mapping) and "action_requests" in value:
            configs = {c["action_name"]: c for c in value.get("review_configs", [])}
            opened = []
            for index, action in enumerate(value["action_requests"]):
                allowed = configs.get(action["name"], {}).get("allowed_decisions", [])
                entry = await self._action(
                    item.id,
                    "batched",
                    action,
                    key=f"{item.id}.{index}",
                    turn_id=turn_id,
                    respond="respond" in allowed,
                    context=context,
                )
                opened.append(entry)
            return opened
        raise UsageError(
            f"interrupt {item.id} is not midturn's (value {value!r:.120}); answer it with "
            "your own Command(resume={id: ...}) before handing the graph to the Host"
        )

    async def _action(
        self,
        interrupt_id: str,
        kind: str,
        action: Mapping[str, Any],
        *,
        key: str,
        turn_id: str,
        respond: bool,
        context: Mapping[str, Any],
    ) -> _Pending:
        """One reviewed tool call: an ask for the question tool when `respond` is
        allowed, otherwise a permission."""
        name = str(action["name"])
        args: Mapping[str, Any] = action.get("args") or {}
        if respond and name == self.question_tool:
            try:
                asked = await self._ask(dict(args), key, turn_id, "midturn", context)
            except InvalidAsk as error:  # shown to no one: the model reads the problems
                return _Pending(interrupt_id, kind, None, preset=_respond(str(error)))
            return _Pending(interrupt_id, kind, asked)
        description = action.get("description")
        parked = await self.asker.request_permission(
            self.session_id,
            tool=name,
            summary=_summary(name, args, description if isinstance(description, str) else None),
            risk=self._risk(name, args),
            details=json.dumps(dict(args), indent=2, default=str, ensure_ascii=False),
            tool_call_id=key,
            turn_id=turn_id,
            context={**context, "tool": {"name": name, "input": dict(args)}},
        )
        return _Pending(interrupt_id, kind, parked.interaction)

    async def _ask(
        self, tool_input: Any, key: str, turn_id: str, dialect: str, context: Mapping[str, Any]
    ) -> Interaction:
        parked = await self.asker.ask(
            self.session_id,
            tool_input,
            dialect=dialect,
            tool_call_id=key,
            turn_id=turn_id,
            context=context,
        )
        return parked.interaction

    def _risk(self, name: str, args: Mapping[str, Any]) -> Risk:
        if callable(self.risk):
            return self.risk(name, args)
        return self.risk.get(name, "medium")

    # -- resuming ---------------------------------------------------------------------

    @staticmethod
    def _value(entry: _Pending, result: Settled) -> Any:
        interaction = result.interaction
        if interaction.kind == "ask":
            output = result.output
            text = output.text if output is not None else ""
            if entry.kind == "question":
                assert entry.tool_call_id is not None
                return reply(entry.tool_call_id, text, output is not None and output.is_error)
            return _respond(text)
        if result.allowed:
            return {"type": "approve"}
        decision = result.decision
        if interaction.status == "timed_out":
            return {"type": "reject", "message": _TIMED_OUT}
        if interaction.status == "unavailable":
            return {"type": "reject", "message": _UNAVAILABLE}
        message = decision.message if decision is not None else None
        return {"type": "reject", "message": message} if message else {"type": "reject"}


def _in_call_order(interrupts: Sequence[Interrupt], value: Any) -> tuple[Interrupt, ...]:
    """The interrupts in the order the model made their tool calls (the newest AI message
    of the state's `messages`). Tool calls in tasks of their own pause in whatever order
    they run, and the session's queue asks first come, first asked; an interrupt that
    names no call of that message keeps its place after those that do."""
    messages = value.get("messages") if isinstance(value, Mapping) else None
    order: dict[str, int] = {}
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, AIMessage) and message.tool_calls:
            order = {str(c["id"]): n for n, c in enumerate(message.tool_calls)}
            break

    def position(item: Interrupt) -> int:
        call = item.value.get("tool_call_id") if isinstance(item.value, Mapping) else None
        return order.get(str(call), len(order))

    return tuple(sorted(interrupts, key=position))


def _who(agent: Any, value: Any) -> dict[str, Any]:
    """Who is asking: the agent's name and what the model last said in this turn (the
    newest AI message with text after the last human message of the state's `messages`;
    the runtime bounds both)."""
    context: dict[str, Any] = {}
    if isinstance(agent, str) and agent.strip():
        context["agent"] = agent
    messages = value.get("messages") if isinstance(value, Mapping) else None
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, HumanMessage):
            break
        if isinstance(message, AIMessage) and message.text.strip():
            context["doing"] = message.text
            break
    return context


def _allows_respond(schema: Any) -> bool:
    """Whether a per-call approval's `response_schema` offers the `respond` decision."""
    return '"respond"' in json.dumps(schema, default=str) if schema else False


def _summary(name: str, args: Mapping[str, Any], description: str | None) -> str:
    shown = json.dumps(dict(args), default=str, ensure_ascii=False)
    line = f"{name}({shown})"
    if description:
        line = f"{description.splitlines()[0]} — {line}"
    return line if len(line) <= 500 else line[:499] + "…"


def _respond(text: str) -> dict[str, Any]:
    return {"type": "respond", "message": text}
