"""Permission requests in the same inline picker: summary, risk, the three decisions,
details on demand, a stop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from midturn import PermissionRequest
from midturn.tui import PermissionChoice, pick_permission

from ._vt import BACKSPACE, CTRL_C, DOWN, ENTER, UP, Terminal

Make = Callable[..., Terminal]

REQUEST = PermissionRequest(
    tool="Bash",
    summary="Run `rm -rf build/` in /srv/app\x1b[2J",
    risk="high",
    details="\n".join(f"line {n}: removed build/artifact-{n}.o" for n in range(1, 41)),
)


def start(term: Terminal, request: PermissionRequest, **kw: Any) -> asyncio.Task[PermissionChoice]:
    kw.setdefault("repeat_window_s", 0)
    return asyncio.create_task(pick_permission(request, input=term.input, output=term.output, **kw))


async def test_shows_summary_and_risk_and_allows(terminal: Make) -> None:
    term = terminal()
    task = start(term, REQUEST)
    screen = await term.shows("Permission", "Bash", "risk: high")
    assert "Run `rm -rf build/` in /srv/app" in screen
    assert "❯ Allow" in screen and "Allow for this turn" in screen and "Deny" in screen
    assert "Show details" in screen and "line 1:" not in screen  # details on demand only
    term.press(ENTER)
    assert await task == PermissionChoice("allow")
    assert await term.shows("✔ Allowed: Bash")


async def test_allow_for_this_turn(terminal: Make) -> None:
    term = terminal()
    task = start(term, REQUEST)
    await term.shows("❯ Allow")
    term.press(DOWN)
    await term.shows("❯ Allow for this turn (Bash is not asked again this turn)")
    term.press(ENTER)
    assert await task == PermissionChoice("allow_for_turn")


async def test_deny_with_a_message_for_the_agent(terminal: Make) -> None:
    term = terminal()
    task = start(term, REQUEST)
    await term.shows("❯ Allow")
    term.press("use make cleanx", BACKSPACE)  # typing jumps to Deny's message
    await term.shows("❯ Deny message: use make clean")
    term.press(ENTER)
    assert await task == PermissionChoice("deny", "use make clean")
    assert await term.shows("✔ Denied: Bash (use make clean)")


async def test_details_open_capped_and_close(terminal: Make) -> None:
    term = terminal(rows=60)
    task = start(term, REQUEST)
    await term.shows("Show details")
    term.press(UP, ENTER)
    screen = await term.shows("Hide details", "line 20:", "… 20 more lines")
    assert "line 21:" not in screen
    assert not task.done()
    term.press(ENTER)
    screen = await term.shows("Show details")
    assert "line 1:" not in screen
    term.press(DOWN, DOWN, DOWN, ENTER)
    assert await task == PermissionChoice("deny", None)


async def test_ctrl_c_stops(terminal: Make) -> None:
    term = terminal()
    task = start(term, PermissionRequest(tool="Edit", summary="Edit main.py", risk="low"))
    screen = await term.shows("risk: low")
    assert "Show details" not in screen
    term.press(CTRL_C)
    choice = await task
    assert choice.stopped and choice.decision is None


async def test_typeahead_enter_cannot_approve(terminal: Make) -> None:
    now = [1.0]
    term = terminal()
    term.input.send_text(ENTER)
    task = start(term, REQUEST, repeat_window_s=0.5, clock=lambda: now[0])
    await term.shows("❯ Allow")
    term.press(DOWN, DOWN)
    await term.shows("❯ Deny")
    assert not task.done()
    now[0] += 1
    term.press(ENTER)
    assert await task == PermissionChoice("deny")


@pytest.mark.parametrize("columns", [48, 80, 146])
async def test_legible_at_common_widths(terminal: Make, columns: int) -> None:
    summary = (
        "Apply the generated migration 0042_add_invoice_ledger to the production "
        "database cluster, locking the invoices table for roughly two minutes"
    )
    request = PermissionRequest(
        tool="Database",
        summary=summary,
        risk="medium",
        details="ALTER TABLE invoices ADD COLUMN ledger_id bigint;",
    )
    term = terminal(columns=columns)
    task = start(term, request)
    screen = await term.shows("Permission", "risk: medium", "Ctrl-C stop")
    assert all(len(line) <= columns for line in term.lines)
    words = screen.split()
    assert all(word in words for word in summary.split()), screen
    term.press(CTRL_C)
    await task
