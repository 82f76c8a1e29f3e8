"""`midturn.adapters.claude_agent` through the real `claude-agent-sdk`: `query()` over its
`Transport` interface, with a scripted transport that plays Claude Code's side of the
control protocol (`initialize`, `can_use_tool` for `AskUserQuestion` and for `Bash`, the
tool results, the final `result`). No `claude` binary, no network."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    AgentDefinition,
    ClaudeAgentOptions,
    PermissionResultAllow,
    ToolPermissionContext,
    query,
)
from tests._servers import SAFETY_S, start_gateway
from tests._slow_first import SlowFirstAsk
from tests.adapters._claude_code_cli import (
    ASK,
    QUESTION,
    Call,
    ScriptedClaudeCode,
    tool_results,
)
from tests.adapters._fake_anthropic import FakeAnthropic, cli_environment
from tests.adapters._fake_anthropic import tool_results as fake_tool_results

from midturn import Asker, AsyncClient, Runtime
from midturn.adapters.claude_agent import MidturnPermissions
from midturn.store import open_store
from midturn.testing import (
    ScriptedResponder,
    allow,
    allow_for_turn,
    answer,
    deny,
    skip,
    stop_turn,
)

ADMIN = "claude-agent-admin-0123456789abcdef"
ROOT = Path(__file__).resolve().parents[2]


async def run(permissions: MidturnPermissions, cli: ScriptedClaudeCode) -> list[Any]:
    """One query through the real SDK, inside one midturn turn."""
    options = ClaudeAgentOptions(can_use_tool=permissions)
    async with permissions.turn():
        return [m async for m in query(prompt="Set up the service", options=options, transport=cli)]


# -- the asker: the in-process runtime, or a client of a live gateway --------------------


class Midturn:
    def __init__(self, asker: Asker, answerer: Any, session_id: str) -> None:
        self.asker, self.answerer, self.session_id = asker, answerer, session_id


@pytest.fixture
async def runtime_side() -> AsyncIterator[Midturn]:
    async with open_store("memory://") as store, Runtime(store) as runtime:
        yield Midturn(runtime, runtime, "s1")


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[Any]:
    server = start_gateway(f"sqlite:///{tmp_path / 'midturn.db'}", ADMIN)
    yield server
    server.stop()


@pytest.fixture
async def gateway_side(gateway: Any) -> AsyncIterator[Midturn]:
    async with AsyncClient(gateway.url, ADMIN) as admin:
        session = await admin.create_session({"client": "test"})
        async with (
            AsyncClient(gateway.url, session.agent_token) as agent,
            AsyncClient(gateway.url, session.answer_token) as person,
        ):
            yield Midturn(agent, person, session.session_id)


@pytest.fixture(params=["runtime", "gateway"])
def side(request: pytest.FixtureRequest) -> Midturn:
    found: Midturn = request.getfixturevalue(f"{request.param}_side")
    return found


async def within(work: Any) -> Any:
    return await asyncio.wait_for(work, SAFETY_S * 2)


async def test_1_answer_continues_the_same_run(side: Midturn) -> None:
    permissions = MidturnPermissions(side.asker, side.session_id)
    cli = ScriptedClaudeCode([[("AskUserQuestion", ASK, "toolu_1")]])
    script = [answer({"answers": {"Database": "SQLite"}})]
    async with ScriptedResponder(side.answerer, script, session_id=side.session_id) as human:
        messages = await within(run(permissions, cli))
        await within(human.finished())
    decision = cli.decisions["toolu_1"]
    assert decision["behavior"] == "allow"
    assert decision["updatedInput"]["questions"] == ASK["questions"]
    assert decision["updatedInput"]["answers"] == {QUESTION: "SQLite"}  # by the full text
    assert tool_results(messages) == {
        "toolu_1": [f'User has answered your questions: "{QUESTION}"="SQLite".']
    }


async def test_1_on_the_real_claude_code(runtime_side: Midturn, tmp_path: Path) -> None:
    """The real Claude Code CLI bundled with the SDK, against a stand-in Anthropic API:
    its `can_use_tool` for `AskUserQuestion` reaches the callback, the answer goes back as
    `updatedInput`, and the tool result Claude Code gives the model carries it."""
    permissions = MidturnPermissions(runtime_side.asker, runtime_side.session_id)
    (tmp_path / "work").mkdir()
    script = [answer({"answers": {"Database": "SQLite"}})]
    with FakeAnthropic(_model) as api:
        options = permissions.options(
            env=cli_environment(api.url, str(tmp_path)), cwd=str(tmp_path / "work")
        )
        async with ScriptedResponder(runtime_side.answerer, script, session_id="s1") as human:
            async with permissions.turn():
                messages = [m async for m in query(prompt="Set up the service", options=options)]
            await within(human.finished())
    (asked,) = [r.interaction for r in human.responses]
    assert asked.tool_call_id == "toolu_4" and asked.dialect == "claude"
    (result,) = tool_results(messages)["toolu_4"]
    assert f'"{QUESTION}"="SQLite"' in str(result)
    assert f'"{QUESTION}"="SQLite"' in str(fake_tool_results(api.requests[-1])[-1]["content"])


async def test_2_malformed_ask_is_a_fixable_error(runtime_side: Midturn) -> None:
    bad = {"questions": [{**ASK["questions"][0], "options": ASK["questions"][0]["options"][:1]}]}
    permissions = MidturnPermissions(runtime_side.asker, runtime_side.session_id)
    cli = ScriptedClaudeCode([[("AskUserQuestion", bad, "toolu_2")]])
    messages = await within(run(permissions, cli))
    decision = cli.decisions["toolu_2"]
    assert decision["behavior"] == "deny"
    assert "questions[0].options" in decision["message"]
    assert cli.ran == [] and len(tool_results(messages)["toolu_2"]) == 1
    assert await runtime_side.answerer.queue(runtime_side.session_id) == []


async def test_a_skipped_question_never_reads_as_consent(runtime_side: Midturn) -> None:
    permissions = MidturnPermissions(runtime_side.asker, runtime_side.session_id)
    cli = ScriptedClaudeCode([[("AskUserQuestion", ASK, "toolu_s")]])
    script = [skip()]
    async with ScriptedResponder(runtime_side.answerer, script, session_id="s1") as human:
        await within(run(permissions, cli))
        await within(human.finished())
    decision = cli.decisions["toolu_s"]
    assert decision["behavior"] == "deny" and cli.ran == []
    assert "skipped" in decision["message"] and "User has answered" not in decision["message"]


def bash(command: str) -> dict[str, Any]:
    return {"command": command, "description": "run it"}


async def test_3_permissions_allow_deny_allow_for_turn(side: Midturn) -> None:
    permissions = MidturnPermissions(side.asker, side.session_id)
    steps: list[list[Call]] = [
        [("Bash", bash("make build"), "toolu_a")],
        [("Bash", bash("rm -rf /srv"), "toolu_b")],
        [("Write", {"file_path": "/tmp/x", "content": "x"}, "toolu_c")],
        [("Write", {"file_path": "/tmp/y", "content": "y"}, "toolu_d")],  # not asked again
    ]
    cli = ScriptedClaudeCode(steps)
    script = [allow(), deny("Never touch /srv"), allow_for_turn()]
    async with ScriptedResponder(side.answerer, script, session_id=side.session_id) as human:
        await within(run(permissions, cli))
        await within(human.finished())
    assert human.unscripted == []  # the fourth call was not asked
    assert cli.decisions["toolu_a"]["behavior"] == "allow"
    assert cli.decisions["toolu_b"] == {"behavior": "deny", "message": "Never touch /srv"}
    assert cli.decisions["toolu_c"]["behavior"] == "allow"
    assert cli.decisions["toolu_d"]["behavior"] == "allow"
    assert [name for name, _ in cli.ran] == ["Bash", "Write", "Write"]


# -- 4 ---------------------------------------------------------------------------------
#
# The real Claude Code CLI (bundled with claude-agent-sdk) against a stand-in Anthropic
# API: on a resume after its host died while `can_use_tool` waited, Claude Code 2.1.332
# does not ask again, it records the call as interrupted ("[Tool call interrupted: the
# session ended before this call's result was recorded …]"). What carries a question
# across a dead host is `defer`: the durable hook defers the pending question, Claude
# Code ends the run with the call kept, and a resume re-runs that call's PreToolUse.


def _worker(*argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.adapters._claude_agent_worker", *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _model(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The model: asks the question first, then says what the tool returned."""
    if results := fake_tool_results(messages):
        content = results[-1].get("content")
        text = content if isinstance(content, str) else json.dumps(content)
        return [{"type": "text", "text": f"done: {text}"}]
    return [{"type": "tool_use", "id": "toolu_4", "name": "AskUserQuestion", "input": ASK}]


