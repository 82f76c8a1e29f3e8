"""The Strands adapter (docs/adapters/strands.md) on the real `strands-agents`, offline:
a scripted `strands.models.Model` streams real Strands events, the agent loop, the tools
and the hooks are Strands' own. The seven scenarios of issue 15, in-process, and the
first one also through a live gateway with the same adapter code."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import strands.models.bedrock
from strands import Agent, tool
from strands.hooks import BeforeToolCallEvent
from tests._servers import SAFETY_S, LiveGateway, start_gateway

import midturn
from midturn import Answerer, Asker, AsyncClient, Event, Runtime, open_store
from midturn.adapters.strands import (
    Reply,
    ScriptedModel,
    StrandsHost,
    ToolUse,
    pending_interrupts,
)
from midturn.testing import ScriptedResponder, allow, allow_for_turn, answer, deny, stop_turn

ADMIN = "strands-admin-token-0123456789abcdef"
ROOT = Path(__file__).resolve().parents[2]
DB_ASK = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use?",
            "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}],
        }
    ]
}
NAME_ASK = {"questions": [{"id": "name", "question": "What should it be called?"}]}


@pytest.fixture(autouse=True)
def no_bedrock(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that forgot its scripted model would build Strands' default (Bedrock)
    model: make that fail loudly instead of reaching AWS."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a test built a BedrockModel; pass a ScriptedModel")

    monkeypatch.setattr(strands.models.bedrock.BedrockModel, "__init__", refuse)


@dataclass
class Side:
    session_id: str
    asker: Asker
    answerer: Answerer
    events: Callable[[], Any]  # every event of the session so far, read from the store


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveGateway]:
    db = tmp_path_factory.mktemp("strands") / "midturn.db"
    server = start_gateway(f"sqlite:///{db}", ADMIN)
    yield server
    server.stop()


async def _log(runtime: Runtime, session_id: str) -> list[Event]:
    return [event async for event in runtime.events(session_id, follow=False)]


@pytest.fixture
async def in_process() -> AsyncIterator[Side]:
    async with open_store("memory://") as store, Runtime(store) as runtime:
        yield Side("s", runtime, runtime, lambda: _log(runtime, "s"))


async def _remote(stack: AsyncExitStack, gateway: LiveGateway) -> Side:
    admin = await stack.enter_async_context(AsyncClient(gateway.url, ADMIN))
    session = await admin.create_session({"name": "strands"})
    agent = await stack.enter_async_context(AsyncClient(gateway.url, session.agent_token))
    person = await stack.enter_async_context(AsyncClient(gateway.url, session.answer_token))
    store = await stack.enter_async_context(open_store(gateway.db_url))
    reader = await stack.enter_async_context(Runtime(store))
    return Side(session.session_id, agent, person, lambda: _log(reader, session.session_id))


@pytest.fixture(params=["runtime", "gateway"])
async def side(request: pytest.FixtureRequest) -> AsyncIterator[Side]:
    if request.param == "runtime":
        async with open_store("memory://") as store, Runtime(store) as runtime:
            yield Side("s", runtime, runtime, lambda: _log(runtime, "s"))
        return
    async with AsyncExitStack() as stack:
        yield await _remote(stack, request.getfixturevalue("live"))


def results(messages: Any) -> dict[str, dict[str, Any]]:
    """Every tool result in a Strands history, by tool-use id (one each, or it fails)."""
    found: dict[str, dict[str, Any]] = {}
    for message in messages:
        for block in message["content"]:
            if "toolResult" in block:
                result = block["toolResult"]
                assert result["toolUseId"] not in found, f"two results for {result['toolUseId']}"
                found[result["toolUseId"]] = result
    return found


def text_of(result: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in result["content"])


def last_results(messages: Any) -> str:
    return " | ".join(text_of(r) for r in results(messages[-1:]).values())


def agent_for(host: StrandsHost, model: ScriptedModel, *tools: Any, **options: Any) -> Agent:
    return Agent(
        model=model,
        tools=[*host.tools, *tools],
        system_prompt=host.system_prompt,
        callback_handler=None,
        **options,
    )


def without_filled_descriptions(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {
            key: without_filled_descriptions(value)
            for key, value in schema.items()
            if not (key == "description" and str(value).startswith("Property "))
        }
    if isinstance(schema, list):
        return [without_filled_descriptions(value) for value in schema]
    return schema


def ia(event: Event) -> midturn.Interaction:
    """The interaction an event carries."""
    return midturn.Interaction.model_validate(event.data["interaction"])


def kinds(events: list[Event]) -> list[str]:
    return [event.type for event in events]


# -- 1 ---------------------------------------------------------------------------------


async def test_1_answer_continues_the_same_run(side: Side) -> None:
    host = StrandsHost(side.asker, side.session_id)
    model = ScriptedModel(
        [
            Reply(tool_uses=(ToolUse("tooluse_db", "ask_user_question", DB_ASK),)),
            lambda messages: Reply(text="Going with: " + last_results(messages)),
        ]
    )
    agent = agent_for(host, model)
    async with ScriptedResponder(side.answerer, [answer("SQLite")], side.session_id) as person:
        result = await host.run(agent, "set up the service", turn_id="turn-1")
        await person.finished()
    assert result.stop_reason == "end_turn"
    assert str(result).strip() == "Going with: The user answered:\n- Database: SQLite"
    found = results(agent.messages)
    assert list(found) == ["tooluse_db"]
    assert found["tooluse_db"]["status"] == "success"
    history = json.dumps(agent.messages)
    assert history.count("- Database: SQLite") == 2  # the tool result, and the reply quoting it
    assert len(model.calls) == 2  # one model call before the ask, one after: the same run
    (ask,) = [ia(e) for e in await side.events() if e.type == "user_question_requested"]
    assert ask is not None and ask.tool_call_id == "tooluse_db" and ask.turn_id == "turn-1"
    # the spec the model saw is midturn's constant, byte for byte, on both calls
    spec = midturn.tool_spec("midturn", "mcp")
    expected = {"name": spec["name"], "description": spec["description"]}
    specs = [[s for s in call["specs"] if s["name"] == "ask_user_question"] for call in model.calls]
    assert specs[0] == specs[1] and len(specs[0]) == 1
    seen = specs[0][0]
    assert {k: seen[k] for k in expected} == expected
    # Strands fills in a "Property <name>" description where a property has none
    assert without_filled_descriptions(seen["inputSchema"]["json"]) == spec["inputSchema"]
    assert all(call["system_prompt"] == midturn.SYSTEM_PROMPT for call in model.calls)
    assert pending_interrupts(agent) == []


# -- 2 ---------------------------------------------------------------------------------


async def test_2_malformed_ask_is_a_fixable_error(in_process: Side) -> None:
    side = in_process
    host = StrandsHost(side.asker, side.session_id)
    bad = {"questions": [{"question": "Which database?", "options": [{"label": "PostgreSQL"}]}]}
    seen_after_error: list[str] = []

    def fix(messages: Any) -> Reply:
        seen_after_error.append(last_results(messages))
        return Reply(tool_uses=(ToolUse("tooluse_good", "ask_user_question", DB_ASK),))

    model = ScriptedModel(
        [
            Reply(tool_uses=(ToolUse("tooluse_bad", "ask_user_question", bad),)),
            fix,
            lambda messages: Reply(text="ok: " + last_results(messages)),
        ]
    )
    agent = agent_for(host, model)
    async with ScriptedResponder(side.answerer, [answer("PostgreSQL")], "s") as person:
        result = await host.run(agent, "go", turn_id="turn-2")
        await person.finished()
    found = results(agent.messages)
    assert found["tooluse_bad"]["status"] == "error"
    assert "1 option given" in text_of(found["tooluse_bad"])
    assert "1 option given" in seen_after_error[0]  # the model read the problem and fixed it
    events = await side.events()
    asks = [ia(e) for e in events if e.type == "user_question_requested"]
    assert [a.tool_call_id for a in asks if a] == ["tooluse_good"]  # the bad one: never parked
    assert "Database: PostgreSQL" in str(result)


# -- 3 ---------------------------------------------------------------------------------


async def test_3_permissions_allow_deny_allow_for_turn(in_process: Side) -> None:
    side = in_process
    host = StrandsHost(side.asker, side.session_id)
    deleted: list[str] = []

    @tool
    def delete_file(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return f"deleted {path}"

    def delete(n: int, path: str) -> Reply:
        return Reply(tool_uses=(ToolUse(f"tooluse_del_{n}", "delete_file", {"path": path}),))

    model = ScriptedModel(
        [delete(1, "a"), delete(2, "b"), delete(3, "c"), delete(4, "d"), Reply(text="done")]
    )
    agent = agent_for(host, model, delete_file, hooks=[host.permissions({"delete_file"})])
    script = [allow(), deny("keep b, it is the backup"), allow_for_turn()]
    async with ScriptedResponder(side.answerer, script, "s") as person:
        result = await host.run(agent, "clean up", turn_id="turn-3")
        await person.finished()
    assert str(result).strip() == "done"
    assert deleted == ["a", "c", "d"]
    found = results(agent.messages)
    assert found["tooluse_del_2"]["status"] == "error"
    assert text_of(found["tooluse_del_2"]) == "keep b, it is the backup"
    assert [text_of(found[f"tooluse_del_{n}"]) for n in (1, 3, 4)] == [
        "deleted a",
        "deleted c",
        "deleted d",
    ]
    assert len(person.responses) == 3 and person.unscripted == []
    decided = [ia(e) for e in await side.events() if e.type == "permission_decided"]
    assert [(i.tool_call_id, i.status) for i in decided if i] == [
        ("tooluse_del_1", "allowed"),
        ("tooluse_del_2", "denied"),
        ("tooluse_del_3", "allowed"),
        ("tooluse_del_4", "allowed"),
    ]
    last = decided[-1]
    assert last is not None and last.decision is not None and last.decision.auto  # not asked
    assert "ask_user_question" not in [
        ia(e).permission.tool
        for e in await side.events()
        if e.type == "permission_requested" and ia(e).permission
    ]


# -- 4 ---------------------------------------------------------------------------------


def _worker(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "AWS_EC2_METADATA_DISABLED": "true"}
    return subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("_strands_worker.py")), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )


async def test_4_killed_between_ask_and_answer_resumes(live: LiveGateway, tmp_path: Path) -> None:
    async with AsyncExitStack() as stack:
        admin = await stack.enter_async_context(AsyncClient(live.url, ADMIN))
        session = await admin.create_session({"name": "killed"})
        person = await stack.enter_async_context(AsyncClient(live.url, session.answer_token))
        notes = tmp_path / "notes.txt"
        args = [
            live.url,
            session.agent_token,
            session.session_id,
            str(tmp_path / "sessions"),
            str(notes),
        ]
        first = _worker(*args, "start")
        try:
            async with asyncio.timeout(SAFETY_S):
                async for event in person.events(session.session_id):
                    if event.type == "user_question_requested":
                        asked = ia(event)
                        break
        finally:
            first.send_signal(signal.SIGKILL)
            first.communicate(timeout=SAFETY_S)
        assert first.returncode == -signal.SIGKILL
        assert asked is not None and asked.tool_call_id == "tooluse_ask"
        assert notes.read_text() == "started\n"
        await person.answer(asked.id, "SQLite")  # the answer arrives while no agent runs

        second = _worker(*args, "resume")
        out, err = second.communicate(timeout=SAFETY_S * 3)
        assert second.returncode == 0, err
        done = json.loads(out.strip().splitlines()[-1])
        assert done["stop_reason"] == "end_turn"
        assert done["text"].strip() == "final: noted | The user answered:\n- Database: SQLite"
        assert done["calls"] == 1  # the resumed process called the model once, after the answer
        assert notes.read_text() == "started\n"  # the side effect did not run twice
        store = await stack.enter_async_context(open_store(live.db_url))
        reader = await stack.enter_async_context(Runtime(store))
        log = await _log(reader, session.session_id)
        assert kinds(log).count("user_question_requested") == 1  # nothing asked twice


# -- 5 ---------------------------------------------------------------------------------


async def test_5_two_asks_in_one_step_fifo(in_process: Side) -> None:
    side = in_process
    host = StrandsHost(side.asker, side.session_id)
    model = ScriptedModel(
        [
            Reply(
                tool_uses=(
                    ToolUse("tooluse_first", "ask_user_question", DB_ASK),
                    ToolUse("tooluse_second", "ask_user_question", NAME_ASK),
                )
            ),
            lambda messages: Reply(text="both: " + last_results(messages)),
        ]
    )
    agent = agent_for(host, model)
    heads: list[str | None] = []

    def head_then(payload: Any) -> Callable[[Any], Any]:
        def respond(interaction: Any) -> Any:
            heads.append(interaction.tool_call_id)
            return payload

        return respond

    script = [
        answer(head_then({"answers": {"db": "SQLite"}})),
        answer(head_then({"answers": {"name": "billing-api"}})),
    ]
    async with ScriptedResponder(side.answerer, script, "s") as person:
        await host.run(agent, "go", turn_id="turn-5")
        await person.finished()
    assert heads == ["tooluse_first", "tooluse_second"]
    assert all(r.error is None for r in person.responses)
    found = results(agent.messages)
    assert text_of(found["tooluse_first"]) == "The user answered:\n- Database: SQLite"
    assert text_of(found["tooluse_second"]).endswith('"billing-api"')
    requested = [ia(e) for e in await side.events() if e.type == "user_question_requested"]
    assert [i.tool_call_id for i in requested if i] == ["tooluse_first", "tooluse_second"]


async def test_5_a_first_call_pausing_last_is_still_asked_first(in_process: Side) -> None:
    """Strands runs a step's tool calls concurrently, so they reach their interrupts in
    any order: a `BeforeToolCallEvent` hook holds the first call back until the second
    one has paused, and the person is still asked in the model's order."""
    side = in_process
    host = StrandsHost(side.asker, side.session_id)
    model = ScriptedModel(
        [
            Reply(
                tool_uses=(
                    ToolUse("tooluse_first", "ask_user_question", DB_ASK),
                    ToolUse("tooluse_second", "ask_user_question", NAME_ASK),
                )
            ),
            lambda messages: Reply(text="both: " + last_results(messages)),
        ]
    )
    second_paused = asyncio.Event()

    def on_event(**event: Any) -> None:  # Strands' callback handler sees each interrupt
        paused = event.get("tool_interrupt_event")
        if paused and paused["tool_use"]["toolUseId"] == "tooluse_second":
            second_paused.set()

    agent = Agent(
        model=model, tools=host.tools, system_prompt=host.system_prompt, callback_handler=on_event
    )

    async def hold_the_first(event: BeforeToolCallEvent) -> None:
        if event.tool_use["toolUseId"] == "tooluse_first":
            await asyncio.wait_for(second_paused.wait(), SAFETY_S)

    agent.hooks.add_callback(BeforeToolCallEvent, hold_the_first)
    first_paused: list[str] = []

    def respond(interaction: Any) -> Any:
        first_paused.append(interaction.tool_call_id)
        if interaction.ask.questions[0].id == "db":
            return {"answers": {"db": "SQLite"}}
        return {"answers": {"name": "billing-api"}}

    async with ScriptedResponder(side.answerer, [answer(respond), answer(respond)], "s") as p:
        await asyncio.wait_for(host.run(agent, "go", turn_id="turn-5a"), SAFETY_S)
        await p.finished()
    assert first_paused == ["tooluse_first", "tooluse_second"]
    found = results(agent.messages)
    assert text_of(found["tooluse_first"]) == "The user answered:\n- Database: SQLite"
    assert text_of(found["tooluse_second"]).endswith('"billing-api"')


