"""`import midturn.testing` needs none of the `testing` extra's packages; the pilot and the
conformance suite, which do, say how to install them when they are missing."""

from __future__ import annotations

import subprocess
import sys

import pytest

BLOCK = "import sys\nfor name in {names!r}: sys.modules[name] = None  # as if not installed\n"


def run(code: str, *blocked: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCK.format(names=list(blocked)) + code],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_doubles_import_without_the_extra() -> None:
    done = run(
        "import midturn.testing as t\n"
        "assert t.ScriptedResponder and t.ScriptedModel and t.live_gateway\n"
        "print([m for m in ('pyte', 'pexpect', 'pytest') if sys.modules.get(m) is not None])",
        "pyte",
        "pexpect",
        "pytest",
        "pytest_asyncio",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("module", "blocked", "what"),
    [
        ("midturn.testing.pilot", "pyte", "the terminal pilot needs the 'pyte' package"),
        (
            "midturn.testing.conformance",
            "pytest_asyncio",
            "the store conformance suite needs the 'pytest_asyncio' package",
        ),
    ],
)
def test_a_part_that_needs_the_extra_names_it(module: str, blocked: str, what: str) -> None:
    done = run(f"import {module}", blocked)
    assert done.returncode != 0
    assert "ImportError" in done.stderr
    assert what in done.stderr
    assert 'pip install "midturn[testing]"' in done.stderr


def test_the_pty_pilot_names_the_extra_without_pexpect() -> None:
    done = run(
        "from midturn.testing.pilot import PtyPilot, midturn_command\n"
        "PtyPilot(midturn_command('--help'))",
        "pexpect",
    )
    assert "PtyPilot needs the 'pexpect' package" in done.stderr
    assert 'pip install "midturn[testing]"' in done.stderr
