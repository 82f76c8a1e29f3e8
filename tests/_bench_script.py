"""Loading a `bench/` script as a module for its tests: from its file, with `bench/` on
the path while it loads (for its `_lean_http`, `_interleave`…), and under a name of its
own (the suite's own `gateway` is the tests' package, not `bench/gateway.py`)."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import threading
from collections.abc import Iterator
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


@contextlib.contextmanager
def idle_thread() -> Iterator[None]:
    """A second thread of this process, started and waiting, for the block's length (for
    the benches' per-thread counters)."""
    started, stop = threading.Event(), threading.Event()

    def idle() -> None:
        started.set()
        stop.wait()

    thread = threading.Thread(target=idle)
    thread.start()
    started.wait()
    try:
        yield
    finally:
        stop.set()
        thread.join()
