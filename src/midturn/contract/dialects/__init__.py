"""The dialects of SPEC §2.6 and their registry. [stub: being written]"""

from __future__ import annotations

from typing import Any

from midturn.contract.dialects._base import Dialect

__all__ = ["DIALECTS", "Dialect", "detect_dialect", "get_dialect"]

DIALECTS: dict[str, Dialect] = {}


def get_dialect(name: str) -> Dialect:
    raise NotImplementedError


def detect_dialect(tool_input: Any) -> Dialect:
    raise NotImplementedError