# -- 6 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("with_permission", [False, True], ids=["ask", "ask+permission"])
async def test_6_stopped_turn_cancels(in_process: Side, with_permission: bool) -> None:
    side = in_process
    host = StrandsHost(side.asker, side.session_id)
    ran: list[str] = []

    @tool
    def deploy(target: str) -> str:
        """Deploy."""
        ran.append(target)
        return "deployed"

    uses = [ToolUse("tooluse_q", "ask_user_question", DB_ASK)]
    if with_permission:
        uses.append(ToolUse("tooluse_deploy", "deploy", {"target": "prod"}))
    model = ScriptedModel([Reply(tool_uses=tuple(uses)), Reply(text="next turn")])
    hooks = [host.permissions({"deploy"})]
    agent = agent_for(host, model, deploy, hooks=hooks)
    async with ScriptedResponder(side.answerer, [stop_turn()], "s") as person:
        result = await host.run(agent, "go", turn_id="turn-6")
        await person.finished()
    assert result.stop_reason == "cancelled"
    assert len(model.calls) == 1  # the model never read the cancelled results
    assert ran == []
    found = results(agent.messages)
    assert set(found) == {use.id for use in uses}  # every call has its result
    assert all(r["status"] == "error" for r in found.values())
    settled = [ia(e) for e in await side.events() if e.type.endswith(("_cancelled", "_decided"))]
    assert sorted((i.tool_call_id, i.status) for i in settled) == sorted(
        (use.id, "cancelled") for use in uses
    )
    assert pending_interrupts(agent) == []
    again = await host.run(agent, "carry on", turn_id="turn-6b")  # the agent is reusable
    assert str(again).strip() == "next turn"


