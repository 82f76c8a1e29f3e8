"""Every error leaves the gateway as JSON `{error, message, ...}`, never a stack trace.

The runtime's exceptions map to statuses here, and so do the errors FastAPI and Starlette
raise themselves (unknown route, wrong method, malformed request)."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from midturn.errors import (
    AlreadySettled,
    Forbidden,
    InvalidAnswer,
    InvalidAsk,
    MidturnError,
    NotFound,
    ToolCallConflict,
    Unauthorized,
    UsageError,
)

__all__ = ["PayloadTooLarge", "TooManyStreams", "error_response", "install_error_handlers"]

log = logging.getLogger("midturn.gateway")

MAX_BODY_BYTES = 64 * 1024


class PayloadTooLarge(MidturnError):
    """A request body over the cap (64 KiB)."""

    def __init__(self, limit: int = MAX_BODY_BYTES) -> None:
        super().__init__(
            f"the request body is larger than {limit // 1024} KiB; send a smaller body "
            "(long details belong in a file the answerer can open)"
        )


class TooManyStreams(MidturnError):
    """A token already holds as many open event streams as the gateway allows."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"this token already has {limit} event streams open, the most the gateway "
            "allows at once (serve --max-streams-per-token); close one, or reuse one "
            "stream for every session (admin: GET /v1/events)"
        )


def error_response(
    status: int, error: str, message: str, *, headers: dict[str, str] | None = None, **extra: Any
) -> JSONResponse:
    return JSONResponse({"error": error, "message": message, **extra}, status, headers=headers)


def _problem_path(loc: tuple[Any, ...] | list[Any]) -> str:
    return ".".join(str(part) for part in loc)


async def _invalid_ask(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, InvalidAsk)
    return error_response(422, "invalid_ask", str(exc), problems=exc.to_list())


async def _invalid_answer(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, InvalidAnswer)
    return error_response(422, "invalid_answer", str(exc), question=exc.question)


async def _already_settled(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AlreadySettled)
    interaction = exc.interaction
    body = interaction.model_dump(mode="json") if hasattr(interaction, "model_dump") else None
    return error_response(409, "already_settled", str(exc), interaction=body)


async def _not_found(_: Request, exc: Exception) -> JSONResponse:
    return error_response(404, "not_found", str(exc))


async def _unauthorized(_: Request, exc: Exception) -> JSONResponse:
    return error_response(
        401, "unauthorized", str(exc), headers={"WWW-Authenticate": 'Bearer realm="midturn"'}
    )


async def _forbidden(_: Request, exc: Exception) -> JSONResponse:
    return error_response(403, "forbidden", str(exc))


async def _too_large(_: Request, exc: Exception) -> JSONResponse:
    return error_response(413, "payload_too_large", str(exc))


async def _tool_call_conflict(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ToolCallConflict)
    existing = exc.existing
    return error_response(
        409,
        "tool_call_conflict",
        str(exc),
        interaction_id=getattr(existing, "id", None),
        kind=getattr(existing, "kind", None),
    )


async def _too_many_streams(_: Request, exc: Exception) -> JSONResponse:
    return error_response(429, "too_many_streams", str(exc), headers={"Retry-After": "5"})


async def _usage(_: Request, exc: Exception) -> JSONResponse:
    return error_response(400, "bad_request", str(exc))


async def _validation(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = [
        {"path": _problem_path(item.get("loc", ())), "message": str(item.get("msg", "invalid"))}
        for item in exc.errors()
    ]
    summary = "; ".join(f"{p['path']}: {p['message']}" for p in problems[:5])
    return error_response(
        422,
        "invalid_request",
        f"the request is malformed: {summary}. Fix the request as the OpenAPI document "
        "at /openapi.json describes",
        problems=problems,
    )


async def _http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    path = request.url.path
    if isinstance(exc.__cause__, PayloadTooLarge):  # raised while FastAPI read the body
        return error_response(413, "payload_too_large", str(exc.__cause__))
    if exc.status_code == 404:
        return error_response(
            404, "not_found", f"no route {path}; see /openapi.json for the routes"
        )
    if exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow", "")
        hint = f"; use {allowed}" if allowed else ""
        return error_response(
            405,
            "method_not_allowed",
            f"{request.method} is not allowed on {path}{hint}",
            headers={"Allow": allowed} if allowed else None,
        )
    detail = exc.detail if isinstance(exc.detail, str) else "the request was refused"
    return error_response(exc.status_code, "http_error", detail, headers=dict(exc.headers or {}))


async def _internal(request: Request, exc: Exception) -> JSONResponse:
    log.error("internal error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(
        500,
        "internal_error",
        "the gateway failed on this request; it was logged on the server. Retry, and "
        "report it if it persists",
    )


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(InvalidAsk, _invalid_ask)
    app.add_exception_handler(InvalidAnswer, _invalid_answer)
    app.add_exception_handler(AlreadySettled, _already_settled)
    app.add_exception_handler(NotFound, _not_found)
    app.add_exception_handler(Forbidden, _forbidden)
    app.add_exception_handler(Unauthorized, _unauthorized)
    app.add_exception_handler(PayloadTooLarge, _too_large)
    app.add_exception_handler(ToolCallConflict, _tool_call_conflict)
    app.add_exception_handler(TooManyStreams, _too_many_streams)
    app.add_exception_handler(UsageError, _usage)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(StarletteHTTPException, _http)
    app.add_exception_handler(Exception, _internal)
