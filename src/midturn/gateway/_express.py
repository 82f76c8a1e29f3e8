"""The express lane: the round trip's two requests (create an ask, answer it) served
without FastAPI's per-request machinery, when they are plain.

A profile of the gateway under round trips (docs/benchmarks.md) put about a quarter of
its CPU in FastAPI's route layer: matching, solving the dependencies, parsing and
validating the parameters and the body, and the wrappers around the endpoint. For the
two routes every round trip takes, the lane does the same work directly: the same
`Caller` dependency function, the same `AskIn` model, the same route body
(`_routes_asks.create` / `.answer`), the same exception handlers.

It takes only requests it reads exactly as FastAPI would: a JSON content type, a body
that parses and validates, path parameters within their limits, and for a create no
query but `wait=<seconds>`. Anything else (a malformed body, an odd query, an unexpected
content type) goes on to FastAPI untouched, so every refusal keeps its exact shape. The
lane runs inside `GatewayMiddleware`: the body cap and checks, the security headers, the
access log and the metrics apply to it as to every request.
"""

from __future__ import annotations

import inspect
import json
import re
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from midturn.gateway import _routes_asks
from midturn.gateway._state import MAX_WAIT_S, _call
from midturn.gateway._views import AskIn

__all__ = ["ExpressLane"]

_ASKS_PREFIX = "/v1/sessions/"
_ASKS_SUFFIX = "/asks"
_ANSWER_PREFIX = "/v1/asks/"
_ANSWER_SUFFIX = "/answer"
_MAX_ID = 200  # the routes' `Path(max_length=200)`
_WAIT = re.compile(rb"wait=(\d{1,2}(?:\.\d{1,6})?)")


def _segment(path: str, prefix: str, suffix: str) -> str | None:
    """The one path segment between `prefix` and `suffix`, if `path` is exactly that."""
    if not (path.startswith(prefix) and path.endswith(suffix)):
        return None
    value = path[len(prefix) : len(path) - len(suffix)]
    if not value or "/" in value or len(value) > _MAX_ID:
        return None
    return value


def _json_content(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"content-type":
            return bool(value.split(b";", 1)[0].strip().lower() == b"application/json")
    return False


def _json(body: bytes) -> tuple[bool, Any]:
    """`(True, value)` for a body that is one JSON value, else `(False, None)`."""
    if not body:
        return False, None
    try:
        return True, json.loads(body)
    except ValueError:
        return False, None


class ExpressLane:
    """Serves the plain cases of the round trip's two routes; `handle` says whether it
    did (else the request goes on to FastAPI, its body not yet read by anyone)."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        self._create = _route("/v1/sessions/{session_id}/asks")
        self._answer = _route("/v1/asks/{interaction_id}/answer")

    async def handle(self, scope: Scope, body: bytes, receive: Receive, send: Send) -> bool:
        if scope["method"] != "POST" or not _json_content(scope):
            return False
        path: str = scope["path"]
        if (session_id := _segment(path, _ASKS_PREFIX, _ASKS_SUFFIX)) is not None:
            return await self._create_ask(scope, session_id, body, receive, send)
        if (interaction_id := _segment(path, _ANSWER_PREFIX, _ANSWER_SUFFIX)) is not None:
            return await self._answer_ask(scope, interaction_id, body, receive, send)
        return False

    async def _create_ask(
        self, scope: Scope, session_id: str, body: bytes, receive: Receive, send: Send
    ) -> bool:
        query: bytes = scope["query_string"]
        wait = 0.0
        if query:
            matched = _WAIT.fullmatch(query)
            if matched is None or (wait := float(matched[1])) > MAX_WAIT_S:
                return False
        parsed, value = _json(body)
        if not parsed:
            return False
        try:
            ask = AskIn.model_validate(value)
        except ValidationError:
            return False
        request = self._request(scope, self._create, receive)
        response: Response
        try:
            state, caller = await _call(request)
            response = await _routes_asks.create(state, caller, session_id, ask, request, wait)
        except Exception as error:
            response = await self._refusal(request, error)
        await response(scope, receive, send)
        return True

    async def _answer_ask(
        self, scope: Scope, interaction_id: str, body: bytes, receive: Receive, send: Send
    ) -> bool:
        if scope["query_string"]:
            return False
        parsed, payload = _json(body)
        if not parsed:
            return False
        request = self._request(scope, self._answer, receive)
        response: Response
        try:
            state, caller = await _call(request)
            response = await _routes_asks.answer(state, caller, interaction_id, payload)
        except Exception as error:
            response = await self._refusal(request, error)
        await response(scope, receive, send)
        return True

    def _request(self, scope: Scope, route: APIRoute, receive: Receive) -> Request:
        scope["route"] = route  # the access log's and the metrics' route template
        return Request(scope, receive)

    async def _refusal(self, request: Request, error: Exception) -> Response:
        """The response the app's own exception handler gives `error`; an error no
        handler below the catch-all knows is raised on, to the server's 500 handling."""
        handlers = self.app.exception_handlers
        for kind in type(error).__mro__:
            if kind is Exception:
                break
            handler = handlers.get(kind)
            if handler is not None:
                response = handler(request, error)
                return await response if inspect.isawaitable(response) else response
        raise error


def _route(path: str) -> APIRoute:
    for route in _routes_asks.router.routes:
        if isinstance(route, APIRoute) and route.path == path and "POST" in (route.methods or ()):
            return route
    raise LookupError(f"the gateway has no POST route {path}")  # pragma: no cover
