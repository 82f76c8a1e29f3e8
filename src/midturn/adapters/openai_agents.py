"""midturn for the OpenAI Agents SDK (docs/adapters/openai-agents.md): a question tool
for the root agent, and a run loop that settles the run's tool approvals through midturn.

    turn = MidturnRun(asker, session_id, turn_id)             # asker: Runtime or AsyncClient
    agent = Agent(name="assistant", instructions=turn.instructions, tools=[turn.tool, ...])
    result = await turn.run(agent, "Set up the service")      # None: the turn was stopped

- live (`durable=False`): the question tool waits for midturn inside the run and returns
  the rendered answer. Each call is parked by a tool input guardrail of the question tool
  (`PARK_GUARDRAIL`), which the SDK runs for the calls of a step in the model's order,
  before any `on_tool_start` hook: a hook slower for one call cannot reorder the queue.
- durable (`durable=True`): the question tool needs approval, so a question pauses the run
  (`RunResult.interruptions`); the paused `RunState` goes to `checkpoint` (serialized),
  the question becomes a midturn ask keyed by its call id, and once it settles the answer
  is put in the run context (a mapping, so it serializes) and the call approved: the tool
  returns the answer. After a restart, `resume(agent, saved)` picks up where it paused.

Every other approval (`needs_approval` tools) is a midturn permission in the same queue:
allow → approve, deny → reject with the message, allow_for_turn → approve for the rest of
the run. Each interaction says who is asking (docs/contract.md#who-is-asking): the agent's
name, what the model last said in the turn (read from each model response through the
run's hooks, which wrap the caller's own), and for a permission the tool call. A wrapper
over the asker port only (`midturn.Asker`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from typing import Any

from midturn.contract import (
    SYSTEM_PROMPT,
    Asker,
    AskResult,
    Interaction,
    Settled,
    render,
    tool_spec,
)
from midturn.errors import InvalidAsk, MidturnError, Problem, UsageError
from midturn.types import Risk

try:
    from agents import (
        Agent,
        FunctionTool,
        ItemHelpers,
        ModelResponse,
        RunConfig,
        RunContextWrapper,
        RunHooks,
        Runner,
        RunResult,
        RunState,
        Tool,
        ToolGuardrailFunctionOutput,
        ToolInputGuardrail,
        ToolInputGuardrailData,
    )
    from agents.exceptions import UserError
    from agents.items import ToolApprovalItem, TResponseInputItem
    from agents.run_config import ToolErrorFormatterArgs
    from agents.tool_context import ToolContext
except ImportError as error:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        'midturn.adapters.openai_agents needs openai-agents: pip install "midturn[openai-agents]"'
    ) from error

__all__ = ["CONTEXT_KEY", "PARK_GUARDRAIL", "Checkpoint", "MidturnRun"]

CONTEXT_KEY = "midturn_answers"
"""The key of the run context (a mapping) under which a durable run keeps each settled
question's tool output, by call id, until the approved tool call returns it."""

PARK_GUARDRAIL = "midturn_park"
"""The name of the live question tool's input guardrail (it always allows): the one that
parks the call, so its results show in `RunResult.tool_input_guardrail_results`."""

Checkpoint = Callable[[str], Awaitable[None] | None]
"""Called with the serialized `RunState` (`RunState.to_string()`) each time the run
pauses, before anything is asked: save it, and `resume` it in any process."""

_DENIED = "The user denied this tool call; it did not run."
_TIMED_OUT = "Nobody approved this tool call in time; it did not run."
_UNAVAILABLE = "Nobody can approve this tool call here; it did not run."


class _TurnStopped(Exception):
    """Raised by the live question tool when its ask settled cancelled: the turn was
    stopped, so the run ends instead of calling the model again."""