@pytest.mark.parametrize("where", ["sqlite", "gateway"])
async def test_4_killed_between_ask_and_answer_resumes(tmp_path: Path, where: str) -> None:
    """The host defers the question and waits; it is killed; the person answers while no
    host runs; a new host resumes the Claude Code session with no new prompt, Claude Code
    runs the same call's PreToolUse again (same `tool_use_id`), the hook finds the answer,
    and the model gets it in the same call's result. One ask, asked once."""
    db_url = f"sqlite:///{tmp_path / 'midturn.db'}"
    home = str(tmp_path / "home")
    with FakeAnthropic(_model) as api:
        async with contextlib.AsyncExitStack() as stack:
            if where == "gateway":
                gateway = start_gateway(db_url, ADMIN)
                stack.callback(gateway.stop)
                admin = await stack.enter_async_context(AsyncClient(gateway.url, ADMIN))
                session = await admin.create_session({"client": "claude-agent"})
                session_id = session.session_id
                person: Any = await stack.enter_async_context(
                    AsyncClient(gateway.url, session.answer_token)
                )
                argv = [where, gateway.url, session.agent_token, session_id, api.url, home]
            else:
                session_id = "s4"
                store = await stack.enter_async_context(open_store(db_url))
                person = await stack.enter_async_context(Runtime(store))
                argv = [where, db_url, "-", session_id, api.url, home]
            first = _worker("start", *argv)
            try:
                assert first.stdout is not None
                line = await asyncio.wait_for(
                    asyncio.to_thread(first.stdout.readline), SAFETY_S * 6
                )
                assert line, first.stderr and first.stderr.read()
                deferred = json.loads(line)
            finally:
                first.kill()
                first.communicate(timeout=SAFETY_S)
            assert first.returncode == -signal.SIGKILL
            assert deferred["deferred"] == "toolu_4"
            (asked,) = await person.queue(session_id)
            assert asked.kind == "ask" and asked.tool_call_id == "toolu_4"
            await person.answer(asked.id, "SQLite")  # while no host process runs

            second = _worker("resume", *argv, deferred["claude_session"])
            out, err = await asyncio.to_thread(second.communicate, timeout=SAFETY_S * 6)
            assert second.returncode == 0, err
            done = json.loads(out.strip().splitlines()[-1])
    (result,) = done["results"]["toolu_4"]  # the same call's result, once
    assert f'"{QUESTION}"="SQLite"' in str(result)
    assert done["texts"][-1].startswith("done: ") and "SQLite" in done["texts"][-1]
    last = fake_tool_results(api.requests[-1])
    assert [r["tool_use_id"] for r in last] == ["toolu_4"]
    async with open_store(db_url) as store:
        interactions = await store.list_interactions(session_id=session_id)
        events = await store.read_events(session_id=session_id)
    assert [(i.kind, i.status, i.tool_call_id) for i in interactions] == [
        ("ask", "answered", "toolu_4")
    ]
    assert [e.type for e in events].count("user_question_requested") == 1  # asked once


