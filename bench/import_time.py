"""Import benchmark: how long a fresh interpreter takes to `import midturn`, and what it
loads, beside an anchor measured in the same run: `import pydantic` (which midturn's
contract needs anyway).

    .venv/bin/python bench/import_time.py [--repeats 15] [--src PATH]

Each statement runs in a new interpreter, interleaved with the anchor so that load on the
machine weighs on both alike; the figure is the median of the wall times reported by
`-X importtime` for the top-level module, and the ratio is to the anchor's median.
`--src` measures another checkout's `src` folder (e.g. the previous commit) instead.
The goal: `import midturn` and `import midturn.contract` load no HTTP library, runtime
or store (checked by tests/test_public.py); what remains is mostly pydantic building the
contract's models. Figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys

ANCHOR = ("pydantic", "import pydantic")
STATEMENTS = [
    ("midturn", "import midturn"),
    ("midturn.contract", "import midturn.contract"),
    ("midturn", "import midturn; midturn.Runtime; midturn.open_store"),
    ("midturn", "import midturn; midturn.Client"),
]
HEAVY = ("httpx", "fastapi", "starlette", "uvicorn", "midturn.runtime", "midturn.store")


def measure(statement: str, module: str, env: dict[str, str]) -> tuple[float, list[str]]:
    """(microseconds to import `module`, the HEAVY modules loaded) in a new interpreter."""
    probe = f"{statement}; import sys; print([m for m in {HEAVY!r} if m in sys.modules])"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", probe],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    total = 0.0
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$", line)
        if match and match.group(2) == module:
            total = max(total, float(match.group(1)))
    return total, eval(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--src", default=None)
    args = parser.parse_args()
    env = dict(os.environ)
    if args.src:
        env["PYTHONPATH"] = args.src
    anchor: list[float] = []
    times: dict[str, list[float]] = {statement: [] for _, statement in STATEMENTS}
    loaded: dict[str, list[str]] = {}
    for _ in range(args.repeats):
        anchor.append(measure(ANCHOR[1], ANCHOR[0], env)[0])
        for module, statement in STATEMENTS:
            micros, heavy = measure(statement, module, env)
            times[statement].append(micros)
            loaded[statement] = heavy
    base = statistics.median(anchor)
    print(f"anchor  {ANCHOR[1]:<58} {base / 1000:8.1f} ms")
    for _, statement in STATEMENTS:
        median = statistics.median(times[statement])
        print(
            f"        {statement:<58} {median / 1000:8.1f} ms  x{median / base:5.2f}  "
            f"loads {', '.join(loaded[statement]) or 'none of ' + '/'.join(HEAVY[:4])}"
        )


if __name__ == "__main__":
    main()
