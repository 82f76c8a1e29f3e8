"""Retention in a real `midturn serve --retention AGE`: settled interactions older than
AGE are pruned in the background with their events, their decision records appended to
the record file first; pending ones stay answerable; an event stream resumed from a
pruned id replays what is kept."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
from tests._servers import SAFETY_S, serve_process

from midturn.store import open_store

from .conftest import ANSWER, ASK

ADMIN = "admin-token-for-retention-tests-0123"


async def _first_events(url: str, token: str, path: str, last_id: int, count: int) -> list[Any]:
    """The first `count` events a stream resumed after `last_id` sends."""
    headers = {"Authorization": f"Bearer {token}", "Last-Event-ID": str(last_id)}
    events: list[Any] = []
    async with (
        httpx.AsyncClient(base_url=url, headers=headers, timeout=SAFETY_S) as client,
        client.stream("GET", path) as response,
    ):
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line.removeprefix("data:")))
                if len(events) == count:
                    break
    return events


async def test_serve_prunes_what_settled_longer_ago_than_the_retention(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'data' / 'm.db'}"
    records = tmp_path / "data" / "pruned-decisions.jsonl"
    with serve_process(db_url, ADMIN, tmp_path / "serve.log", options=("--retention", "1s")) as url:
        async with httpx.AsyncClient(
            base_url=url, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=SAFETY_S
        ) as admin:
            session = (await admin.post("/v1/sessions", json={})).json()
            sid = session["session_id"]
            agent = {"Authorization": f"Bearer {session['agent_token']}"}
            asks = [
                (
                    await admin.post(
                        f"/v1/sessions/{sid}/asks",
                        json={"tool_input": ASK, "tool_call_id": f"call-{n}", "turn_id": f"t{n}"},
                        headers=agent,
                    )
                ).json()["interaction"]
                for n in range(2)
            ]
            answered = await admin.post(f"/v1/asks/{asks[0]['id']}/answer", json=ANSWER)
            assert answered.status_code == 200

            async with open_store(db_url) as store:  # the server's file, read beside it
                deadline = time.monotonic() + SAFETY_S
                while await store.get_interaction(asks[0]["id"]) is not None:
                    assert time.monotonic() < deadline, "the settled ask was never pruned"
                    await asyncio.sleep(0.05)
                kept = await store.read_events(session_id=sid)

            # Pending is never pruned, and stays answerable.
            # The ask of t0 went with its events; its turn's last event, `turn_resumed`,
            # was the newest of the log, which is always kept.
            assert {event.interaction_id for event in kept} == {asks[1]["id"], None}
            assert [event.type for event in kept if event.turn_id == "t0"] == ["turn_resumed"]
            later = await admin.post(f"/v1/asks/{asks[1]['id']}/answer", json=ANSWER)
            assert later.status_code == 200, later.text

            # A stream resumed from before the oldest kept event replays what is kept.
            path = f"/v1/sessions/{sid}/events"
            replayed = await _first_events(url, session["answer_token"], path, 0, len(kept))
            assert [event["id"] for event in replayed] == [event.id for event in kept]
            pruned_id = kept[0].id - 1
            resumed = await _first_events(url, ADMIN, "/v1/events", pruned_id, 1)
            assert resumed[0]["id"] == kept[0].id

    (record,) = [json.loads(line) for line in records.read_text().splitlines()][:1]
    assert record["interaction_id"] == asks[0]["id"]
    assert record["status"] == "answered" and record["decided"]["outcome"] == "answered"