async def test_5_two_asks_in_one_step_fifo(runtime_side: Midturn) -> None:
    second = {"questions": [{**ASK["questions"][0], "question": "Which cache should it use?"}]}
    permissions = MidturnPermissions(runtime_side.asker, runtime_side.session_id)
    cli = ScriptedClaudeCode(
        [[("AskUserQuestion", ASK, "toolu_x"), ("AskUserQuestion", second, "toolu_y")]]
    )
    script = [answer("PostgreSQL"), answer("SQLite")]
    async with ScriptedResponder(runtime_side.answerer, script, session_id="s1") as human:
        await within(run(permissions, cli))
        await within(human.finished())
    asked = [r.interaction.tool_call_id for r in human.responses]
    assert asked == ["toolu_x", "toolu_y"]  # in the order the model called them
    assert cli.decisions["toolu_x"]["updatedInput"]["answers"] == {QUESTION: "PostgreSQL"}
    assert cli.decisions["toolu_y"]["updatedInput"]["answers"] == {
        "Which cache should it use?": "SQLite"
    }


async def queued(side: Midturn, count: int) -> list[Any]:
    """The session's queue once it holds `count` interactions (read on each event)."""

    async def poll() -> list[Any]:
        async for _ in side.answerer.events(side.session_id):
            queue = await side.answerer.queue(side.session_id)
            if len(queue) >= count:
                return queue
        raise AssertionError("the session's events ended")

    found: list[Any] = await within(poll())
    return found


