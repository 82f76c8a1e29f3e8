"""The LangGraph adapter on the real library (langgraph 1.x, LangChain v1 `create_agent`
with `HumanInTheLoopMiddleware`), driven offline by a scripted fake chat model: the seven
scenarios of docs/adapters/langgraph.md, in-process and (scenario 1) on a live gateway,
and the LangGraph bugs the adapter designs around (#6533, #8837)."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt
from pydantic import ValidationError
from tests._asks import ANSWER, ASK
from tests._postgres import fresh_schema
from tests._servers import SAFETY_S, LiveGateway, start_gateway

from midturn import (
    Answerer,
    Asker,
    AskResult,
    AsyncClient,
    QuestionAnswer,
    Runtime,
    UsageError,
    open_store,
    parse_ask,
    render,
)
from midturn.adapters.langgraph import Host, fan_out, question_tool
from midturn.testing import (
    ScriptedResponder,
    allow,
    allow_for_turn,
    answer,
    deny,
    stop_turn,
)
from midturn.testing._gateway import HUNG_S

from ._langgraph_agent import (
    ASK_NAME,
    SIDE_EFFECTS,
    agent,
    asks,
    call,
    chat,
    tool_messages,
)

ROOT = Path(__file__).resolve().parents[2]
ADMIN = "langgraph-admin-token-0123456789abcdef"
DB_ASK = {
    "questions": [{"id": "db", "question": "Which database?", "options": ["PostgreSQL", "SQLite"]}]
}
REGION_ASK = {"questions": [{"id": "region", "question": "Which region?", "options": ["eu", "us"]}]}


@dataclass
class Side:
    session_id: str
    asker: Asker
    answerer: Answerer


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveGateway]:
    db = tmp_path_factory.mktemp("langgraph") / "midturn.db"
    server = start_gateway(f"sqlite:///{db}", ADMIN)
    yield server
    server.stop()


async def _sides(kind: str, request: pytest.FixtureRequest) -> AsyncIterator[Callable[..., Any]]:
    async with AsyncExitStack() as stack:
        if kind == "runtime":
            store = await stack.enter_async_context(open_store("memory://"))
            runtimes: dict[bool, Runtime] = {}

            async def in_process(name: str, interactive: bool = True) -> Side:
                if interactive not in runtimes:
                    runtime = Runtime(store, interactive=interactive)
                    runtimes[interactive] = await stack.enter_async_context(runtime)
                return Side(name, runtimes[interactive], runtimes[interactive])

            yield in_process
        else:
            gateway: LiveGateway = request.getfixturevalue("live")
            admin = await stack.enter_async_context(AsyncClient(gateway.url, ADMIN))

            async def remote(name: str, interactive: bool = True) -> Side:
                session = await admin.create_session({"name": name})
                agent_side = AsyncClient(gateway.url, session.agent_token)
                person = AsyncClient(gateway.url, session.answer_token)
                stack.push_async_callback(agent_side.aclose)
                stack.push_async_callback(person.aclose)
                return Side(session.session_id, agent_side, person)

            yield remote


@pytest.fixture
async def side(request: pytest.FixtureRequest) -> AsyncIterator[Callable[..., Any]]:
    async for made in _sides("runtime", request):
        yield made


@pytest.fixture(params=["runtime", "gateway"])
async def either(request: pytest.FixtureRequest) -> AsyncIterator[Callable[..., Any]]:
    async for made in _sides(request.param, request):
        yield made


def unavailable_text(tool_input: dict[str, Any]) -> str:
    ask = parse_ask(tool_input)
    answers = tuple(
        QuestionAnswer(id=q.id, header=q.header, question=q.question, status="unavailable")
        for q in ask.questions
    )
    return render(AskResult(outcome="unavailable", answers=answers)).text


def thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": uuid.uuid4().hex}}


USER = {"messages": [("user", "set up the service")]}


async def test_1_answer_continues_the_same_run(either: Callable[..., Any]) -> None:
    s = await either("one")
    model = chat(asks(call(ASK_NAME, ASK, "c1")), AIMessage("PostgreSQL it is."))
    graph = agent(model, InMemorySaver())
    host = Host(s.asker, s.session_id)
    async with ScriptedResponder(s.answerer, [answer(ANSWER)], s.session_id) as person:
        run = await host.run(graph, USER, thread(), turn_id="t1")
        await person.finished()
    (asked,) = run.settled
    assert asked.status == "answered" and asked.tool_call_id is not None
    assert asked.tool_call_id.endswith(":c1")
    (result,) = tool_messages(run.value)
    expected = render(asked.result).text  # type: ignore[arg-type]
    assert result.tool_call_id == "c1" and result.status == "success"
    assert result.content == expected
    assert expected.startswith("The user answered:") and '"billing-api"' in expected
    # the same run went on: the model's next prompt holds the answer exactly once
    second = model.prompts[-1]
    assert [m.content for m in second if isinstance(m, ToolMessage)] == [expected]
    assert run.value["messages"][-1].content == "PostgreSQL it is." and not run.stopped
    assert await s.answerer.queue(s.session_id) == []


async def test_2_malformed_ask_is_a_fixable_error(side: Callable[..., Any]) -> None:
    s = await side("two")
    bad = {"questions": [{"question": "Which database?", "options": ["PostgreSQL"]}]}
    model = chat(asks(call(ASK_NAME, bad, "c1")), AIMessage("I will fix the call."))
    seen: list[Any] = []
    unwatch = s.asker.watch(seen.append)  # type: ignore[attr-defined]
    run = await Host(s.asker, s.session_id).run(
        agent(model, InMemorySaver()), USER, thread(), turn_id="t2"
    )
    unwatch()
    (result,) = tool_messages(run.value)
    assert result.status == "error" and "questions[0].options" in str(result.content)
    assert "give 2–4" in str(result.content)
    assert run.settled == () and not run.stopped
    assert await s.answerer.queue(s.session_id) == []
    assert [e for e in seen if e.session_id == s.session_id and "requested" in e.type] == []


@pytest.mark.parametrize("mode", ["per_call", "batched"])
async def test_3_permissions_allow_deny_allow_for_turn(side: Callable[..., Any], mode: str) -> None:
    s = await side("three")
    SIDE_EFFECTS.clear()
    model = chat(
        asks(call("deploy", {"target": "staging"}, "d1")),
        asks(call("deploy", {"target": "prod"}, "d2")),
        asks(call("deploy", {"target": "eu"}, "d3")),
        asks(call("deploy", {"target": "us"}, "d4")),
        AIMessage("done"),
    )
    script = [allow(), deny("not on a Friday"), allow_for_turn()]
    async with ScriptedResponder(s.answerer, script, s.session_id) as person:
        run = await Host(s.asker, s.session_id).run(
            agent(model, InMemorySaver(), mode=mode), USER, thread(), turn_id="t3"
        )
    assert SIDE_EFFECTS == ["staging", "eu", "us"]
    results = {m.tool_call_id: m for m in tool_messages(run.value)}
    assert results["d2"].status == "error" and "not on a Friday" in str(results["d2"].content)
    assert results["d4"].content == "deployed to us"
    statuses = [i.status for i in run.settled]
    assert statuses == ["allowed", "denied", "allowed", "allowed"]
    assert [r.step.decision for r in person.responses] == ["allow", "deny", "allow_for_turn"]
    assert person.unscripted == []  # the fourth call was not asked


async def test_5_two_asks_in_one_step_fifo(side: Callable[..., Any]) -> None:
    s = await side("five")
    model = chat(
        asks(call(ASK_NAME, DB_ASK, "c1"), call(ASK_NAME, REGION_ASK, "c2")),
        AIMessage("ok"),
    )

    def pick(interaction: Any) -> str:
        return "SQLite" if interaction.ask.questions[0].id == "db" else "us"

    async with ScriptedResponder(s.answerer, [answer(pick), answer(pick)], s.session_id) as p:
        run = await Host(s.asker, s.session_id).run(
            agent(model, InMemorySaver()), USER, thread(), turn_id="t5"
        )
    order = [r.interaction.tool_call_id.rsplit(":", 1)[1] for r in p.responses]  # type: ignore[union-attr]
    assert order == ["c1", "c2"]
    results = {m.tool_call_id: str(m.content) for m in tool_messages(run.value)}
    assert results["c1"] == "The user answered:\n- Database: SQLite"
    assert results["c2"] == "The user answered:\n- Region: us"


async def test_6_stopped_turn_cancels(side: Callable[..., Any]) -> None:
    s = await side("six")
    model = chat(
        asks(call(ASK_NAME, DB_ASK, "c1"), call(ASK_NAME, REGION_ASK, "c2")),
        AIMessage("never"),
    )
    async with ScriptedResponder(s.answerer, [stop_turn()], s.session_id):
        run = await Host(s.asker, s.session_id).run(
            agent(model, InMemorySaver()), USER, thread(), turn_id="t6"
        )
    assert run.stopped and len(run.interrupts) == 2
    assert [i.status for i in run.settled] == ["cancelled", "cancelled"]
    assert len(model.prompts) == 1  # the model was not called again
    assert await s.answerer.queue(s.session_id) == []


async def test_7_subagent_and_headless_have_no_tool(side: Callable[..., Any]) -> None:
    # a sub-agent: the tool is hidden from its model; a forced call is unavailable at once
    s = await side("seven")
    model = chat(asks(call(ASK_NAME, DB_ASK, "c1")), AIMessage("went ahead"))
    sub = agent(model, InMemorySaver(), interactive=False, approve=())
    out = await sub.ainvoke(USER, thread(), version="v2")
    assert out.interrupts == ()
    assert all(ASK_NAME not in names for names in model.bound) and model.bound
    (result,) = tool_messages(out.value)
    assert result.content == unavailable_text(DB_ASK)
    assert await s.answerer.queue(s.session_id) == []
    # a headless run: the root agent's ask settles unavailable at once, by no person
    headless = await side("seven-headless", interactive=False)
    model = chat(asks(call(ASK_NAME, DB_ASK, "c1")), AIMessage("went ahead"))
    run = await Host(headless.asker, headless.session_id).run(
        agent(model, InMemorySaver()), USER, thread(), turn_id="t7"
    )
    (asked,) = run.settled
    assert asked.status == "unavailable" and asked.settled_by == "system"  # no person
    (result,) = tool_messages(run.value)
    assert result.content == render(asked.result).text  # type: ignore[arg-type]
    # ... and a gated tool there is not run: no one can approve it
    SIDE_EFFECTS.clear()
    model = chat(asks(call("deploy", {"target": "prod"}, "d1")), AIMessage("stopped"))
    run = await Host(headless.asker, headless.session_id).run(
        agent(model, InMemorySaver()), USER, thread(), turn_id="t7b"
    )
    assert [i.status for i in run.settled] == ["unavailable"] and SIDE_EFFECTS == []
    (result,) = tool_messages(run.value)
    assert result.status == "error" and "No one can approve" in str(result.content)


# -- the LangGraph bugs designed around --------------------------------------------------


class _Order:
    """ToolNode wrappers that fix which of c1 and c2 reaches its interrupt first, run by
    run (`orders[n]` for the n-th run of the task; the last one repeats). The calls of one
    ToolNode task share its interrupt counter, so this order, a race in real use, decides
    which call takes which resume value."""

    def __init__(self, *orders: tuple[str, str]) -> None:
        self.orders = orders
        self.calls = 0
        self.lock = threading.Lock()
        self.threads: dict[int, threading.Event] = {}
        self.tasks: dict[int, asyncio.Event] = {}

    def _turn(self) -> tuple[int, str]:
        with self.lock:
            run, self.calls = self.calls // 2, self.calls + 1
        return run, self.orders[min(run, len(self.orders) - 1)][1]

    def wrap(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        run, second = self._turn()
        went = self.threads.setdefault(run, threading.Event())
        if request.tool_call["id"] == second:
            assert went.wait(20), "the first call never ran"
            return handler(request)
        try:
            return handler(request)
        finally:
            went.set()

    async def awrap(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        run, second = self._turn()
        went = self.tasks.setdefault(run, asyncio.Event())
        if request.tool_call["id"] == second:
            await asyncio.wait_for(went.wait(), 20)
            return await handler(request)
        try:
            return await handler(request)
        finally:
            went.set()


def _plain_graph(
    tools: list[Any], steps: list[AIMessage], *, send: bool, order: _Order | None = None
) -> Any:
    replies = iter(steps)

    def model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [next(replies)]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    if send:  # one task per call: an order forced only when asked for
        wraps = {"wrap_tool_call": order.wrap, "awrap_tool_call": order.awrap} if order else {}
        graph.add_node("tools", ToolNode(tools, **wraps))
    else:
        order = order or _Order(("c2", "c1"))
        graph.add_node(
            "tools", ToolNode(tools, wrap_tool_call=order.wrap, awrap_tool_call=order.awrap)
        )
    graph.add_edge(START, "model")
    if send:
        graph.add_conditional_edges("model", fan_out, ["tools"])
    else:
        graph.add_edge("model", "tools")
    graph.add_edge("tools", END)
    return graph.compile(checkpointer=InMemorySaver())


def test_langgraphs_own_parallel_interrupts_misroute_the_answers() -> None:
    """The anchor for #6533: two interrupting calls in one ToolNode task, resumed by
    interrupt id as LangGraph documents it; c2 gets the answer meant for c1."""
    from langchain_core.tools import tool

    @tool
    def plain_ask(question: str) -> str:
        """Ask."""
        return f"answer: {interrupt(question)}"

    step = asks(
        call("plain_ask", {"question": "db?"}, "c1"),
        call("plain_ask", {"question": "region?"}, "c2"),
    )
    graph = _plain_graph([plain_ask], [step], send=False)
    config = thread()
    out = graph.invoke({"messages": []}, config, version="v2")
    first = out.interrupts[0]
    assert first.value == "db?"  # c1's question is the one shown ...
    out = graph.invoke(Command(resume={first.id: "PostgreSQL"}), config, version="v2")
    (again,) = out.interrupts
    assert again.value == "db?"  # ... c1 asks again: c2 took its answer ...
    out = graph.invoke(Command(resume={again.id: "SQLite"}), config, version="v2")
    results = {m.tool_call_id: m.content for m in tool_messages(out.value)}
    assert results == {"c1": "answer: SQLite", "c2": "answer: PostgreSQL"}  # misrouted


@pytest.mark.parametrize("first", ["c1", "c2"])
async def test_parallel_tasks_pausing_in_any_order_are_asked_in_call_order(
    side: Callable[..., Any], first: str
) -> None:
    """Two question calls in their own tasks (`fan_out`) reach their interrupts in either
    order, as they race in real use; the session is asked them in the model's order."""
    s = await side(f"order-{first}")
    step = asks(call(ASK_NAME, DB_ASK, "c1"), call(ASK_NAME, REGION_ASK, "c2"))
    other = "c2" if first == "c1" else "c1"
    graph = _plain_graph([question_tool()], [step], send=True, order=_Order((first, other)))

    def pick(interaction: Any) -> str:
        return "SQLite" if interaction.ask.questions[0].id == "db" else "us"

    async with ScriptedResponder(s.answerer, [answer(pick), answer(pick)], s.session_id) as p:
        run = await Host(s.asker, s.session_id).run(
            graph, {"messages": []}, thread(), turn_id=f"order-{first}"
        )
    asked = [r.interaction.tool_call_id.rsplit(":", 1)[1] for r in p.responses]  # type: ignore[union-attr]
    assert asked == ["c1", "c2"]
    assert [i.tool_call_id.rsplit(":", 1)[1] for i in run.settled] == ["c1", "c2"]
    results = {m.tool_call_id: str(m.content) for m in tool_messages(run.value)}
    assert results == {
        "c1": "The user answered:\n- Database: SQLite",
        "c2": "The user answered:\n- Region: us",
    }


