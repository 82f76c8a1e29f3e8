"""HTTP clients for a midturn gateway: `AsyncClient`, and `Client`, its blocking facade.

`Client` runs the same `AsyncClient` on a private event loop; there is one
implementation of every call. Use it from synchronous code (a script, a CLI, a
thread), not from inside a running event loop (use `AsyncClient` there).

    with midturn.Client("http://127.0.0.1:8765", agent_token) as client:
        done = client.ask_and_wait(session_id, {"questions": [...]}, tool_call_id="call_1")
        print(done.output.text)  # rendered by the gateway in the ask's dialect

`AsyncClient` implements the ports `midturn.Asker` and `midturn.Answerer`; `Client`
implements their blocking forms, `midturn.SyncAsker` and `midturn.SyncAnswerer`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Coroutine, Iterator
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx

from midturn._public import publish as _publish
from midturn.client._async import (
    DEFAULT_GATEWAY_URL,
    PAGE_SIZE,
    AsyncClient,
    Page,
    SessionCredentials,
    SessionInfo,
)
from midturn.contract._context import ContextInput
from midturn.contract._history import HistoryEntry, HistoryPage
from midturn.contract._interactions import (
    Decision,
    Event,
    EventType,
    Interaction,
    InteractionKind,
    Risk,
)
from midturn.contract._ports import Parked, Settled
from midturn.errors import UsageError

__all__ = [
    "DEFAULT_GATEWAY_URL",
    "AsyncClient",
    "Client",
    "Page",
    "SessionCredentials",
    "SessionInfo",
]

T = TypeVar("T")


class Client:
    """The blocking form of `AsyncClient`: the same methods, the same errors."""

    def __init__(
        self,
        base_url: str = DEFAULT_GATEWAY_URL,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._runner = asyncio.Runner()
        self._async = AsyncClient(base_url, token, timeout=timeout, transport=transport)
        self.base_url = self._async.base_url
        self._closed = False

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        if self._closed:
            work.close()
            raise UsageError("this midturn.Client is closed; create a new one")
        return self._runner.run(work)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._closed:
            return
        try:
            self._runner.run(self._async.aclose())
        finally:
            self._closed = True
            self._runner.close()

    def create_session(self, meta: dict[str, Any] | None = None) -> SessionCredentials:
        return self._run(self._async.create_session(meta))

    def whoami(self) -> dict[str, Any]:
        return self._run(self._async.whoami())

    def ask(
        self,
        session_id: str,
        tool_input: Any,
        *,
        dialect: str = "midturn",
        tool_call_id: str | None = None,
        turn_id: str | None = None,
        wait: float = 0,
        context: ContextInput | None = None,
    ) -> Parked:
        return self._run(
            self._async.ask(
                session_id,
                tool_input,
                dialect=dialect,
                tool_call_id=tool_call_id,
                turn_id=turn_id,
                wait=wait,
                context=context,
            )
        )

    def get(
        self, interaction_id: str, *, wait: float = 0, kind: InteractionKind | None = None
    ) -> Interaction:
        return self._run(self._async.get(interaction_id, wait=wait, kind=kind))

    def wait(
        self,
        interaction_id: str,
        timeout: float | None = None,
        *,
        kind: InteractionKind | None = None,
    ) -> Settled:
        return self._run(self._async.wait(interaction_id, timeout, kind=kind))

    def ask_and_wait(
        self,
        session_id: str,
        tool_input: Any,
        *,
        dialect: str = "midturn",
        tool_call_id: str | None = None,
        turn_id: str | None = None,
        timeout: float | None = None,
        context: ContextInput | None = None,
    ) -> Settled:
        return self._run(
            self._async.ask_and_wait(
                session_id,
                tool_input,
                dialect=dialect,
                tool_call_id=tool_call_id,
                turn_id=turn_id,
                timeout=timeout,
                context=context,
            )
        )

    def answer(self, interaction_id: str, payload: Any) -> Settled:
        return self._run(self._async.answer(interaction_id, payload))

    def cancel(self, interaction_id: str) -> Settled:
        return self._run(self._async.cancel(interaction_id))

    def request_permission(
        self,
        session_id: str,
        *,
        tool: str,
        summary: str,
        risk: Risk = "medium",
        details: str | None = None,
        tool_call_id: str | None = None,
        turn_id: str | None = None,
        timeout_s: float | None = None,
        context: ContextInput | None = None,
    ) -> Parked:
        return self._run(
            self._async.request_permission(
                session_id,
                tool=tool,
                summary=summary,
                risk=risk,
                details=details,
                tool_call_id=tool_call_id,
                turn_id=turn_id,
                timeout_s=timeout_s,
                context=context,
            )
        )

    def decide(
        self, interaction_id: str, decision: Decision, *, message: str | None = None
    ) -> Settled:
        return self._run(self._async.decide(interaction_id, decision, message=message))

    def stop_turn(self, session_id: str, turn_id: str) -> list[Interaction]:
        return self._run(self._async.stop_turn(session_id, turn_id))

    def end_turn(self, session_id: str, turn_id: str) -> list[Interaction]:
        return self._run(self._async.end_turn(session_id, turn_id))

    def queue(self, session_id: str) -> list[Interaction]:
        return self._run(self._async.queue(session_id))

    def inbox(self) -> list[Interaction]:
        return self._run(self._async.inbox())

    def queue_page(
        self, session_id: str, *, limit: int = PAGE_SIZE, cursor: str | None = None
    ) -> Page:
        return self._run(self._async.queue_page(session_id, limit=limit, cursor=cursor))

    def inbox_page(self, *, limit: int = PAGE_SIZE, cursor: str | None = None) -> Page:
        return self._run(self._async.inbox_page(limit=limit, cursor=cursor))

    def iter_queue(self, session_id: str, *, page_size: int = PAGE_SIZE) -> Iterator[Interaction]:
        """The session's queue, a page at a time (see `AsyncClient.iter_queue`)."""
        return self._iter_pages(
            lambda cursor: self.queue_page(session_id, limit=page_size, cursor=cursor)
        )

    def iter_inbox(self, *, page_size: int = PAGE_SIZE) -> Iterator[Interaction]:
        """The inbox, a page at a time (see `AsyncClient.iter_inbox`)."""
        return self._iter_pages(lambda cursor: self.inbox_page(limit=page_size, cursor=cursor))

    def session(self, session_id: str) -> SessionInfo:
        return self._run(self._async.session(session_id))

    def history_page(
        self,
        session_id: str,
        *,
        query: str = "",
        limit: int = PAGE_SIZE,
        cursor: str | None = None,
    ) -> HistoryPage:
        return self._run(
            self._async.history_page(session_id, query=query, limit=limit, cursor=cursor)
        )

    def iter_history(
        self, session_id: str, *, query: str = "", page_size: int = PAGE_SIZE
    ) -> Iterator[HistoryEntry]:
        """The session's history, a page at a time (see `AsyncClient.iter_history`)."""
        cursor: str | None = None
        while True:
            page = self.history_page(session_id, query=query, limit=page_size, cursor=cursor)
            yield from page.entries
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def export_history(self, session_id: str, *, query: str = "") -> str:
        return self._run(self._async.export_history(session_id, query=query))

    @staticmethod
    def _iter_pages(fetch: Callable[[str | None], Page]) -> Iterator[Interaction]:
        cursor: str | None = None
        while True:
            page = fetch(cursor)
            yield from page.interactions
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def events(
        self,
        session_id: str | None = None,
        *,
        after: int = 0,
        types: Collection[EventType] | None = None,
    ) -> Iterator[Event]:
        """Follow events (with `types`, only those), resuming after a dropped connection
        (see `AsyncClient.events`). Close the iterator (or break out of the loop) to stop."""
        stream = self._async.events(session_id, after=after, types=types)

        async def following() -> Event:
            return await anext(stream)

        try:
            while True:
                try:
                    yield self._run(following())
                except StopAsyncIteration:
                    return
        finally:
            if not self._closed:
                self._runner.run(stream.aclose())


_publish("midturn.client", globals(), __all__)
