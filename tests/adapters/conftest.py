"""strands-agents pins `mcp<2.2`, below the `mcp` the main test venv holds, so the Strands
adapter's tests run in a venv of their own (`scripts/test` makes `.venv-strands`). Where
strands is not installed they are left out of collection, not skipped: the test command
always runs them, in that venv."""

import importlib.util

collect_ignore = (
    [] if importlib.util.find_spec("strands") else ["test_strands.py", "_strands_worker.py"]
)
