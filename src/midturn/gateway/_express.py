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
content type) goes on to FastAPI untouched, so every refusal keeps its exact shape.

The lane sits in front of the whole ASGI stack (`GatewayApp`, `_app.py`): a request it
may take (POST, JSON, one of its two paths, a declared length within the body cap) does
not pass through Starlette's error middleware, FastAPI's telemetry and body-limit layers
or `GatewayMiddleware`'s wrapped `send`; the lane does here what those do for it: the
body read and checked as `GatewayMiddleware` does, the security headers, the access log
and the metrics, and an error no handler knows answered with the catch-all handler's
500 (and raised on to the server, which logs it) as Starlette's error middleware does.
A request it declines after reading the body goes on to the whole stack with the same
messages replayed, so it is served there as if the lane did not exist. When FastAPI's
own telemetry is on (an OpenTelemetry provider configured), the lane steps aside to run
inside the stack (`handle`, called by `GatewayMiddleware`), so every request is traced.
"""

from __future__ import annotations

import inspect
import json
import re
import time
from typing import Any, NamedTuple, NoReturn

from fastapi import FastAPI
from fastapi.routing import APIRoute
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from midturn.gateway import _routes_asks
from midturn.gateway._accounting import EVERY_RESPONSE, account
from midturn.gateway._auth import Principal, bearer_of
from midturn.gateway._body_check import body_problem
from midturn.gateway._errors import MAX_BODY_BYTES
from midturn.gateway._protocol_state import OWN_HEAD
from midturn.gateway._state import MAX_WAIT_S, GatewayState
from midturn.gateway._views import AskIn, ModelResponse

__all__ = ["TELEMETRY_RECHECK_S", "ExpressLane", "Target"]

_ASKS_PREFIX = "/v1/sessions/"
_ASKS_SUFFIX = "/asks"
_ANSWER_PREFIX = "/v1/asks/"
_ANSWER_SUFFIX = "/answer"
_MAX_ID = 200  # the routes' `Path(max_length=200)`
_WAIT = re.compile(rb"wait=(\d{1,2}(?:\.\d{1,6})?)")

TELEMETRY_RECHECK_S = 1.0
"""How often the lane asks FastAPI whether its telemetry is on (the question reads the
environment three times, which costs more than the rest of the lane's own checks): a
provider configured while the gateway runs is seen within this long."""


def _segment(path: str, prefix: str, suffix: str) -> str | None:
    """The one path segment between `prefix` and `suffix`, if `path` is exactly that."""
    if not (path.startswith(prefix) and path.endswith(suffix)):
        return None
    value = path[len(prefix) : len(path) - len(suffix)]
    if not value or "/" in value or len(value) > _MAX_ID:
        return None
    return value


def _json(body: bytes) -> tuple[bool, Any]:
    """`(True, value)` for a body that is one JSON value, else `(False, None)`."""
    if not body:
        return False, None
    try:
        return True, json.loads(body)
    except ValueError:
        return False, None


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A `receive` that hands on `messages` (what the lane read), then the client's own."""
    pending = iter(messages)

    async def replay() -> Message:
        for message in pending:
            return message
        return await receive()

    return replay


class Target(NamedTuple):
    """A request the lane may take: its route, its path parameter, its declared length
    and its `Authorization` header."""

    route: APIRoute
    value: str
    length: int | None
    authorization: str | None


class ExpressLane:
    """Serves the plain cases of the round trip's two routes, in front of the app's
    stack (`front`) or inside `GatewayMiddleware` (`handle`); `respond` is the work both
    share."""

    def __init__(self, app: FastAPI, state: GatewayState, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.state = state
        self.metrics = state.metrics
        self.limit = limit
        self._create = _route("/v1/sessions/{session_id}/asks")
        self._answer = _route("/v1/asks/{interaction_id}/answer")
        self._telemetry = False
        self._telemetry_until = 0.0

    # -- which requests ------------------------------------------------------------

    def target(self, scope: Scope) -> Target | None:
        """What the lane needs of a request it may take: a POST with a JSON content type
        to one of its two paths (its headers read in one pass)."""
        if scope["method"] != "POST":
            return None
        path: str = scope["path"]
        if (value := _segment(path, _ASKS_PREFIX, _ASKS_SUFFIX)) is not None:
            route = self._create
        elif (value := _segment(path, _ANSWER_PREFIX, _ANSWER_SUFFIX)) is not None:
            route = self._answer
        else:
            return None
        content_type: bytes | None = None
        length: bytes | None = None
        authorization: bytes | None = None
        for name, header in scope["headers"]:  # the first of each, as Starlette reads them
            if name == b"content-type":
                content_type = header if content_type is None else content_type
            elif name == b"content-length":
                length = header if length is None else length
            elif name == b"authorization":
                authorization = header if authorization is None else authorization
        if content_type is None or (
            content_type.split(b";", 1)[0].strip().lower() != b"application/json"
        ):
            return None
        return Target(
            route,
            value,
            int(length) if length is not None and length.isdigit() else None,
            authorization.decode("latin-1") if authorization else None,
        )

    def front_target(self, scope: Scope) -> Target | None:
        """`target`, for a request that also declares its length, within the body cap
        (any other is left to the stack, whose middleware refuses or counts it), while
        FastAPI's telemetry is off."""
        target = self.target(scope)
        if target is None or target.length is None or target.length > self.limit:
            return None
        return None if self.telemetry_on() else target

    def telemetry_on(self) -> bool:
        """Whether FastAPI's own telemetry is on (an OpenTelemetry provider configured),
        asked of FastAPI at most once per `TELEMETRY_RECHECK_S`; the health lane
        (`_health.py`) steps aside on the same answer."""
        now = time.monotonic()
        if now >= self._telemetry_until:
            native = getattr(self.app, "_native_telemetry", None)  # FastAPI >= 0.13x
            self._telemetry = native is not None and bool(native.enabled())
            self._telemetry_until = now + TELEMETRY_RECHECK_S
        return self._telemetry

    # -- in front of the stack -----------------------------------------------------

    async def front(
        self,
        scope: Scope,
        target: Target,
        receive: Receive,
        send: Send,
        stack: ASGIApp,
    ) -> None:
        """Serve a request `front_target` chose, or hand it to `stack` (the app's whole
        middleware stack) with the messages read so far replayed."""
        started = time.perf_counter()
        message = await receive()
        messages = [message]
        while message["type"] == "http.request" and message.get("more_body", False):
            message = await receive()
            messages.append(message)
        if message["type"] != "http.request":  # the client went away: as the stack does
            await stack(scope, _replay(messages, receive), send)
            return
        if len(messages) == 1:
            body: bytes = message.get("body", b"")
        else:
            body = b"".join(each.get("body", b"") for each in messages)
        if len(body) > self.limit or body_problem(body) is not None:
            await stack(scope, _replay(messages, receive), send)  # refused there
            return
        scope["app"] = self.app  # as Starlette sets it (`request.app`)
        response: Response | None = None
        status, begun = 500, False
        try:
            response = await self.respond(scope, target, body, receive)
            if response is not None:
                status, begun = response.status_code, True
                await send(
                    {
                        "type": "http.response.start",
                        "status": status,
                        "headers": [*response.raw_headers, *EVERY_RESPONSE],
                        # every header a constant or digits, built here and by the model's
                        OWN_HEAD: type(response) is ModelResponse,
                    }
                )
                await send({"type": "http.response.body", "body": response.body})
        except Exception as error:
            account(self.metrics, scope, status, started)
            await self._crash(scope, receive, send, error, begun)
        except BaseException:
            account(self.metrics, scope, status, started)
            raise
        if response is not None:
            account(self.metrics, scope, status, started)
            return
        await stack(scope, _replay(messages, receive), send)

    async def _crash(
        self, scope: Scope, receive: Receive, send: Send, error: Exception, begun: bool
    ) -> NoReturn:
        """What Starlette's error middleware does with an error no handler took: the
        app's catch-all handler answers (unless the response began), and the error goes
        on to the server, which logs it."""
        handler = self.app.exception_handlers.get(Exception)
        if handler is not None:
            response = handler(Request(scope), error)
            if inspect.isawaitable(response):
                response = await response
            if not begun:
                await response(scope, receive, send)
        raise error

    # -- inside the stack ----------------------------------------------------------

    async def handle(self, scope: Scope, body: bytes, receive: Receive, send: Send) -> bool:
        """Serve a request inside `GatewayMiddleware` (its body read and checked there);
        False when the lane leaves it to FastAPI, its body not yet read by anyone."""
        target = self.target(scope)
        if target is None:
            return False
        response = await self.respond(scope, target, body, receive)
        if response is None:
            return False
        await response(scope, receive, send)
        return True

    # -- the work ------------------------------------------------------------------

    async def respond(
        self, scope: Scope, target: Target, body: bytes, receive: Receive
    ) -> Response | None:
        """The response to a request for `target` whose body passed the middleware's
        checks, or None when FastAPI must read it (it refuses it in its own words). A
        refusal by the route is its handler's response; an error no handler below the
        catch-all knows is raised, for the server's 500 handling."""
        route, value, _, authorization = target
        request = Request(scope, receive)
        if route is self._create:
            return await self._create_ask(request, value, body, authorization)
        return await self._answer_ask(request, value, body, authorization)

    async def _caller(self, request: Request, authorization: str | None) -> Principal:
        """Who calls, as the routes' `Call` dependency (`_state._call`) finds it."""
        principal = await self.state.authority.resolve(
            bearer_of(authorization) if authorization else None
        )
        request.scope.setdefault("state", {})["role"] = principal.role
        return principal

    async def _create_ask(
        self, request: Request, session_id: str, body: bytes, authorization: str | None
    ) -> Response | None:
        query: bytes = request.scope["query_string"]
        wait = 0.0
        if query:
            matched = _WAIT.fullmatch(query)
            if matched is None or (wait := float(matched[1])) > MAX_WAIT_S:
                return None
        parsed, value = _json(body)
        if not parsed:
            return None
        try:
            ask = AskIn.model_validate(value)
        except ValidationError:
            return None
        request.scope["route"] = self._create  # the access log's and the metrics' template
        try:
            caller = await self._caller(request, authorization)
            return await _routes_asks.create(self.state, caller, session_id, ask, request, wait)
        except Exception as error:
            return await self._refusal(request, error)

    async def _answer_ask(
        self, request: Request, interaction_id: str, body: bytes, authorization: str | None
    ) -> Response | None:
        if request.scope["query_string"]:
            return None
        parsed, payload = _json(body)
        if not parsed:
            return None
        request.scope["route"] = self._answer
        try:
            caller = await self._caller(request, authorization)
            return await _routes_asks.answer(self.state, caller, interaction_id, payload)
        except Exception as error:
            return await self._refusal(request, error)

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