async def test_parallel_calls_in_one_toolnode_never_get_anothers_answer(
    side: Callable[..., Any],
) -> None:
    s = await side("6533")
    step = asks(call(ASK_NAME, DB_ASK, "c1"), call(ASK_NAME, REGION_ASK, "c2"))
    # c2 interrupts first and is shown; on the re-run c1 reaches the counter first
    graph = _plain_graph(
        [question_tool()], [step], send=False, order=_Order(("c2", "c1"), ("c1", "c2"))
    )
    host = Host(s.asker, s.session_id)
    async with ScriptedResponder(s.answerer, [answer("us")], s.session_id) as person:
        with pytest.raises(ValidationError, match="c2"):  # c2's answer, refused by c1
            await asyncio.wait_for(host.run(graph, {"messages": []}, thread(), turn_id="t6533"), 60)
        await asyncio.wait_for(person.finished(), 60)  # its response recorded, as it may come last
    (shown,) = person.responses
    assert shown.interaction.tool_call_id.endswith(":c2")  # type: ignore[union-attr]


async def test_fan_out_routes_each_answer_to_its_own_call(side: Callable[..., Any]) -> None:
    s = await side("fan-out")
    step = asks(call(ASK_NAME, DB_ASK, "c1"), call(ASK_NAME, REGION_ASK, "c2"))
    graph = _plain_graph([question_tool()], [step], send=True)
    script = [answer("SQLite"), answer("us")]
    async with ScriptedResponder(s.answerer, script, s.session_id) as person:
        run = await Host(s.asker, s.session_id).run(
            graph, {"messages": []}, thread(), turn_id="tfan"
        )
    assert len({r.interaction.tool_call_id for r in person.responses}) == 2
    results = {m.tool_call_id: str(m.content) for m in tool_messages(run.value)}
    assert results["c1"] == "The user answered:\n- Database: SQLite"
    assert results["c2"] == "The user answered:\n- Region: us"


