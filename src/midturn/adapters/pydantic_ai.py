"""midturn for pydantic-ai (docs/adapters/pydantic-ai.md): the question tool defers its
call, tools marked `requires_approval` become midturn permissions, and a turn resumes
with `DeferredToolResults` once the person settled them.

    turn = MidturnTurn(asker, session_id, turn_id)          # asker: Runtime or AsyncClient
    result = await agent.run(prompt, capabilities=[turn.capability],
                             output_type=[str, DeferredToolRequests])
    while isinstance(result.output, DeferredToolRequests):  # parked: the run ended
        results = await turn.results(result.output)         # None: the turn was stopped
        ...

Each interaction says who is asking (docs/contract.md#who-is-asking): the agent's name
(`Agent(name=...)`), what the model said in the step that called (its response's text), and
for a permission the tool call with its arguments, all read from the run context.

A wrapper over the asker port only (`midturn.Asker`): nothing here knows the runtime or
the HTTP client by name.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from midturn.contract import (
    SYSTEM_PROMPT,
    Asker,
    AskResult,
    Interaction,
    QuestionAnswer,
    Settled,
    parse_ask,
    render,
    tool_spec,
)
from midturn.errors import InvalidAsk, MidturnError
from midturn.types import Risk

try:
    from pydantic_ai import ModelRetry, RunContext, Tool
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.exceptions import CallDeferred
    from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, UserPromptPart
    from pydantic_ai.models import ModelRequestContext
    from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolDenied
    from pydantic_ai.toolsets import FunctionToolset
except ImportError as error:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        'midturn.adapters.pydantic_ai needs pydantic-ai: pip install "midturn[pydantic-ai]"'
    ) from error

__all__ = ["METADATA_KEY", "MidturnTurn"]

METADATA_KEY = "midturn_interaction_id"
"""The key of a deferred question's metadata (`DeferredToolRequests.metadata[call_id]`)
that holds its midturn interaction id."""

_DENIED = "The user denied this tool call; it did not run."
_TIMED_OUT = "Nobody approved this tool call in time; it did not run."
_UNAVAILABLE = "Nobody can approve this tool call here; it did not run."


@dataclasses.dataclass(frozen=True)
class _Outcome:
    """What settling a batch of deferred calls came to: the results of the settled
    ones, and whether the turn was stopped (one of them came back cancelled)."""

    results: DeferredToolResults
    stopped: bool


class MidturnTurn:
    """One midturn turn of a pydantic-ai agent: pass `capability` to each `agent.run`
    of the turn (the first and every resume), `end()` when its final reply is out.

    - `inline=False` (the default, durable): a question parks and the run ends with
      `DeferredToolRequests`; `results(requests)` waits for the person and returns the
      `DeferredToolResults` to resume with, in this process or another one after a
      restart (every interaction is keyed by pydantic-ai's `tool_call_id`, so nothing is
      asked twice). What is already settled (an `allow_for_turn` grant) resolves in the
      same run.
    - `inline=True`: the capability's `handle_deferred_tool_calls` waits for midturn in
      the same run.
    - `interactive=False` (a headless run, a sub-agent): the model is not offered the
      question tool; a call forced anyway returns `unavailable` at once and nobody is asked.

    Tools registered with `requires_approval=True` become midturn permissions in the same
    queue: allow → `ToolApproved`, deny → `ToolDenied(message)`, allow_for_turn → approved,
    and later calls of that tool in this turn are approved without asking.
    """

    def __init__(
        self,
        asker: Asker,
        session_id: str,
        turn_id: str,
        *,
        inline: bool = False,
        interactive: bool = True,
        dialect: str = "midturn",
        risk: Risk = "medium",
        max_retries: int = 2,
    ) -> None:
        self.asker = asker
        self.session_id = session_id
        self.turn_id = turn_id
        self.inline = inline
        self.interactive = interactive
        self.dialect = dialect
        self.risk: Risk = risk
        spec = tool_spec(dialect, "openai")["function"]
        self.tool_name: str = spec["name"]
        tool = Tool.from_schema(
            self._question,
            name=spec["name"],
            description=spec["description"],
            json_schema=spec["parameters"],
            takes_ctx=True,
            sequential=True,  # a barrier: questions of one step park in the model's order
        )
        self.toolset: FunctionToolset[Any] = FunctionToolset([tool], max_retries=max_retries)
        self.capability: AbstractCapability[Any] = _Capability(self)

    # -- the question tool -----------------------------------------------------------------

    async def _question(self, ctx: RunContext[Any], **tool_input: Any) -> str:
        if not self.interactive:
            return _unavailable(tool_input, self.dialect)
        call_id = ctx.tool_call_id
        if call_id is None:  # pragma: no cover - pydantic-ai always passes one to a tool
            raise MidturnError("pydantic-ai called the question tool without a tool_call_id")
        try:
            interaction, _ = await self.asker.ask(
                self.session_id,
                tool_input,
                dialect=self.dialect,
                tool_call_id=call_id,
                turn_id=self.turn_id,
                context=_who(ctx),
            )
        except InvalidAsk as error:  # the model fixes its call; nothing parked or shown
            raise ModelRetry(str(error)) from error
        if interaction.pending or interaction.status == "cancelled":
            raise CallDeferred(metadata={METADATA_KEY: interaction.id}, kind="question")
        return _text(Settled.of(interaction))  # a replayed call that already settled

    def subagent(self) -> MidturnTurn:
        """The same turn for a sub-agent (an agent a tool of this one runs): no question
        tool (nobody talks to a child agent), its approvals still go to the person, and
        it waits for them inline (a child's run cannot be resumed on its own)."""
        return MidturnTurn(
            self.asker,
            self.session_id,
            self.turn_id,
            inline=True,
            interactive=False,
            dialect=self.dialect,
            risk=self.risk,
        )

    # -- settling deferred calls -----------------------------------------------------------

    async def results(self, requests: DeferredToolRequests) -> DeferredToolResults | None:
        """Wait until midturn settled every question and approval of `requests`, and
        return the `DeferredToolResults` to resume the run with (`message_history` plus
        `deferred_tool_results`). `None` when the turn was stopped: do not resume it.
        Calls that are not midturn's (other external tools) are left for the host."""
        outcome = await self._settle(requests, wait=True, context={})
        return None if outcome.stopped else outcome.results

    async def end(self) -> None:
        """The turn's final reply is out: its grants end (`Asker.end_turn`)."""
        await self.asker.end_turn(self.session_id, self.turn_id)

    async def stop(self) -> None:
        """Stop the turn: whatever it parked settles cancelled; an inline run waiting on
        it ends with pydantic-ai's `RunCancelled` (`Asker.stop_turn`)."""
        await self.asker.stop_turn(self.session_id, self.turn_id)

    async def _handle(
        self, ctx: RunContext[Any], requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        outcome = await self._settle(requests, wait=self.inline, context=_who(ctx))
        if outcome.stopped:
            ctx.cancel()  # the person (or the host) stopped the turn: end the run
            return None
        results = outcome.results
        return results if results.calls or results.approvals else None

    async def _settle(
        self, requests: DeferredToolRequests, *, wait: bool, context: Mapping[str, Any]
    ) -> _Outcome:
        """Park (or find again, by call id: then `context` is the first one's) each
        question and approval of `requests`, and what they came to."""
        asks = [call for call in requests.calls if call.tool_name == self.tool_name]
        parked: list[tuple[ToolCallPart, Interaction]] = []
        for call in asks:
            parked.append((call, await self._ask_of(call, context)))
        for call in requests.approvals:  # in the model's order: the queue keeps it
            interaction, _ = await self.asker.request_permission(
                self.session_id,
                tool=call.tool_name,
                summary=_summary(call),
                risk=self.risk,
                details=_details(call),
                tool_call_id=call.tool_call_id,
                turn_id=self.turn_id,
                context={**context, "tool": {"name": call.tool_name, "input": call.args_as_dict()}},
            )
            parked.append((call, interaction))
        settled = await self._wait_all([i for _, i in parked]) if wait else None
        results = DeferredToolResults()
        stopped = False
        for index, (call, interaction) in enumerate(parked):
            now = settled[index] if settled is not None else Settled.of(interaction)
            if now.pending:  # left for the host: the run ends with it deferred
                continue
            if now.interaction.status == "cancelled":
                stopped = True
            elif now.interaction.kind == "ask":
                results.calls[call.tool_call_id] = _text(now)
            else:
                results.approvals[call.tool_call_id] = _approval(now)
        return _Outcome(results, stopped)

    async def _ask_of(self, call: ToolCallPart, context: Mapping[str, Any]) -> Interaction:
        """The interaction the question tool parked for `call` (again by its id: a
        repeated `tool_call_id` returns the existing one)."""
        interaction, _ = await self.asker.ask(
            self.session_id,
            call.args_as_dict(),
            dialect=self.dialect,
            tool_call_id=call.tool_call_id,
            turn_id=self.turn_id,
            context=context,
        )
        return interaction

    async def _wait_all(self, interactions: Sequence[Interaction]) -> list[Settled]:
        """Wait for every interaction; if the waiting is cancelled (the host aborted
        the run), the ones still pending are cancelled too."""
        try:
            return list(await asyncio.gather(*(self.asker.wait(i.id) for i in interactions)))
        except asyncio.CancelledError:
            for interaction in interactions:
                with contextlib.suppress(MidturnError):
                    await asyncio.shield(self.asker.cancel(interaction.id))
            raise


@dataclasses.dataclass
class _Capability(AbstractCapability[Any]):
    """The question tool, the `SYSTEM_PROMPT` clause (interactive turns only) and the
    handler that settles deferred calls through midturn."""

    turn: MidturnTurn

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    def get_toolset(self) -> FunctionToolset[Any]:
        return self.turn.toolset

    def get_instructions(self) -> str | None:
        return SYSTEM_PROMPT if self.turn.interactive else None

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        if self.turn.interactive:
            return request_context
        parameters = request_context.model_request_parameters
        offered = [t for t in parameters.function_tools if t.name != self.turn.tool_name]
        hidden = dataclasses.replace(parameters, function_tools=offered)
        return dataclasses.replace(request_context, model_request_parameters=hidden)

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[Any], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        return await self.turn._handle(ctx, requests)


def _who(ctx: RunContext[Any]) -> dict[str, Any]:
    """Who is asking: the agent's name and what the model said in this turn (the newest
    model response with text since the last user prompt; the runtime bounds both)."""
    context: dict[str, Any] = {}
    name = ctx.agent.name if ctx.agent is not None else None
    if name:
        context["agent"] = name
    for message in reversed(ctx.messages):
        if isinstance(message, ModelRequest) and any(
            isinstance(part, UserPromptPart) for part in message.parts
        ):
            break
        if isinstance(message, ModelResponse) and message.text and message.text.strip():
            context["doing"] = message.text
            break
    return context


def _text(settled: Settled) -> str:
    output = settled.output
    if output is None:  # pragma: no cover - a settled ask always has an output
        raise MidturnError(f"ask {settled.interaction.id} came back without a result")
    return output.text


def _approval(settled: Settled) -> bool | ToolDenied:
    if settled.allowed:
        return True
    status = settled.interaction.status
    if status == "timed_out":
        return ToolDenied(_TIMED_OUT)
    if status == "unavailable":
        return ToolDenied(_UNAVAILABLE)
    decision = settled.decision
    return ToolDenied((decision.message if decision else None) or _DENIED)


def _unavailable(tool_input: dict[str, Any], dialect: str) -> str:
    """The result of a question nobody can answer here, decided without asking anyone."""
    try:
        ask = parse_ask(tool_input, dialect)
    except InvalidAsk:
        answers: tuple[QuestionAnswer, ...] = ()
    else:
        answers = tuple(
            QuestionAnswer(id=q.id, header=q.header, question=q.question, status="unavailable")
            for q in ask.questions
        )
    return render(AskResult(outcome="unavailable", answers=answers), dialect).text


def _summary(call: ToolCallPart) -> str:
    args = json.dumps(call.args_as_dict(), ensure_ascii=False, sort_keys=True)
    line = f"{call.tool_name}({args[1:-1]})" if args.startswith("{") else call.tool_name
    return line if len(line) <= 160 else line[:159] + "…"


def _details(call: ToolCallPart) -> str:
    return json.dumps(call.args_as_dict(), ensure_ascii=False, indent=2, sort_keys=True)