async def test_5_a_slow_first_ask_still_parks_first(runtime_side: Midturn) -> None:
    second = {"questions": [{**ASK["questions"][0], "question": "Which cache should it use?"}]}
    slow: Any = SlowFirstAsk(runtime_side.asker)
    permissions = MidturnPermissions(slow, runtime_side.session_id)
    cli = ScriptedClaudeCode(
        [
            [
                ("AskUserQuestion", ASK, "toolu_x"),
                ("AskUserQuestion", second, "toolu_y"),
                ("Bash", {"command": "make"}, "toolu_z"),
            ]
        ]
    )
    running = asyncio.create_task(run(permissions, cli))
    x, y, z = await queued(runtime_side, 3)
    assert [x.tool_call_id, y.tool_call_id, z.tool_call_id] == ["toolu_x", "toolu_y", "toolu_z"]
    await runtime_side.answerer.answer(x.id, "PostgreSQL")
    await runtime_side.answerer.answer(y.id, "SQLite")
    await runtime_side.answerer.decide(z.id, "allow")
    await within(running)
    assert cli.decisions["toolu_x"]["updatedInput"]["answers"] == {QUESTION: "PostgreSQL"}
    assert cli.decisions["toolu_z"]["behavior"] == "allow"


async def test_5_a_slow_first_hook_ask_still_parks_first(runtime_side: Midturn) -> None:
    """The durable hook's requests of one step come as tasks of their own too."""
    slow: Any = SlowFirstAsk(runtime_side.asker)
    permissions = MidturnPermissions(slow, "s1", durable=True)
    second = {"questions": [{**ASK["questions"][0], "question": "Which cache should it use?"}]}
    calls = [
        ({"hook_event_name": "PreToolUse", "tool_name": "AskUserQuestion", "tool_input": q}, t)
        for q, t in ((ASK, "toolu_hx"), (second, "toolu_hy"))
    ]
    async with permissions.turn("turn-h"):
        await within(asyncio.gather(*(permissions.pre_tool_use(c, t, {}) for c, t in calls)))
    queued = await runtime_side.answerer.queue("s1")
    assert [i.tool_call_id for i in queued] == ["toolu_hx", "toolu_hy"]


async def test_6_stopped_turn_cancels(runtime_side: Midturn) -> None:
    permissions = MidturnPermissions(runtime_side.asker, runtime_side.session_id)
    cli = ScriptedClaudeCode(
        [[("AskUserQuestion", ASK, "toolu_6")], [("Bash", bash("ls"), "toolu_7")]]
    )
    async with ScriptedResponder(runtime_side.answerer, [stop_turn()], session_id="s1") as human:
        await within(run(permissions, cli))
        await within(human.finished())
    decision = cli.decisions["toolu_6"]
    assert decision["behavior"] == "deny" and decision["interrupt"] is True
    # the turn ended: a later call in it settles cancelled at once, nothing runs
    assert cli.decisions["toolu_7"]["behavior"] == "deny"
    assert cli.ran == []
    (stopped,) = [
        i
        for i in await runtime_side.asker.store.list_interactions(session_id="s1")
        if i.kind == "ask"
    ]  # type: ignore[attr-defined]
    assert stopped.status == "cancelled"


@pytest.mark.parametrize("where", ["subagent", "headless"])
async def test_7_subagent_and_headless_have_no_tool(runtime_side: Midturn, where: str) -> None:
    interactive = where != "headless"
    permissions = MidturnPermissions(
        runtime_side.asker, runtime_side.session_id, interactive=interactive
    )
    agent = "agent-1" if where == "subagent" else None
    cli = ScriptedClaudeCode([[("AskUserQuestion", ASK, "toolu_9")]], agent_id=agent)
    await within(run(permissions, cli))
    decision = cli.decisions["toolu_9"]
    assert decision["behavior"] == "deny"
    assert "no one" in decision["message"].lower() or "unavailable" in decision["message"].lower()
    assert await runtime_side.asker.store.list_interactions(session_id="s1") == []  # type: ignore[attr-defined]


