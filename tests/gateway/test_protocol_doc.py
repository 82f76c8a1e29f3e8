"""docs/protocol.md cannot drift: every fenced `http` request in it is replayed, in
order, against a live gateway, and each live response must have the documented shape.

Shape rules (also written at the top of the doc): the status must match; objects must
have exactly the documented keys (a documented key "…" allows more); arrays must have
the documented length (a documented `[]` allows any); JSON types must match; strings
under the keys in `EXACT` must be equal. A documented string `"{name}"` captures the live
value as `name` (or, when `name` is known, must equal it); later requests use `{name}`.
An event-stream response is compared frame by frame: event names equal, data shaped.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from .conftest import ADMIN_TOKEN, SAFETY_S, LiveGateway

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
EXACT = {
    "status",
    "kind",
    "error",
    "outcome",
    "role",
    "type",
    "decision",
    "dialect",
    "risk",
    "tool_call_id",
    "turn_id",
    "on_timeout",
    "settled_by",
}
PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")


@dataclass
class Message:
    first_line: str
    headers: dict[str, str]
    body: str
    line: int


@dataclass
class Exchange:
    request: Message
    response: Message


@dataclass
class Replay:
    values: dict[str, str] = field(default_factory=lambda: {"admin_token": ADMIN_TOKEN})

    def fill(self, text: str) -> str:
        def value(match: re.Match[str]) -> str:
            name = match.group(1)
            assert name in self.values, f"{{{name}}} is used before a response captured it"
            return self.values[name]

        return PLACEHOLDER.sub(value, text)


def _blocks(text: str) -> list[tuple[int, str]]:
    blocks, lines, inside, start, body = [], text.splitlines(), False, 0, []
    for number, line in enumerate(lines, 1):
        if not inside and line.strip() == "```http":
            inside, start, body = True, number, []
        elif inside and line.strip() == "```":
            blocks.append((start, "\n".join(body)))
            inside = False
        elif inside:
            body.append(line)
    assert not inside, "an unclosed ```http block"
    return blocks


def _message(start: int, block: str) -> Message:
    head, _, body = block.partition("\n\n")
    first, *header_lines = head.splitlines()
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip()] = value.strip()
    return Message(first.strip(), headers, body.strip(), start)


def exchanges() -> list[Exchange]:
    messages = [_message(start, block) for start, block in _blocks(DOC.read_text())]
    pairs = []
    for request, response in zip(messages[::2], messages[1::2], strict=True):
        assert not request.first_line.startswith("HTTP/"), f"line {request.line}: a request?"
        assert response.first_line.startswith("HTTP/"), f"line {response.line}: a response?"
        pairs.append(Exchange(request, response))
    return pairs


def same_shape(doc: Any, live: Any, path: str, replay: Replay, problems: list[str]) -> None:
    if isinstance(doc, str) and (match := re.fullmatch(PLACEHOLDER, doc)):
        name = match.group(1)
        if name in replay.values:
            if live != replay.values[name]:
                problems.append(f"{path}: {live!r} is not the earlier {{{name}}}")
        elif isinstance(live, str):
            replay.values[name] = live
        else:
            problems.append(f"{path}: expected a string to capture as {{{name}}}, got {live!r}")
        return
    if isinstance(doc, dict):
        if not isinstance(live, dict):
            problems.append(f"{path}: documented an object, got {live!r}"[:300])
            return
        documented = set(doc) - {"…"}
        if "…" not in doc and set(live) != documented:
            problems.append(f"{path}: keys {sorted(live)} != documented {sorted(documented)}")
        for key in documented & set(live):
            value = doc[key]
            if (
                key in EXACT
                and isinstance(value, str)
                and "…" not in value
                and not (PLACEHOLDER.fullmatch(value))
            ):
                if live[key] != value:
                    problems.append(f"{path}.{key}: {live[key]!r} != documented {value!r}")
                continue
            same_shape(value, live[key], f"{path}.{key}", replay, problems)
        return
    if isinstance(doc, list):
        if not isinstance(live, list):
            problems.append(f"{path}: documented an array, got {live!r}"[:300])
        elif doc and len(doc) != len(live):
            problems.append(f"{path}: {len(live)} items, documented {len(doc)}")
        else:
            for index, (d, v) in enumerate(zip(doc, live, strict=False)):
                same_shape(d, v, f"{path}[{index}]", replay, problems)
        return
    if doc is None or isinstance(doc, bool):
        if live is not doc:
            problems.append(f"{path}: {live!r}, documented {doc!r}")
        return
    kinds = {int: (int, float), float: (int, float), str: (str,)}
    if isinstance(live, bool) or not isinstance(live, kinds[type(doc)]):
        problems.append(f"{path}: {live!r} is not like the documented {doc!r}")


def _frames(text: str) -> list[tuple[str, Any]]:
    frames = []
    for chunk in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in chunk.splitlines() if ": " in line)
        if "data" in fields:
            frames.append((fields.get("event", "message"), json.loads(fields["data"])))
    return frames


async def _live_frames(
    client: httpx.AsyncClient, method: str, url: str, headers: dict[str, str], count: int
) -> list[tuple[str, Any]]:
    got: list[tuple[str, Any]] = []
    async with client.stream(method, url, headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        event, data = "message", None
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: "):
                data = json.loads(line.removeprefix("data: "))
            elif not line and data is not None:
                got.append((event, data))
                event, data = "message", None
                if len(got) == count:
                    break
    return got


async def test_every_documented_exchange_matches_the_live_gateway(gateway: LiveGateway) -> None:
    pairs = exchanges()
    assert len(pairs) >= 20, "the doc lost its examples"
    replay = Replay()
    problems: list[str] = []
    async with httpx.AsyncClient(base_url=gateway.url, timeout=SAFETY_S + 65) as client:
        for exchange in pairs:
            request, documented = exchange.request, exchange.response
            method, target = replay.fill(request.first_line).split()[:2]
            headers = {k: replay.fill(v) for k, v in request.headers.items()}
            where = f"docs/protocol.md:{request.line} {method} {request.first_line.split()[1]}"
            status = int(documented.first_line.split()[1])
            if documented.headers.get("Content-Type") == "text/event-stream":
                doc_frames = _frames(documented.body)
                live = await asyncio.wait_for(
                    _live_frames(client, method, target, headers, len(doc_frames)), SAFETY_S
                )
                for index, ((doc_event, doc_data), (live_event, live_data)) in enumerate(
                    zip(doc_frames, live, strict=True)
                ):
                    if doc_event != live_event:
                        problems.append(f"{where}: frame {index} is {live_event}, not {doc_event}")
                    same_shape(doc_data, live_data, f"{where} frame {index}", replay, problems)
                continue
            body = replay.fill(request.body).encode() if request.body else None
            response = await client.request(method, target, headers=headers, content=body)
            if response.status_code != status:
                problems.append(f"{where}: {response.status_code} != {status}: {response.text}")
                continue
            doc_type = documented.headers.get("Content-Type", "")
            assert response.headers["content-type"].startswith(doc_type), where
            if documented.body:
                same_shape(json.loads(documented.body), response.json(), where, replay, problems)
    assert not problems, "docs/protocol.md has drifted from the gateway:\n" + "\n".join(problems)


def test_the_doc_documents_every_route_of_the_openapi_document(gateway: LiveGateway) -> None:
    spec = httpx.get(f"{gateway.url}/openapi.json").json()
    text = DOC.read_text()
    for path, operations in spec["paths"].items():
        readable = re.sub(r"\{interaction_id\}", "{id}", path).replace("{session_id}", "{sid}")
        for method in operations:
            assert f"{method.upper()} {readable}" in text or f"{method.upper()} {path}" in text, (
                f"{method.upper()} {path} is not documented in docs/protocol.md"
            )
