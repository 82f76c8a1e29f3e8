"""Normalization (SPEC §2.2) and strict validation (SPEC §2.3). [stub: being written]"""

from __future__ import annotations

from typing import Any

from midturn.contract._models import Ask, Limits


def build_ask(canonical: Any, *, limits: Limits, dialect: str) -> Ask:
    """Normalize a canonical-shaped dict, validate it strictly, return the `Ask`."""
    raise NotImplementedError
