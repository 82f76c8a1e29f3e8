"""`midturn[mcp]` is an extra: the core never imports the SDK, and without it
`midturn.mcp` (and `midturn mcp`) say how to install it."""

from __future__ import annotations

import subprocess
import sys

_BLOCKED = "import sys; sys.modules['mcp'] = None; "


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def test_the_core_does_not_import_the_sdk() -> None:
    done = _python(
        "import sys, midturn, midturn.gateway, midturn.cli; "
        "print('mcp' in sys.modules, 'midturn.mcp' in sys.modules)"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]


def test_without_the_sdk_the_import_says_how_to_install_it() -> None:
    done = _python(_BLOCKED + "import midturn.mcp")
    assert done.returncode != 0
    assert 'ImportError: midturn.mcp needs the MCP SDK: pip install "midturn[mcp]"' in done.stderr


def test_without_the_sdk_the_command_says_how_to_install_it() -> None:
    done = _python(_BLOCKED + "from midturn.cli import main; sys.exit(main(['mcp']))")
    assert done.returncode == 2
    assert 'pip install "midturn[mcp]"' in done.stderr
