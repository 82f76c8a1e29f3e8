"""midturn.adapters.openai_agents on the real OpenAI Agents SDK, offline: its shipped
`agents.testing.ScriptedModel` plays the model (no API key, tracing off, nothing reaches
OpenAI), midturn's `ScriptedResponder` (or the answerer port directly) plays the person.
The seven scenarios of ADAPTERS.md, live and durable, in this process; scenario 1 also
against a live gateway; scenario 4 kills a real agent process between ask and answer."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, RunHooks, function_tool, set_tracing_disabled
from agents.exceptions import UserError as SdkUserError
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call
from tests._servers import SAFETY_S, LiveGateway, start_gateway
from tests._slow_first import SlowFirstAsk

from midturn import (
    SYSTEM_PROMPT,
    Answerer,
    Asker,
    AsyncClient,
    Runtime,
    Settled,
    UsageError,
    open_store,
)
from midturn.adapters.openai_agents import MidturnRun
from midturn.testing import ScriptedResponder, allow, allow_for_turn, answer, deny, stop_turn

set_tracing_disabled(True)

ROOT = Path(__file__).resolve().parents[2]
ADMIN = "openai-agents-admin-token-0123456789abcdef"
TOOL = "ask_user_question"
ASK_DB = {
    "questions": [{"id": "db", "question": "Which database?", "options": ["PostgreSQL", "SQLite"]}]
}
ASK_NAME = {
    "questions": [{"id": "name", "question": "What is the service called?", "kind": "text"}]
}
BAD_ASK = {"questions": [{"id": "db", "question": "Which database?", "options": ["PostgreSQL"]}]}
PROCESS_S = SAFETY_S * 4
"""The bound on a child agent process's steps: importing the SDK alone takes seconds on a
loaded machine (a bound, not a timing assertion)."""
UNAVAILABLE = "No one is available to answer questions here."


@pytest.fixture(autouse=True)
def _no_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key and no base URL: a call that slipped past the scripted model would fail."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/unreachable")


# -- the scripted model ----------------------------------------------------------------


def outputs(call: ModelCall, call_id: str) -> list[str]:
    """Every tool output for `call_id` in the input the model was given."""
    return [
        str(item["output"])
        for item in call.input
        if isinstance(item, dict)
        and item.get("type") == "function_call_output"
        and item.get("call_id") == call_id
    ]


def echo(call: ModelCall) -> list[Any]:
    """The final step: reply with every tool output of the run, in order."""
    texts = [
        str(item["output"])
        for item in call.input
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]
    return [assistant_message("final: " + " | ".join(texts))]


def script(*steps: list[Any]) -> ScriptedModel:
    return ScriptedModel([*steps, ModelStep.respond(echo)])


def offered(call: ModelCall) -> list[str]:
    return [tool.name for tool in call.tools]


# -- both sides of the ports -------------------------------------------------------------


@dataclass
class Side:
    session_id: str
    asker: Asker
    answerer: Answerer


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveGateway]:
    db = tmp_path_factory.mktemp("openai-agents") / "midturn.db"
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
        session = await admin.create_session({"name": "openai-agents"})
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


async def pending(answerer: Answerer, session_id: str, count: int) -> list[Any]:
    """The session's queue once it holds `count` interactions (read on each event of the
    session, within a bound)."""

    async def poll() -> list[Any]:
        queue = await answerer.queue(session_id)
        async for _ in answerer.events(session_id):
            if len(queue) >= count:
                break
            queue = await answerer.queue(session_id)
        return queue

    return await asyncio.wait_for(poll(), SAFETY_S)


def _text(interaction: Any) -> str:
    output = Settled.of(interaction).output
    assert output is not None
    return output.text


MODES = pytest.mark.parametrize("durable", [False, True], ids=["live", "durable"])


# -- 1. the answer continues the same run ------------------------------------------------


@MODES
async def test_1_answer_continues_the_same_run(side: Side, durable: bool) -> None:
    model = script([function_call(TOOL, ASK_DB, call_id="call-1")])
    turn = MidturnRun(side.asker, side.session_id, "turn-1", durable=durable)
    agent = Agent(name="assistant", instructions=turn.instructions, model=model, tools=[turn.tool])
    async with ScriptedResponder(side.answerer, [answer("SQLite")], session_id=side.session_id):
        result = await asyncio.wait_for(turn.run(agent, "Set it up"), SAFETY_S)

    text = "The user answered:\n- Database: SQLite"
    assert result is not None
    assert result.final_output == f"final: {text}"
    last = model.calls[-1]
    assert outputs(last, "call-1") == [text]  # in the history exactly once
    assert len(model.calls) == 2  # the same run: one model call, the tool, the next call
    assert offered(model.calls[0]) == [TOOL]
    assert model.calls[0].system_instructions == SYSTEM_PROMPT
    assert await side.answerer.queue(side.session_id) == []
    model.assert_complete()


# -- 2. a malformed ask is a fixable error -----------------------------------------------


@MODES
async def test_2_malformed_ask_is_a_fixable_error(runtime: Runtime, durable: bool) -> None:
    model = script(
        [function_call(TOOL, BAD_ASK, call_id="call-bad")],
        [function_call(TOOL, "{not json", call_id="call-junk")],
        [function_call(TOOL, ASK_DB, call_id="call-good")],
    )
    turn = MidturnRun(runtime, "session-2", "turn-2", durable=durable)
    agent = Agent(name="assistant", model=model, tools=[turn.tool])
    async with ScriptedResponder(runtime, [answer("PostgreSQL")]) as human:
        result = await asyncio.wait_for(turn.run(agent, "Go"), SAFETY_S)

    (error,) = outputs(model.calls[1], "call-bad")  # an error result the model reads
    assert error.startswith("The question tool call was not shown to the user.")
    assert "questions[0].options" in error
    (junk,) = outputs(model.calls[2], "call-junk")
    assert "not JSON" in junk
    assert result is not None
    assert result.final_output.endswith("The user answered:\n- Database: PostgreSQL")
    assert await requested(runtime, "session-2") == ["call-good"]  # the bad calls never parked
    assert [r.interaction.tool_call_id for r in human.responses] == ["call-good"]


# -- 3. permissions: allow, deny with a message, allow for the turn ----------------------


@MODES
async def test_3_permissions_allow_deny_allow_for_turn(runtime: Runtime, durable: bool) -> None:
    ran: list[str] = []

    @function_tool(needs_approval=True)
    def deploy(env: str) -> str:
        """Deploy to an environment."""
        ran.append(env)
        return f"deployed {env}"

    model = script(
        *(
            [function_call("deploy", {"env": e}, call_id=f"deploy-{i}")]
            for i, e in enumerate("abcd")
        )
    )
    turn = MidturnRun(runtime, "session-3", "turn-3", durable=durable)
    agent = Agent(name="assistant", model=model, tools=[turn.tool, deploy])
    steps = [allow(), deny("not on Fridays"), allow_for_turn()]
    async with ScriptedResponder(runtime, steps) as human:
        result = await asyncio.wait_for(turn.run(agent, "Deploy"), SAFETY_S)
        await human.finished()

    assert ran == ["a", "c", "d"]  # b was denied; d ran on the grant, nobody asked
    assert result is not None
    last = model.calls[-1]
    assert outputs(last, "deploy-1") == ["not on Fridays"]
    assert [outputs(last, f"deploy-{i}") for i in (0, 2, 3)] == [
        ["deployed a"],
        ["deployed c"],
        ["deployed d"],
    ]
    assert human.unscripted == []
    assert await requested(runtime, "session-3") == ["deploy-0", "deploy-1", "deploy-2"]
    settled = [await runtime.get(r.interaction.id) for r in human.responses]
    assert [i.status for i in settled] == ["allowed", "denied", "allowed"]


# -- 4. killed between the ask and the answer --------------------------------------------


def _agent_process(*args: str) -> Any:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["OPENAI_BASE_URL"] = "http://127.0.0.1:9/unreachable"
    return asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.adapters._openai_agents_agent",
        *args,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


async def test_4_killed_between_ask_and_answer_resumes(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'midturn.db'}"
    gateway = start_gateway(db_url, ADMIN)
    try:
        async with AsyncClient(gateway.url, ADMIN) as admin:
            session = await admin.create_session({"name": "kill"})
        args = [str(tmp_path), gateway.url, session.agent_token, session.session_id]

        first = await _agent_process("ask", *args)
        assert first.stdout is not None
        line = await asyncio.wait_for(first.stdout.readline(), PROCESS_S)
        assert line == b"saved\n", (await first.stderr.read()).decode() if first.stderr else ""
        async with AsyncClient(gateway.url, session.answer_token) as person:
            (waiting,) = await pending(person, session.session_id, 1)  # asked, not answered
        first.send_signal(signal.SIGKILL)
        assert await asyncio.wait_for(first.wait(), SAFETY_S) == -signal.SIGKILL
        assert (tmp_path / "state.json").is_file()  # the serialized RunState on disk

        async with AsyncClient(gateway.url, session.answer_token) as person:
            assert waiting.tool_call_id == "call-ask"
            await person.answer(waiting.id, {"db": "SQLite"})

        second = await _agent_process("resume", *args)
        out, err = await asyncio.wait_for(second.communicate(), PROCESS_S)
        assert second.returncode == 0, err.decode()
        saved, printed = out.decode().splitlines()  # resume saves the state it continues
        assert saved == "saved"
        assert printed == (
            '{"output": "done: The user answered:\\n- Database: SQLite", "model_calls": 1}'
        )
    finally:
        gateway.stop()

    assert (tmp_path / "effects.log").read_text() == "booked A\n"  # the side effect ran once
    async with open_store(db_url) as store, Runtime(store) as rt:
        assert await requested(rt, session.session_id) == ["call-ask"]  # asked once
        assert await rt.queue(session.session_id) == []


# -- 5. two asks in one step -------------------------------------------------------------


@MODES
async def test_5_two_asks_in_one_step_fifo(side: Side, durable: bool) -> None:
    model = script(
        [
            function_call(TOOL, ASK_DB, call_id="call-db"),
            function_call(TOOL, ASK_NAME, call_id="call-name"),
        ]
    )
    turn = MidturnRun(side.asker, side.session_id, "turn-5", durable=durable)
    agent = Agent(name="assistant", model=model, tools=[turn.tool])
    running = asyncio.create_task(turn.run(agent, "Two things"))
    queue = await pending(side.answerer, side.session_id, 2)
    assert [i.tool_call_id for i in queue] == ["call-db", "call-name"]  # the model's order
    named = await side.answerer.answer(queue[1].id, "orders")  # out of order on purpose
    picked = await side.answerer.answer(queue[0].id, "SQLite")
    result = await asyncio.wait_for(running, SAFETY_S)

    assert result is not None
    last = model.calls[-1]
    for settled, shown in ((picked, "SQLite"), (named, '"orders"')):
        text = _text(settled.interaction)
        assert text.endswith(shown)
        assert outputs(last, settled.interaction.tool_call_id or "") == [text]


async def test_5_a_slow_first_live_ask_still_parks_first(runtime: Runtime) -> None:
    model = script(
        [
            function_call(TOOL, ASK_DB, call_id="call-db"),
            function_call(TOOL, ASK_NAME, call_id="call-name"),
        ]
    )
    turn = MidturnRun(SlowFirstAsk(runtime), "session-5", "turn-5")  # type: ignore[arg-type]
    agent = Agent(name="assistant", model=model, tools=[turn.tool])
    async with ScriptedResponder(runtime, [answer("SQLite"), answer("orders")]) as human:
        result = await asyncio.wait_for(turn.run(agent, "Two things"), SAFETY_S)
        await human.finished()

    assert result is not None
    assert await requested(runtime, "session-5") == ["call-db", "call-name"]
    last = model.calls[-1]
    assert outputs(last, "call-db")[0].endswith("SQLite")
    assert outputs(last, "call-name")[0].endswith('"orders"')


class SlowFirstToolStart(RunHooks[Any]):
    """Run hooks (the SDK's own, passed through `turn.run`) whose `on_tool_start` for the
    step's first question holds back until an ask of the session has parked: the calls
    run as tasks of their own, so a hook slower for one call lets the next one overtake
    it, as a hook that logs somewhere does in real use."""

    def __init__(self, runtime: Runtime, session_id: str) -> None:
        self.runtime = runtime
        self.session_id = session_id

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        if getattr(context, "tool_call_id", None) == "call-db":
            await asyncio.wait_for(self.someone_asked(), SAFETY_S)

    async def someone_asked(self) -> None:
        async for event in self.runtime.events(self.session_id):  # the log, then live
            if event.type == "user_question_requested":
                return


@MODES
async def test_5_a_slow_hook_on_the_first_call_still_parks_it_first(
    runtime: Runtime, durable: bool
) -> None:
    model = script(
        [
            function_call(TOOL, ASK_DB, call_id="call-db"),
            function_call(TOOL, ASK_NAME, call_id="call-name"),
        ]
    )
    turn = MidturnRun(runtime, "session-5h", "turn-5h", durable=durable)
    agent = Agent(name="assistant", model=model, tools=[turn.tool])
    hooks = SlowFirstToolStart(runtime, "session-5h")

    def pick(interaction: Any) -> str:  # whichever is asked first: the order is asserted
        return "SQLite" if interaction.ask.questions[0].id == "db" else "orders"

    async with ScriptedResponder(runtime, [answer(pick), answer(pick)]) as human:
        result = await asyncio.wait_for(turn.run(agent, "Two things", hooks=hooks), SAFETY_S)
        await human.finished()

    assert result is not None
    assert await requested(runtime, "session-5h") == ["call-db", "call-name"]
    last = model.calls[-1]
    assert outputs(last, "call-db")[0].endswith("SQLite")
    assert outputs(last, "call-name")[0].endswith('"orders"')


class FailingToolStart(RunHooks[Any]):
    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        raise RuntimeError("the hook failed")


async def test_a_live_question_whose_call_never_runs_is_not_left_queued(
    runtime: Runtime,
) -> None:
    """The guardrail parks the question before the SDK's `on_tool_start` hooks; a hook
    that fails then ends the run without the call: its ask is cancelled, not queued."""
    model = script([function_call(TOOL, ASK_DB, call_id="call-db")])
    turn = MidturnRun(runtime, "session-5f", "turn-5f")
    agent = Agent(name="assistant", model=model, tools=[turn.tool])
    with pytest.raises(SdkUserError, match="the hook failed"):  # the SDK wraps it
        await asyncio.wait_for(turn.run(agent, "Go", hooks=FailingToolStart()), SAFETY_S)
    assert await requested(runtime, "session-5f") == ["call-db"]
    assert await runtime.queue("session-5f") == []
    (interaction,) = await runtime.store.list_interactions(session_id="session-5f")
    assert interaction.status == "cancelled"


# -- 6. the turn is stopped --------------------------------------------------------------


@MODES
async def test_6_stopped_turn_cancels(runtime: Runtime, durable: bool) -> None:
    model = script(
        [
            function_call(TOOL, ASK_DB, call_id="call-db"),
            function_call(TOOL, ASK_NAME, call_id="call-name"),
        ]
    )
    turn = MidturnRun(runtime, "session-6", "turn-6", durable=durable)
    agent = Agent(name="assistant", model=model, tools=[turn.tool])
    async with ScriptedResponder(runtime, [stop_turn()]) as human:
        result = await asyncio.wait_for(turn.run(agent, "Go"), SAFETY_S)
        await human.finished()

    assert result is None  # the run ended, no further model call
    assert len(model.calls) == 1
    assert model.remaining_steps == 1
    ids = await requested(runtime, "session-6")
    assert ids == ["call-db", "call-name"]
    async for event in runtime.events("session-6", follow=False):
        if event.type == "user_question_requested":
            stored = await runtime.get(event.data["interaction"]["id"])
            assert stored.status == "cancelled"
    assert await runtime.queue("session-6") == []


# -- 7. sub-agents and headless runs have no question tool -------------------------------


@MODES
async def test_7_subagent_and_headless_have_no_tool(runtime: Runtime, durable: bool) -> None:
    turn = MidturnRun(runtime, "session-7", "turn-7", durable=durable)
    child_model = script([function_call(TOOL, ASK_DB, call_id="child-ask")])
    child = Agent(name="researcher", model=child_model, tools=[turn.tool])  # shared by mistake
    root_model = script([function_call("research", {"input": "look"}, call_id="call-research")])
    root = Agent(
        name="assistant",
        model=root_model,
        tools=[turn.tool, child.as_tool(tool_name="research", tool_description="Research.")],
    )
    result = await asyncio.wait_for(turn.run(root, "Go"), SAFETY_S)

    assert result is not None
    assert sorted(offered(root_model.calls[0])) == sorted([TOOL, "research"])
    assert offered(child_model.calls[0]) == []  # the child never sees it
    (forced,) = outputs(child_model.calls[1], "child-ask")
    assert forced.startswith(UNAVAILABLE)  # a call forced there: unavailable at once

    headless = MidturnRun(runtime, "session-7", "turn-7b", durable=durable, interactive=False)
    model = script([function_call(TOOL, ASK_DB, call_id="headless-ask")])
    agent = Agent(
        name="cron", instructions=headless.instructions, model=model, tools=[headless.tool]
    )
    done = await asyncio.wait_for(headless.run(agent, "Go"), SAFETY_S)

    assert done is not None
    assert offered(model.calls[0]) == []
    assert model.calls[0].system_instructions is None
    assert outputs(model.calls[1], "headless-ask")[0].startswith(UNAVAILABLE)
    assert await requested(runtime, "session-7") == []  # nobody was asked, nothing recorded
    assert [e async for e in runtime.events("session-7", follow=False)] == []


# -- the extra, the docs -------------------------------------------------------------------


def test_import_without_the_sdk_says_which_extra() -> None:
    blocked = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'agents' or name.startswith('agents.'):\n"
        "            raise ImportError(f'No module named {name!r}')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import midturn.adapters.openai_agents\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", blocked], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    assert 'pip install "midturn[openai-agents]"' in done.stderr


def runnable_blocks(page: Path) -> list[str]:
    """The ```python blocks of `page` marked `<!-- runnable -->` on the line before."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[str] = []
    for index, line in enumerate(lines):
        if line.strip() == "<!-- runnable -->" and lines[index + 1].startswith("```python"):
            end = lines.index("```", index + 2)
            blocks.append("\n".join(lines[index + 2 : end]))
    return blocks


def test_the_docs_example_runs_offline() -> None:
    (block,) = runnable_blocks(ROOT / "docs" / "adapters" / "openai-agents.md")
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["OPENAI_BASE_URL"] = "http://127.0.0.1:9/unreachable"
    done = subprocess.run(
        [sys.executable, "-c", block],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=PROCESS_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Setting it up. The user answered:\n- Database: SQLite\n"


async def test_a_durable_run_needs_a_mapping_context(runtime: Runtime) -> None:
    turn = MidturnRun(runtime, "session-8", "turn-8", durable=True)
    model = script([function_call(TOOL, ASK_DB, call_id="call-1")])
    agent = Agent(name="assistant", model=model, tools=[turn.tool])
    with pytest.raises(UsageError, match="must be a mutable mapping"):
        await turn.run(agent, "Go", context=object())
    assert model.calls == ()  # refused before the model was called
    assert await requested(runtime, "session-8") == []


@MODES
async def test_7_a_handoff_target_has_no_tool(runtime: Runtime, durable: bool) -> None:
    turn = MidturnRun(runtime, "session-9", "turn-9", durable=durable)
    target_model = script([function_call(TOOL, ASK_DB, call_id="target-ask")])
    target = Agent(name="billing", model=target_model, tools=[turn.tool])
    root_model = ScriptedModel([[function_call("transfer_to_billing", {}, call_id="call-hand")]])
    root = Agent(name="assistant", model=root_model, tools=[turn.tool], handoffs=[target])
    result = await asyncio.wait_for(turn.run(root, "Bill me"), SAFETY_S)

    assert result is not None
    assert result.last_agent is target
    assert TOOL in offered(root_model.calls[0])
    assert TOOL not in offered(target_model.calls[0])  # the handoff target never sees it
    assert outputs(target_model.calls[1], "target-ask")[0].startswith(UNAVAILABLE)
    assert await requested(runtime, "session-9") == []


@MODES
async def test_each_interaction_says_which_agent_asks(runtime: Runtime, durable: bool) -> None:
    """The question and the permission carry who is asking (the agent's name) and, for the
    permission, the tool call, so the inbox shows them beside the prompt."""

    @function_tool(needs_approval=True)
    def deploy(env: str) -> str:
        """Deploy to an environment."""
        return f"deployed {env}"

    model = script(
        [function_call(TOOL, ASK_DB, call_id="call-who")],
        [function_call("deploy", {"env": "prod"}, call_id="deploy-who")],
    )
    turn = MidturnRun(runtime, "session-who", "turn-who", durable=durable)
    agent = Agent(name="release-bot", model=model, tools=[turn.tool, deploy])
    async with ScriptedResponder(runtime, [answer("SQLite"), allow()]) as human:
        await asyncio.wait_for(turn.run(agent, "Ship it"), SAFETY_S)
        await human.finished()
    ask, permission = await runtime.store.list_interactions(session_id="session-who")
    assert ask.kind == "ask" and ask.context is not None
    assert ask.context.agent == "release-bot" and ask.context.tool is None
    assert permission.kind == "permission" and permission.context is not None
    assert permission.context.agent == "release-bot"
    assert permission.context.tool is not None and permission.context.tool.name == "deploy"
    assert permission.context.tool.input == '{"env":"prod"}'


@MODES
async def test_each_interaction_says_what_the_agent_was_doing(
    runtime: Runtime, durable: bool
) -> None:
    """`doing` is the turn's newest assistant text (docs/contract.md#who-is-asking), read
    from each model response through the run's hooks; the caller's hooks still run."""
    seen: list[str] = []

    class Mine(RunHooks[Any]):
        async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
            seen.append("llm_end")

        async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
            seen.append(f"tool_start {tool.name}")

    @function_tool(needs_approval=True)
    def deploy(env: str) -> str:
        """Deploy to an environment."""
        return f"deployed {env}"

    model = script(
        [assistant_message("First the database."), function_call(TOOL, ASK_DB, call_id="q")],
        [function_call("noop", {}, call_id="n")],  # a step without text keeps the last one
        [
            assistant_message("Deploying to prod now."),
            function_call("deploy", {"env": "prod"}, call_id="d"),
        ],
    )

    @function_tool
    def noop() -> str:
        """Nothing."""
        return "ok"

    turn = MidturnRun(runtime, "session-doing", "turn-doing", durable=durable)
    agent = Agent(name="release-bot", model=model, tools=[turn.tool, noop, deploy])
    async with ScriptedResponder(runtime, [answer("SQLite"), allow()]) as human:
        await asyncio.wait_for(turn.run(agent, "Ship it", hooks=Mine()), SAFETY_S)
        await human.finished()
    ask, permission = await runtime.store.list_interactions(session_id="session-doing")
    assert ask.context is not None and ask.context.doing == "First the database."
    assert permission.context is not None
    assert permission.context.doing == "Deploying to prod now."
    assert seen.count("llm_end") == len(model.calls)
    assert "tool_start deploy" in seen


def test_the_run_hooks_pass_every_hook_of_the_sdk_on() -> None:
    """The adapter wraps the caller's `RunHooks` to read what the model said: it must
    override every hook the SDK has, or a new one would silently skip the caller's."""
    from agents.lifecycle import RunHooksBase

    from midturn.adapters.openai_agents import _Hooks

    hooks = {name for name in vars(RunHooksBase) if name.startswith("on_")}
    assert hooks, "the SDK's RunHooksBase has no on_* hooks any more"
    assert hooks <= set(vars(_Hooks))
