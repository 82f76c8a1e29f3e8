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


SECRET_SELECT = {  # pi-legacy: a select whose answer the model must not see
    "question": "Which vault holds the deploy key?",
    "kind": "select",
    "options": ["vault-a", "vault-b"],
    "allowCustom": True,
    "sensitivity": "secret",
}


async def test_a_secret_select_keeps_its_typed_answer_out_of_every_stored_byte(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'secret.db'}"
    async with open_store(url) as store, Runtime(store) as runtime:
        typed, _ = await runtime.ask("s1", SECRET_SELECT, dialect="pi-legacy", tool_call_id="c1")
        picked, _ = await runtime.ask("s1", SECRET_SELECT, dialect="pi-legacy", tool_call_id="c2")
        await runtime.answer(typed.id, {"answers": {typed.ask.questions[0].id: SECRET}})  # type: ignore[union-attr]
        await runtime.answer(picked.id, "vault-b")
        live = (await runtime.wait(typed.id)).interaction
        chosen = (await runtime.wait(picked.id)).interaction
        output = await runtime.handle_tool_call(
            "s1",
            name="askUserQuestion",
            tool_call_id="c1",
            tool_input=SECRET_SELECT,
            dialect="pi-legacy",
        )
        events = [e.model_dump_json() async for e in runtime.events(follow=False)]
        stored = await store.get_interaction(typed.id)
        stored_pick = await store.get_interaction(picked.id)

    assert live.result is not None and chosen.result is not None
    (answer,) = live.result.answers
    assert answer.secret_value is not None and answer.secret_value.get_secret_value() == SECRET
    assert chosen.result.answers[0].secret_value is not None
    assert chosen.result.answers[0].secret_value.get_secret_value() == "vault-b"
    assert SECRET not in output.text and "[REDACTED:secret-answer]" in output.text
    for held in (stored, stored_pick):
        assert held is not None and held.result is not None
        (kept,) = held.result.answers
        assert (kept.status, kept.selected, kept.text, kept.answer) == (
            "answered",
            (),
            None,
            SECRET_MARK,
        )
    assert not [event for event in events if SECRET in event]
    results = [
        json.dumps(json.loads(event)["data"]["interaction"]["result"])
        for event in events
        if "user_question_answered" in event
    ]
    assert len(results) == 2 and not [result for result in results if "vault-b" in result]
    assert _files_holding(tmp_path, SECRET) == []  # the database, its WAL and -shm files


async def test_an_ask_settled_with_a_secret_refuses_every_later_answer_alike(
    tmp_path: Path,
) -> None:
    """Re-posting cannot confirm a guess: the right value and a wrong one get the same
    refusal, in the answering process and after a restart."""
    url = f"sqlite:///{tmp_path / 'secret.db'}"
    right = {"answers": {"token": SECRET, "env": "staging"}}
    wrong = {"answers": {"token": "a-guess", "env": "staging"}}
    async with open_store(url) as store, Runtime(store) as runtime:
        interaction, _ = await runtime.ask("s1", SECRET_ASK, tool_call_id="call_1")
        await runtime.answer(interaction.id, right, by="user")
        refusals = []
        for payload in (right, wrong):
            with pytest.raises(AlreadySettled) as refused:
                await runtime.answer(interaction.id, payload, by="user")
            refusals.append(str(refused.value))
    async with open_store(url) as store, Runtime(store) as runtime:
        for payload in (right, wrong):
            with pytest.raises(AlreadySettled) as refused:
                await runtime.answer(interaction.id, payload, by="user")
            refusals.append(str(refused.value))
    assert len(set(refusals)) == 1