async def test_6_a_cancelled_host_stops_its_turn(in_process: Side) -> None:
    side = in_process
    host = StrandsHost(side.asker, side.session_id)
    model = ScriptedModel([Reply(tool_uses=(ToolUse("tooluse_c", "ask_user_question", DB_ASK),))])
    agent = agent_for(host, model)
    run = asyncio.create_task(host.run(agent, "go", turn_id="turn-6c"))
    async with asyncio.timeout(SAFETY_S):
        async for event in side.answerer.events("s"):
            if event.type == "user_question_requested":
                break
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert await side.answerer.queue("s") == []
    assert "user_question_cancelled" in kinds(await side.events())


# -- 7 ---------------------------------------------------------------------------------


async def test_7_subagent_and_headless_have_no_tool(in_process: Side) -> None:
    side = in_process
    host = StrandsHost(side.asker, side.session_id)
    forced = ScriptedModel(
        [
            Reply(tool_uses=(ToolUse("tooluse_forced", "ask_user_question", DB_ASK),)),
            lambda messages: Reply(text="child: " + last_results(messages)),
        ]
    )
    clean = ScriptedModel([Reply(text="child: nothing to ask")])
    # a sub-agent built as the docs say (no host tools), and one given the tool anyway
    child = Agent(model=clean, callback_handler=None, name="researcher")
    stray = Agent(model=forced, tools=[host.question_tool], callback_handler=None, name="stray")
    root_model = ScriptedModel(
        [
            Reply(
                tool_uses=(
                    ToolUse("tooluse_child", "researcher", {"input": "look"}),
                    ToolUse("tooluse_stray", "stray", {"input": "look"}),
                )
            ),
            lambda messages: Reply(text="root: " + last_results(messages)),
        ]
    )
    root = agent_for(
        host, root_model, child.as_tool(name="researcher"), stray.as_tool(name="stray")
    )
    result = await host.run(root, "research", turn_id="turn-7")
    assert "ask_user_question" in root_model.calls[0]["tools"]
    assert "ask_user_question" not in clean.calls[0]["tools"]
    unavailable = text_of(results(stray.messages)["tooluse_forced"])
    assert (
        unavailable
        == midturn.render(
            midturn.AskResult(
                outcome="unavailable",
                answers=(
                    midturn.QuestionAnswer(
                        id="db",
                        header="Database",
                        question=DB_ASK["questions"][0]["question"],
                        status="unavailable",
                    ),
                ),
            ),
            "midturn",
        ).text
    )
    assert "root:" in str(result)

    headless = StrandsHost(side.asker, side.session_id, interactive=False)
    assert headless.tools == [] and headless.system_prompt == ""
    seen = ScriptedModel([Reply(text="no tool here")])
    await headless.run(agent_for(headless, seen), "go", turn_id="turn-7b")
    assert "ask_user_question" not in seen.calls[0]["tools"]
    # the tool forced into a headless run: unavailable at once
    forced_headless = ScriptedModel(
        [
            Reply(tool_uses=(ToolUse("tooluse_headless", "ask_user_question", DB_ASK),)),
            lambda messages: Reply(text=last_results(messages)),
        ]
    )
    agent = Agent(model=forced_headless, tools=[headless.question_tool], callback_handler=None)
    done = await headless.run(agent, "go", turn_id="turn-7c")
    assert str(done).strip() == unavailable
    # a plain Strands run (no host at all) gets the same, and nothing pauses
    plain = ScriptedModel(
        [
            Reply(tool_uses=(ToolUse("tooluse_plain", "ask_user_question", DB_ASK),)),
            lambda messages: Reply(text=last_results(messages)),
        ]
    )
    bare = await Agent(model=plain, tools=[host.question_tool], callback_handler=None).invoke_async(
        "go"
    )
    assert bare.stop_reason == "end_turn" and str(bare).strip() == unavailable
    # nothing was parked, shown or recorded as a person's decision anywhere
    assert [e for e in await side.events() if e.interaction_id is not None] == []


