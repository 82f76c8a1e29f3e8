"""Loading a `bench/` script as a module for its tests: from its file, with `bench/` on
the path while it loads (for its `_lean_http`, `_interleave`…), and under a name of its
own (the suite's own `gateway` is the tests' package, not `bench/gateway.py`)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parent.parent / "bench"


def load_bench_script(name: str) -> ModuleType:
    """`bench/<name>.py`, loaded afresh."""
    spec = importlib.util.spec_from_file_location(f"bench_script_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(BENCH))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH))
    return module
