"""The terminal picker: answer asks and permission requests inline in a terminal
(SPEC §7.1). Usable by any terminal agent: give it an `Ask`, get an answer payload."""

from midturn.tui._permission import PermissionChoice, pick_permission, pick_permission_sync
from midturn.tui._picker import DEFAULT_REPEAT_WINDOW_S, PickerResult, pick, pick_sync
from midturn.tui._sanitize import sanitize

__all__ = [
    "DEFAULT_REPEAT_WINDOW_S",
    "PermissionChoice",
    "PickerResult",
    "pick",
    "pick_permission",
    "pick_permission_sync",
    "pick_sync",
    "sanitize",
]
