"""midturn.adapters.pydantic_ai on the real pydantic-ai, offline: its own `FunctionModel`
scripts the model (`models.ALLOW_MODEL_REQUESTS = False`), midturn's `ScriptedResponder`
(or the answerer port directly) plays the person. The seven scenarios of issue 15, in
this process, scenario 1 also against a live gateway; scenario 4 kills a real agent
process between the ask and the answer."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest
from pydantic_ai import Agent, models
from pydantic_ai.exceptions import RunCancelled
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests
from tests._asks import ASK
from tests._servers import SAFETY_S, LiveGateway, start_gateway
from tests._slow_first import SlowFirstAsk

from midturn import (
    SYSTEM_PROMPT,
    Answerer,
    Asker,
    AsyncClient,
    Runtime,
    Settled,
    open_store,
)
from midturn.adapters.pydantic_ai import MidturnTurn
from midturn.testing import ScriptedResponder, allow, allow_for_turn, answer, deny, stall, stop_turn

models.ALLOW_MODEL_REQUESTS = False

ROOT = Path(__file__).resolve().parents[2]
ADMIN = "pydantic-ai-admin-token-0123456789abcdef"
TOOL = "ask_user_question"
ASK_DB = {
    "questions": [{"id": "db", "question": "Which database?", "options": ["PostgreSQL", "SQLite"]}]
}
ASK_NAME = {
    "questions": [{"id": "name", "question": "What is the service called?", "kind": "text"}]
}
BAD_ASK = {"questions": [{"id": "db", "question": "Which database?", "options": ["PostgreSQL"]}]}


# -- the scripted model ----------------------------------------------------------------


@dataclass
class Script:
    """A `FunctionModel` that plays `steps` (lists of tool calls), then replies with the
    text of every tool result of the last request; records what each call offered."""

    steps: list[list[ToolCallPart]]
    offered: list[list[str]] = field(default_factory=list)
    instructions: list[str | None] = field(default_factory=list)
    seen: list[list[ModelMessage]] = field(default_factory=list)

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.offered.append([tool.name for tool in info.function_tools])
        self.instructions.append(info.instructions)
        self.seen.append(list(messages))
        if self.steps:
            return ModelResponse(parts=list(self.steps.pop(0)))
        last = messages[-1]
        results = [
            str(part.content)
            for part in last.parts
            if isinstance(part, (ToolReturnPart, RetryPromptPart))
        ]
        return ModelResponse(parts=[TextPart("final: " + " | ".join(results))])

    def agent(self, **options: Any) -> Agent[None, Any]:
        return Agent(FunctionModel(self), output_type=[str, DeferredToolRequests], **options)


def _text(interaction: Any) -> str:
    output = Settled.of(interaction).output
    assert output is not None
    return output.text


def call(tool_input: Any, call_id: str, name: str = TOOL) -> ToolCallPart:
    return ToolCallPart(name, tool_input, tool_call_id=call_id)


def returns(messages: list[ModelMessage], call_id: str) -> list[ToolReturnPart]:
    """Every tool return for `call_id` in the history."""
    return [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart) and part.tool_call_id == call_id
    ]


async def run_turn(turn: MidturnTurn, agent: Agent[None, Any], prompt: str) -> Any:
    """Run the turn to its end: resume after each deferral once midturn settled it."""
    result = await agent.run(prompt, capabilities=[turn.capability])
    while isinstance(result.output, DeferredToolRequests):
        results = await turn.results(result.output)
        assert results is not None, "the turn was stopped"
        result = await agent.run(
            message_history=result.all_messages(),
            deferred_tool_results=results,
            capabilities=[turn.capability],
        )
    await turn.end()
    return result


# -- both sides of the ports -------------------------------------------------------------


@dataclass
class Side:
    session_id: str
    asker: Asker
    answerer: Answerer


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveGateway]:
    db = tmp_path_factory.mktemp("pydantic-ai") / "midturn.db"
    server = start_gateway(f"sqlite:///{db}", ADMIN)
    yield server
    server.stop()


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    async with open_store("memory://") as store, Runtime(store) as rt:
        yield rt


@pytest.fixture(params=["runtime", "gateway"])
async def side(request: pytest.FixtureRequest) -> AsyncIterator[Side]:
    async with AsyncExitStack() as stack:
        if request.param == "runtime":
            store = await stack.enter_async_context(open_store("memory://"))
            rt = await stack.enter_async_context(Runtime(store))
            yield Side("session-1", rt, rt)
            return
        gateway: LiveGateway = request.getfixturevalue("live")
        admin = await stack.enter_async_context(AsyncClient(gateway.url, ADMIN))
        session = await admin.create_session({"name": "pydantic-ai"})
        agent = await stack.enter_async_context(AsyncClient(gateway.url, session.agent_token))
        person = await stack.enter_async_context(AsyncClient(gateway.url, session.answer_token))
        yield Side(session.session_id, agent, person)


async def requested(runtime: Runtime, session_id: str) -> list[str]:
    """The tool_call_ids of every interaction requested in the session, in order."""
    found: list[str] = []
    async for event in runtime.events(session_id, follow=False):
        if event.type in ("user_question_requested", "permission_requested"):
            found.append(event.data["interaction"]["tool_call_id"])
    return found


# -- 1. the answer continues the same run ------------------------------------------------


@pytest.mark.parametrize("inline", [False, True], ids=["deferred", "inline"])
async def test_1_answer_continues_the_same_run(side: Side, inline: bool) -> None:
    script = Script([[call(ASK, "call-1")]])
    turn = MidturnTurn(side.asker, side.session_id, "turn-1", inline=inline)
    script_ = [answer({"db": "SQLite", "name": "billing"})]
    async with ScriptedResponder(side.answerer, script_, session_id=side.session_id):
        result = await asyncio.wait_for(run_turn(turn, script.agent(), "Set it up"), SAFETY_S)

    text = 'The user answered:\n- Database: SQLite\n- Service: "billing"'
    assert result.output == f"final: {text}"
    history = result.all_messages()
    assert [part.content for part in returns(history, "call-1")] == [text]  # exactly once
    assert script.offered[0] == [TOOL]
    assert script.instructions[0] == SYSTEM_PROMPT
    assert await side.answerer.queue(side.session_id) == []


# -- 2. a malformed ask is a fixable error -----------------------------------------------


async def test_2_malformed_ask_is_a_fixable_error(runtime: Runtime) -> None:
    script = Script([[call(BAD_ASK, "call-bad")], [call(ASK_DB, "call-good")]])
    turn = MidturnTurn(runtime, "session-2", "turn-2", inline=True)
    async with ScriptedResponder(runtime, [answer("PostgreSQL")]) as human:
        result = await asyncio.wait_for(run_turn(turn, script.agent(), "Go"), SAFETY_S)

    (retry,) = returns(script.seen[1], "call-bad")  # an error result the model reads
    assert retry.outcome == "retried"
    assert "questions[0].options: 1 option given" in str(retry.content)
    assert result.output == "final: The user answered:\n- Database: PostgreSQL"
    assert await requested(runtime, "session-2") == ["call-good"]  # the bad call never parked
    assert [r.interaction.tool_call_id for r in human.responses] == ["call-good"]


# -- 3. permissions: allow, deny with a message, allow for the turn ----------------------


@pytest.mark.parametrize("inline", [False, True], ids=["deferred", "inline"])
async def test_3_permissions_allow_deny_allow_for_turn(runtime: Runtime, inline: bool) -> None:
    ran: list[str] = []
    script = Script([[call({"env": e}, f"deploy-{i}", "deploy")] for i, e in enumerate("abcd")])
    agent = script.agent()

    @agent.tool_plain(requires_approval=True)
    def deploy(env: str) -> str:
        """Deploy to an environment."""
        ran.append(env)
        return f"deployed {env}"

    turn = MidturnTurn(runtime, "session-3", "turn-3", inline=inline)
    steps = [allow(), deny("not on Fridays"), allow_for_turn()]
    async with ScriptedResponder(runtime, steps) as human:
        result = await asyncio.wait_for(run_turn(turn, agent, "Deploy"), SAFETY_S)
        await human.finished()

    assert ran == ["a", "c", "d"]  # b was denied; d ran on the grant, nobody asked
    history = result.all_messages()
    assert returns(history, "deploy-1")[0].content == "not on Fridays"
    assert returns(history, "deploy-1")[0].outcome == "denied"
    assert [returns(history, f"deploy-{i}")[0].content for i in (0, 2, 3)] == [
        "deployed a",
        "deployed c",
        "deployed d",
    ]
    assert human.unscripted == []
    granted = await runtime.get(
        next(r.interaction.id for r in human.responses if r.step.decision == "allow_for_turn")
    )
    assert granted.status == "allowed"
    if not inline:  # the granted call resolved in the run it was made in: no deferral
        assert sum(isinstance(m, ModelResponse) for m in history) == 5


async def test_3_a_permission_nobody_decides_is_denied() -> None:
    ran: list[str] = []
    script = Script([[call({"env": "prod"}, "deploy-late", "deploy")]])
    agent = script.agent()

    @agent.tool_plain(requires_approval=True)
    def deploy(env: str) -> str:
        """Deploy to an environment."""
        ran.append(env)
        return f"deployed {env}"

    async with open_store("memory://") as store, Runtime(store, permission_timeout_s=0.05) as rt:
        turn = MidturnTurn(rt, "session-3b", "turn-3b", inline=True)
        result = await asyncio.wait_for(run_turn(turn, agent, "Deploy"), SAFETY_S)
    assert ran == []
    (denied,) = returns(result.all_messages(), "deploy-late")
    assert denied.outcome == "denied"
    assert denied.content == "Nobody approved this tool call in time; it did not run."


# -- 4. killed between the ask and the answer --------------------------------------------


def _agent_process(*args: str) -> Any:
    return asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.adapters._pydantic_ai_agent",
        *args,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


@pytest.mark.slow
async def test_4_killed_between_ask_and_answer_resumes(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'midturn.db'}"
    gateway = start_gateway(db_url, ADMIN)
    try:
        async with AsyncClient(gateway.url, ADMIN) as admin:
            session = await admin.create_session({"name": "kill"})
        args = [str(tmp_path), gateway.url, session.agent_token, session.session_id]

        first = await _agent_process("ask", *args)
        assert first.stdout is not None
        line = await asyncio.wait_for(first.stdout.readline(), SAFETY_S)
        assert line == b"parked\n", (await first.stderr.read()).decode() if first.stderr else ""
        first.send_signal(signal.SIGKILL)
        assert await asyncio.wait_for(first.wait(), SAFETY_S) == -signal.SIGKILL

        async with AsyncClient(gateway.url, session.answer_token) as person:
            (pending,) = await person.queue(session.session_id)
            assert pending.tool_call_id == "call-ask"
            await person.answer(pending.id, {"db": "SQLite", "name": "rooms"})

        second = await _agent_process("resume", *args)
        out, err = await asyncio.wait_for(second.communicate(), SAFETY_S)
        assert second.returncode == 0, err.decode()
        assert out.decode().strip() == (
            '{"output": "done: The user answered:\\n- Database: SQLite\\n- Service: \\"rooms\\""}'
        )
    finally:
        gateway.stop()

    assert (tmp_path / "effects.log").read_text() == "booked A\n"  # the side effect ran once
    async with open_store(db_url) as store, Runtime(store) as rt:
        assert await requested(rt, session.session_id) == ["call-ask"]  # asked once
        assert await rt.queue(session.session_id) == []


# -- 5. two asks in one step -------------------------------------------------------------


async def test_5_two_asks_in_one_step_fifo(side: Side) -> None:
    script = Script([[call(ASK_DB, "call-db"), call(ASK_NAME, "call-name")]])
    turn = MidturnTurn(side.asker, side.session_id, "turn-5")
    agent = script.agent()
    first = await asyncio.wait_for(
        agent.run("Two things", capabilities=[turn.capability]), SAFETY_S
    )
    requests = first.output
    assert isinstance(requests, DeferredToolRequests)

    queue = await side.answerer.queue(side.session_id)
    assert [i.tool_call_id for i in queue] == ["call-db", "call-name"]  # the model's order
    named = await side.answerer.answer(queue[1].id, "orders")  # out of order on purpose
    picked = await side.answerer.answer(queue[0].id, "SQLite")

    results = await turn.results(requests)
    assert results is not None
    final = await agent.run(
        message_history=first.all_messages(),
        deferred_tool_results=results,
        capabilities=[turn.capability],
    )
    history = final.all_messages()
    for settled, shown in ((picked, "SQLite"), (named, '"orders"')):
        text = _text(settled.interaction)
        assert text.endswith(shown)
        call_id = settled.interaction.tool_call_id or ""
        assert [p.content for p in returns(history, call_id)] == [text]


async def test_5_a_slow_first_ask_still_parks_first(runtime: Runtime) -> None:
    script = Script([[call(ASK_DB, "call-db"), call(ASK_NAME, "call-name")]])
    turn = MidturnTurn(cast(Asker, SlowFirstAsk(runtime)), "session-5b", "turn-5b")
    first = await asyncio.wait_for(
        script.agent().run("Two things", capabilities=[turn.capability]), SAFETY_S
    )
    assert isinstance(first.output, DeferredToolRequests)
    queue = await runtime.queue("session-5b")
    assert [i.tool_call_id for i in queue] == ["call-db", "call-name"]


# -- 6. the turn is stopped --------------------------------------------------------------


async def test_6_stopped_turn_cancels(runtime: Runtime) -> None:
    script = Script([[call(ASK_DB, "call-a"), call(ASK_NAME, "call-b")]])
    turn = MidturnTurn(runtime, "session-6", "turn-6", inline=True)
    async with ScriptedResponder(runtime, [stop_turn()]) as human:
        with pytest.raises(RunCancelled) as stopped:
            await asyncio.wait_for(
                script.agent().run("Ask", capabilities=[turn.capability]), SAFETY_S
            )
        await human.finished()

    assert len(script.offered) == 1  # the model was not called again
    for tool_input, call_id in ((ASK_DB, "call-a"), (ASK_NAME, "call-b")):
        again = await runtime.ask("session-6", tool_input, tool_call_id=call_id, turn_id="turn-6")
        assert not again.created and again.interaction.status == "cancelled"
    assert await runtime.queue("session-6") == []
    assert returns(stopped.value.all_messages(), "call-a") == []  # the model never sees it


async def test_6_stopped_turn_cancels_a_deferred_run(runtime: Runtime) -> None:
    script = Script([[call(ASK_DB, "call-c")]])
    turn = MidturnTurn(runtime, "session-6b", "turn-6b")
    first = await script.agent().run("Ask", capabilities=[turn.capability])
    assert isinstance(first.output, DeferredToolRequests)
    await turn.stop()
    assert await turn.results(first.output) is None  # do not resume a stopped turn
    (asked,) = first.output.calls
    interaction_id = first.output.metadata[asked.tool_call_id]["midturn_interaction_id"]
    assert (await runtime.get(interaction_id)).status == "cancelled"
    assert await runtime.queue("session-6b") == []


async def test_6_a_host_cancelling_an_inline_run_cancels_its_asks(runtime: Runtime) -> None:
    script = Script([[call(ASK_DB, "call-held")]])
    turn = MidturnTurn(runtime, "session-6c", "turn-6c", inline=True)
    async with ScriptedResponder(runtime, [stall()]) as human:
        running = asyncio.create_task(script.agent().run("Ask", capabilities=[turn.capability]))
        await asyncio.wait_for(human.finished(), SAFETY_S)  # the ask is shown, pending
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
    again = await runtime.ask("session-6c", ASK_DB, tool_call_id="call-held", turn_id="turn-6c")
    assert not again.created and again.interaction.status == "cancelled"
    assert await runtime.queue("session-6c") == []


# -- 7. sub-agents and headless runs have no tool ----------------------------------------


async def test_7_subagent_and_headless_have_no_tool(runtime: Runtime) -> None:
    headless = Script([[call(ASK_DB, "call-headless")]])
    turn = MidturnTurn(runtime, "session-7", "turn-7", interactive=False)
    result = await headless.agent().run("Work alone", capabilities=[turn.capability])
    assert headless.offered[0] == []
    assert headless.instructions[0] is None
    (forced,) = returns(result.all_messages(), "call-headless")
    assert "no one" in str(forced.content).lower() or "unavailable" in str(forced.content)

    child_script = Script([[call(ASK_NAME, "call-child")]])
    child = child_script.agent()
    parent_script = Script([[call({"task": "name it"}, "call-delegate", "delegate")]])
    parent = parent_script.agent()
    root = MidturnTurn(runtime, "session-7", "turn-7b")

    @parent.tool_plain
    async def delegate(task: str) -> str:
        """Hand a task to a sub-agent."""
        out = await child.run(task, capabilities=[root.subagent().capability])
        return str(out.output)

    done = await parent.run("Delegate", capabilities=[root.capability])
    assert parent_script.offered[0] == ["delegate", TOOL]
    assert child_script.offered[0] == []
    (inner,) = returns(child_script.seen[1], "call-child")
    assert inner.content == forced.content  # unavailable at once, nobody asked
    assert "final:" in str(done.output)
    assert await requested(runtime, "session-7") == []  # no interaction recorded


# -- the extra, the docs -----------------------------------------------------------------


def _python(code: str) -> Any:
    import subprocess

    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def test_without_pydantic_ai_the_import_says_how_to_install_it() -> None:
    done = _python(
        "import sys; sys.modules['pydantic_ai'] = None; import midturn.adapters.pydantic_ai"
    )
    assert done.returncode != 0
    assert 'pip install "midturn[pydantic-ai]"' in done.stderr


def test_the_core_does_not_import_pydantic_ai() -> None:
    done = _python(
        "import sys, midturn, midturn.gateway, midturn.cli, midturn.adapters; "
        "print('pydantic_ai' in sys.modules)"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"]


def runnable_blocks(path: Path) -> list[str]:
    return re.findall(r"<!-- runnable -->\n```python\n(.*?)```", path.read_text(), re.S)


def test_the_docs_example_runs() -> None:
    doc = ROOT / "docs" / "adapters" / "pydantic-ai.md"
    (block,) = runnable_blocks(doc)
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    exec(compile(block, str(doc), "exec"), namespace)
    check: Callable[[], None] = namespace["check"]
    check()


# -- who is asking -------------------------------------------------------------------------


@pytest.mark.parametrize("inline", [False, True], ids=["deferred", "inline"])
async def test_each_interaction_says_who_asks(side: Side, inline: bool) -> None:
    """The question and the permission carry who is asking: the agent's name, what the
    model said in the step that called, and for the permission the tool call."""
    steps = [
        [TextPart("First the database."), call(ASK_DB, "call-who")],
        [TextPart("Deploying to the EU now."), call({"target": "eu"}, "deploy-who", "deploy")],
    ]

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=steps.pop(0) if steps else [TextPart("Deployed.")])

    agent = Agent(FunctionModel(model), output_type=[str, DeferredToolRequests], name="release-bot")

    @agent.tool_plain(requires_approval=True)
    def deploy(target: str) -> str:
        """Deploy the service."""
        return f"deployed to {target}"

    turn = MidturnTurn(side.asker, side.session_id, "turn-who", inline=inline)
    async with ScriptedResponder(side.answerer, [answer("SQLite"), allow()], side.session_id) as p:
        await asyncio.wait_for(run_turn(turn, agent, "Ship it"), SAFETY_S)
    asked, permitted = [r.settled.interaction for r in p.responses if r.settled is not None]
    assert asked.kind == "ask" and asked.context is not None  # as the side stored it
    assert asked.context.agent == "release-bot" and asked.context.tool is None
    assert asked.context.doing == "First the database."
    assert permitted.kind == "permission" and permitted.context is not None
    assert permitted.context.agent == "release-bot"
    assert permitted.context.doing == "Deploying to the EU now."
    assert permitted.context.tool is not None and permitted.context.tool.name == "deploy"
    assert permitted.context.tool.input == '{"target":"eu"}'
