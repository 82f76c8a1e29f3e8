"""Contract benchmark: the whole cycle of a four-question ask (parse_ask, parse_answer,
render) beside an anchor measured in the same run, `json.loads(json.dumps(x))` of the
same tool input and of the same answer payload.

    .venv/bin/python bench/contract.py [--rounds 2000] [--repeats 9]

Prints per-operation medians (microseconds) and each one's median ratio to the anchor,
timed interleaved so that load on the machine weighs on both alike.
The goal is a ratio of at most 10.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import midturn

TOOL_INPUT: dict[str, Any] = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use?",
            "options": [
                {"label": "PostgreSQL (Recommended)", "description": "Managed, scales out"},
                {"label": "SQLite", "description": "Embedded, zero setup"},
                {"label": "MySQL", "description": "What the ops team runs today"},
                {"label": "Other (please specify)"},
            ],
        },
        {
            "id": "features",
            "question": "Which features should ship in the first release?",
            "multiSelect": True,
            "options": [
                {"label": "Auth", "description": "Sign-in with the company SSO"},
                {"label": "Billing", "description": "Invoices and card payments"},
                {"label": "Search", "description": "Full-text search over orders"},
            ],
        },
        {"id": "name", "question": "What should the service be called?", "kind": "text"},
        {
            "question": "Where should it run?",
            "options": [{"label": "EU"}, {"label": "US"}, {"label": "Both"}],
            "recommended": "EU",
        },
    ],
    "timeout_s": 600,
}

ANSWER: dict[str, Any] = {
    "answers": {
        "db": "PostgreSQL",
        "features": {"selected": ["Auth", "Billing"], "text": "Audit log"},
        "name": "billing-api",
        "q4": 1,
    }
}


def per_call_us(operation: Callable[[], object], rounds: int) -> float:
    start = time.perf_counter()
    for _ in range(rounds):
        operation()
    return (time.perf_counter() - start) / rounds * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()

    ask = midturn.parse_ask(TOOL_INPUT, dialect="midturn")
    result = midturn.parse_answer(ask, ANSWER)

    def cycle() -> object:
        parsed = midturn.parse_ask(TOOL_INPUT, dialect="midturn")
        answered = midturn.parse_answer(parsed, ANSWER)
        return midturn.render(answered, dialect="midturn")

    def anchor() -> object:
        return json.loads(json.dumps(TOOL_INPUT)), json.loads(json.dumps(ANSWER))

    operations: list[tuple[str, Callable[[], object]]] = [
        ("anchor: json round trip of input + answer", anchor),
        ("parse_ask", lambda: midturn.parse_ask(TOOL_INPUT, dialect="midturn")),
        ("parse_answer", lambda: midturn.parse_answer(ask, ANSWER)),
        ("render", lambda: midturn.render(result, dialect="midturn")),
        ("whole cycle", cycle),
    ]
    # Interleaved: every repeat times each operation once, so a busy machine slows the
    # anchor and the contract alike; the ratio is the median of the per-repeat ratios.
    samples: dict[str, list[float]] = {name: [] for name, _ in operations}
    for _ in range(args.repeats):
        for name, operation in operations:
            samples[name].append(per_call_us(operation, args.rounds))
    anchor_name = operations[0][0]
    for name, values in samples.items():
        ratio = statistics.median(v / a for v, a in zip(values, samples[anchor_name], strict=True))
        print(f"{name:<44} {statistics.median(values):9.1f} µs  {ratio:6.2f}×")
    cycle_ratio = statistics.median(
        v / a for v, a in zip(samples["whole cycle"], samples[anchor_name], strict=True)
    )
    print(f"\nwhole cycle / anchor = {cycle_ratio:.2f}× (goal ≤ 10×)")


if __name__ == "__main__":
    main()
