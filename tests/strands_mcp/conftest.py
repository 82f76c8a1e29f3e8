"""strands-agents pins `mcp<2.2`, below the `mcp` the main test venv holds, so these tests
run in the venv that has strands (`scripts/test` makes `.venv-strands`). Where strands is
not installed they are left out of collection, not skipped: the test command always runs
them, in that venv."""

import importlib.util

collect_ignore = [] if importlib.util.find_spec("strands") else ["test_strands_mcp.py"]
