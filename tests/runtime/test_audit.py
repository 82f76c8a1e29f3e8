"""One durable decision record per settled interaction, exported as JSON Lines."""

from __future__ import annotations

import json
from pathlib import Path

from tests.runtime.conftest import ANSWER, ASK

from midturn import Runtime


async def test_every_settled_interaction_exports_one_record(
    runtime: Runtime, tmp_path: Path
) -> None:
    asked, _ = await runtime.ask("s1", ASK, turn_id="t1", tool_call_id="c1")
    allowed, _ = await runtime.request_permission("s1", tool="bash", summary="ls", turn_id="t1")
    pending, _ = await runtime.ask("s1", ASK, turn_id="t2")
    await runtime.answer(asked.id, ANSWER, by="answer")
    await runtime.decide(allowed.id, "deny", message="not now", by="alice")
    await runtime.ask("s2", ASK)
    target = tmp_path / "decisions.jsonl"

    count = await runtime.export_decisions(target)
    records = [json.loads(line) for line in target.read_text().splitlines()]
    assert count == len(records) == 2
    first, second = records
    assert first["interaction_id"] == asked.id and first["tool_call_id"] == "c1"
    assert first["kind"] == "ask" and first["status"] == "answered"
    assert first["asked"]["questions"][0]["question"] == "Which database should the service use?"
    assert first["decided"]["answers"][0]["answer"] == "PostgreSQL"
    assert first["decided_by"] == "answer" and first["decided_at"] is not None
    assert second["kind"] == "permission" and second["status"] == "denied"
    assert second["asked"]["tool"] == "bash"
    assert second["decided"] == {
        "outcome": "denied",
        "decision": "deny",
        "message": "not now",
        "auto": False,
    }
    assert second["decided_by"] == "alice"
    assert pending.id not in target.read_text()
    assert await runtime.export_decisions(tmp_path / "none.jsonl", session_id="s2") == 0
