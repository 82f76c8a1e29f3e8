"""Hostile bodies and headers against a real `midturn serve` (issue 10): each one a clear
4xx in the documented JSON shape `{error, message}`, nothing stored, and the next request
on the same keep-alive connection still served.

The requests go over one raw TCP connection (`_Connection`), so "the same connection"
is exactly that: no client library reconnecting behind the test's back."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from typing import Any

import pytest

from midturn.gateway._protocol import JsonErrorsH11Protocol
from midturn.gateway._protocol_httptools import JsonErrorsHttpToolsProtocol

from .conftest import ASK, SAFETY_S, LiveGateway, Session, StartGateway


@pytest.fixture(params=["h11", "httptools"])
def gateway(
    request: pytest.FixtureRequest, start_gateway: StartGateway, db_url: str
) -> LiveGateway:
    """Every test here on both HTTP parsers: h11 and httptools (midturn[fast], installed
    with `dev`, so it never skips)."""
    return start_gateway(db_url, http=request.param)


LONE = b"\\ud800"  # JSON text for a lone UTF-16 surrogate


class _Connection:
    """One HTTP/1.1 keep-alive connection to the gateway, request by request."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, gateway: LiveGateway) -> _Connection:
        reader, writer = await asyncio.open_connection("127.0.0.1", gateway.port)
        return cls(reader, writer)

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()

    async def request(
        self,
        method: str,
        path: str,
        token: str | None = None,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
        if token:
            lines.append(f"Authorization: Bearer {token}")
        if body is not None:
            lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b""))
        await self.writer.drain()
        return await asyncio.wait_for(self._response(), SAFETY_S)

    async def _response(self) -> tuple[int, dict[str, str], bytes]:
        head = await self.reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in header_lines:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        if headers.get("content-type", "").startswith("text/event-stream"):
            return int(status_line.split()[1]), headers, b""
        body = await self.reader.readexactly(int(headers.get("content-length", "0")))
        return int(status_line.split()[1]), headers, body


def _refused(response: tuple[int, dict[str, str], bytes], status: int, error: str) -> str:
    code, headers, body = response
    assert code == status, body
    assert headers["content-type"].startswith("application/json")
    data = json.loads(body)
    assert data["error"] == error
    assert isinstance(data["message"], str) and len(data["message"]) > 20
    assert "Traceback" not in body.decode()
    message: str = data["message"]
    return message


async def _still_serving(connection: _Connection, session: Session) -> None:
    """The next request on the same connection is served."""
    code, _, body = await connection.request(
        "GET", f"/v1/sessions/{session.session_id}/interactions", session.agent_token
    )
    assert code == 200, body


def _count(gateway: LiveGateway, table: str) -> int:
    path = gateway.db_url.removeprefix("sqlite:///")
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        (count,) = db.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(count)


def _ask_body(tool_input: bytes | str, **fields: Any) -> bytes:
    raw = tool_input if isinstance(tool_input, bytes) else tool_input.encode()
    extra = "".join(f', "{key}": {json.dumps(value)}' for key, value in fields.items())
    return b'{"tool_input": ' + raw + extra.encode() + b"}"


