"""A secret never goes through a form: URL mode to the gateway's inbox page for the ask
(no credential in the URL), or the inbox while the call waits. Its value is in no
stored byte."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from tests.mcp_server.conftest import SECRET, Person, requested, within

from midturn import SECRET_MARK, Runtime, Store

VALUE = "sk-live-7d1e0c5b-not-in-any-byte"


def _stored_bytes(data_dir: Path) -> bytes:
    return b"".join(path.read_bytes() for path in data_dir.rglob("*") if path.is_file())


async def _answer_in_inbox(runtime: Runtime) -> None:
    parked = await requested(runtime)
    await runtime.answer(parked.id, {"answers": {"key": VALUE}}, by="inbox")


@pytest.mark.parametrize("mode", ["auto", "legacy", "no-elicitation"])
async def test_a_secret_goes_through_the_inbox_never_a_form(
    server: Any, runtime: Runtime, store: Store, data_dir: Path, mode: str
) -> None:
    consented = asyncio.Event()

    async def consent(params: types.ElicitRequestParams) -> types.ElicitResult:
        consented.set()
        return types.ElicitResult(action="accept")

    person = Person([consent])
    callback = None if mode == "no-elicitation" else person
    async with Client(
        server, elicitation_callback=callback, mode="auto" if mode == "auto" else "legacy"
    ) as client:
        answering = asyncio.ensure_future(_answer_in_inbox(runtime))
        result = await within(client.call_tool("ask_user_question", SECRET))
        await within(answering)
    text = result.content[0].text  # type: ignore[union-attr]
    assert SECRET_MARK in text
    assert VALUE not in text
    assert VALUE not in str(result.structured_content)
    (stored,) = await store.list_interactions(session_id="mcp")
    assert stored.status == "answered"
    if callback is not None:
        (shown,) = person.seen
        assert isinstance(shown, types.ElicitRequestURLParams)
        assert shown.url == f"http://127.0.0.1:8765/#interaction={stored.id}"
    stored_bytes = _stored_bytes(data_dir)
    assert b"Paste the deploy API key" in stored_bytes  # the reading sees what was stored
    assert VALUE.encode() not in stored_bytes


async def test_declining_the_url_skips(server: Any, runtime: Runtime) -> None:
    person = Person([types.ElicitResult(action="decline")])
    async with Client(server, elicitation_callback=person) as client:
        result = await within(client.call_tool("ask_user_question", SECRET))
    assert result.structured_content is not None
    assert result.structured_content["outcome"] == "skipped"