class MidturnRun:
    """One midturn turn of an OpenAI Agents SDK run: register `tool` on the root agent
    (and `instructions` in its instructions), and run the turn with `run` (or `resume`).

    - `durable=False` (live): the question tool waits for the person in the run.
    - `durable=True`: a question pauses the run; `checkpoint(state)` gets the serialized
      `RunState` at each pause; `resume(agent, state)` continues it, in this process or
      another one (every interaction is keyed by the SDK's call id: nothing is asked twice).
      The run context must be a mapping (or None: the adapter then uses a dict).
    - `interactive=False` (a headless run): the tool is offered to no agent, and a call
      forced anyway returns `unavailable` at once; nobody is asked.

    The tool is offered only to the agent the turn runs (`run(agent, ...)`), never to a
    handoff target or an agent run as a tool; a call of it there returns `unavailable`.
    The turn ends (`end_turn`) when the run finishes with a final output.
    """

    def __init__(
        self,
        asker: Asker,
        session_id: str,
        turn_id: str,
        *,
        durable: bool = False,
        interactive: bool = True,
        checkpoint: Checkpoint | None = None,
        dialect: str = "midturn",
        risk: Risk = "medium",
    ) -> None:
        self.asker = asker
        self.session_id = session_id
        self.turn_id = turn_id
        self.durable = durable
        self.interactive = interactive
        self.checkpoint = checkpoint
        self.dialect = dialect
        self.risk: Risk = risk
        self._root: Agent[Any] | None = None
        self._park = asyncio.Lock()  # a slow ask (a gateway) is not overtaken by the next
        self._parked: dict[str, Interaction | str] = {}  # live: by call id, until its call
        self._doing: str | None = None  # the turn's newest assistant text (`_Hooks`)
        spec = tool_spec(dialect, "openai")["function"]
        self.tool_name: str = spec["name"]
        self.tool = FunctionTool(
            name=spec["name"],
            description=spec["description"],
            params_json_schema=spec["parameters"],
            on_invoke_tool=self._invoke,
            strict_json_schema=False,  # the schema is midturn's constant, sent as it is
            is_enabled=self._enabled,
            needs_approval=durable,
            tool_input_guardrails=None if durable else [self._guardrail()],
        )

    @property
    def instructions(self) -> str | None:
        """`SYSTEM_PROMPT` for the root agent's instructions; None in a headless run."""
        return SYSTEM_PROMPT if self.interactive else None

    # -- running the turn ------------------------------------------------------------------

    async def run(
        self,
        agent: Agent[Any],
        input: str | list[Any],
        *,
        context: Any = None,
        run_config: RunConfig | None = None,
        **options: Any,
    ) -> RunResult | None:
        """Run the turn to its end (`Runner.run` with the same options), settling each
        pause through midturn. The final `RunResult`, or None when the turn was stopped."""
        if self.durable and context is None:
            context = {}
        if self.durable and not isinstance(context, MutableMapping):
            raise UsageError(
                "a durable MidturnRun keeps answers in the run context, which must be a "
                f"mutable mapping (a dict) so the RunState serializes; got {type(context).__name__}"
            )
        self._root = agent
        config = self.run_config(run_config)
        try:
            result = await self._run_once(
                agent, input, context=context, run_config=config, **options
            )
        except UserError as error:
            await self._stopped(error)
            return None
        return await self._drive(agent, result, config, options)

    async def resume(
        self,
        agent: Agent[Any],
        state: str,
        *,
        run_config: RunConfig | None = None,
        context_deserializer: Callable[[Mapping[str, Any]], Any] | None = None,
        **options: Any,
    ) -> RunResult | None:
        """Continue a run from a state `checkpoint` saved (`RunState.to_string()`), here or
        after a restart: its pending calls are asked again by call id (the existing
        interactions come back, settled or not), then the run goes on like `run`."""
        self._root = agent
        restored: list[Any] = []

        def deserialize(data: Mapping[str, Any]) -> Any:
            value = context_deserializer(data) if context_deserializer else data
            restored.append(value)
            return value

        loaded = await RunState.from_string(agent, state, context_deserializer=deserialize)
        context = restored[0] if restored else None
        config = self.run_config(run_config)
        return await self._settle_and_continue(agent, loaded, context, config, options)

    async def stop(self) -> None:
        """Stop the turn: whatever it parked settles cancelled, and the run waiting on
        it ends (`run` returns None)."""
        await self.asker.stop_turn(self.session_id, self.turn_id)

    def run_config(self, base: RunConfig | None = None) -> RunConfig:
        """`base` (or a new `RunConfig`) set so that a question forced where the tool is
        not offered reads `unavailable`: an unknown tool's error goes back to the model,
        worded by midturn for the question tool, by `base`'s formatter otherwise."""
        base = base or RunConfig()
        chained = base.tool_error_formatter

        async def formatter(args: ToolErrorFormatterArgs[Any]) -> str | None:
            if args.kind == "tool_not_found" and args.tool_name == self.tool_name:
                return self._unavailable()
            if chained is None:
                return None
            message = chained(args)
            return await message if inspect.isawaitable(message) else message

        return dataclasses.replace(
            base, tool_not_found_behavior="return_error_to_model", tool_error_formatter=formatter
        )

    async def _drive(
        self, agent: Agent[Any], result: RunResult, config: RunConfig, options: dict[str, Any]
    ) -> RunResult | None:
        if not result.interruptions:
            await self.asker.end_turn(self.session_id, self.turn_id)
            return result
        context = result.context_wrapper.context
        return await self._settle_and_continue(agent, result.to_state(), context, config, options)

    async def _settle_and_continue(
        self,
        agent: Agent[Any],
        state: RunState[Any, Agent[Any]],
        context: Any,
        config: RunConfig,
        options: dict[str, Any],
    ) -> RunResult | None:
        if self.checkpoint is not None:
            saved = self.checkpoint(state.to_string())
            if inspect.isawaitable(saved):
                await saved
        if not await self._settle(state, context):
            await self.stop()
            return None
        try:
            result = await self._run_once(agent, state, run_config=config, **options)
        except UserError as error:
            await self._stopped(error)
            return None
        return await self._drive(agent, result, config, options)

    async def _run_once(self, agent: Agent[Any], input: Any, **options: Any) -> RunResult:
        """`Runner.run`; a live question parked by the guardrail whose call then never ran
        (the step failed or was cancelled in between) is cancelled, not left queued."""
        hooks = _Hooks(self, options.pop("hooks", None))
        try:
            return await Runner.run(agent, input, hooks=hooks, **options)
        finally:
            unclaimed = [i for i in self._parked.values() if isinstance(i, Interaction)]
            self._parked.clear()
            for interaction in unclaimed:
                with contextlib.suppress(MidturnError):
                    await asyncio.shield(self.asker.cancel(interaction.id))

    async def _stopped(self, error: UserError) -> None:
        """A live question came back cancelled (the tool raised `_TurnStopped`): the run
        ended there, so stop the turn. Anything else the run raised is re-raised."""
        cause: BaseException | None = error
        while cause is not None and not isinstance(cause, _TurnStopped):
            cause = cause.__cause__
        if cause is None:
            raise error
        await self.stop()

    # -- settling a pause -------------------------------------------------------------------

    async def _settle(self, state: RunState[Any, Agent[Any]], context: Any) -> bool:
        """Park every pending call of the pause (in order), wait for them all, and apply
        what each came to. False when the turn was stopped (something came back cancelled)."""
        items = state.get_interruptions()
        parked: list[tuple[ToolApprovalItem, Interaction | str]] = []
        for item in items:
            parked.append((item, await self._park_item(item)))
        interactions = [i for _, i in parked if isinstance(i, Interaction)]
        settled = {s.interaction.id: s for s in await self._wait_all(interactions)}
        for item, parked_as in parked:
            if isinstance(parked_as, str):  # a malformed question: its error is the output
                _answers(context)[_call_id(item)] = parked_as
                state.approve(item)
                continue
            now = settled[parked_as.id]
            status = now.interaction.status
            if status == "cancelled":
                return False
            if now.interaction.kind == "ask":
                _answers(context)[_call_id(item)] = _text(now)
                state.approve(item)
            elif now.allowed:
                decision = now.decision
                state.approve(item, always_approve=decision is not None and _for_turn(decision))
            else:
                state.reject(item, rejection_message=_refusal(now))
        return True

    async def _park_item(self, item: ToolApprovalItem) -> Interaction | str:
        """The midturn interaction for one pending call: the question tool's call is an
        ask (or, malformed, the error text for the model), any other tool a permission."""
        call_id = _call_id(item)
        arguments = item.arguments or "{}"
        if item.tool_name == self.tool_name:
            if not self.interactive or item.agent is not self._root:
                return self._unavailable()
            try:
                interaction, _ = await self.asker.ask(
                    self.session_id,
                    _parse_arguments(arguments),
                    dialect=self.dialect,
                    tool_call_id=call_id,
                    turn_id=self.turn_id,
                    context=_who(item.agent, self._doing),
                )
            except InvalidAsk as error:
                return str(error)
            return interaction
        interaction, _ = await self.asker.request_permission(
            self.session_id,
            tool=item.tool_name or "tool",
            summary=_summary(item.tool_name or "tool", arguments),
            risk=self.risk,
            details=_details(arguments),
            tool_call_id=call_id,
            turn_id=self.turn_id,
            context=_who(item.agent, self._doing, item.tool_name or "tool", arguments),
        )
        return interaction

    async def _wait_all(self, interactions: Sequence[Interaction]) -> list[Settled]:
        """Wait for every interaction; if the waiting is cancelled (the host aborted the
        run), the ones still pending are cancelled too."""
        try:
            return list(await asyncio.gather(*(self.asker.wait(i.id) for i in interactions)))
        except asyncio.CancelledError:
            for interaction in interactions:
                with contextlib.suppress(MidturnError):
                    await asyncio.shield(self.asker.cancel(interaction.id))
            raise

    # -- the question tool --------------------------------------------------------------------

    def _enabled(self, ctx: RunContextWrapper[Any], agent: Any) -> bool:
        return self.interactive and self._root is not None and agent is self._root

    def _guardrail(self) -> ToolInputGuardrail[Any]:
        async def park(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
            ctx = data.context
            if self._enabled(ctx, ctx.agent):
                self._parked[ctx.tool_call_id] = await self._park_call(ctx)
            return ToolGuardrailFunctionOutput.allow()

        return ToolInputGuardrail(park, name=PARK_GUARDRAIL)

    async def _park_call(self, ctx: ToolContext[Any]) -> Interaction | str:
        """Park a live question call (or, malformed, the error text for the model)."""
        try:
            tool_input = _parse_arguments(ctx.tool_arguments)
            async with self._park:
                interaction, _ = await self.asker.ask(
                    self.session_id,
                    tool_input,
                    dialect=self.dialect,
                    tool_call_id=ctx.tool_call_id,
                    turn_id=self.turn_id,
                    context=_who(ctx.agent, self._doing),
                )
        except InvalidAsk as error:  # the model fixes its call; nothing parked or shown
            return str(error)
        return interaction

    async def _invoke(self, ctx: ToolContext[Any], arguments: str) -> str:
        call_id = ctx.tool_call_id
        if not self._enabled(ctx, ctx.agent):
            return self._unavailable()
        answers = ctx.context.get(CONTEXT_KEY) if isinstance(ctx.context, Mapping) else None
        if isinstance(answers, MutableMapping) and call_id in answers:
            return str(answers.pop(call_id))  # durable: settled before the call was approved
        parked = self._parked.pop(call_id, None)  # live: the guardrail parked it
        if parked is None:  # called without the guardrail (a user's own invocation)
            parked = await self._park_call(ctx)
        if isinstance(parked, str):
            return parked
        (settled,) = await self._wait_all([parked])
        if settled.interaction.status == "cancelled":
            raise _TurnStopped(f"the turn {self.turn_id!r} was stopped")
        return _text(settled)

    def _unavailable(self) -> str:
        """The result of a question nobody can answer here, decided without asking."""
        return render(AskResult(outcome="unavailable", answers=()), self.dialect).text


class _Hooks(RunHooks[Any]):
    """The run's hooks: every one of the caller's (`Runner.run(hooks=...)`), and after
    each model call the response's text kept as the turn's `doing`. It overrides every
    hook the SDK has (a test checks), so none of the caller's is dropped."""

    def __init__(self, turn: MidturnRun, inner: RunHooks[Any] | None) -> None:
        self.turn = turn
        self.inner: RunHooks[Any] = inner if inner is not None else RunHooks()

    async def on_llm_start(
        self,
        context: RunContextWrapper[Any],
        agent: Agent[Any],
        system_prompt: str | None,
        input_items: list[TResponseInputItem],
    ) -> None:
        await self.inner.on_llm_start(context, agent, system_prompt, input_items)

    async def on_llm_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse
    ) -> None:
        texts = [ItemHelpers.extract_text(item) for item in response.output]
        said = "\n".join(t.strip() for t in texts if t and t.strip())
        if said:  # a step that only calls tools keeps what the model said before
            self.turn._doing = said
        await self.inner.on_llm_end(context, agent, response)

    async def on_agent_start(self, context: Any, agent: Agent[Any]) -> None:
        await self.inner.on_agent_start(context, agent)

    async def on_agent_end(self, context: Any, agent: Agent[Any], output: Any) -> None:
        await self.inner.on_agent_end(context, agent, output)

    async def on_handoff(
        self, context: RunContextWrapper[Any], from_agent: Agent[Any], to_agent: Agent[Any]
    ) -> None:
        await self.inner.on_handoff(context, from_agent, to_agent)

    async def on_tool_start(
        self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool
    ) -> None:
        await self.inner.on_tool_start(context, agent, tool)

    async def on_tool_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool, result: object
    ) -> None:
        await self.inner.on_tool_end(context, agent, tool, result)


