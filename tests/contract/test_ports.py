"""The port values: `Parked` unpacks, `Settled` renders the ask's dialect on first use
and cannot be changed."""

from __future__ import annotations

import pytest
from tests._asks import ANSWER, ASK

from midturn import Interaction, Parked, Settled, ToolOutput, parse_answer, parse_ask, render
from midturn.contract._ports import RENDERS_KEPT, _renders


def settled_ask(dialect: str) -> Interaction:
    ask = parse_ask(ASK, dialect)
    return Interaction(
        id="ia_1",
        kind="ask",
        session_id="s",
        turn_id="t",
        status="answered",
        dialect=dialect,
        ask=ask,
        result=parse_answer(ask, ANSWER),
    )


@pytest.mark.parametrize("dialect", ["midturn", "claude", "omp"])
def test_settled_renders_in_the_interactions_dialect(dialect: str) -> None:
    interaction = settled_ask(dialect)
    value = Settled.of(interaction)
    assert interaction.result is not None
    assert value.output == render(interaction.result, dialect)
    assert value == Settled(interaction, output=render(interaction.result, dialect))
    assert not value.pending and not value.allowed and value.decision is None


def test_a_pending_or_permission_value_has_no_output() -> None:
    pending = Interaction(id="ia_2", kind="ask", session_id="s", turn_id="t")
    permission = Interaction(id="ia_3", kind="permission", session_id="s", turn_id="t")
    assert Settled.of(pending).output is None and Settled.of(pending).pending
    assert Settled.of(permission).output is None


def test_settled_cannot_be_changed() -> None:
    value = Settled.of(settled_ask("midturn"))
    with pytest.raises(AttributeError, match="immutable"):
        value.duplicate = True  # type: ignore[misc]
    with pytest.raises(AttributeError):
        value.output = ToolOutput(text="forged")  # type: ignore[misc]
    assert value.duplicate is False


def test_parked_unpacks_as_interaction_and_created() -> None:
    interaction = settled_ask("midturn")
    found, created = Parked(interaction, False)
    assert (found, created) == (interaction, False)


def test_the_same_result_renders_once_for_every_value_of_it() -> None:
    interaction = settled_ask("midturn")
    assert interaction.result is not None
    first = Settled.of(interaction).output
    assert Settled.of(interaction, duplicate=True).output is first  # the answer's and the wait's
    assert first == render(interaction.result, "midturn")
    # the same answer again, parsed anew: another result, rendered for itself, equal
    again = settled_ask("midturn")
    assert Settled.of(again).output is not first and Settled.of(again).output == first
    # the same result object in another dialect: that dialect's rendering
    claude = interaction.model_copy(update={"dialect": "claude"})
    assert claude.result is interaction.result
    assert Settled.of(claude).output == render(interaction.result, "claude") != first


def test_renders_kept_stay_few() -> None:
    for _ in range(RENDERS_KEPT + 10):
        assert Settled.of(settled_ask("midturn")).output is not None
    assert 0 < len(_renders) <= RENDERS_KEPT
