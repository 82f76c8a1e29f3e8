"""A stand-in for the Anthropic Messages API on 127.0.0.1, for tests that run the real
Claude Code CLI (the one bundled with claude-agent-sdk) with `ANTHROPIC_BASE_URL` pointed
here: `POST /v1/messages` streams the reply a script gives for the conversation so far
(server-sent events of the real shape); every other route answers `{}`. No network.

The script: a function of the request's `messages` returning the reply's content blocks
(`{"type": "text", "text": …}` or `{"type": "tool_use", "id": …, "name": …, "input": …}`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Script = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


def tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The `tool_result` blocks of a conversation, in order."""
    return [
        block
        for message in messages
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def _events(content: list[dict[str, Any]], model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    usage = {"input_tokens": 1, "output_tokens": 1}
    start = {"id": "msg_fake", "type": "message", "role": "assistant", "model": model}
    start.update(content=[], stop_reason=None, stop_sequence=None, usage=usage)
    yield "message_start", {"type": "message_start", "message": start}
    stop = "end_turn"
    for index, block in enumerate(content):
        if block["type"] == "text":
            opened: dict[str, Any] = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            stop = "tool_use"
            opened = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": opened,
            },
        )
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 1},
        },
    )
    yield "message_stop", {"type": "message_stop"}


class FakeAnthropic:
    """`with FakeAnthropic(script) as api:` serves on `api.url`; `api.requests` holds the
    `messages` of every model request, in order."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[list[dict[str, Any]]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self.send_response(404)
                self.end_headers()

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
                    self._json(b"{}")
                    return
                request = json.loads(body)
                messages = request.get("messages") or []
                fake.requests.append(messages)
                events = list(_events(fake.script(messages), str(request.get("model"))))
                if not request.get("stream"):
                    self._json(json.dumps(_whole(events)).encode())
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for name, data in events:
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

            def _json(self, payload: bytes) -> None:
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def _whole(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The non-streaming response the events add up to."""
    message: dict[str, Any] = dict(events[0][1]["message"])
    blocks: list[dict[str, Any]] = []
    for name, data in events:
        if name == "content_block_start":
            blocks.append(dict(data["content_block"]))
        elif name == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta":
                blocks[-1]["text"] += delta["text"]
            else:
                blocks[-1]["input"] = json.loads(delta["partial_json"])
        elif name == "message_delta":
            message["stop_reason"] = data["delta"]["stop_reason"]
    message["content"] = blocks
    return message


def cli_environment(api: str, home: str) -> dict[str, str]:
    """What the real CLI needs to talk to the stand-in only: its URL, a key it accepts,
    a home of its own (settings, transcripts), no telemetry or other traffic."""
    return {
        "ANTHROPIC_BASE_URL": api,
        "ANTHROPIC_API_KEY": "sk-ant-fake-for-tests",
        "HOME": home,
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
