"""Lenient answers from a client (SPEC §2.4). [stub: being written]"""

from __future__ import annotations

from typing import Any

from midturn.contract._models import Ask, AskResult


def parse_answer(ask: Ask, payload: Any) -> AskResult:
    raise NotImplementedError