async def test_7_options_offer_the_question_tool_only_where_a_person_answers(
    runtime_side: Midturn,
) -> None:
    """`permissions.options(...)`: every sub-agent definition disallows `AskUserQuestion`
    (the SDK sends them to Claude Code in `initialize`); a headless run disallows it for
    the whole run; an interactive root keeps it."""
    reviewer = AgentDefinition(
        description="Reviews the change", prompt="Review it.", disallowedTools=["WebFetch"]
    )
    interactive = MidturnPermissions(runtime_side.asker, runtime_side.session_id)
    options = interactive.options(agents={"reviewer": reviewer}, max_turns=3)
    assert options.can_use_tool is interactive and options.max_turns == 3
    assert "AskUserQuestion" not in options.disallowed_tools  # the root agent asks
    assert reviewer.disallowedTools == ["WebFetch"]  # the caller's definition is left alone
    cli = ScriptedClaudeCode([[("AskUserQuestion", ASK, "toolu_o")]])
    script = [answer("SQLite")]
    async with ScriptedResponder(runtime_side.answerer, script, session_id="s1") as human:
        async with interactive.turn():
            [m async for m in query(prompt="Review", options=options, transport=cli)]
        await within(human.finished())
    assert cli.initialize is not None
    sent = cli.initialize["agents"]["reviewer"]
    assert sent["disallowedTools"] == ["WebFetch", "AskUserQuestion"]
    assert cli.decisions["toolu_o"]["behavior"] == "allow"  # the root's question was asked

    headless = MidturnPermissions(runtime_side.asker, "s1", interactive=False)
    options = headless.options(disallowed_tools=["WebSearch"])
    assert options.disallowed_tools == ["WebSearch", "AskUserQuestion"]
    with pytest.raises(TypeError, match="can_use_tool"):
        headless.options(can_use_tool=interactive)


async def test_the_durable_hook_defers_a_pending_question_and_answers_a_settled_one(
    runtime_side: Midturn,
) -> None:
    """`durable=True`: the PreToolUse hook parks the question and defers it while it is
    pending (the turn is then not ended with its block), answers it once settled, and
    gives a sub-agent's or a headless run's question `unavailable` with nothing parked."""
    permissions = MidturnPermissions(runtime_side.asker, "s1", durable=True)
    (matcher,) = permissions.options().hooks["PreToolUse"]  # type: ignore[index]
    assert matcher.matcher == "AskUserQuestion" and matcher.hooks == [permissions.pre_tool_use]
    call = {"hook_event_name": "PreToolUse", "tool_name": "AskUserQuestion", "tool_input": ASK}
    async with permissions.turn("turn-d"):
        deferred = await permissions.pre_tool_use(call, "toolu_d", {"signal": None})
    assert deferred["hookSpecificOutput"]["permissionDecision"] == "defer"
    (parked,) = await runtime_side.answerer.queue("s1")  # still pending: the turn goes on
    await runtime_side.answerer.answer(parked.id, "SQLite")
    async with permissions.turn("turn-d"):
        decided = await permissions.pre_tool_use(call, "toolu_d", {"signal": None})
    specific = decided["hookSpecificOutput"]
    assert specific["permissionDecision"] == "allow"
    assert specific["updatedInput"]["answers"] == {QUESTION: "SQLite"}

    sub = await permissions.pre_tool_use({**call, "agent_id": "agent-1"}, "toolu_s", {})
    headless = MidturnPermissions(runtime_side.asker, "s1", interactive=False, durable=True)
    alone = await headless.pre_tool_use(call, "toolu_h", {"signal": None})
    for output in (sub, alone):
        assert output["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert "no one" in output["hookSpecificOutput"]["permissionDecisionReason"].lower()
    listed = await runtime_side.asker.store.list_interactions(session_id="s1")  # type: ignore[attr-defined]
    assert [i.tool_call_id for i in listed] == ["toolu_d"]


async def test_a_defer_claude_code_ignored_still_ends_the_turn(runtime_side: Midturn) -> None:
    """Claude Code ignores `defer` when the step made several tool calls and asks
    `can_use_tool` instead: the callback waits on the same ask, and the turn ends with its
    block as usual (a grant of it does not outlive the query)."""
    permissions = MidturnPermissions(runtime_side.asker, "s1", durable=True)
    call = {"hook_event_name": "PreToolUse", "tool_name": "AskUserQuestion", "tool_input": ASK}
    async with ScriptedResponder(runtime_side.answerer, [answer("SQLite")], "s1") as human:
        async with permissions.turn("turn-i"):
            deferred = await permissions.pre_tool_use(call, "toolu_i", {"signal": None})
            assert deferred["hookSpecificOutput"]["permissionDecision"] == "defer"
            context = ToolPermissionContext(tool_use_id="toolu_i")
            decision = await within(permissions("AskUserQuestion", ASK, context))
        await within(human.finished())
    assert isinstance(decision, PermissionResultAllow)
    assert decision.updated_input is not None
    assert decision.updated_input["answers"] == {QUESTION: "SQLite"}
    assert len(human.responses) == 1  # asked once
    late, _ = await runtime_side.asker.ask("s1", ASK, dialect="claude", turn_id="turn-i")
    assert late.status == "cancelled"  # the turn ended with its block


def test_import_without_the_sdk_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['claude_agent_sdk'] = None\n"
        "try:\n    import midturn.adapters.claude_agent\n"
        "except ImportError as e:\n    print(e)\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ),
    )
    assert 'pip install "midturn[claude-agent]"' in shown.stdout


