"""The inbox and a session's queue come a page at a time (`limit`, `cursor` →
`next_cursor`), stable while interactions are parked and settled between pages; the
clients page through them."""

from __future__ import annotations

import asyncio

from midturn.client import AsyncClient, Client

from .conftest import ADMIN_TOKEN, ANSWER, LiveGateway, NewSession, Session, create_ask


async def _park(gateway: LiveGateway, session: Session, count: int, prefix: str) -> list[str]:
    return [
        (await create_ask(gateway, session, f"{prefix}-{n}", turn_id=f"{prefix}-{n}"))["id"]
        for n in range(count)
    ]


async def test_the_queue_pages_with_a_cursor_stable_under_parks_and_settles(
    gateway: LiveGateway, session: Session
) -> None:
    ids = await _park(gateway, session, 7, "first")
    path = f"/v1/sessions/{session.session_id}/interactions"
    async with gateway.client(session.answer_token) as answerer:
        first = (await answerer.get(path, params={"limit": 3})).json()
        assert [item["id"] for item in first["interactions"]] == ids[:3]
        assert first["next_cursor"] == ids[2]
        # between pages: one already listed and one not yet listed settle, one is parked
        for settled in (ids[1], ids[4]):
            answered = await answerer.post(f"/v1/asks/{settled}/answer", json=ANSWER)
            assert answered.status_code == 200, answered.text
        [late] = await _park(gateway, session, 1, "late")
        second = (
            await answerer.get(path, params={"limit": 3, "cursor": first["next_cursor"]})
        ).json()
        assert [item["id"] for item in second["interactions"]] == [ids[3], ids[5], ids[6]]
        third = (
            await answerer.get(path, params={"limit": 3, "cursor": second["next_cursor"]})
        ).json()
        assert third == {"interactions": [third["interactions"][0]], "next_cursor": None}
        assert third["interactions"][0]["id"] == late


async def test_the_inbox_pages_and_a_bad_cursor_or_limit_is_a_clear_error(
    gateway: LiveGateway, new_session: NewSession
) -> None:
    one, two = await new_session(), await new_session()
    ids = await _park(gateway, one, 2, "a") + await _park(gateway, two, 2, "b")
    async with gateway.client() as admin:
        pages: list[list[str]] = []
        cursor = None
        while True:
            params = {"limit": 3, **({"cursor": cursor} if cursor else {})}
            reply = (await admin.get("/v1/inbox", params=params)).json()
            pages.append([item["id"] for item in reply["interactions"]])
            cursor = reply["next_cursor"]
            if cursor is None:
                break
        assert pages == [ids[:3], ids[3:]]
        everything = (await admin.get("/v1/inbox")).json()  # the default page holds them
        assert [item["id"] for item in everything["interactions"]] == ids
        assert everything["next_cursor"] is None

        unknown = await admin.get("/v1/inbox", params={"cursor": "ia_nobody"})
        assert unknown.status_code == 400
        assert unknown.json()["error"] == "bad_request" and "cursor" in unknown.json()["message"]
        for limit in (0, 1001, "many"):
            refused = await admin.get("/v1/inbox", params={"limit": limit})
            assert refused.status_code == 422, refused.text
            assert refused.json()["error"] == "invalid_request"


async def test_the_clients_page_through_a_queue_longer_than_a_page(
    gateway: LiveGateway, session: Session
) -> None:
    ids = await _park(gateway, session, 5, "c")
    async with AsyncClient(gateway.url, session.answer_token) as answerer:
        paged = [item.id async for item in answerer.iter_queue(session.session_id, page_size=2)]
        page = await answerer.queue_page(session.session_id, limit=4)
        everything = [item.id for item in await answerer.queue(session.session_id)]
    assert paged == ids and everything == ids
    assert [item.id for item in page.interactions] == ids[:4] and page.next_cursor == ids[3]

    def blocking() -> tuple[list[str], list[str]]:
        with Client(gateway.url, ADMIN_TOKEN) as admin:
            inbox = [item.id for item in admin.iter_inbox(page_size=2)]
            queue = [item.id for item in admin.iter_queue(session.session_id, page_size=3)]
        return inbox, queue

    assert await asyncio.to_thread(blocking) == (ids, ids)
