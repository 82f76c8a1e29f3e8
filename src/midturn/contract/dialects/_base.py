"""What a dialect is: a mapping between another product's question tool and the
canonical contract, in both directions (docs/dialects.md)."""

from __future__ import annotations

import abc
from typing import Any, ClassVar

from midturn.contract._models import AskResult, Limits, ToolOutput

__all__ = ["Dialect"]


class Dialect(abc.ABC):
    """One product's shape of the question tool.

    `to_canonical` turns that product's tool input into a canonical
    (docs/contract.md#the-canonical-ask) dict, still unnormalized and unvalidated: normalization
    and strict validation run after it, the same for every dialect. It raises `InvalidAsk` only for
    faults of its own shape that have no canonical reading. `render` turns the canonical result
    back into what that product's model expects.
    """

    name: ClassVar[str]
    tool_name: ClassVar[str]
    limits: ClassVar[Limits] = Limits()
    """The dialect's own bounds (e.g. maka's 1–3 questions); a host's limits replace them."""
    secret_choices: ClassVar[bool] = False
    """Whether the product's choice questions can be secret (pi-legacy's `sensitivity`):
    the whole answer of such a question, selection and typed text, is then a secret."""

    @abc.abstractmethod
    def to_canonical(self, tool_input: Any) -> dict[str, Any]: ...

    @abc.abstractmethod
    def render(self, result: AskResult) -> ToolOutput: ...

    @abc.abstractmethod
    def input_schema(self, limits: Limits) -> dict[str, Any]:
        """The JSON Schema of this dialect's tool input under `limits` (the dialect's own,
        or the host's), a fresh dict each call: every bound `parse_ask` enforces with the
        same limits that a schema can say (counts, lengths) should be in it."""

    @abc.abstractmethod
    def description(self, limits: Limits) -> str:
        """The tool description shown to the model; any count it names comes from
        `limits`, so it never promises what validation refuses."""

    def matches(self, tool_input: Any) -> int:
        """How surely `tool_input` is of this dialect's shape, for `dialect="auto"`:
        0 not at all, higher is surer."""
        return 0
