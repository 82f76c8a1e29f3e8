"""`AsyncClient`: the gateway's HTTP API for agents and answerers (docs/protocol.md).

It implements the asker and answerer ports (`midturn.Asker`, `midturn.Answerer`) with
the same signatures and values as the in-process `Runtime`, and error bodies come back as
midturn's own exceptions, so code written against the ports runs on either."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Collection
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any, Self

import httpx
from pydantic import BaseModel, SecretStr

from midturn.client._sse import read_frames
from midturn.contract._context import ContextInput, InteractionContext
from midturn.contract._history import HistoryEntry, HistoryPage
from midturn.contract._interactions import (
    Decision,
    Event,
    EventType,
    Interaction,
    InteractionKind,
    Risk,
)
from midturn.contract._models import ToolOutput
from midturn.contract._ports import Parked, Settled
from midturn.errors import (
    AlreadySettled,
    Forbidden,
    GatewayError,
    InvalidAnswer,
    InvalidAsk,
    NotFound,
    Problem,
    ToolCallConflict,
    Unauthorized,
    UsageError,
)

__all__ = ["DEFAULT_GATEWAY_URL", "PAGE_SIZE", "AsyncClient", "Page", "SessionCredentials"]

DEFAULT_GATEWAY_URL = "http://127.0.0.1:8765"
PAGE_SIZE = 100
MAX_WAIT_S = 60.0
_RECONNECT_MAX_S = 5.0
_KINDS_KEPT = 10_000
"""How many interaction kinds the client remembers (an unknown id costs one extra GET)."""


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a queue or of the inbox: its interactions, and the cursor of the
    next page (None on the last)."""

    interactions: list[Interaction]
    next_cursor: str | None


class SessionCredentials(BaseModel):
    """What `create_session` returns: the session id, its two tokens and the inbox URL."""

    session_id: str
    agent_token: str
    answer_token: str
    answer_url: str


class SessionInfo(BaseModel):
    """What `session` returns: the session's id, creation time, title (`meta.title` when
    it is text) and the meta given at creation."""

    session_id: str
    created_at: datetime
    title: str | None
    meta: dict[str, Any]


def _with_context(body: dict[str, Any], context: ContextInput | None) -> dict[str, Any]:
    """The body with `context` when one is given (validated here, so a malformed one
    fails before the request); without one the body is what older gateways take."""
    if context is not None:
        given = context if isinstance(context, InteractionContext) else dict(context)
        body["context"] = InteractionContext.model_validate(given).model_dump(mode="json")
    return body


def _error_from(response: httpx.Response) -> Exception:
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        text = response.text[:300] or response.reason_phrase
        return GatewayError(response.status_code, "http_error", text, body)
    error = str(body.get("error", "http_error"))
    message = str(body.get("message", response.reason_phrase))
    status = response.status_code
    if error == "invalid_ask":
        problems = [
            Problem(str(p.get("path", "")), str(p.get("message", "")))
            for p in body.get("problems") or []
            if isinstance(p, dict)
        ]
        return InvalidAsk(problems or [Problem("", message)])
    if error == "invalid_answer":
        answer_error = InvalidAnswer(message)
        answer_error.question = body.get("question")
        return answer_error
    if error == "already_settled" and isinstance(body.get("interaction"), dict):
        return AlreadySettled(Interaction.model_validate(body["interaction"]), message)
    if error == "tool_call_conflict":
        return ToolCallConflict(message)
    if status == 401:
        return Unauthorized(message)
    if status == 403:
        return Forbidden(message)
    if status == 404:
        return NotFound(message)
    return GatewayError(status, error, message, body)


def _settled(body: dict[str, Any]) -> Settled:
    """A `SettledOut`/`AnswerOut` body as the value the runtime returns, with the output
    the gateway rendered."""
    output = body.get("output")
    return Settled(
        Interaction.model_validate(body["interaction"]),
        bool(body.get("duplicate", False)),
        ToolOutput.model_validate(output) if output is not None else None,
    )


def _with_secrets(body: dict[str, Any]) -> Interaction:
    """The interaction of an envelope, with secret values put back on its answers (in
    memory, as `SecretStr`, exactly like the runtime hands them to an in-process host)."""
    interaction = Interaction.model_validate(body["interaction"])
    secrets: dict[str, str] = body.get("secrets") or {}
    result = interaction.result
    if not secrets or result is None:
        return interaction
    answers = tuple(
        answer.model_copy(update={"secret_value": SecretStr(secrets[answer.id])})
        if answer.id in secrets
        else answer
        for answer in result.answers
    )
    return interaction.model_copy(update={"result": result.model_copy(update={"answers": answers})})