def test_a_shared_interrupt_id_is_refused_before_anything_is_asked() -> None:
    from langgraph.types import Interrupt

    value = {
        "midturn": "midturn.ask",
        "tool_call_id": "c1",
        "dialect": "midturn",
        "tool_input": DB_ASK,
    }
    twins = [Interrupt(value=value, id="same"), Interrupt(value=value, id="same")]
    host = Host(None, "s")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="6533"):
        asyncio.run(host.settle(twins, turn_id="t"))


def _gated_ask_agent(tools: list[Any], name: str, args: dict[str, Any]) -> tuple[Any, Any]:
    """A `create_agent` agent whose one call (`name`) is gated by a per-call approval:
    the approval and the tool's own interrupt then run in one task."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    model = chat(asks(call(name, args, "c1")), AIMessage("ok"))
    hitl = HumanInTheLoopMiddleware(
        interrupt_on={name: {"allowed_decisions": ["approve"]}}, interrupt_mode="per_call"
    )
    graph = create_agent(model, tools=tools, middleware=[hitl], checkpointer=InMemorySaver())
    return graph, model


def _approve_bare(graph: Any, config: dict[str, Any]) -> Any:
    """Start, then approve with a bare resume value, as LangGraph's docs show it."""
    (approval,) = graph.invoke(USER, config, version="v2").interrupts
    assert approval.value["type"] == "tool_approval"
    return graph.invoke(Command(resume={"type": "approve"}), config, version="v2")


