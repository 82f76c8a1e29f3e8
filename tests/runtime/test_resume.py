"""docs/runtime.md#resuming-a-tool-call and docs/storage.md: the same tool call is never run twice;
pending asks survive restarts and crashes."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import pytest
from tests.runtime.conftest import ANSWER, ASK, all_events, within

from midturn import Runtime, UsageError, open_store

ROOT = Path(__file__).resolve().parents[2]


async def test_asking_again_with_the_same_tool_call_id_returns_the_existing_ask(
    runtime: Runtime,
) -> None:
    first, created = await runtime.ask("s1", ASK, tool_call_id="call_1")
    again, created_again = await runtime.ask("s1", ASK, tool_call_id="call_1")
    assert created and not created_again and again == first
    await runtime.answer(first.id, ANSWER)
    settled, created_late = await runtime.ask("s1", {"not": "even valid"}, tool_call_id="call_1")
    assert not created_late and settled.status == "answered"
    other_session, created_other = await runtime.ask("s2", ASK, tool_call_id="call_1")
    assert created_other and other_session.id != first.id
    requested = [e for e in await all_events(runtime) if e.type == "user_question_requested"]
    assert len(requested) == 2


async def test_a_resumed_tool_call_returns_the_settled_result_without_asking_again(
    runtime: Runtime,
) -> None:
    first, _ = await runtime.ask("s1", ASK, tool_call_id="call_1")
    await runtime.answer(first.id, ANSWER)
    before = await all_events(runtime)
    output = await within(
        runtime.handle_tool_call(
            "s1", name="ask_user_question", tool_call_id="call_1", tool_input=ASK
        )
    )
    assert "PostgreSQL" in output.text and not output.is_error
    assert await all_events(runtime) == before


async def test_a_tool_call_id_belongs_to_one_kind(runtime: Runtime) -> None:
    await runtime.request_permission("s1", tool="bash", summary="ls", tool_call_id="call_1")
    with pytest.raises(UsageError, match="already belongs to a permission"):
        await runtime.ask("s1", ASK, tool_call_id="call_1")


async def test_a_pending_ask_survives_a_restart_and_stays_answerable(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'restart.db'}"
    async with open_store(url) as store, Runtime(store) as runtime:
        interaction, _ = await runtime.ask("s1", ASK, turn_id="t1", tool_call_id="call_1")
    async with open_store(url) as store, Runtime(store) as runtime:
        assert [i.id for i in await runtime.queue("s1")] == [interaction.id]
        waiter = asyncio.create_task(
            runtime.handle_tool_call(
                "s1",
                name="ask_user_question",
                tool_call_id="call_1",
                tool_input=ASK,
                turn_id="t1",
            )
        )
        await runtime.answer(interaction.id, ANSWER, by="user")
        output = await within(waiter)
    assert '"billing-api"' in output.text


async def test_an_answer_from_another_process_wakes_the_waiter(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    async with open_store(url) as store, Runtime(store) as runtime:
        interaction, _ = await runtime.ask("s1", ASK)
        waiter = asyncio.create_task(runtime.wait(interaction.id))
        async with open_store(url) as other_store, Runtime(other_store) as other:
            await other.answer(interaction.id, ANSWER)
        settled = (await within(waiter)).interaction
    assert settled.status == "answered"


async def _run(*args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.runtime._crash_worker",
        *args,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await within(process.communicate())
    assert process.returncode == 0, err.decode()
    return out.decode().strip()


async def test_a_crashed_process_loses_nothing_and_nothing_is_shown_twice(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'crash.db'}"
    parker = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.runtime._crash_worker",
        "park",
        url,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert parker.stdout is not None
    interaction_id = (await within(parker.stdout.readline())).decode().strip()
    if not interaction_id:
        assert parker.stderr is not None
        raise AssertionError((await parker.stderr.read()).decode())
    parker.send_signal(signal.SIGKILL)
    await within(parker.wait())
    assert parker.returncode == -signal.SIGKILL

    assert await _run("answer", url, interaction_id) == "answered"
    resumed = json.loads(await _run("resume", url))
    assert resumed["data"]["outcome"] == "answered"
    assert resumed["data"]["answers"][0]["answer"] == "SQLite"

    async with open_store(url) as store:
        events = await store.read_events(0)
        interactions = await store.list_interactions()
    assert [i.id for i in interactions] == [interaction_id]
    assert [e.type for e in events] == [
        "user_question_requested",
        "turn_waiting",
        "user_question_answered",
        "turn_resumed",
    ]
