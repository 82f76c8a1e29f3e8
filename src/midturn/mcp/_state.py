"""The `requestState` of the 2026-07-28 multi-round trip (MRTR).

The SDK's `RequestStateBoundary` seals what a handler returns as `requestState` (AES-256-GCM
under our key, with an expiry, the tool name, a digest of its arguments and the server's
name as audience) and refuses any echo it did not mint. The key lives in the data folder,
so a restarted server, or another replica on the same folder, accepts a state minted
before. Inside the seal is only which interaction the call is about: the answer itself
is settled once, by the runtime, however many times a state is replayed.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from mcp.server.request_state import RequestStateSecurity

__all__ = ["STATE_KEY_FILE", "CallState", "load_state_key", "state_security"]

STATE_KEY_FILE = "mcp_state_key"


def load_state_key(data_dir: Path) -> bytes:
    """The sealing key from `<data_dir>/mcp_state_key`, made (mode 0600) if missing."""
    path = data_dir / STATE_KEY_FILE
    if path.is_file():
        stored = path.read_text(encoding="ascii").strip()
        if len(stored) >= 64:
            return stored.encode("ascii")
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    fresh = secrets.token_hex(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: use theirs
        return load_state_key(data_dir)
    with os.fdopen(fd, "w", encoding="ascii") as file:
        file.write(fresh + "\n")
    return fresh.encode("ascii")


def state_security(key: bytes, ttl_s: float) -> RequestStateSecurity:
    return RequestStateSecurity(keys=[key], ttl=ttl_s)


@dataclass(frozen=True, slots=True)
class CallState:
    """What a sealed `requestState` says: the call is about this interaction."""

    interaction_id: str

    def dump(self) -> str:
        return json.dumps({"i": self.interaction_id}, separators=(",", ":"))

    @classmethod
    def load(cls, text: str) -> CallState | None:
        """None for anything this server did not write (it was sealed, so only a bug or a
        key shared with another program gets here)."""
        try:
            value = json.loads(text)
        except ValueError:
            return None
        if not isinstance(value, dict) or not isinstance(value.get("i"), str):
            return None
        return cls(value["i"])
