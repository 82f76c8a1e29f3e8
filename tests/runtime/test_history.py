"""`Runtime.history` and who-is-asking context in-process: a bounded scan per page that
never loses an entry, redirects and timeouts in the history, and context validation."""

from __future__ import annotations

import asyncio

import pytest

from midturn import InteractionContext, Runtime, UsageError, open_store
from midturn.runtime._history import read_history

ASK = {"questions": [{"question": "Which colour?", "options": ["Red", "Blue"]}]}


async def test_a_rare_query_pages_through_a_bounded_scan_without_losing_an_entry() -> None:
    async with open_store("memory://") as store, Runtime(store) as runtime:
        expected = []
        for index in range(12):
            parked, _ = await runtime.ask("s", ASK, tool_call_id=f"c{index}")
            await runtime.answer(parked.id, "Blue" if index % 5 == 0 else "Red")
            if index % 5 == 0:
                expected.append(parked.id)
        await runtime.ask("s", ASK, tool_call_id="pending")
        seen: list[str] = []
        pages = 0
        cursor = None
        while True:
            page = await read_history(
                store, "s", query="blue", limit=10, after=cursor, scan_limit=3
            )
            pages += 1
            assert len(page.entries) <= 3
            seen += [entry.id for entry in page.entries]
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert seen == expected
        assert pages >= 4  # 13 interactions, 3 read per page


async def test_history_says_how_each_settled_and_filters_every_word() -> None:
    async with open_store("memory://") as store, Runtime(store, permission_timeout_s=30) as rt:
        redirected, _ = await rt.ask("s", ASK, context={"agent": "painter"})
        await rt.answer(redirected.id, {"redirect": "Use green instead"})
        skipped, _ = await rt.ask("s", ASK)
        await rt.answer(skipped.id, {"skip": True})
        other, _ = await rt.ask("elsewhere", ASK)
        await rt.answer(other.id, "Red")
        page = await rt.history("s")
        assert [(e.status, e.message) for e in page.entries] == [
            ("redirected", "Use green instead"),
            ("skipped", None),
        ]
        assert page.entries[1].questions[0].answer is None
        assert [e.id for e in (await rt.history("s", query="green PAINTER")).entries] == [
            redirected.id
        ]
        assert (await rt.history("s", query="green blue")).entries == ()
        with pytest.raises(UsageError):
            await rt.history("s", limit=0)
        with pytest.raises(UsageError):
            await rt.history("s", after="unknown")


async def test_a_malformed_context_is_a_usage_error_and_parks_nothing() -> None:
    async with open_store("memory://") as store, Runtime(store) as runtime:
        with pytest.raises(UsageError, match="context"):
            await runtime.ask("s", ASK, context={"agent": "x", "extra": 1})
        with pytest.raises(UsageError, match="context"):
            await runtime.request_permission("s", tool="bash", summary="ls", context={"tool": {}})
        assert await runtime.queue("s") == []
        given = InteractionContext(agent="bot", doing="line one\r\nline\x07 two")
        parked, _ = await runtime.request_permission("s", tool="bash", summary="ls", context=given)
        assert parked.context == InteractionContext(agent="bot", doing="line one\nline two")


async def test_the_question_tool_carries_the_hosts_context_to_the_person() -> None:
    async with open_store("memory://") as store, Runtime(store) as runtime:
        context = {"agent": "helper", "doing": "Choosing a colour for the logo."}
        async with runtime.turn("s", "t1") as turn:
            tool = asyncio.create_task(
                turn.handle_tool_call(
                    name="ask_user_question", tool_call_id="c1", tool_input=ASK, context=context
                )
            )
            async for event in runtime.events("s"):
                if event.type == "user_question_requested":
                    break
            (head,) = await runtime.queue("s")
            assert head.context == InteractionContext(**context)
            assert event.data["interaction"]["context"]["agent"] == "helper"
            await runtime.answer(head.id, "Red")
            assert "Red" in (await tool).text


@pytest.mark.parametrize("query", ["", "red"])
async def test_pages_split_exactly_and_the_last_one_says_so(query: str) -> None:
    async with open_store("memory://") as store, Runtime(store) as runtime:
        ids = []
        for index in range(5):
            parked, _ = await runtime.ask("s", ASK, tool_call_id=f"c{index}")
            if index == 2:
                continue  # a pending one in the middle: not history
            await runtime.answer(parked.id, "Red")
            ids.append(parked.id)
        first = await runtime.history("s", query=query, limit=2)
        assert [e.id for e in first.entries] == ids[:2] and first.next_cursor is not None
        rest = await runtime.history("s", query=query, limit=2, after=first.next_cursor)
        assert [e.id for e in rest.entries] == ids[2:] and rest.next_cursor is None
        whole = await runtime.history("s", query=query, limit=4)
        assert [e.id for e in whole.entries] == ids and whole.next_cursor is None
