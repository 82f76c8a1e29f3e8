"""The authorization matrix: every `/v1` route, called by everyone who must not get in.

No token → 401. Another session's tokens → 403. An agent token on an answering route,
an answer token on an asking route, a session token on an admin route → 403. After all
of it, nothing changed: the target session's ask and permission are still pending."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from .conftest import ANSWER, ASK, LiveGateway, NewSession, Session, create_ask


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    body: Any = None
    admin_only: bool = False
    agent_may: bool = True
    answer_may: bool = True


ROUTES = [
    Route("POST", "/v1/sessions", {}, admin_only=True),
    Route("GET", "/v1/inbox", admin_only=True),
    Route("GET", "/v1/events", admin_only=True),
    Route("POST", "/v1/sessions/{sid}/asks", {"tool_input": ASK}, answer_may=False),
    Route("GET", "/v1/asks/{ask}"),
    Route("GET", "/v1/asks/{ask}?wait=1"),
    Route("POST", "/v1/asks/{ask}/answer", ANSWER, agent_may=False),
    Route("POST", "/v1/asks/{ask}/cancel", answer_may=False),
    Route("POST", "/v1/sessions/{sid}/turns/turn-1/stop"),
    Route(
        "POST",
        "/v1/sessions/{sid}/permissions",
        {"tool": "bash", "summary": "ls"},
        answer_may=False,
    ),
    Route("GET", "/v1/permissions/{perm}"),
    Route("POST", "/v1/permissions/{perm}/decision", {"decision": "allow"}, agent_may=False),
    Route("POST", "/v1/permissions/{perm}/cancel", answer_may=False),
    Route("GET", "/v1/sessions/{sid}/interactions"),
    Route("GET", "/v1/sessions/{sid}/events", agent_may=False),
]


@dataclass
class World:
    target: Session
    other: Session
    ask_id: str
    permission_id: str

    def path(self, route: Route) -> str:
        return (
            route.path.replace("{sid}", self.target.session_id)
            .replace("{ask}", self.ask_id)
            .replace("{perm}", self.permission_id)
        )


@pytest.fixture
async def world(gateway: LiveGateway, new_session: NewSession) -> World:
    target, other = await new_session(), await new_session()
    ask = await create_ask(gateway, target)
    async with gateway.client(target.agent_token) as agent:
        permission = await agent.post(
            f"/v1/sessions/{target.session_id}/permissions",
            json={"tool": "bash", "summary": "rm -rf build/", "turn_id": "turn-1"},
        )
    return World(target, other, ask["id"], permission.json()["interaction"]["id"])


def _intruders(world: World, route: Route) -> list[tuple[str, str | None, int]]:
    """(who, token, expected status) for everyone who must be refused on `route`."""
    cases: list[tuple[str, str | None, int]] = [
        ("no token", None, 401),
        ("garbage token", "not-a-token", 401),
        ("other session's agent token", world.other.agent_token, 403),
        ("other session's answer token", world.other.answer_token, 403),
    ]
    if route.admin_only or not route.agent_may:
        cases.append(("own agent token", world.target.agent_token, 403))
    if route.admin_only or not route.answer_may:
        cases.append(("own answer token", world.target.answer_token, 403))
    return cases


async def test_no_route_lets_anyone_in_where_they_do_not_belong(
    gateway: LiveGateway, world: World
) -> None:
    failures = []
    for route in ROUTES:
        for who, token, expected in _intruders(world, route):
            async with gateway.client(token) as client:
                response = await client.request(route.method, world.path(route), json=route.body)
            body = response.json()
            if response.status_code != expected or set(body) != {"error", "message"}:
                failures.append(f"{route.method} {route.path} as {who}: {response.status_code}")
    assert failures == []

    async with gateway.client(world.target.answer_token) as owner:
        queue = await owner.get(f"/v1/sessions/{world.target.session_id}/interactions")
    assert [(i["id"], i["status"]) for i in queue.json()["interactions"]] == [
        (world.ask_id, "pending"),
        (world.permission_id, "pending"),
    ]


async def test_each_session_token_does_what_its_role_allows_in_its_own_session(
    gateway: LiveGateway, world: World
) -> None:
    target = world.target
    async with (
        gateway.client(target.agent_token) as agent,
        gateway.client(target.answer_token) as answerer,
    ):
        whoami_agent = (await agent.get("/v1/whoami")).json()
        whoami_answer = (await answerer.get("/v1/whoami")).json()
        read_by_agent = await agent.get(f"/v1/asks/{world.ask_id}")
        read_by_answerer = await answerer.get(f"/v1/permissions/{world.permission_id}")
        answered = await answerer.post(f"/v1/asks/{world.ask_id}/answer", json=ANSWER)
        decided = await answerer.post(
            f"/v1/permissions/{world.permission_id}/decision", json={"decision": "allow"}
        )
        stopped = await agent.post(f"/v1/sessions/{target.session_id}/turns/turn-1/stop")

    assert whoami_agent == {"role": "agent", "session_id": target.session_id}
    assert whoami_answer == {"role": "answer", "session_id": target.session_id}
    statuses = [r.status_code for r in (read_by_agent, read_by_answerer, answered, decided)]
    assert statuses == [200, 200, 200, 200]
    assert stopped.json() == {"cancelled": []}
    assert answered.json()["interaction"]["settled_by"] == "answer"


async def test_the_admin_token_reaches_every_session(gateway: LiveGateway, world: World) -> None:
    async with gateway.client() as admin:
        whoami = (await admin.get("/v1/whoami")).json()
        inbox = await admin.get("/v1/inbox")
        queue = await admin.get(f"/v1/sessions/{world.other.session_id}/interactions")
        answered = await admin.post(f"/v1/asks/{world.ask_id}/answer", json=ANSWER)
        cancelled = await admin.post(
            f"/v1/permissions/{world.permission_id}/decision", json={"decision": "deny"}
        )
    assert whoami == {"role": "admin", "session_id": None}
    assert {i["id"] for i in inbox.json()["interactions"]} == {world.ask_id, world.permission_id}
    assert queue.json() == {"interactions": [], "next_cursor": None}
    assert (answered.status_code, cancelled.status_code) == (200, 200)
