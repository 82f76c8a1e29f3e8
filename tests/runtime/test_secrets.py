"""docs/runtime.md#secrets: a secret answer lives in this process's memory only."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest

from midturn import SECRET_MARK, AlreadySettled, Runtime, open_store

SECRET = "s3cr3t-Value-9f8e7d"
SECRET_ASK = {
    "questions": [
        {"id": "token", "question": "Paste the deploy token", "kind": "text", "secret": True},
        {"id": "env", "question": "Which environment?", "options": ["staging", "production"]},
    ]
}


def _files_holding(folder: Path, text: str) -> list[str]:
    files = list(folder.iterdir())
    assert any(path.suffix == ".db" for path in files)
    return [path.name for path in files if text.encode() in path.read_bytes()]


async def test_a_secret_reaches_the_waiter_and_nothing_else(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    url = f"sqlite:///{tmp_path / 'secret.db'}"
    async with open_store(url) as store, Runtime(store) as runtime:
        interaction, _ = await runtime.ask("s1", SECRET_ASK, tool_call_id="call_1")
        answer = {"answers": {"token": SECRET, "env": "staging"}}
        settled = await runtime.answer(interaction.id, answer, by="user")
        with pytest.raises(AlreadySettled) as refused:
            await runtime.answer(interaction.id, {"answers": {"token": "other", "env": "staging"}})
        live = (await runtime.wait(interaction.id)).interaction
        again = (await runtime.wait(interaction.id, timeout=0)).interaction  # a second read
        output = await runtime.handle_tool_call(
            "s1", name="ask_user_question", tool_call_id="call_1", tool_input=SECRET_ASK
        )
        events = [e async for e in runtime.events(follow=False)]
        exported = io.StringIO()
        await runtime.export_decisions(exported)

    for held in (live, again):
        assert held.result is not None
        token = held.result.answer_for("token")
        assert token is not None and token.secret_value is not None
        assert token.secret_value.get_secret_value() == SECRET
        assert token.answer == SECRET_MARK
    assert settled.interaction.result is not None
    assert settled.interaction.result.answers[0].secret_value is None  # not for the answerer
    assert SECRET not in output.text and SECRET_MARK in output.text
    assert SECRET not in json.dumps(output.data)
    assert SECRET not in str(refused.value)
    assert SECRET not in repr(live)
    for event in events:
        assert SECRET not in event.model_dump_json()
    assert SECRET not in exported.getvalue()
    assert caplog.records, "the runtime logs what it does"
    assert SECRET not in caplog.text
    assert _files_holding(tmp_path, SECRET) == []  # the database, its WAL and -shm files

    async with open_store(url) as store, Runtime(store) as runtime:  # after a restart
        gone = (await runtime.wait(interaction.id)).interaction
    assert gone.result is not None
    assert gone.result.answers[0].secret_value is None
    assert gone.result.answers[0].answer == SECRET_MARK
