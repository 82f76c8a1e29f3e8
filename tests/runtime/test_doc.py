"""docs/runtime.md: the ten-line host example runs as written."""

from __future__ import annotations

import contextlib
import io
import re
import threading
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "runtime.md"


def test_the_ten_line_example_runs_and_prints_the_tool_result() -> None:
    example = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert example is not None
    printed = io.StringIO()

    def run() -> None:  # asyncio.run needs a thread without a running loop
        with contextlib.redirect_stdout(printed):
            exec(compile(example.group(1), str(DOC), "exec"), {"__name__": "doc"})

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    text = printed.getvalue()
    assert text.startswith("The user answered:\n- ") and text.endswith(": SQLite\n")