QUESTION = b'{"questions": [{"question": "Which one", "options": ["A", "B"]}]}'


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        (
            _ask_body(
                b'{"questions": [{"question": "Which ' + LONE + b'", "options": ["A", "B"]}]}'
            ),
            422,
            "invalid_request",
        ),
        (
            _ask_body(QUESTION, dialect="midturn", turn_id="t").replace(
                b'"t"', b'"t' + LONE + b'"'
            ),
            422,
            "invalid_request",
        ),
        (
            _ask_body(b'{"questions": [{"question": "Name?"}], "timeout_s": 3e11}'),
            422,
            "invalid_ask",
        ),
        (
            _ask_body(b'{"questions": [{"question": "Name?"}], "timeout_s": 1e400}'),
            422,
            "invalid_ask",
        ),
        (
            _ask_body(b'{"question_id": "x", "title": "Which?", "kind": ["text"]}', dialect="neo"),
            422,
            "invalid_ask",
        ),
        (
            _ask_body(b'{"question_id": "x", "title": "Which?", "kind": {"a": 1}}', dialect="auto"),
            422,
            "invalid_ask",
        ),
        (_ask_body(b'{"question": "Which?", "kind": []}', dialect="auto"), 422, "invalid_ask"),
        (_ask_body(b"[" * 300 + b"]" * 300), 422, "invalid_request"),
        (_ask_body(QUESTION).replace(b"Which one", b"Which \xff"), 422, "invalid_request"),
    ],
    ids=[
        "surrogate-in-question",
        "surrogate-in-turn-id",
        "timeout-3e11",
        "timeout-1e400",
        "kind-list",
        "kind-object",
        "kind-empty-list-pi",
        "nested-300",
        "not-utf8",
    ],
)
async def test_a_hostile_ask_is_a_4xx_and_the_connection_serves_on(
    gateway: LiveGateway, session: Session, body: bytes, status: int, error: str
) -> None:
    connection = await _Connection.open(gateway)
    try:
        url = f"/v1/sessions/{session.session_id}/asks"
        _refused(await connection.request("POST", url, session.agent_token, body), status, error)
        await _still_serving(connection, session)
    finally:
        await connection.close()
    assert _count(gateway, "midturn_interactions") == 0


@pytest.mark.parametrize("depth", [300, 5000])
async def test_session_meta_nested_deeply_is_a_422_and_creates_nothing(
    gateway: LiveGateway, session: Session, depth: int
) -> None:
    before = _count(gateway, "midturn_sessions")
    connection = await _Connection.open(gateway)
    try:
        meta = b'{"meta": {"a": ' + b"[" * depth + b"]" * depth + b"}}"
        response = await connection.request("POST", "/v1/sessions", gateway.admin_token, meta)
        assert "64 levels" in _refused(response, 422, "invalid_request")
        await _still_serving(connection, session)
        flat = await connection.request(
            "POST", "/v1/sessions", gateway.admin_token, b'{"meta": {"a": [[1]]}}'
        )
        assert flat[0] == 201
    finally:
        await connection.close()
    assert _count(gateway, "midturn_sessions") == before + 1


async def test_a_lone_surrogate_in_an_answer_is_a_422_and_the_ask_stays_readable(
    gateway: LiveGateway, session: Session
) -> None:
    connection = await _Connection.open(gateway)
    try:
        secret = b'{"questions": [{"id": "token", "question": "Token?", "secret": true}]}'
        url = f"/v1/sessions/{session.session_id}/asks"
        code, _, created = await connection.request(
            "POST", url, session.agent_token, _ask_body(secret)
        )
        assert code == 201, created
        ask_id = json.loads(created)["interaction"]["id"]
        answer = f"/v1/asks/{ask_id}/answer"
        for body in (b'"hunter' + LONE + b'"', b'{"answers": {"token": "' + LONE + b'x"}}'):
            response = await connection.request("POST", answer, session.answer_token, body)
            _refused(response, 422, "invalid_request")
        for token in (session.agent_token, session.answer_token):  # every read still works
            code, _, read = await connection.request("GET", f"/v1/asks/{ask_id}", token)
            assert code == 200, read
            assert json.loads(read)["interaction"]["status"] == "pending"
        code, _, settled = await connection.request(
            "POST", answer, session.answer_token, b'"hunter2"'
        )
        assert code == 200, settled
        code, _, read = await connection.request("GET", f"/v1/asks/{ask_id}", session.agent_token)
        assert code == 200 and json.loads(read)["secrets"] == {"token": "hunter2"}
    finally:
        await connection.close()


