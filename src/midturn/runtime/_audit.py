"""The durable decision record: one JSON line per settled interaction.

Each line says what was asked, what was decided, by whom and when. It is derived from
the settled interactions in the store, which never hold a secret value, so neither does
the export. `settled_by` is who decided: the role or name given to `answer`/`decide`,
`"system"` for timeouts, `unavailable` and automatic allows, `"host"` for a turn the
host stopped.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import IO, Any

from midturn.contract._interactions import Interaction
from midturn.store._base import Store

__all__ = ["decision_record", "export_decisions"]


def decision_record(interaction: Interaction) -> dict[str, Any]:
    """The record of one settled interaction, as JSON-ready data."""
    data = interaction.model_dump(mode="json")
    asked = data["ask"] if interaction.kind == "ask" else data["permission"]
    decided = data["result"] if interaction.kind == "ask" else data["decision"]
    return {
        "interaction_id": interaction.id,
        "kind": interaction.kind,
        "session_id": interaction.session_id,
        "turn_id": interaction.turn_id,
        "tool_call_id": interaction.tool_call_id,
        "asked": asked,
        "asked_at": data["created_at"],
        "status": interaction.status,
        "decided": decided,
        "decided_by": interaction.settled_by,
        "decided_at": data["settled_at"],
    }


async def export_decisions(
    store: Store, target: str | Path | IO[str], *, session_id: str | None = None
) -> int:
    """Write the records of every settled interaction (of one session, if given), oldest
    first, as JSON Lines to `target` (a path, overwritten, or an open text file)."""
    settled = [
        item for item in await store.list_interactions(session_id=session_id) if not item.pending
    ]
    lines = [json.dumps(decision_record(item), ensure_ascii=False) + "\n" for item in settled]
    if isinstance(target, str | Path):
        await asyncio.to_thread(Path(target).write_text, "".join(lines), encoding="utf-8")
    else:
        target.write("".join(lines))  # noqa: ASYNC240 - an open text file, not a path
    return len(lines)
