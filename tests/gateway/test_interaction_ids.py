"""An interaction stored with an id of the earlier format (`ia_` and 22 random
characters, before ids began with a time stamp) still works through a gateway that makes
the new ones: read, paged past, answered once."""

from __future__ import annotations

import re
import secrets

import pytest

from midturn.runtime import _runtime

from .conftest import ANSWER, LiveGateway, Session, StartGateway, create_ask

EARLIER = re.compile(r"ia_[A-Za-z0-9_-]{21}[AQgw]")
NEW = re.compile(r"ia_[A-Za-z0-9_-]{30}[-37BFJNRVZcgkosw]")


async def test_an_interaction_with_an_earlier_id_is_read_paged_and_answered(
    monkeypatch: pytest.MonkeyPatch,
    start_gateway: StartGateway,
    db_url: str,
    gateway: LiveGateway,
    session: Session,
) -> None:
    # the gateway before the change made this ask
    monkeypatch.setattr(_runtime, "new_interaction_id", lambda: "ia_" + secrets.token_urlsafe(16))
    earlier = (await create_ask(gateway, session, "call-old", turn_id="turn-old"))["id"]
    gateway.stop()
    monkeypatch.undo()
    restarted = start_gateway(db_url)
    made = (await create_ask(restarted, session, "call-new", turn_id="turn-new"))["id"]
    assert EARLIER.fullmatch(earlier) and NEW.fullmatch(made)

    queue = f"/v1/sessions/{session.session_id}/interactions"
    async with restarted.client(session.answer_token) as answerer:
        read = await answerer.get(f"/v1/asks/{earlier}")
        first = (await answerer.get(queue, params={"limit": 1})).json()
        rest = (await answerer.get(queue, params={"cursor": first["next_cursor"]})).json()
        answered = await answerer.post(f"/v1/asks/{earlier}/answer", json=ANSWER)
        other = {"answers": {"db": "SQLite", "name": "other-api"}}
        again = await answerer.post(f"/v1/asks/{earlier}/answer", json=other)
        after = (await answerer.get(queue)).json()
    async with restarted.client(session.agent_token) as agent:
        waited = await agent.get(f"/v1/asks/{earlier}", params={"wait": 1})

    assert read.status_code == 200, read.text
    shown = read.json()["interaction"]
    assert (shown["id"], shown["status"]) == (earlier, "pending")
    assert [i["id"] for i in first["interactions"]] == [earlier]
    assert first["next_cursor"] == earlier
    assert [i["id"] for i in rest["interactions"]] == [made]
    assert answered.status_code == 200, answered.text
    assert answered.json()["duplicate"] is False
    assert answered.json()["interaction"]["status"] == "answered"
    assert again.status_code == 409, again.text  # settled once, with the first answer
    assert [i["id"] for i in after["interactions"]] == [made]
    settled = waited.json()["interaction"]
    assert settled["status"] == "answered"
    assert settled["result"]["answers"][0]["answer"] == "PostgreSQL"