def test_the_docs_example_runs() -> None:
    page = (
        Path(__file__).resolve().parents[2] / "docs" / "adapters" / "claude-agent.md"
    ).read_text()
    (block,) = re.findall(r"<!-- runnable -->\n```python\n(.*?)```", page, re.S)
    shown = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, env=dict(os.environ)
    )
    assert shown.returncode == 0, shown.stderr
    assert "SQLite" in shown.stdout


# -- who is asking -----------------------------------------------------------------------


async def test_each_interaction_says_who_asks(side: Midturn) -> None:
    """The question and the permission carry who is asking (the agent's name, a
    sub-agent's id) and, for the permission, the tool call with its input."""
    permissions = MidturnPermissions(side.asker, side.session_id, agent="release-bot")
    steps: list[list[Call]] = [
        [("AskUserQuestion", ASK, "toolu_q")],
        [("Bash", bash("make"), "toolu_b")],
    ]
    script = [answer({"answers": {"Database": "SQLite"}}), allow(), allow()]
    async with ScriptedResponder(side.answerer, script, session_id=side.session_id) as human:
        await within(run(permissions, ScriptedClaudeCode(steps)))
        sub = ScriptedClaudeCode([[("Bash", bash("ls"), "toolu_s")]], agent_id="agent-7")
        await within(run(MidturnPermissions(side.asker, side.session_id), sub))
        await within(human.finished())
    asked, permitted, by_sub = [r.settled.interaction for r in human.responses if r.settled]
    assert asked.context is not None and asked.context.agent == "release-bot"
    assert asked.context.tool is None and asked.context.doing is None
    assert permitted.context is not None and permitted.context.agent == "release-bot"
    assert permitted.context.tool is not None and permitted.context.tool.name == "Bash"
    assert permitted.context.tool.input == json.dumps(bash("make"), separators=(",", ":"))
    assert by_sub.context is not None and by_sub.context.agent == "Claude Code · sub-agent agent-7"


async def test_the_durable_hook_says_what_the_agent_was_doing(
    side: Midturn, tmp_path: Path
) -> None:
    """The PreToolUse hook's input names the transcript: its last assistant text is
    what the agent was doing."""
    transcript = tmp_path / "transcript.jsonl"
    said = {"role": "assistant", "content": [{"type": "text", "text": "First the database."}]}
    transcript.write_text(json.dumps({"type": "assistant", "message": said}) + "\n")
    permissions = MidturnPermissions(side.asker, side.session_id, durable=True)
    call = {
        "hook_event_name": "PreToolUse",
        "tool_name": "AskUserQuestion",
        "tool_input": ASK,
        "transcript_path": str(transcript),
    }
    async with permissions.turn("turn-doing"):
        deferred = await permissions.pre_tool_use(call, "toolu_doing", {"signal": None})
    assert deferred["hookSpecificOutput"]["permissionDecision"] == "defer"
    (parked,) = await side.answerer.queue(side.session_id)  # as the side stored it
    assert parked.context is not None and parked.context.agent == "Claude Code"
    assert parked.context.doing == "First the database."
