"""What `midturn hook claude-code` remembers between its runs (each hook run is a process
of its own), in files under `state_dir()`: which midturn session serves a Claude Code
session, and that session's current turn (docs/adapters/claude-code.md). Each record is
one small JSON object in a 0600 file, per gateway and Claude Code session, replaced
whole, written under a lock (the hooks of parallel tool calls run at once)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["Sessions", "Turn", "join_turn", "locked", "start_turn", "state_dir", "stop_turn"]


def state_dir() -> Path:
    """Where the hook remembers which midturn session serves which Claude Code session:
    `MIDTURN_HOOK_STATE_DIR`, else `$XDG_STATE_HOME/midturn/claude-code`."""
    given = os.environ.get("MIDTURN_HOOK_STATE_DIR")
    if given:
        return Path(given)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "midturn" / "claude-code"


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` (hooks of parallel tool calls run at once)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _record_path(folder: Path, gateway: str, claude_session: str, suffix: str) -> Path:
    key = hashlib.sha256(f"{gateway}\0{claude_session}".encode()).hexdigest()[:32]
    return folder / f"{key}{suffix}"


class _Record:
    """A small JSON object in a 0600 file, replaced whole (atomically)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def write(self, record: dict[str, Any]) -> None:
        temporary = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(record, handle)
        os.replace(temporary, self.path)


class Sessions(_Record):
    """Claude Code session id → midturn session id (the gateway keeps tokens hashed, so
    a session is found again by its id; the admin token asks in any session)."""

    def __init__(self, folder: Path, gateway: str, claude_session: str) -> None:
        super().__init__(_record_path(folder, gateway, claude_session, ".json"))

    def read(self) -> str | None:
        found = self.load().get("session_id")
        return found if isinstance(found, str) and found else None


class Turn(_Record):
    """The Claude Code session's current turn, as `UserPromptSubmit` started it:
    `{turn_id, prompt (its digest), open, asked, session_id}`; `Stop` closes it. Its
    own lock (the session lock is taken while this one is held elsewhere)."""

    def __init__(self, folder: Path, gateway: str, claude_session: str) -> None:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        super().__init__(_record_path(folder, gateway, claude_session, ".turn.json"))
        self.lock = self.path.with_name(self.path.name + ".lock")

    def current(self) -> str | None:
        """The open turn's id, if a prompt started one that has not stopped."""
        record = self.load()
        found = record.get("turn_id")
        return found if record.get("open") and isinstance(found, str) else None


# -- turns: UserPromptSubmit starts one, Stop ends it -------------------------------------


def join_turn(turn: Turn, session_id: str) -> str | None:
    """The open turn a tool call belongs to (None: no prompt hook, or the turn stopped),
    marked as having asked in `session_id` so that `Stop` ends it at the gateway."""
    with locked(turn.lock):
        record = turn.load()
        turn_id = turn.current()
        marked = record.get("asked") and record.get("session_id") == session_id
        if turn_id is not None and not marked:
            turn.write({**record, "asked": True, "session_id": session_id})
    return turn_id


def start_turn(turn: Turn, claude_session: str, prompt: str) -> dict[str, Any] | None:
    """`UserPromptSubmit`: open the turn for this prompt, its id derived from the Claude
    Code session, the turn before and the prompt; returns the turn it replaces when that
    one never got its `Stop` (the person interrupted it) and asked something, to be ended
    at the gateway. The same prompt hook run again keeps its turn."""
    digest = hashlib.sha256(prompt.encode()).hexdigest()
    with locked(turn.lock):
        record = turn.load()
        if record.get("open") and record.get("prompt") == digest:
            return None
        previous = str(record.get("turn_id") or "")
        seed = f"{claude_session}\0{previous}\0{digest}"
        turn_id = "claude-code-" + hashlib.sha256(seed.encode()).hexdigest()[:32]
        turn.write({"turn_id": turn_id, "prompt": digest, "open": True, "asked": False})
    return record if record.get("open") and record.get("asked") else None


def stop_turn(turn: Turn) -> dict[str, Any] | None:
    """`Stop` (or `StopFailure`): close the open turn; returns it when it asked
    something, to be ended at the gateway."""
    with locked(turn.lock):
        record = turn.load()
        if not record.get("open"):
            return None
        turn.write({**record, "open": False})
    return record if record.get("asked") else None