def _parse_arguments(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        problem = Problem("", f"the arguments are not JSON ({arguments[:80]!r}); send an object")
        raise InvalidAsk([problem]) from None


def _answers(context: Any) -> MutableMapping[str, str]:
    """Where a settled question's output waits for its approved call: the run context's
    `CONTEXT_KEY` entry."""
    if not isinstance(context, MutableMapping):
        raise UsageError(
            "a question's answer goes in the run context, which must be a mutable mapping "
            f"(a dict) so the RunState serializes; got {type(context).__name__}"
        )
    answers = context.setdefault(CONTEXT_KEY, {})
    if not isinstance(answers, MutableMapping):
        raise UsageError(f"the run context's {CONTEXT_KEY!r} is midturn's: leave it a dict")
    return answers


def _call_id(item: ToolApprovalItem) -> str:
    raw = item.raw_item
    call_id = raw.get("call_id") if isinstance(raw, Mapping) else getattr(raw, "call_id", None)
    if not isinstance(call_id, str) or not call_id:  # pragma: no cover - the SDK sets one
        raise MidturnError(f"the SDK paused a call of {item.tool_name!r} without a call id")
    return call_id


def _text(settled: Settled) -> str:
    output = settled.output
    if output is None:  # pragma: no cover - a settled ask always has an output
        raise MidturnError(f"ask {settled.interaction.id} came back without a result")
    return output.text


def _for_turn(decision: Any) -> bool:
    return bool(decision.decision == "allow_for_turn" or decision.auto)


def _refusal(settled: Settled) -> str:
    status = settled.interaction.status
    if status == "timed_out":
        return _TIMED_OUT
    if status == "unavailable":
        return _UNAVAILABLE
    decision = settled.decision
    return (decision.message if decision else None) or _DENIED


def _who(
    agent: Any, doing: str | None, tool: str | None = None, arguments: str | None = None
) -> dict[str, Any]:
    """Who is asking (docs/contract.md#who-is-asking): the agent's `name`, what the model
    last said in the turn, and for a permission the tool call with its arguments (the
    runtime bounds each field)."""
    name = getattr(agent, "name", None)
    context: dict[str, Any] = {"agent": name} if isinstance(name, str) and name.strip() else {}
    if doing:
        context["doing"] = doing
    if tool is not None:
        context["tool"] = {"name": tool, "input": arguments}
    return context


def _summary(tool: str, arguments: str) -> str:
    line = f"{tool}({arguments.strip()[1:-1]})" if arguments.strip().startswith("{") else tool
    return line if len(line) <= 160 else line[:159] + "…"


def _details(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), ensure_ascii=False, indent=2, sort_keys=True)
    except ValueError:
        return arguments
