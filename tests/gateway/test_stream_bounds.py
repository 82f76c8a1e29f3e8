"""Event streams have bounded memory: a client that never reads is dropped once it falls
a bounded number of bytes behind, with a frame naming where to resume; resuming with
`Last-Event-ID` misses nothing; `/healthz` answers meanwhile; a token holds at most a
bounded number of streams (429 past it). Real sockets against a real `midturn serve`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests._servers import serve_child

from .conftest import (
    ADMIN_TOKEN,
    ANSWER,
    ASK,
    SAFETY_S,
    LiveGateway,
    NewSession,
    StartGateway,
    create_ask,
)

BIG_ASK: dict[str, Any] = {
    "questions": [
        {
            "id": f"q{index}",
            "question": f"Question {index}: " + "w" * 480,
            "options": [
                {"label": f"option {choice}", "description": "d" * 230} for choice in range(4)
            ],
        }
        for index in range(4)
    ]
}
"""An ask whose requested event is about 6 KB."""


Stalled = Callable[..., socket.socket]


@pytest.fixture
def stalled() -> Iterator[Stalled]:
    """Open stalled streams (`_stalled`); every one is closed when the test ends."""
    opened: list[socket.socket] = []

    def open_stream(port: int, path: str = "/v1/events", token: str = ADMIN_TOKEN) -> socket.socket:
        sock = _stalled(port, path, token)
        opened.append(sock)
        return sock

    yield open_stream
    for sock in opened:
        sock.close()


def _stalled(port: int, path: str, token: str) -> socket.socket:
    """An SSE request on a socket with a tiny receive buffer, never read afterwards."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(SAFETY_S)
    sock.connect(("127.0.0.1", port))
    sock.sendall(
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
        "Accept: text/event-stream\r\n\r\n".encode()
    )
    return sock


async def _metric(client: httpx.AsyncClient, name: str) -> int:
    text = (await client.get("/metrics")).text
    found = re.search(rf"^{name} (\d+)$", text, re.MULTILINE)
    assert found is not None, f"/metrics has no {name}"
    return int(found.group(1))


async def _until_metric(client: httpx.AsyncClient, name: str, at_least: int) -> int:
    for _ in range(2000):
        value = await _metric(client, name)
        if value >= at_least:
            return value
        await asyncio.sleep(0.01)
    raise AssertionError(f"{name} never reached {at_least}")


async def _publish(client: httpx.AsyncClient, asks: int, turn: str = "t") -> None:
    """`asks` big asks in one session and turn, then the turn stopped: about 12 KB of
    events per ask."""
    session = (await client.post("/v1/sessions", json={})).json()["session_id"]
    for index in range(asks):
        created = await client.post(
            f"/v1/sessions/{session}/asks",
            json={"tool_input": BIG_ASK, "tool_call_id": f"{turn}-{index}", "turn_id": turn},
        )
        assert created.status_code == 201, created.text
    stopped = await client.post(f"/v1/sessions/{session}/turns/{turn}/stop")
    assert stopped.status_code == 200, stopped.text


def _read_response(sock: socket.socket) -> bytes:
    """The whole body of the chunked response on `sock` (the server ends it)."""
    raw = b""
    while b"\r\n\r\n" not in raw:
        raw += sock.recv(65536)
    head, _, rest = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    body = b""
    while True:
        while b"\r\n" not in rest:
            more = sock.recv(65536)
            assert more, "the connection closed inside the response"
            rest += more
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        while len(rest) < size + 2:
            more = sock.recv(65536)
            assert more, "the connection closed inside a chunk"
            rest += more
        if size == 0:
            return body
        body += rest[:size]
        rest = rest[size + 2 :]


def _frames(text: str) -> list[dict[str, str]]:
    frames = []
    for block in text.split("\n\n"):
        fields = dict(
            line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(":")
        )
        if "data" in fields:
            frames.append(fields)
    return frames


async def _sentinel(admin: httpx.AsyncClient) -> str:
    """A small ask created last: its requested event is the newest event of interest."""
    session = (await admin.post("/v1/sessions", json={})).json()["session_id"]
    return await _sentinel_in(admin, session)