def test_langgraphs_own_stale_resume_answers_a_new_interrupt() -> None:
    """The anchor for #8837: after a bare resume, `invoke(None)` answers the tool's own
    pending interrupt with the approval it already consumed."""
    from langchain_core.tools import tool

    @tool
    def plain_ask(question: str) -> str:
        """Ask."""
        return f"answer: {interrupt(question)}"

    graph, _ = _gated_ask_agent([plain_ask], "plain_ask", {"question": "db?"})
    config = thread()
    (pending,) = _approve_bare(graph, config).interrupts
    assert pending.value == "db?"
    out = graph.invoke(None, config, version="v2")
    assert [m.content for m in tool_messages(out.value)] == ["answer: {'type': 'approve'}"]


async def test_a_stale_resume_never_answers_the_question_tool(side: Callable[..., Any]) -> None:
    s = await side("8837")
    graph, _ = _gated_ask_agent([question_tool()], ASK_NAME, DB_ASK)
    config = thread()
    (pending,) = _approve_bare(graph, config).interrupts
    assert pending.value["midturn"] == "midturn.ask"
    with pytest.raises(ValidationError):  # the consumed approval is refused, not read
        graph.invoke(None, config, version="v2")
    assert tool_messages(graph.get_state(config).values) == []
    (still,) = graph.get_state(config).interrupts
    assert still.id == pending.id
    async with ScriptedResponder(s.answerer, [answer("SQLite")], s.session_id) as person:
        run = await Host(s.asker, s.session_id).run(graph, None, config, turn_id="t8837")
    assert len(person.responses) == 1
    (result,) = tool_messages(run.value)
    assert result.content == "The user answered:\n- Database: SQLite"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def checkpoints(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """Where the agent keeps its LangGraph checkpoints: a SQLite file, or a fresh schema
    of the test PostgreSQL database."""
    if request.param == "sqlite":
        yield str(tmp_path / "checkpoints.db")
        return
    import asyncpg  # type: ignore[import-untyped]

    async with fresh_schema("lgckpt", "the PostgresSaver restart") as url:
        base, _, schema = url.partition("?schema=")
        connection = await asyncpg.connect(base)
        try:
            await connection.execute(f'CREATE SCHEMA "{schema}"')
        finally:
            await connection.close()
        yield f"{base}?options=-csearch_path%3D{schema}"


async def test_4_killed_between_ask_and_answer_resumes(tmp_path: Path, checkpoints: str) -> None:
    gateway = start_gateway(f"sqlite:///{tmp_path / 'midturn.db'}", ADMIN)
    try:
        async with AsyncClient(gateway.url, ADMIN) as admin:
            session = await admin.create_session({"name": "restart"})
            async with AsyncClient(gateway.url, session.answer_token) as person:
                argv = [
                    gateway.url,
                    session.agent_token,
                    session.session_id,
                    checkpoints,
                    str(tmp_path / "effects.txt"),
                ]
                first = _worker("first", argv, tmp_path)
                try:
                    requested = await _first_ask(person, session.session_id, first, tmp_path)
                finally:
                    first.send_signal(signal.SIGKILL)
                    first.wait(SAFETY_S)
                    assert first.stdout is not None
                    first.stdout.close()
                assert first.returncode == -signal.SIGKILL
                # the answer arrives through the gateway while no agent process runs
                await person.answer(requested, ANSWER)
                second = _worker("resume", argv, tmp_path)
                # until it ends: importing LangGraph alone can take most of a minute under
                # load, so only a hung worker is cut short (a failed one ends too)
                stdout, _ = await asyncio.to_thread(second.communicate, timeout=HUNG_S)
                assert second.returncode == 0, (tmp_path / "worker.log").read_text()
                out = json.loads(stdout)
                assert await person.queue(session.session_id) == []
    finally:
        gateway.stop()
    async with open_store(gateway.db_url) as store:
        asked = await store.list_interactions(session_id=session.session_id)
        events = await store.read_events(session_id=session.session_id)
    assert (tmp_path / "effects.txt").read_text() == "before\n"  # ran once
    assert [(i.kind, i.status) for i in asked] == [("ask", "answered")]  # asked once
    assert [e.type for e in events].count("user_question_requested") == 1
    by_id = {r["id"]: r["content"] for r in out["results"]}
    assert by_id["r1"] == "recorded"
    assert by_id["c1"] == 'The user answered:\n- Database: PostgreSQL\n- Service: "billing-api"'
    assert out["last"] == "Using the answer."


def _worker(phase: str, argv: list[str], tmp_path: Path) -> subprocess.Popen[str]:
    with (tmp_path / "worker.log").open("a") as log:  # the child holds its own copy
        return subprocess.Popen(
            [sys.executable, "-m", "tests.adapters._langgraph_worker", phase, *argv],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )


async def _first_ask(
    person: AsyncClient, session_id: str, worker: subprocess.Popen[str], tmp_path: Path
) -> str:
    """The id of the first question the worker asked, once it did; fails (with its log)
    if the worker ends first. No fixed time: a loaded machine can take longer than any to
    start it."""

    async def asked() -> str:
        async for event in person.events(session_id):
            if event.type == "user_question_requested" and event.interaction_id:
                return event.interaction_id
        raise AssertionError("the event stream ended")  # pragma: no cover

    asking = asyncio.ensure_future(asked())
    ended = asyncio.ensure_future(asyncio.to_thread(worker.wait))
    done, _ = await asyncio.wait(
        {asking, ended}, timeout=HUNG_S, return_when=asyncio.FIRST_COMPLETED
    )
    if not done:
        asking.cancel()
        raise AssertionError(f"the worker neither asked nor ended in {HUNG_S:.0f} s")
    if asking in done:
        return asking.result()
    asking.cancel()
    log = (tmp_path / "worker.log").read_text()
    raise AssertionError(f"the worker ended ({ended.result()}) before it asked:\n{log}")


def test_without_langgraph_the_import_says_what_to_install() -> None:
    blocker = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('langgraph', 'langchain_core', 'langchain'):\n"
        "            raise ImportError(f'blocked {name}')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import midturn, midturn.runtime\n"
        "try:\n"
        "    import midturn.adapters.langgraph\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", blocker], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert 'pip install "midturn[langgraph]"' in done.stdout