# -- the extra, the docs -----------------------------------------------------------------


def test_without_strands_the_import_says_how_to_install_it() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.modules['strands'] = None; import midturn.adapters.strands",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode != 0
    assert 'pip install "midturn[strands]"' in done.stderr


def test_the_core_does_not_import_the_adapter() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, midturn, midturn.runtime, midturn.gateway, midturn.cli, midturn.client; "
            "print('strands' in sys.modules, 'midturn.adapters.strands' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]


def test_the_docs_example_runs() -> None:
    page = (ROOT / "docs" / "adapters" / "strands.md").read_text()
    blocks = re.findall(r"<!-- runnable -->\n```python\n(.*?)```", page, re.S)
    assert blocks, "docs/adapters/strands.md lost its runnable example"
    for block in blocks:
        namespace: dict[str, Any] = {"__name__": "docs_example"}
        exec(compile(block, "docs/adapters/strands.md", "exec"), namespace)


# -- who is asking -----------------------------------------------------------------------


async def test_each_interaction_says_who_asks(side: Side) -> None:
    """The question and the permission carry who is asking: the agent's name, what the
    model said in the step that called, and for the permission the tool call."""
    host = StrandsHost(side.asker, side.session_id)
    eu = {"target": "eu"}

    @tool
    def deploy(target: str) -> str:
        """Deploy the service."""
        return f"deployed to {target}"

    model = ScriptedModel(
        [
            Reply("Earlier turn, not this one."),
            Reply("First the database.", (ToolUse("tooluse_who", "ask_user_question", DB_ASK),)),
            Reply("Deploying to the EU now.", (ToolUse("tooluse_dep", "deploy", eu),)),
            Reply(text="Deployed."),
        ]
    )
    agent = agent_for(host, model, deploy, hooks=[host.permissions({"deploy"})], name="release-bot")
    await host.run(agent, "hello", turn_id="turn-before")
    async with ScriptedResponder(side.answerer, [answer("SQLite"), allow()], side.session_id) as p:
        await host.run(agent, "ship it", turn_id="turn-who")
        await p.finished()
    asked, permitted = [r.settled.interaction for r in p.responses if r.settled is not None]
    assert asked.kind == "ask" and asked.context is not None  # as the side stored it
    assert asked.context.agent == "release-bot" and asked.context.tool is None
    assert asked.context.doing == "First the database."
    assert permitted.kind == "permission" and permitted.context is not None
    assert permitted.context.agent == "release-bot"
    assert permitted.context.doing == "Deploying to the EU now."
    assert permitted.context.tool is not None and permitted.context.tool.name == "deploy"
    assert permitted.context.tool.input == '{"target":"eu"}'
