"""A response that carries one interaction is byte for byte its model's JSON, whether
its interaction's part was dumped for it or taken from the store's JSON of the same
values (`_views.ModelResponse`)."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from midturn import Interaction, Runtime, open_store
from midturn.gateway._views import (
    AnswerOut,
    InteractionOut,
    ModelResponse,
    SettledOut,
    interaction_out,
)

ASK = {
    "questions": [
        {
            "id": "db",
            "header": "Base ✓",
            "question": 'Which database, "really"? \U0001f600',
            "options": [{"label": "PostgreSQL"}, {"label": "SQLite </script>"}],
        },
        {"id": "key", "question": "The API key?", "kind": "text", "secret": True},
    ],
    "timeout_s": 1e-3 * 3600.5,
}
ANSWER = {"answers": {"db": "SQLite </script>", "key": "s3cr3t é"}}


async def _models() -> list[BaseModel]:
    async with open_store("memory://") as store, Runtime(store) as runtime:
        asked, _ = await runtime.ask("s", ASK, turn_id="t", tool_call_id="c")
        settled = await runtime.answer(asked.id, ANSWER)
        waited = await runtime.wait(asked.id, timeout=5)
        fresh = Interaction.model_validate_json(settled.interaction.model_dump_json())
        interaction = settled.interaction
        return [
            interaction_out(waited, with_secrets=True),  # the long-poll's, secrets in memory
            interaction_out(waited, with_secrets=False),
            AnswerOut(
                interaction=interaction,
                result=interaction.result,
                output=settled.output,
                duplicate=settled.duplicate,
            ),
            SettledOut(interaction=interaction, output=settled.output, duplicate=True),
            InteractionOut(interaction=fresh),  # values no store dumped: dumped here
            InteractionOut(interaction=asked),
        ]


def test_a_response_of_one_interaction_is_its_model_s_json() -> None:
    models = asyncio.run(_models())
    assert models[0].secrets == {"key": "s3cr3t é"}  # type: ignore[attr-defined]
    for model in models:
        assert ModelResponse(model).body == model.model_dump_json().encode()
