"""The SQLite prune without an index of events by interaction (migration 11): it deletes
what the memory store deletes, and a file from before the migration loses the index and
keeps its rows and events."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from midturn.contract._interactions import Event, Interaction, NewEvent
from midturn.store import Pruned, Store, _sqlite, open_store
from midturn.store._sqlite_schema import MIGRATIONS


def _ask(interaction_id: str, session_id: str, turn_id: str) -> Interaction:
    return Interaction(id=interaction_id, kind="ask", session_id=session_id, turn_id=turn_id)


def _event(item: Interaction, kind: str = "user_question_requested") -> NewEvent:
    return NewEvent(
        type=kind, session_id=item.session_id, turn_id=item.turn_id, interaction_id=item.id
    )


def _turn(item: Interaction, kind: str = "turn_waiting") -> NewEvent:
    return NewEvent(type=kind, session_id=item.session_id, turn_id=item.turn_id)


def _rows(events: list[Event]) -> list[tuple[int, str, str, str, str | None]]:
    return [(e.id, e.type, e.session_id, e.turn_id, e.interaction_id) for e in events]


async def _log(store: Store) -> list[tuple[int, str, str, str, str | None]]:
    return _rows(await store.read_events(limit=100_000))


async def _history(store: Store) -> None:
    """Interleaved turns in three sessions (one turn name in two of them), an event of an
    interaction appended after its settle, a pending interaction, and a settle that is
    the newest event of the log."""
    a1, a2, b1 = _ask("a1", "s1", "tA"), _ask("a2", "s1", "tA"), _ask("b1", "s1", "tB")
    c1, c2, d1 = _ask("c1", "s2", "tA"), _ask("c2", "s2", "tA"), _ask("d1", "s3", "tD")
    await store.create_interaction(a1, [_turn(a1), _event(a1)])
    await store.create_interaction(c1, [_turn(c1), _event(c1)])
    await store.create_interaction(a2, [_event(a2)])
    await store.settle("a1", status="skipped", events=[_event(a1, "user_question_answered")])
    await store.append_events([_event(a1, "user_question_redirected"), _turn(b1)])
    await store.create_interaction(b1, [_event(b1)])
    await store.create_interaction(c2, [_event(c2)])
    await store.settle("b1", status="skipped", events=[_event(b1), _turn(b1, "turn_resumed")])
    await store.settle("c2", status="skipped", events=[_event(c2)])
    await store.append_events([_turn(c2, "turn_resumed")])
    await store.settle("a2", status="skipped", events=[_event(a2), _turn(a2, "turn_resumed")])
    await store.create_interaction(d1, [_turn(d1), _event(d1)])
    await store.settle("d1", status="skipped", events=[_event(d1)])


async def _both(tmp_path: Path, batches: list[list[str]]) -> list[tuple[Pruned, list[object]]]:
    """Each batch pruned on a memory store and a SQLite store with the same history: what
    each prune reports and the log left after it, both stores' side by side."""
    seen: list[list[tuple[Pruned, list[object]]]] = []
    for url in ("memory://", f"sqlite:///{tmp_path / 'm.db'}"):
        async with open_store(url) as store:
            await _history(store)
            steps: list[tuple[Pruned, list[object]]] = []
            for batch in batches:
                pruned = await store.prune(batch)
                steps.append((pruned, list(await _log(store))))
            seen.append(steps)
    memory, sqlite = seen
    assert sqlite == memory
    return sqlite


async def test_a_batch_over_sessions_prunes_what_the_memory_store_prunes(
    tmp_path: Path,
) -> None:
    (first, left), (second, rest) = await _both(
        tmp_path, [["a1", "b1", "c1", "c2", "d1", "unknown", "a1"], ["a2"]]
    )
    assert first == Pruned(interactions=4, events=13)
    # turn events go when older than every event left of their turn's interactions:
    # s1's tA keeps those after a2's first event, s2's tA those after the pending c1's;
    # d1's settle, the newest event, stays
    assert [row[1:] for row in left] == [
        ("user_question_requested", "s2", "tA", "c1"),
        ("user_question_requested", "s1", "tA", "a2"),
        ("turn_resumed", "s2", "tA", None),
        ("user_question_requested", "s1", "tA", "a2"),
        ("turn_resumed", "s1", "tA", None),
        ("user_question_requested", "s3", "tD", "d1"),
    ]
    assert second == Pruned(interactions=1, events=3)
    assert [row[1:] for row in rest] == [
        ("user_question_requested", "s2", "tA", "c1"),
        ("turn_resumed", "s2", "tA", None),
        ("user_question_requested", "s3", "tD", "d1"),
    ]


async def test_random_histories_prune_as_on_the_memory_store(tmp_path: Path) -> None:
    """Parks, settles and appends drawn at random over a few sessions and turns, then
    batches pruned: the same counts and the same log left on both stores."""
    script = random.Random(18)
    items = [_ask(f"i{n}", f"s{script.randrange(3)}", f"t{script.randrange(3)}") for n in range(40)]
    for trial in range(3):
        history: list[tuple[str, Interaction]] = []
        for item in items:
            history.append(("park", item))
            history.append((script.choice(["settle", "settle", "settle", "keep"]), item))
            if script.random() < 0.3:
                history.append(("turn", item))
        script.shuffle(history)
        batches = [script.sample([item.id for item in items], 15) for _ in range(3)]
        logs: list[object] = []
        for url in ("memory://", f"sqlite:///{tmp_path / f'r{trial}.db'}"):
            async with open_store(url) as store:
                parked: set[str] = set()
                for step, item in history:
                    if item.id not in parked:  # whatever comes first of its steps
                        await store.create_interaction(item, [_turn(item), _event(item)])
                        parked.add(item.id)
                    if step == "settle":
                        await store.settle(item.id, status="skipped", events=[_event(item)])
                    elif step == "turn":
                        await store.append_events([_turn(item, "turn_resumed")])
                pruned = [await store.prune(batch) for batch in batches]
                logs.append((pruned, await _log(store)))
        assert logs[1] == logs[0]


def _indexes(file: Path) -> set[str]:
    with sqlite3.connect(file) as db:
        rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'index'").fetchall()
    db.close()
    return {name for (name,) in rows}


async def test_a_file_from_before_migration_11_loses_the_index_and_keeps_its_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "m.db"
    url = f"sqlite:///{file}"
    before = next(n for n, m in enumerate(MIGRATIONS) if m.version == 11)
    with monkeypatch.context() as patch:
        patch.setattr(_sqlite, "MIGRATIONS", MIGRATIONS[:before])
        async with open_store(url) as old:
            await _history(old)
            assert await old.schema_version() == 10
            interactions = await old.list_interactions()
            log = await _log(old)
    assert "midturn_events_of_interaction" in _indexes(file)

    async with open_store(url) as store:
        assert await store.schema_version() == len(MIGRATIONS) == 11
        assert await store.list_interactions() == interactions
        assert await _log(store) == log
        assert await store.prune(["a1", "b1", "c2", "d1"]) == Pruned(interactions=4, events=13)
    assert "midturn_events_of_interaction" not in _indexes(file)
    assert "midturn_events_by_session" in _indexes(file)
