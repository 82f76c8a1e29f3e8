"""`midturn ask` end to end under a pseudo-terminal: every exit code."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from ._pty import CTRL_C, DOWN, ENTER, ESC, Pty, child_env


def midturn(*args: str) -> str:
    return " ".join(shlex.quote(part) for part in [sys.executable, "-m", "midturn.cli", *args])


def test_answered_prints_the_choice_and_exits_0(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    # stdout goes to a file, as in x=$(midturn ask ...): the picker uses /dev/tty
    cmd = midturn("ask", "Which database?", "-o", "PostgreSQL", "-o", "SQLite", "--header", "DB")
    term = Pty([], shell=f"{cmd} > {out}")
    screen = term.shows("DB", "Which database?", "❯ 1. PostgreSQL", "2. SQLite")
    assert "3. Other" in screen
    term.press(DOWN, ENTER)
    assert term.finish() == 0
    assert out.read_text() == "SQLite\n"
    assert "✔ DB: SQLite" in term.text


def test_multi_and_json_print_the_canonical_result() -> None:
    term = Pty(
        [
            "ask",
            "Which features?",
            "-o",
            "Auth",
            "-o",
            "Billing",
            "-o",
            "Search",
            "--multi",
            "--json",
        ]
    )
    term.shows("[ ] 1. Auth", "Done (0 chosen)")
    term.press(" ", DOWN, DOWN, " ", DOWN, "Audit log", DOWN, ENTER)
    assert term.finish() == 0
    body = term.raw[term.raw.index("{") : term.raw.rindex("}") + 1]
    result = json.loads(body)
    assert result["outcome"] == "answered"
    (answer,) = result["answers"]
    assert answer["selected"] == ["Auth", "Search"]
    assert answer["text"] == "Audit log"
    assert answer["status"] == "answered"


def test_escape_skips_and_exits_1() -> None:
    term = Pty(["ask", "Which database?", "-o", "PostgreSQL", "-o", "SQLite"])
    term.shows("PostgreSQL")
    term.press(ESC)
    assert term.finish() == 1
    assert "skipped" in term.text


def test_ctrl_c_stops_and_exits_130() -> None:
    term = Pty(["ask", "Which database?", "-o", "PostgreSQL", "-o", "SQLite"])
    term.shows("PostgreSQL")
    term.press(CTRL_C)
    assert term.finish() == 130
    assert "Stopped" in term.text


def test_timeout_exits_3() -> None:
    term = Pty(
        ["ask", "Which database?", "-o", "PostgreSQL", "-o", "SQLite", "--timeout", "0.5", "--json"]
    )
    term.saw("PostgreSQL")  # shown, then erased when it times out
    assert term.finish() == 3  # nobody answers
    assert '"outcome": "timed_out"' in term.raw


def test_a_secret_is_masked_and_printed_only_to_stdout(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    term = Pty([], shell=f"{midturn('ask', 'Deploy token?', '--secret')} > {out}")
    term.shows("Deploy token?", "hidden")
    term.press("s3cr3t-value")
    term.shows("••••••••••••")
    term.press(ENTER)
    assert term.finish() == 0
    assert out.read_text() == "s3cr3t-value\n"
    assert "s3cr3t-value" not in term.raw  # never drawn on the terminal


def test_text_answer_from_a_file_in_another_dialect(tmp_path: Path) -> None:
    ask = {
        "questions": [
            {
                "question": "Name the service?",
                "header": "Name",
                "options": [
                    {"label": "billing", "description": "short"},
                    {"label": "ledger", "description": "precise"},
                ],
                "multiSelect": False,
            }
        ]
    }
    path = tmp_path / "ask.json"
    path.write_text(json.dumps(ask))
    term = Pty(["ask", "--file", str(path), "--dialect", "claude"])
    term.shows("Name the service?", "short", "precise")
    term.press("payments", ENTER)
    assert term.finish() == 0
    assert "payments" in term.text.splitlines()[-1]


def run_plain(*args: str) -> subprocess.CompletedProcess[str]:
    """Without any terminal: no controlling tty, stdin closed, output captured."""
    return subprocess.run(
        [sys.executable, "-m", "midturn.cli", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=child_env(),
        start_new_session=True,
        timeout=60,
        check=False,
    )


def test_no_terminal_and_no_gateway_exits_4() -> None:
    done = run_plain("ask", "Which database?", "-o", "PostgreSQL", "-o", "SQLite", "--json")
    assert done.returncode == 4, done.stderr
    assert json.loads(done.stdout)["outcome"] == "unavailable"
    assert "--gateway" in done.stderr


def test_usage_errors_exit_2() -> None:
    missing = run_plain("ask")
    assert missing.returncode == 2
    assert "give a question" in missing.stderr

    one_option = run_plain("ask", "Which database?", "-o", "PostgreSQL")
    assert one_option.returncode == 2
    assert "questions[0].options" in one_option.stderr  # the validator's own words

    unknown = run_plain("ask", "Q?", "--nope")
    assert unknown.returncode == 2

    mixed = run_plain("ask", "Q?", "-o", "A", "-o", "B", "--secret")
    assert mixed.returncode == 2
    assert "--secret" in mixed.stderr

    bad_file = run_plain("ask", "--file", "/nonexistent/ask.json")
    assert bad_file.returncode == 2
    assert "cannot read" in bad_file.stderr


def test_a_timeout_with_a_recommendation_auto_selects_it(tmp_path: Path) -> None:
    ask = {
        "questions": [
            {
                "question": "Which region?",
                "recommended": "us-east",
                "options": [{"label": "eu-west"}, {"label": "us-east"}],
            }
        ],
        "on_timeout": "recommended",
        "timeout_s": 0.5,
    }
    path = tmp_path / "ask.json"
    path.write_text(json.dumps(ask))
    term = Pty(["ask", "--file", str(path), "--json"])
    term.saw("❯ 2. us-east (recommended)")  # shown, then erased when it times out
    assert term.finish() == 3
    result = json.loads(term.raw[term.raw.index("{") : term.raw.rindex("}") + 1])
    assert result["outcome"] == "timed_out"
    assert result["answers"][0]["answer"] == "us-east"
    assert result["answers"][0]["auto_selected"] is True