def test_the_docs_example_runs() -> None:
    page = ROOT / "docs" / "adapters" / "langgraph.md"
    found = re.search(r"<!-- runnable -->\n```python\n(.*?)```", page.read_text(), re.S)
    assert found is not None, "docs/adapters/langgraph.md lost its runnable example"
    done = subprocess.run(
        [sys.executable, "-c", found.group(1)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Deployed with SQLite."


@pytest.mark.parametrize("mode", ["per_call", "batched"])
async def test_the_respond_decision_answers_a_gated_question_tool(
    side: Callable[..., Any], mode: str
) -> None:
    """The question tool gated by HumanInTheLoopMiddleware with `respond`: an ask in the
    same queue, answered with `respond` (the person acts as the tool); a malformed one is
    answered with its problems, shown to no one."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    s = await side(f"respond-{mode}")
    bad = {"questions": [{"question": "Which database?", "options": ["PostgreSQL"]}]}
    model = chat(
        asks(call(ASK_NAME, bad, "c0")),
        asks(call(ASK_NAME, DB_ASK, "c1")),
        AIMessage("ok"),
    )
    hitl = HumanInTheLoopMiddleware(
        interrupt_on={ASK_NAME: {"allowed_decisions": ["respond"]}}, interrupt_mode=mode
    )
    graph = create_agent(
        model, tools=[question_tool()], middleware=[hitl], checkpointer=InMemorySaver()
    )
    async with ScriptedResponder(s.answerer, [answer("SQLite")], s.session_id) as person:
        run = await Host(s.asker, s.session_id).run(graph, USER, thread(), turn_id="tr")
    assert len(person.responses) == 1 and person.unscripted == []
    results = {m.tool_call_id: m for m in tool_messages(run.value)}
    assert "questions[0].options" in str(results["c0"].content)
    assert results["c1"].content == "The user answered:\n- Database: SQLite"
    assert [i.status for i in run.settled] == ["answered"]


async def test_each_interaction_says_who_asks(either: Callable[..., Any]) -> None:
    """The question and the permission carry who is asking: the agent's name, what the
    model last said in this turn, and for the permission the tool call with its arguments."""
    s = await either("who")
    model = chat(
        AIMessage("Earlier turn, not this one."),
        AIMessage("First the database.", tool_calls=[call(ASK_NAME, DB_ASK, "c1")]),
        AIMessage("Deploying to the EU now.", tool_calls=[call("deploy", {"target": "eu"}, "d1")]),
        AIMessage("Deployed."),
    )
    graph = agent(model, InMemorySaver(), name="release-bot")
    config = thread()
    await graph.ainvoke({"messages": [("user", "hello")]}, config, version="v2")
    async with ScriptedResponder(s.answerer, [answer("SQLite"), allow()], s.session_id):
        run = await Host(s.asker, s.session_id).run(graph, USER, config, turn_id="t-who")
    asked, permitted = run.settled  # as the runtime or the gateway stored them
    assert asked.context is not None and asked.context.agent == "release-bot"
    assert asked.context.doing == "First the database." and asked.context.tool is None
    assert permitted.context is not None and permitted.context.agent == "release-bot"
    assert permitted.context.doing == "Deploying to the EU now."
    assert permitted.context.tool is not None and permitted.context.tool.name == "deploy"
    assert permitted.context.tool.input == '{"target":"eu"}'
