"""The terminal picker: answer asks and permission requests inline in a terminal
(docs/terminal.md). Usable by any terminal agent: give it an `Ask`, get an answer payload.

- `pick(ask)` / `pick_permission(request)` (and `_sync` forms) show one interaction.
- `answer_loop(answerer, terminal, session_id=...)` answers a queue's head again and
  again, through the answerer port: an in-process `Runtime` or an `AsyncClient`.
- `open_terminal()` finds the person's terminal even when stdout is piped.
- `sanitize(text)` is the filter every model-written string passes before display.
"""

from midturn._public import publish as _publish
from midturn.tui._answerer import answer_loop
from midturn.tui._permission import PermissionChoice, pick_permission, pick_permission_sync
from midturn.tui._picker import DEFAULT_REPEAT_WINDOW_S, PickerResult, pick, pick_sync
from midturn.tui._sanitize import sanitize
from midturn.tui._terminal import TerminalIO, open_terminal

__all__ = [
    "DEFAULT_REPEAT_WINDOW_S",
    "PermissionChoice",
    "PickerResult",
    "TerminalIO",
    "answer_loop",
    "open_terminal",
    "pick",
    "pick_permission",
    "pick_permission_sync",
    "pick_sync",
    "sanitize",
]

_publish("midturn.tui", globals(), __all__)
