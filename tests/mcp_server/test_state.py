"""The requestState key lives in the data folder, private to its owner, and stays."""

from __future__ import annotations

import stat
from pathlib import Path

from midturn.mcp import STATE_KEY_FILE, load_state_key


def test_the_key_is_made_once_with_mode_0600(tmp_path: Path) -> None:
    folder = tmp_path / "fresh"
    first = load_state_key(folder)
    path = folder / STATE_KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(first) >= 64
    assert load_state_key(folder) == first  # a restart reads the same key
    assert load_state_key(tmp_path / "other") != first
