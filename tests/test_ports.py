"""The ports (docs/ports.md): the README's Python example, the terminal answerer and the
scripted responder run through the same code on the in-process runtime and on a live
gateway; the client hands back the tool output the gateway rendered in the ask's dialect.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests._servers import SAFETY_S, LiveGateway, start_gateway

from midturn import (
    Answerer,
    Asker,
    AsyncClient,
    Runtime,
    SyncAnswerer,
    SyncAsker,
    open_store,
    render,
)
from midturn.client import Client
from midturn.testing import ScriptedResponder, answer, deny
from midturn.testing.pilot import Keys, TerminalPilot
from midturn.tui._answerer import answer_loop
from midturn.tui._terminal import TerminalIO

README = Path(__file__).resolve().parents[1] / "README.md"
ADMIN = "ports-admin-token-0123456789abcdef"


def readme_example() -> str:
    """The README's Python block (the one after "From Python")."""
    text = README.read_text()
    after = text[text.index("From Python") :]
    found = re.search(r"```python\n(.*?)```", after, re.S)
    assert found is not None, "the README lost its Python example"
    return found.group(1)


def readme_namespace() -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "readme"}
    exec(compile(readme_example(), str(README), "exec"), namespace)
    return namespace


@dataclass
class Side:
    """One session seen through the ports: an asker (agent) and an answerer (person)."""

    session_id: str
    asker: Asker
    answerer: Answerer


Sides = Callable[[], Any]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveGateway]:
    db = tmp_path_factory.mktemp("ports") / "midturn.db"
    server = start_gateway(f"sqlite:///{db}", ADMIN)
    yield server
    server.stop()


@pytest.fixture(params=["runtime", "gateway"])
async def side(request: pytest.FixtureRequest) -> AsyncIterator[Callable[[str], Any]]:
    """`await side(name)`: a new session through the ports, in-process or on a gateway."""
    async with AsyncExitStack() as stack:
        if request.param == "runtime":
            store = await stack.enter_async_context(open_store("memory://"))
            runtime = await stack.enter_async_context(Runtime(store))

            async def in_process(name: str) -> Side:
                return Side(name, runtime, runtime)

            yield in_process
        else:
            gateway: LiveGateway = request.getfixturevalue("live")
            admin = await stack.enter_async_context(AsyncClient(gateway.url, ADMIN))

            async def remote(name: str) -> Side:
                session = await admin.create_session({"name": name})
                agent = AsyncClient(gateway.url, session.agent_token)
                person = AsyncClient(gateway.url, session.answer_token)
                stack.push_async_callback(agent.aclose)
                stack.push_async_callback(person.aclose)
                return Side(session.session_id, agent, person)

            yield remote


async def test_the_example_the_terminal_and_the_responder_run_on_either_side(
    side: Callable[[str], Any],
) -> None:
    ask_the_user = readme_namespace()["ask_the_user"]
    picked, scripted = await side("picked"), await side("scripted")
    with TerminalPilot(80, 40) as term:
        loop = asyncio.create_task(
            answer_loop(
                picked.answerer,
                TerminalIO(term.input, term.output, term),
                session_id=picked.session_id,
                repeat_window_s=0,
            )
        )
        try:
            asking = asyncio.create_task(ask_the_user(picked.asker, picked.session_id))
            await term.shows("Which database should the service use?")
            term.press(Keys.DOWN, Keys.ENTER)
            from_terminal = await asyncio.wait_for(asking, SAFETY_S)
        finally:
            loop.cancel()
            await asyncio.gather(loop, return_exceptions=True)

    script = [answer("PostgreSQL"), deny("not on Fridays")]
    async with ScriptedResponder(scripted.answerer, script, session_id=scripted.session_id) as h:
        from_script = await asyncio.wait_for(
            ask_the_user(scripted.asker, scripted.session_id), SAFETY_S
        )
        permission, created = await scripted.asker.request_permission(
            scripted.session_id, tool="deploy", summary="ship it", tool_call_id="p1"
        )
        decided = await asyncio.wait_for(scripted.asker.wait(permission.id), SAFETY_S)
        await asyncio.wait_for(h.finished(), SAFETY_S)

    for output, chosen in ((from_terminal, "SQLite"), (from_script, "PostgreSQL")):
        assert output.is_error is False
        assert chosen in output.text
    again, created_again = await scripted.asker.ask(
        scripted.session_id, {"questions": []}, dialect="claude", tool_call_id="call_1"
    )
    assert (created, created_again) == (True, False)  # a resumed call: nothing asked twice
    assert again.result is not None
    assert from_script == render(again.result, "claude")  # the ask's dialect, not midturn's
    assert from_script != render(again.result, "midturn")
    assert decided.allowed is False and decided.output is None
    assert decided.decision is not None and decided.decision.message == "not on Fridays"
    assert [r.error for r in h.responses] == [None, None]
    settled = h.responses[0].settled
    assert settled is not None and settled.output == from_script