async def _sentinel_in(admin: httpx.AsyncClient, session: str) -> str:
    created = await admin.post(
        f"/v1/sessions/{session}/asks",
        json={"tool_input": ASK, "tool_call_id": "sentinel", "turn_id": "s"},
    )
    assert created.status_code == 201, created.text
    interaction_id: str = created.json()["interaction"]["id"]
    return interaction_id


async def _ids_until(response: httpx.Response, interaction_id: str) -> list[int]:
    """Event ids on a stream up to the requested event of `interaction_id`."""
    ids: list[int] = []

    async def collect() -> None:
        event_id = None
        async for line in response.aiter_lines():
            if line.startswith("id: "):
                event_id = int(line[4:])
                ids.append(event_id)
            elif line.startswith("data: ") and event_id is not None:
                event = json.loads(line[6:])
                if event["type"] == "user_question_requested" and (
                    event["interaction_id"] == interaction_id
                ):
                    return

    await asyncio.wait_for(collect(), SAFETY_S)
    return ids


async def test_a_stream_that_falls_behind_is_dropped_and_resumes_without_a_gap(
    start_gateway: StartGateway, db_url: str, stalled: Stalled
) -> None:
    gateway = start_gateway(db_url, stream_buffer_bytes=64 * 1024)
    sock = stalled(gateway.port)
    async with gateway.client() as admin:
        await _until_metric(admin, "midturn_open_streams", 1)
        await _publish(admin, 40)
        await _until_metric(admin, "midturn_streams_dropped_total", 1)
        assert (await admin.get("/healthz")).status_code == 200
        sentinel = await _sentinel(admin)

        body = await asyncio.to_thread(_read_response, sock)
        sock.close()
        *events, last = _frames(body.decode())
        assert last["event"] == "stream_dropped" and "id" not in last
        resume = json.loads(last["data"])["last_event_id"]
        ids = [int(frame["id"]) for frame in events]
        assert ids == list(range(1, len(ids) + 1)) and ids[-1] == resume

        # the client reconnects with Last-Event-ID and gets every later event, once
        headers = {"Last-Event-ID": str(resume)}
        async with admin.stream("GET", "/v1/events", headers=headers) as response:
            later = await _ids_until(response, sentinel)
    assert later == list(range(resume + 1, later[-1] + 1))
    assert len(later) > 2  # it had fallen behind: events were still to come


async def test_a_stream_that_never_reads_is_dropped_when_its_events_come_one_at_a_time(
    start_gateway: StartGateway, db_url: str, stalled: Stalled
) -> None:
    # Each ask is its own request, so the stream's task runs between two events and
    # hands each on to its connection: only the connection's send buffer holds them
    # back. Left to the kernel's sizing it took megabytes from a client that never
    # read (about 3 MB on Linux's defaults) before a write waited, and ~650 KB of asks
    # never made the stream fall behind.
    gateway = start_gateway(db_url, stream_buffer_bytes=64 * 1024)
    sock = stalled(gateway.port)
    async with gateway.client() as admin:
        await _until_metric(admin, "midturn_open_streams", 1)
        session = (await admin.post("/v1/sessions", json={})).json()["session_id"]
        for index in range(80):  # about 8 KB of events each, no turn stopped
            created = await admin.post(
                f"/v1/sessions/{session}/asks",
                json={"tool_input": BIG_ASK, "tool_call_id": f"c{index}", "turn_id": "t"},
            )
            assert created.status_code == 201, created.text
        await _until_metric(admin, "midturn_streams_dropped_total", 1)
    body = await asyncio.to_thread(_read_response, sock)
    *events, last = _frames(body.decode())
    assert last["event"] == "stream_dropped"
    assert json.loads(last["data"])["last_event_id"] == int(events[-1]["id"])


