"""A session created with meta (a title), and its agent, for the label, history and
notification tests."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from tests._servers import SAFETY_S, LiveGateway
from tests.web.conftest import ADMIN_TOKEN, Agent, Session

from midturn.client import Client


def titled_session(gateway: LiveGateway, meta: dict[str, Any]) -> Session:
    def create() -> Session:
        with Client(gateway.url, ADMIN_TOKEN) as admin:
            made = admin.create_session(meta)
        return Session(made.session_id, made.agent_token, made.answer_token, made.answer_url)

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(create).result(SAFETY_S)


@contextmanager
def agent_of(gateway: LiveGateway, session: Session) -> Iterator[Agent]:
    runner = Agent(gateway, session)
    try:
        yield runner
    finally:
        runner.close()