@pytest.mark.parametrize("position", [str(2**64), str(2**63), "1" + "0" * 39])
async def test_a_resume_point_beyond_64_bits_is_refused_not_an_empty_stream(
    gateway: LiveGateway, session: Session, position: str
) -> None:
    connection = await _Connection.open(gateway)
    try:
        for path, headers in (
            ("/v1/events", {"Last-Event-ID": position}),
            (f"/v1/events?after={position}", {}),
            (f"/v1/sessions/{session.session_id}/events", {"Last-Event-ID": position}),
        ):
            token = gateway.admin_token
            response = await connection.request("GET", path, token, headers=headers)
            _refused(response, 422, "invalid_request")
        await _still_serving(connection, session)
    finally:
        await connection.close()


async def test_the_largest_event_id_is_still_a_resume_point(gateway: LiveGateway) -> None:
    connection = await _Connection.open(gateway)
    try:
        headers = {"Last-Event-ID": str(2**63 - 1)}
        code, response_headers, _ = await connection.request(
            "GET", "/v1/events", gateway.admin_token, headers=headers
        )
        assert code == 200
        assert response_headers["content-type"].startswith("text/event-stream")
    finally:
        await connection.close()


async def test_oversized_headers_get_a_json_431(gateway: LiveGateway, session: Session) -> None:
    """Headers that outgrow h11's 16 KiB buffer before they end. (They are sent and then
    the test waits: a client still sending when the server closes may see a reset
    instead of the refusal, with any HTTP server that does not linger.)"""
    reader, writer = await asyncio.open_connection("127.0.0.1", gateway.port)
    try:
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + b"a" * 20_000)
        await writer.drain()
        response = await asyncio.wait_for(_Connection(reader, writer)._response(), SAFETY_S)
        _refused(response, 431, "headers_too_large")
        assert response[1]["connection"] == "close"
    finally:
        writer.close()
        await writer.wait_closed()
    fresh = await _Connection.open(gateway)  # the server itself serves on
    try:
        await _still_serving(fresh, session)
    finally:
        await fresh.close()


async def test_a_request_that_is_not_http_gets_a_json_400(gateway: LiveGateway) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", gateway.port)
    try:
        writer.write(b"NOT HTTP AT ALL\r\n\r\n")
        await writer.drain()
        connection = _Connection(reader, writer)
        response = await asyncio.wait_for(connection._response(), SAFETY_S)
        assert "not valid HTTP/1.1" in _refused(response, 400, "invalid_http")
    finally:
        writer.close()
        await writer.wait_closed()


async def test_the_ask_used_here_is_accepted(gateway: LiveGateway, session: Session) -> None:
    """The bodies above are refused for their fault alone: the same body without it is
    created."""
    connection = await _Connection.open(gateway)
    try:
        url = f"/v1/sessions/{session.session_id}/asks"
        for body in (_ask_body(QUESTION), _ask_body(json.dumps(ASK))):
            code, _, created = await connection.request("POST", url, session.agent_token, body)
            assert code == 201, created
    finally:
        await connection.close()


def test_each_parser_named_is_the_one_serving(
    gateway: LiveGateway, request: pytest.FixtureRequest
) -> None:
    """`http=` reaches uvicorn: the tests above ran on the parser they name."""
    expected = {"h11": JsonErrorsH11Protocol, "httptools": JsonErrorsHttpToolsProtocol}
    assert gateway._server.config.http is expected[request.node.callspec.params["gateway"]]


async def test_a_body_larger_than_the_head_bound_is_not_taken_for_a_long_head(
    gateway: LiveGateway, session: Session
) -> None:
    """The head bound (16 KiB, h11's) counts the head only: a small head with a large body
    arriving in the same reads is served, and so is the next request after it."""
    connection = await _Connection.open(gateway)
    try:
        body = _ask_body(json.dumps(ASK)) + b" " * 40_000  # JSON allows the trailing space
        url = f"/v1/sessions/{session.session_id}/asks"
        code, _, created = await connection.request("POST", url, session.agent_token, body)
        assert code == 201, created
        await _still_serving(connection, session)
    finally:
        await connection.close()