async def test_stalled_streams_keep_the_server_small_and_healthz_answering(
    tmp_path: Path, stalled: Stalled
) -> None:
    db_url = f"sqlite:///{tmp_path / 'midturn.db'}"
    env = {
        **os.environ,
        "MIDTURN_STREAM_BUFFER_BYTES": str(64 * 1024),
        "MIDTURN_MAX_STREAMS_PER_TOKEN": str(STREAMS),
    }
    with serve_child(db_url, ADMIN_TOKEN, tmp_path / "serve.log", env=env) as (url, process):
        port = int(url.rsplit(":", 1)[1])
        async with httpx.AsyncClient(
            base_url=url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=SAFETY_S
        ) as admin:
            await _publish(admin, 60, turn="history")  # a log of ~2.4 MB to replay
            before = _rss_bytes(process.pid)
            streams = [stalled(port) for _ in range(STREAMS)]
            await _until_metric(admin, "midturn_open_streams", STREAMS)
            await _publish(admin, 20, turn="live")
            # every stream fell behind and was let go of, its buffer freed
            await _until_metric(admin, "midturn_streams_dropped_total", STREAMS)
            assert (await admin.get("/healthz")).json() == {"status": "ok"}
            assert await _metric(admin, "midturn_stream_buffer_bytes") == 0
            grown = _rss_bytes(process.pid) - before
            print(f"{STREAMS} stalled streams: the server grew by {grown / 2**20:.1f} MiB")
            for sock in streams:
                sock.close()  # before the server stops: it waits for open streams
    # each stream holds at most a replay page and one write: well under 1 MB apiece
    # (unbounded, each one held the whole replayed log, ~10 MB, and grew with it)
    assert grown < STREAMS * 1024 * 1024, f"the server grew by {grown / 2**20:.0f} MiB"


STREAMS = 40


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


async def test_a_token_holds_a_bounded_number_of_streams(
    start_gateway: StartGateway, db_url: str, stalled: Stalled
) -> None:
    gateway = start_gateway(db_url, max_streams_per_token=2)
    async with gateway.client() as admin:
        session = (await admin.post("/v1/sessions", json={})).json()
        path = f"/v1/sessions/{session['session_id']}/events"
        held = [stalled(gateway.port, path, session["answer_token"]) for _ in range(2)]
        await _until_metric(admin, "midturn_open_streams", 2)
        refused = await admin.get(
            path, headers={"Authorization": f"Bearer {session['answer_token']}"}
        )
        assert refused.status_code == 429
        body = refused.json()
        assert body["error"] == "too_many_streams" and "2 event streams" in body["message"]
        # another token is not affected
        async with admin.stream("GET", path) as response:
            assert response.status_code == 200
        held.pop().close()
        for _ in range(2000):
            if await _metric(admin, "midturn_open_streams") == 1:
                break
            await asyncio.sleep(0.01)
        async with (
            gateway.client(session["answer_token"]) as answerer,
            answerer.stream("GET", path) as response,
        ):
            assert response.status_code == 200


async def test_live_events_reach_streams_from_the_runtime_not_the_log(
    gateway: LiveGateway, new_session: NewSession
) -> None:
    session = await new_session()
    async with (
        gateway.client() as admin,
        admin.stream("GET", f"/v1/sessions/{session.session_id}/events") as response,
    ):
        await _until_metric(admin, "midturn_open_streams", 1)
        asked = [await create_ask(gateway, session, f"call-{n}", turn_id=f"t{n}") for n in range(5)]
        for ask in asked:
            answered = await admin.post(f"/v1/asks/{ask['id']}/answer", json=ANSWER)
            assert answered.status_code == 200, answered.text
        last = await _sentinel_in(admin, session.session_id)
        ids = await _ids_until(response, last)
        assert ids == list(range(1, ids[-1] + 1))  # in order, none missed, none twice
        assert await _metric(admin, "midturn_event_log_reads_total") == 0


async def test_tail_starts_a_stream_with_only_the_newest_events(
    gateway: LiveGateway, new_session: NewSession
) -> None:
    session, other = await new_session(), await new_session()
    for n in range(3):
        await create_ask(gateway, session, f"call-{n}", turn_id=f"t{n}")
        await create_ask(gateway, other, f"call-{n}", turn_id=f"t{n}")  # interleaved ids
    path = f"/v1/sessions/{session.session_id}/events"
    async with gateway.client() as admin:
        everything = await _ids_until_count(admin, path, {}, 6)
        async with admin.stream("GET", path, params={"tail": 2}) as response:
            await _until_metric(admin, "midturn_open_streams", 1)
            last = await _sentinel_in(admin, session.session_id)
            window = await _ids_until(response, last)
        # the session's newest two, then live: the sentinel ask's request
        assert window == [everything[-2], everything[-1], window[-1]]
        assert window[-1] > everything[-1]
        # a resume point wins over tail
        headers = {"Last-Event-ID": str(everything[0])}
        async with admin.stream("GET", path, params={"tail": 1}, headers=headers) as response:
            resumed = await _ids_until(response, last)
        assert resumed[:5] == everything[1:]
        refused = await admin.get(path, params={"tail": -1})
        assert refused.status_code == 422 and refused.json()["error"] == "invalid_request"


