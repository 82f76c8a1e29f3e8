"""What `midturn COMMAND --help` says above and below the options: what the command is
for, and examples to copy. Options' own help stays beside each option in cli.py.

Wording rules, the same for every command: an option's help starts in lower case, says
what it does, then `(default: …)`; a token option warns that a command line is visible
in `ps`; examples come last, one per line, each runnable as written.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["DESCRIPTIONS", "EPILOGS", "LOG_LEVELS", "texts"]

LOG_LEVELS = ("critical", "error", "warning", "info", "debug")
"""`midturn serve --log-level`'s choices: uvicorn's and the gateway's logging levels."""

_DATA = (
    "The data folder, which holds admin_token and pruned-decisions.jsonl, is the SQLite "
    "file's folder (./.midturn by default); with PostgreSQL it is $MIDTURN_HOME, else "
    "./.midturn."
)

DESCRIPTIONS = {
    "serve": "Run the gateway (the HTTP API agents ask through) and the web inbox (where a "
    "person answers) on one port. The admin token comes from --token-file, --token, "
    "MIDTURN_TOKEN, else the data folder's admin_token, generated (mode 0600) and printed "
    f"once on the first start. {_DATA} Requests are not logged unless --access-log, so "
    "the inbox link stays the last line on screen.",
    "mcp": "Run midturn's MCP server over stdio, for an MCP client (Claude Desktop, an IDE) "
    "to start: in this process on the store (the default), or on a running `midturn "
    "serve` with --gateway and a token.",
    "prune": "Delete settled interactions (answered, skipped, timed out, cancelled) older "
    "than an age, and their events. Their decision records are appended to a JSON Lines "
    "file first unless --no-export. Pending interactions are never pruned.",
    "ask": "Ask one question and print the answer on stdout: in this terminal (the picker "
    "reads the keyboard from /dev/tty, so $(midturn ask …) works), or through a gateway "
    "with --gateway, where the web inbox or `midturn answer` answers it.",
    "answer": "Answer a gateway's pending questions and permission requests in this "
    "terminal, one after another, as they arrive. The token is the first found of: "
    "--token, --token-file, the answer URL, MIDTURN_ANSWER_TOKEN, MIDTURN_TOKEN, then, "
    "for a gateway on this machine (127.0.0.1, localhost, ::1), the admin token `midturn "
    "serve` wrote: $MIDTURN_HOME/admin_token, then ./.midturn/admin_token.",
    "demo": "A scripted agent turn that stops to ask you three questions in this terminal "
    "and goes on with your answers. Nothing is sent anywhere.",
    "hook": "Answer an agent's own permission hooks through a midturn gateway.",
}

EPILOGS = {
    "serve": """examples:
  midturn serve                           SQLite in ./.midturn, http://127.0.0.1:8765
  midturn serve --port 9000 --access-log  another port, one JSON line per request
  midturn serve --db postgresql://midturn@db/midturn --host 0.0.0.0 \\
      --token-file /run/secrets/midturn_admin
  midturn serve --retention 30d           prune what settled over 30 days ago

It runs until Ctrl-C or SIGTERM (exit 0). It exits 2 without starting when it
cannot listen (a port already in use: the message says what holds it) or an
option is wrong.""",
    "mcp": """examples:
  midturn mcp                                        on ./.midturn/midturn.db
  midturn mcp --store sqlite:///agent.db --session review
  MIDTURN_TOKEN=$(cat .midturn/admin_token) midturn mcp --gateway http://127.0.0.1:8765

The client starts it; stdout carries the protocol, messages go to stderr.""",
    "prune": """examples:
  midturn prune --older-than 30d --dry-run     count, delete nothing
  midturn prune --older-than 30d               export the records, then delete
  midturn prune --older-than 12h --no-export --db postgresql://midturn@db/midturn

AGE is a number and a unit: 45s, 90m, 12h, 30d, 2w (a bare number is seconds).""",
    "ask": """examples:
  midturn ask "Which database?" -o PostgreSQL -o SQLite
  midturn ask "Which features ship first?" -o Auth -o Billing -o Search --multi
  midturn ask "Name the service?" --text --header Name
  choice=$(midturn ask "Deploy to production now?" -o Yes -o No --timeout 60)
  midturn ask --file ask.json --json
  midturn ask "Which region?" -o EU -o US --gateway http://127.0.0.1:8765

exit codes: 0 answered, 1 skipped (or answered with a chat message instead),
2 usage error (the message says what to fix), 3 timed out, 4 unavailable (no
terminal and no gateway, or the gateway cannot be reached), 130 stopped (Ctrl-C).""",
    "answer": """examples:
  midturn answer 'http://127.0.0.1:8765/#token=…'   one session, from its answer URL
  midturn answer                                    every session, with ./.midturn/admin_token
  midturn answer --gateway http://127.0.0.1:9000 --token-file ~/.midturn-admin

It runs until Ctrl-C. Exit codes: 130 after Ctrl-C (in a question, its turn is
stopped), 2 no usable token (the message lists where it looked), 4 the gateway
cannot be reached.""",
    "demo": """example:
  midturn demo

Keys: 1–9 pick, ↑↓ move, Enter confirm, Space toggle, Esc skip, ? every key.""",
    "hook": """example:
  midturn hook claude-code --help""",
    "claude-code": """example, in .claude/settings.json (docs/adapters/claude-code.md):
  {"hooks": {"PermissionRequest": [{"matcher": "*", "hooks": [{"type": "command",
    "command": "midturn hook claude-code --token-file .midturn/admin_token",
    "timeout": 86400}]}]}}
Register the same command for PreToolUse (matcher AskUserQuestion), UserPromptSubmit
and Stop too, so questions reach midturn and "allow for this turn" ends with the turn;
the page shows all four entries.

Whatever keeps midturn from deciding (no gateway, no token, a timeout) hands the
call back to Claude Code's own prompt. Exit 0, or 1 when stdin held no payload.""",
}


class _Formatter(argparse.HelpFormatter):
    """Wraps a one-paragraph text to the terminal; keeps a text with line breaks (the
    examples) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def texts(name: str) -> dict[str, Any]:
    """The keyword arguments for `add_parser(name, ...)`: description, epilog, and a
    formatter that keeps the examples' lines as written."""
    return {
        "description": DESCRIPTIONS.get(name),
        "epilog": EPILOGS.get(name),
        "formatter_class": _Formatter,
    }
