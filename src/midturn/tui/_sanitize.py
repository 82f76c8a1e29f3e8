"""Make model-written text safe to print on a terminal.

Everything a model wrote (questions, labels, descriptions, permission summaries and
details) passes through `sanitize` before it reaches the screen, so a question cannot
clear the screen, retitle the window, plant a hyperlink, move the cursor or reorder the
text with bidirectional overrides. Escape sequences are removed whole; lone control
characters are removed; a tab becomes a space; newlines are kept only where asked.
"""

from __future__ import annotations

import re

__all__ = ["sanitize"]

_SEQUENCES = re.compile(
    r"""
      \x1b\[ [0-?]* [\x20-/]* [@-~]?            # CSI: cursor moves, erase, colours
    | \x1b\] [^\x07\x1b\x9c]* (?:\x07|\x1b\\|\x9c)?   # OSC: title, hyperlink, clipboard
    | \x1b [PX^_] [^\x1b\x9c]* (?:\x1b\\|\x9c)?  # DCS, SOS, PM, APC strings
    | \x1b [\x20-/]* [0-~]?                      # any other escape
    | \x9b [0-?]* [\x20-/]* [@-~]?               # 8-bit CSI
    | \x9d [^\x07\x9c]* [\x07\x9c]?              # 8-bit OSC
    | [\x90\x98\x9e\x9f] [^\x9c]* \x9c?          # 8-bit DCS, SOS, PM, APC
    """,
    re.VERBOSE,
)

# C0 controls except tab and newline, DEL, C1 controls, and the bidirectional marks,
# embeddings, overrides and isolates (the "Trojan Source" characters).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = re.compile("\r\n|[\r\u2028\u2029\x0b\x0c\x85]")


def sanitize(text: str, *, multiline: bool = True) -> str:
    """`text` with every terminal control sequence and control character removed.

    Line breaks become `\\n` (or a space when `multiline` is false), tabs become one
    space. Printable text, including any script and emoji, is kept as it is.
    """
    text = _LINE_BREAKS.sub("\n", text)
    text = _SEQUENCES.sub("", text)
    text = text.replace("\t", " ")
    text = _CONTROLS.sub("", text)
    if not multiline:
        text = text.replace("\n", " ")
    return text
