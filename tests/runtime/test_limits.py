"""One `Limits` for a runtime: the asks it parks, the answers it accepts and the tool
spec it hands the model are all bounded by the same values."""

from __future__ import annotations

from typing import Any

import pytest
from tests._asks import ASK

import midturn
from midturn import Limits, Runtime, Store

TIGHT = Limits(max_questions=2, max_options=3, max_text_chars=20, max_header_chars=10)


async def test_a_runtimes_max_text_chars_bounds_typed_answers(store: Store) -> None:
    async with Runtime(store, limits=TIGHT) as runtime:
        interaction, _ = await runtime.ask("s", ASK)
        with pytest.raises(midturn.InvalidAnswer, match="500 characters of text given") as caught:
            await runtime.answer(interaction.id, {"answers": {"db": 0, "name": "x" * 500}})
        assert caught.value.question == "name"
        assert (await runtime.get(interaction.id)).pending  # refused: nothing changed
        settled = await runtime.answer(interaction.id, {"answers": {"db": 0, "name": "short"}})
        assert settled.interaction.status == "answered"


async def test_a_runtimes_limits_bound_other_text_and_a_redirect(store: Store) -> None:
    async with Runtime(store, limits=TIGHT) as runtime:
        interaction, _ = await runtime.ask("s", ASK)
        with pytest.raises(midturn.InvalidAnswer, match="at most 20"):
            await runtime.answer(interaction.id, {"answers": {"db": "y" * 21, "name": "n"}})
        with pytest.raises(midturn.InvalidAnswer, match="at most 20"):
            await runtime.answer(interaction.id, {"redirect": "z" * 21})
        assert (await runtime.get(interaction.id)).pending


async def test_without_limits_the_asks_dialect_bounds_the_answer(runtime: Runtime) -> None:
    interaction, _ = await runtime.ask("s", ASK)
    long = "x" * (Limits().max_text_chars + 1)
    with pytest.raises(midturn.InvalidAnswer, match="send at most 10000"):
        await runtime.answer(interaction.id, {"answers": {"db": 0, "name": long}})


@pytest.mark.parametrize("dialect", ["midturn", "claude", "maka", "omp", "agentcore"])
async def test_the_runtimes_tool_spec_shows_the_limits_it_enforces(
    store: Store, dialect: str
) -> None:
    async with Runtime(store, limits=TIGHT) as runtime:
        spec = runtime.tool_spec(dialect, "anthropic")
        assert spec == midturn.tool_spec(dialect, "anthropic", limits=TIGHT)
        questions = spec["input_schema"]["properties"]["questions"]
        assert questions["maxItems"] == 2
        assert questions["items"]["properties"]["options"]["maxItems"] == 3
        three = _questions(dialect, 3)
        said = spec["description"]
        assert "1-2" in said or "one to two" in said or "one or more" in said  # omp: no count
        assert "2-3 distinct" in said or "2-3 mutually" in said
        with pytest.raises(midturn.InvalidAsk, match="ask at most 2"):
            await runtime.ask("s", three, dialect=dialect)
        interaction, _ = await runtime.ask("s", _questions(dialect, 2), dialect=dialect)
        assert interaction.pending


def _questions(dialect: str, count: int) -> dict[str, Any]:
    questions = []
    for n in range(count):
        question: dict[str, Any] = {
            "question": f"Question number {n}?",
            "header": f"Q{n}",
            "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}],
        }
        if dialect in ("claude", "agentcore"):
            question["multiSelect"] = False
        if dialect == "maka":
            del question["header"]
        if dialect == "omp":
            question["id"] = f"q{n}"
        questions.append(question)
    return {"questions": questions}