class AsyncClient:
    """Talk to a midturn gateway. Use as an async context manager or call `aclose()`.

    `token` is an admin, agent or answer token; which methods work depends on it (see
    docs/protocol.md). `transport` is passed to httpx (e.g. `httpx.MockTransport`)."""

    def __init__(
        self,
        base_url: str = DEFAULT_GATEWAY_URL,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.base_url = base_url.rstrip("/")
        self._timeout = timeout
        self._http = httpx.AsyncClient(
            base_url=self.base_url, headers=headers, timeout=timeout, transport=transport
        )
        self._kinds: dict[str, InteractionKind] = {}  # which route reads an interaction

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        has_body: bool = False,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Any:
        return (
            await self._call_status(
                method,
                path,
                json_body=json_body,
                has_body=has_body,
                params=params,
                timeout=timeout,
            )
        )[1]

    async def _call_status(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        has_body: bool = False,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> tuple[int, Any]:
        content = json.dumps(json_body).encode() if has_body or json_body is not None else None
        response = await self._http.request(
            method,
            path,
            content=content,
            headers={"Content-Type": "application/json"} if content is not None else None,
            params=params,
            timeout=timeout if timeout is not None else self._timeout,
        )
        if response.status_code >= 400:
            raise _error_from(response)
        return response.status_code, response.json()

    def _envelope(self, body: dict[str, Any]) -> Settled:
        """An `InteractionOut` envelope: the interaction (secrets put back), its output."""
        interaction = _with_secrets(body)
        self._kinds[interaction.id] = interaction.kind
        if len(self._kinds) > _KINDS_KEPT:  # a long-lived client: forget the oldest
            del self._kinds[next(iter(self._kinds))]
        output = body.get("output")
        return Settled(
            interaction, output=ToolOutput.model_validate(output) if output is not None else None
        )

    # -- sessions -----------------------------------------------------------------------

    async def create_session(self, meta: dict[str, Any] | None = None) -> SessionCredentials:
        """A new session and its tokens (admin token)."""
        body = await self._call("POST", "/v1/sessions", json_body={"meta": meta or {}})
        return SessionCredentials.model_validate(body)

    async def whoami(self) -> dict[str, Any]:
        """`{role, session_id}` of this client's token."""
        body: dict[str, Any] = await self._call("GET", "/v1/whoami")
        return body

    # -- asks ---------------------------------------------------------------------------

    async def ask(
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
        """Park an ask (raises `InvalidAsk`): `Parked(interaction, created)`; a repeated
        `tool_call_id` returns the existing ask (`created=False`). With `wait` (≤ 60 s)
        the same request long-polls for the result (`ask_and_wait` returns its output)."""
        if not 0 <= wait <= MAX_WAIT_S:
            raise UsageError(f"wait={wait} is out of range; use 0–60 seconds")
        body = _with_context(
            {
                "tool_input": tool_input,
                "dialect": dialect,
                "tool_call_id": tool_call_id,
                "turn_id": turn_id,
            },
            context,
        )
        status, reply = await self._call_status(
            "POST",
            f"/v1/sessions/{session_id}/asks",
            json_body=body,
            params={"wait": wait} if wait else None,
            timeout=self._timeout + wait,
        )
        return Parked(self._envelope(reply).interaction, status == 201)

    async def get(
        self, interaction_id: str, *, wait: float = 0, kind: InteractionKind | None = None
    ) -> Interaction:
        """The ask or permission; `wait` ≤ 60 s long-polls for it to settle. `kind`
        picks the route; without it the client uses what it saw of this id, else tries
        the ask route and then the permission route."""
        return (await self._read(interaction_id, wait, kind)).interaction

    async def _read(
        self, interaction_id: str, wait: float, kind: InteractionKind | None
    ) -> Settled:
        if not 0 <= wait <= MAX_WAIT_S:
            raise UsageError(f"wait={wait} is out of range; use 0–60 seconds (or `wait()`)")
        kind = kind or self._kinds.get(interaction_id)
        params = {"wait": wait} if wait else None
        timeout = self._timeout + wait
        if kind is not None:
            route = "asks" if kind == "ask" else "permissions"
            path = f"/v1/{route}/{interaction_id}"
            return self._envelope(await self._call("GET", path, params=params, timeout=timeout))
        try:
            reply = await self._call("GET", f"/v1/asks/{interaction_id}")
        except NotFound as not_an_ask:
            try:
                reply = await self._call("GET", f"/v1/permissions/{interaction_id}")
            except NotFound:
                raise not_an_ask from None
        found = self._envelope(reply)
        if not found.pending or not wait:
            return found
        return await self._read(interaction_id, wait, found.interaction.kind)

    async def wait(
        self,
        interaction_id: str,
        timeout: float | None = None,
        *,
        kind: InteractionKind | None = None,
    ) -> Settled:
        """Wait until the interaction settles, or `timeout` seconds pass (then it comes
        back pending). Long-polls in steps of at most 60 s. `Settled.output` is the tool
        output the gateway rendered in the ask's dialect."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            remaining = MAX_WAIT_S if deadline is None else max(0.0, deadline - loop.time())
            settled = await self._read(interaction_id, min(MAX_WAIT_S, remaining), kind)
            if not settled.pending or (deadline is not None and loop.time() >= deadline):
                return settled

    async def ask_and_wait(
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
        """Park an ask and wait for it to settle (see `ask` and `wait`); the first
        minute of waiting rides on the creating request."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        first = MAX_WAIT_S if timeout is None else min(MAX_WAIT_S, max(0.0, timeout))
        if not 0 <= first <= MAX_WAIT_S:
            raise UsageError(f"wait={first} is out of range; use 0–60 seconds")
        body = _with_context(
            {
                "tool_input": tool_input,
                "dialect": dialect,
                "tool_call_id": tool_call_id,
                "turn_id": turn_id,
            },
            context,
        )
        reply = await self._call(
            "POST",
            f"/v1/sessions/{session_id}/asks",
            json_body=body,
            params={"wait": first} if first else None,
            timeout=self._timeout + first,
        )
        parked = self._envelope(reply)
        if not parked.pending:
            return parked
        remaining = None if timeout is None else timeout - (loop.time() - started)
        if remaining is not None and remaining <= 0:
            return parked
        return await self.wait(parked.interaction.id, remaining)

    async def answer(self, interaction_id: str, payload: Any) -> Settled:
        """Answer an ask in any shape of docs/contract.md#answers. Raises `InvalidAnswer` (the ask
        stays pending) or `AlreadySettled` (with the settled interaction)."""
        reply = await self._call(
            "POST", f"/v1/asks/{interaction_id}/answer", json_body=payload, has_body=True
        )
        return _settled(reply)

    async def cancel(self, interaction_id: str) -> Settled:
        """Cancel one pending ask or permission (agent token)."""
        kind = self._kinds.get(interaction_id)
        if kind is None:
            kind = (await self._read(interaction_id, 0, None)).interaction.kind
        route = "asks" if kind == "ask" else "permissions"
        return _settled(await self._call("POST", f"/v1/{route}/{interaction_id}/cancel"))

    # -- permissions --------------------------------------------------------------------

    async def request_permission(
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
        """Park a permission request (agent token): `Parked(interaction, created)`."""
        body = _with_context(
            {
                "tool": tool,
                "summary": summary,
                "risk": risk,
                "details": details,
                "tool_call_id": tool_call_id,
                "turn_id": turn_id,
                "timeout_s": timeout_s,
            },
            context,
        )
        status, reply = await self._call_status(
            "POST", f"/v1/sessions/{session_id}/permissions", json_body=body
        )
        return Parked(self._envelope(reply).interaction, status == 201)

    async def decide(
        self, interaction_id: str, decision: Decision, *, message: str | None = None
    ) -> Settled:
        """Allow, deny (with a message for the model) or allow for the rest of the turn."""
        reply = await self._call(
            "POST",
            f"/v1/permissions/{interaction_id}/decision",
            json_body={"decision": decision, "message": message},
        )
        return _settled(reply)

    # -- turns and queues ---------------------------------------------------------------

    async def stop_turn(self, session_id: str, turn_id: str) -> list[Interaction]:
        """Stop the turn: end it and cancel everything it has parked; returns what it
        cancelled."""
        reply = await self._call("POST", f"/v1/sessions/{session_id}/turns/{turn_id}/stop")
        return [Interaction.model_validate(item) for item in reply["cancelled"]]

    async def end_turn(self, session_id: str, turn_id: str) -> list[Interaction]:
        """The turn finished: end it (its grants end); returns what it cancelled."""
        reply = await self._call("POST", f"/v1/sessions/{session_id}/turns/{turn_id}/end")
        return [Interaction.model_validate(item) for item in reply["cancelled"]]

    async def queue(self, session_id: str) -> list[Interaction]:
        """The session's pending interactions, head first (every page; for a long
        queue, `iter_queue` or `queue_page`)."""
        return [item async for item in self.iter_queue(session_id)]

    async def inbox(self) -> list[Interaction]:
        """Every pending interaction, oldest first (admin token; every page, see
        `iter_inbox` and `inbox_page`)."""
        return [item async for item in self.iter_inbox()]

    async def queue_page(
        self, session_id: str, *, limit: int = PAGE_SIZE, cursor: str | None = None
    ) -> Page:
        """One page of the session's queue: at most `limit` interactions after `cursor`
        (the `next_cursor` of the page before; None for the head)."""
        return await self._page(f"/v1/sessions/{session_id}/interactions", limit, cursor)

    async def inbox_page(self, *, limit: int = PAGE_SIZE, cursor: str | None = None) -> Page:
        """One page of the inbox (admin token), as `queue_page`."""
        return await self._page("/v1/inbox", limit, cursor)

    async def iter_queue(
        self, session_id: str, *, page_size: int = PAGE_SIZE
    ) -> AsyncGenerator[Interaction, None]:
        """The session's pending interactions, head first, fetched a page at a time
        (stable while others are parked or settled meanwhile)."""
        async for item in self._pages(f"/v1/sessions/{session_id}/interactions", page_size):
            yield item

    async def iter_inbox(self, *, page_size: int = PAGE_SIZE) -> AsyncGenerator[Interaction, None]:
        """Every pending interaction, oldest first, a page at a time (admin token)."""
        async for item in self._pages("/v1/inbox", page_size):
            yield item

    async def _page(self, path: str, limit: int, cursor: str | None) -> Page:
        params: dict[str, Any] = {"limit": limit}
        if cursor is not None:
            params["cursor"] = cursor
        reply = await self._call("GET", path, params=params)
        items = [Interaction.model_validate(item) for item in reply["interactions"]]
        return Page(items, reply.get("next_cursor"))

    async def _pages(self, path: str, page_size: int) -> AsyncGenerator[Interaction, None]:
        cursor: str | None = None
        while True:
            page = await self._page(path, page_size, cursor)
            for item in page.interactions:
                yield item
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    # -- labels and history -------------------------------------------------------------

    async def session(self, session_id: str) -> SessionInfo:
        """The session's label: its title and the meta given at creation (admin, or the
        session's own agent or answer token)."""
        return SessionInfo.model_validate(await self._call("GET", f"/v1/sessions/{session_id}"))

    async def history_page(
        self,
        session_id: str,
        *,
        query: str = "",
        limit: int = PAGE_SIZE,
        cursor: str | None = None,
    ) -> HistoryPage:
        """One page of the session's history (settled questions and decisions, oldest
        first, those matching every word of `query`); `next_cursor` goes on. A page
        may hold fewer entries than `limit` while `next_cursor` is set."""
        params: dict[str, Any] = {"limit": limit}
        if query:
            params["q"] = query
        if cursor is not None:
            params["cursor"] = cursor
        reply = await self._call("GET", f"/v1/sessions/{session_id}/history", params=params)
        return HistoryPage.model_validate(reply)

    async def iter_history(
        self, session_id: str, *, query: str = "", page_size: int = PAGE_SIZE
    ) -> AsyncGenerator[HistoryEntry, None]:
        """The whole history of the session (matching `query`), a page at a time."""
        cursor: str | None = None
        while True:
            page = await self.history_page(session_id, query=query, limit=page_size, cursor=cursor)
            for entry in page.entries:
                yield entry
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    async def export_history(self, session_id: str, *, query: str = "") -> str:
        """The session's history (matching `query`) as JSON Lines text, as the gateway
        exports it (`?format=jsonl`)."""
        params: dict[str, Any] = {"format": "jsonl"}
        if query:
            params["q"] = query
        response = await self._http.get(f"/v1/sessions/{session_id}/history", params=params)
        if response.status_code >= 400:
            raise _error_from(response)
        return response.text

    # -- events -------------------------------------------------------------------------

    async def events(
        self,
        session_id: str | None = None,
        *,
        after: int = 0,
        types: Collection[EventType] | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Follow events (one session's, or with `session_id=None` every session's, which
        needs the admin token) from after event id `after`, forever; with `types`, only
        the events of those types (`?types=`; none or empty: every type). A dropped
        connection is resumed from the last event received (`Last-Event-ID`): nothing is
        lost or repeated. An unknown type raises `GatewayError` (422 `invalid_request`).
        Stop by breaking out of the loop."""
        path = f"/v1/sessions/{session_id}/events" if session_id else "/v1/events"
        named = [types] if isinstance(types, str) else list(types or ())  # one type, as a str
        params = {"types": ",".join(named)} if named else {}
        last = after
        failures = 0
        while True:
            headers = {"Last-Event-ID": str(last), "Accept": "text/event-stream"}
            timeout = httpx.Timeout(self._timeout, read=None)
            try:
                async with self._http.stream(
                    "GET", path, params=params, headers=headers, timeout=timeout
                ) as response:
                    if response.status_code >= 400:
                        await response.aread()
                        raise _error_from(response)
                    async for frame in read_frames(response.aiter_lines()):
                        if frame.id is None or not frame.data:
                            continue
                        event = Event.model_validate_json(frame.data)
                        failures = 0
                        last = event.id
                        yield event
            except httpx.TransportError:
                pass
            # the stream ended (dropped, or the server restarted): resume after `last`,
            # at once the first time, then backing off while it keeps failing
            if failures:
                await asyncio.sleep(min(_RECONNECT_MAX_S, 0.05 * 2**failures))
            failures += 1