async def _ids_until_count(
    admin: httpx.AsyncClient, path: str, params: dict[str, Any], count: int
) -> list[int]:
    ids: list[int] = []
    async with admin.stream("GET", path, params=params) as response:

        async def collect() -> None:
            async for line in response.aiter_lines():
                if line.startswith("id: "):
                    ids.append(int(line[4:]))
                    if len(ids) == count:
                        return

        await asyncio.wait_for(collect(), SAFETY_S)
    return ids


async def _until_not_refused(client: httpx.AsyncClient, path: str) -> int:
    """The status of the first stream request on `path` that is not refused with 429
    (429 for as long as SAFETY_S lasts)."""
    status = 429
    for _ in range(200):
        async with client.stream("GET", path) as response:
            status = response.status_code
        if status != 429:
            return status
        await asyncio.sleep(0.1)
    return status


async def test_a_stream_whose_client_stops_reading_gives_its_slot_back(
    start_gateway: StartGateway, db_url: str, stalled: Stalled
) -> None:
    # One stream per token; a write that waits more than half a second for a client
    # that reads nothing ends the connection, and with it the stream and its slot.
    gateway = start_gateway(db_url, max_streams_per_token=1, stream_write_timeout_s=0.5)
    async with gateway.client() as admin:
        session = (await admin.post("/v1/sessions", json={})).json()
        for index in range(500):  # a log of ~6 MB to replay, more than sockets buffer
            created = await admin.post(
                f"/v1/sessions/{session['session_id']}/asks",
                json={"tool_input": BIG_ASK, "tool_call_id": f"c{index}", "turn_id": "t"},
            )
            assert created.status_code == 201, created.text
        path = f"/v1/sessions/{session['session_id']}/events"
        sock = stalled(gateway.port, path, session["answer_token"])
        await _until_metric(admin, "midturn_open_streams", 1)
        # The client holds its socket open and reads nothing: the replay's write waits
        # on it. Its slot comes back once that write has waited too long.
        async with gateway.client(session["answer_token"]) as answerer:
            assert await _until_not_refused(answerer, path) == 200
        # the server closed the stalled connection (a client would reconnect with the
        # last id it read), rather than leave it open half-written
        received = b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(65536):
                received += chunk
        assert received.startswith(b"HTTP/1.1 200")
        assert len(received) < 6_000_000  # it ended the replay early, not at its end


async def test_a_stream_whose_client_reads_slowly_is_not_ended_by_the_write_timeout(
    start_gateway: StartGateway, db_url: str
) -> None:
    gateway = start_gateway(db_url, stream_write_timeout_s=0.5)
    async with gateway.client() as admin:
        session = (await admin.post("/v1/sessions", json={})).json()
        path = f"/v1/sessions/{session['session_id']}/events"
        async with admin.stream("GET", path) as response:
            await _until_metric(admin, "midturn_open_streams", 1)
            await asyncio.sleep(1.0)  # idle longer than the write timeout: no write waits
            last = await _sentinel_in(admin, session["session_id"])
            ids = await _ids_until(response, last)
    assert ids == [1]  # the sentinel's request: the stream was still open


def test_the_stream_write_timeout_comes_from_the_environment_and_is_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from midturn.errors import UsageError
    from midturn.gateway._state import StreamLimits

    monkeypatch.setenv("MIDTURN_STREAM_WRITE_TIMEOUT_S", "2.5")
    assert StreamLimits.from_env().write_timeout_s == 2.5
    assert StreamLimits.from_env(write_timeout_s=7).write_timeout_s == 7
    monkeypatch.setenv("MIDTURN_STREAM_WRITE_TIMEOUT_S", "soon")
    with pytest.raises(UsageError, match="MIDTURN_STREAM_WRITE_TIMEOUT_S must be a number"):
        StreamLimits.from_env()
    monkeypatch.delenv("MIDTURN_STREAM_WRITE_TIMEOUT_S")
    assert StreamLimits.from_env().write_timeout_s == 60.0
    with pytest.raises(UsageError, match="more than 0 seconds"):
        StreamLimits(write_timeout_s=0)
