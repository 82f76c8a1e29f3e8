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
from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions, query
from tests._servers import SAFETY_S, start_gateway
from tests.adapters._claude_code_cli import (
    ASK,
    QUESTION,
    Call,
    ScriptedClaudeCode,
    tool_results,
)

from midturn import Asker, AsyncClient, Interaction, Runtime
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


def _worker(phase: str, *argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.adapters._claude_agent_worker", phase, *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def _first_ask(worker: subprocess.Popen[str], reader: Any, session_id: str) -> Interaction:
    """The worker's ask, once it is parked: after Claude Code's request went out, the
    gateway's (or the file's) queue holds it."""
    assert worker.stdout is not None
    sent = await asyncio.wait_for(asyncio.to_thread(worker.stdout.readline), SAFETY_S * 4)
    assert sent == "requested toolu_4\n", worker.stderr and worker.stderr.read()
    for _ in range(int(SAFETY_S / 0.05)):
        if queue := await reader.queue(session_id):
            (parked,) = queue
            found: Interaction = parked
            return found
        await asyncio.sleep(0.05)
    raise AssertionError("the worker never parked its ask")


@pytest.mark.parametrize(
    ("where", "answered"),
    [("sqlite", "while_dead"), ("gateway", "while_dead"), ("gateway", "after_restart")],
)
async def test_4_killed_between_ask_and_answer_resumes(
    tmp_path: Path, where: str, answered: str
) -> None:
    """The host process dies while Claude Code waits on `can_use_tool`; the person answers
    while no host runs (or once the new one waits); the restarted host resumes the
    session, Claude Code sends the request it kept again (same `tool_use_id`), and the
    callback finds the ask by that id: settled, or still pending and waited on."""
    db_url = f"sqlite:///{tmp_path / 'midturn.db'}"
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
            argv = ["gateway", gateway.url, session.agent_token, session_id]
        else:
            session_id = "s4"
            store = await stack.enter_async_context(open_store(db_url))
            person = await stack.enter_async_context(Runtime(store))
            argv = ["sqlite", db_url, "-", session_id]
        first = _worker("start", *argv)
        try:
            asked = await _first_ask(first, person, session_id)
        finally:
            first.kill()
            first.communicate(timeout=SAFETY_S)
        assert first.returncode == -signal.SIGKILL
        assert asked.kind == "ask" and asked.tool_call_id == "toolu_4"
        if answered == "while_dead":
            await person.answer(asked.id, "SQLite")  # while no host process runs
        second = _worker("resume", *argv)
        assert second.stdout is not None
        sent = await asyncio.to_thread(second.stdout.readline)
        assert sent == "requested toolu_4\n"  # Claude Code sent the kept card again
        if answered == "after_restart":
            await person.answer(asked.id, "SQLite")
        out, err = await asyncio.to_thread(second.communicate, timeout=SAFETY_S * 6)
        assert second.returncode == 0, err
        done = json.loads(out.strip().splitlines()[-1])
    assert done["requests"]["toolu_4"]["suppress_always_allow_rule"] is True  # the kept card
    decision = done["decisions"]["toolu_4"]
    assert decision["behavior"] == "allow"
    assert decision["updatedInput"]["answers"] == {QUESTION: "SQLite"}
    assert done["results"] == {
        "toolu_4": [f'User has answered your questions: "{QUESTION}"="SQLite".']
    }
    async with open_store(db_url) as store:
        interactions = await store.list_interactions(session_id=session_id)
        events = await store.read_events(session_id=session_id)
    assert [(i.kind, i.status, i.tool_call_id) for i in interactions] == [
        ("ask", "answered", "toolu_4")
    ]
    assert [e.type for e in events].count("user_question_requested") == 1  # asked once


async def test_4_a_permission_decided_while_the_host_was_dead_holds(tmp_path: Path) -> None:
    """The same for a permission: denied while no host runs, the restarted host's
    callback denies the kept request with the person's message; nothing runs, one
    request recorded."""
    db_url = f"sqlite:///{tmp_path / 'midturn.db'}"
    gateway = start_gateway(db_url, ADMIN)
    try:
        async with AsyncClient(gateway.url, ADMIN) as admin:
            session = await admin.create_session({"client": "claude-agent"})
            argv = ["gateway", gateway.url, session.agent_token, session.session_id, "bash"]
            first = _worker("start", *argv)
            try:
                asked = await _first_ask(first, admin, session.session_id)
            finally:
                first.kill()
                first.communicate(timeout=SAFETY_S)
            assert asked.kind == "permission" and asked.tool_call_id == "toolu_4"
            await admin.decide(asked.id, "deny", message="Not on a Friday")
            second = _worker("resume", *argv)
            out, err = await asyncio.to_thread(second.communicate, timeout=SAFETY_S * 6)
            assert second.returncode == 0, err
    finally:
        gateway.stop()
    done = json.loads(out.strip().splitlines()[-1])
    assert done["decisions"]["toolu_4"] == {"behavior": "deny", "message": "Not on a Friday"}
    assert done["ran"] == []
    async with open_store(db_url) as store:
        interactions = await store.list_interactions(session_id=session.session_id)
    assert [(i.kind, i.status) for i in interactions] == [("permission", "denied")]


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
