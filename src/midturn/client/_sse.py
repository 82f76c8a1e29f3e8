"""Reading a server-sent event stream line by line (the parts midturn's gateway sends)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

__all__ = ["SseFrame", "read_frames"]


@dataclass(frozen=True, slots=True)
class SseFrame:
    id: str | None
    event: str
    data: str
    retry_ms: int | None = None


async def read_frames(lines: AsyncIterator[str]) -> AsyncIterator[SseFrame]:
    """Frames from the lines of a stream, per the SSE rules: `field: value` lines, a blank
    line ends a frame, `:` lines are comments, `data` lines join with newlines."""
    event_id: str | None = None
    event = "message"
    data: list[str] = []
    retry: int | None = None
    async for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                yield SseFrame(event_id, event, "\n".join(data), retry)
            elif retry is not None:
                yield SseFrame(None, "retry", "", retry)
            event_id, event, data, retry = None, "message", [], None
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "id":
            event_id = value
        elif name == "event":
            event = value
        elif name == "data":
            data.append(value)
        elif name == "retry" and value.isdigit():
            retry = int(value)