def test_the_readme_example_runs_as_written_against_a_live_gateway(
    live: LiveGateway, tmp_path: Path
) -> None:
    """`python example.py` beside `.midturn/admin_token`, with a scripted person
    answering the gateway's inbox."""
    (tmp_path / ".midturn").mkdir()
    (tmp_path / ".midturn" / "admin_token").write_text(ADMIN + "\n")
    script = tmp_path / "example.py"
    script.write_text(readme_example())

    async def run() -> subprocess.CompletedProcess[str]:
        async with (
            AsyncClient(live.url, ADMIN) as admin,
            ScriptedResponder(admin, [answer("SQLite")]) as person,
        ):
            done = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, str(script)],
                cwd=tmp_path,
                env={**os.environ, "MIDTURN_URL": live.url},
                capture_output=True,
                text=True,
                timeout=SAFETY_S + 30,
            )
            await asyncio.wait_for(person.finished(), SAFETY_S)
            return done

    done = asyncio.run(run())
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"Answer it at {live.url}/#token=")
    assert "SQLite" in done.stdout


async def test_the_implementations_pass_as_the_ports(live: LiveGateway) -> None:
    async with open_store("memory://") as store, Runtime(store) as runtime:
        assert isinstance(runtime, Asker) and isinstance(runtime, Answerer)
    async with AsyncClient(live.url, ADMIN) as client:
        assert isinstance(client, Asker) and isinstance(client, Answerer)


def test_the_blocking_client_passes_as_the_blocking_ports(live: LiveGateway) -> None:
    """(The signatures themselves are proven by mypy: src/midturn/client/_ports_proof.py.)"""
    with Client(live.url, ADMIN) as blocking:
        assert isinstance(blocking, SyncAsker) and isinstance(blocking, SyncAnswerer)


async def test_cancel_means_the_same_for_an_ask_and_a_permission_on_either_side(
    side: Callable[[str], Any],
) -> None:
    one = await side("cancelling")
    asked, _ = await one.asker.ask(one.session_id, {"questions": [{"question": "Name?"}]})
    permission, _ = await one.asker.request_permission(one.session_id, tool="rm", summary="x")
    cancelled_ask = await one.asker.cancel(asked.id)
    cancelled_permission = await one.asker.cancel(permission.id)
    again = await one.asker.cancel(permission.id)
    waited = await asyncio.wait_for(one.asker.wait(permission.id), SAFETY_S)

    assert cancelled_ask.interaction.status == "cancelled"
    assert cancelled_ask.output is not None and cancelled_ask.output.data is not None
    assert cancelled_ask.output.data["outcome"] == "cancelled"
    assert cancelled_permission.interaction.status == "cancelled"
    assert (cancelled_permission.duplicate, again.duplicate) == (False, True)
    assert waited.allowed is False and waited.output is None
    assert await one.answerer.queue(one.session_id) == []
