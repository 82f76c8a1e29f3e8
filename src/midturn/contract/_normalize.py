"""Text fixes that have one obvious meaning (docs/contract.md#normalization): trimming, folding
newlines, recognising the escape options a client owns, the "(Recommended)" suffix, and headers
derived from the question text.

How a missing header is derived (the rules a user can rely on):

- First, the question's key noun phrase, fitted to the limit in whole words
  (`_headers.py`: "Enable caching for the API responses?" -> "Caching", "Which test
  framework do you prefer?" -> "Framework"). When it finds none that fits, the rules
  below take the question's first words.
- Words are taken from the question with leading and trailing filler words dropped
  ("Which", "should", "the", ...), so "Which database should the service use?" gives
  "Database" rather than "Which".
- Whole words are added while they fit the limit; a header never ends mid-word.
- When the first content word alone is longer than the limit, the first later run of
  words that fits is used instead ("Internationalization strategy?" -> "Strategy").
- When no content word fits, a filler word that fits is used whole; only when no word
  of the question fits at all is a word cut, and the cut is marked with "…" so it never
  reads as a whole word.
- A header that collides (case-insensitively) with an earlier one gets " 2", " 3", ...;
  the base is shortened by whole words to make room, and falls back to "Q<n>".
"""

from __future__ import annotations

import re
import unicodedata

from midturn.contract._headers import key_phrase

__all__ = [
    "derive_header",
    "fold",
    "is_escape_label",
    "split_recommended",
    "unique_header",
]

_RECOMMENDED = re.compile(r"\s*[(\[]\s*recommended\s*[)\]]\s*$", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)

_FILLER = frozenset(
    str.split(
        """a an the which what who whom whose when where why how should shall would could can
    will do does did is are was were be been to for of in on at by with and or we you i
    your our my me us it its this that these those there please let lets there's it's
    do you want would you like prefer"""
    )
)

_OTHER_TAIL = frozenset(
    str.split(
        """please specify type your own write enter in custom answer option describe explain
    something else below here fill it choice value my own specified"""
    )
)

_ESCAPES = frozenset(
    {
        "other",
        "others",
        "something else",
        "anything else",
        "none of the above",
        "none of these",
        "none of those",
        "none of them",
        "skip",
        "skip this",
        "skip this question",
        "skip for now",
        "no preference",
        "no strong preference",
        "no preference either way",
        "either",
        "either is fine",
        "either one",
        "doesnt matter",
        "it doesnt matter",
        "dont care",
        "i dont care",
        "not sure",
        "not sure yet",
        "im not sure",
        "i am not sure",
        "unsure",
        "dont know",
        "i dont know",
        "no idea",
        "you decide",
        "you choose",
        "you pick",
        "your call",
        "your choice",
        "up to you",
        "its up to you",
        "let you decide",
        "whatever you think",
        "whatever you think is best",
        "let the assistant decide",
        "let the agent decide",
    }
)
_ESCAPE_PHRASES = ("type your own", "write your own", "enter your own", "please specify")


def fold(text: str) -> str:
    """Trim, and fold every run of whitespace (newlines included) into one space."""
    return " ".join(text.split())


_ASCII_PUNCTUATION = bytes(
    ord(" ") if chr(code) in '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~' else code for code in range(256)
)
"""ASCII punctuation as spaces, for `bytes.translate` (the apostrophe goes by its `delete`
argument): `str.translate` with a mapping looks up every character in a dict, several times
the cost."""
_ALTERNATIVES = re.compile(r"/|\bor\b|\|", re.IGNORECASE)


def _plain(text: str) -> str:
    """Lower case, apostrophes removed, punctuation turned into spaces, spaces folded."""
    if text.isascii():
        if text.isalnum():  # one word of letters and digits: nothing to translate or fold
            return text.lower()
        spaced = text.lower().encode("ascii").translate(_ASCII_PUNCTUATION, b"'")
        return " ".join(spaced.decode("ascii").split())
    text = unicodedata.normalize("NFKC", text).casefold().replace("'", "").replace("’", "")
    return " ".join("".join(ch if ch.isalnum() or ch.isspace() else " " for ch in text).split())


def is_escape_label(label: str) -> bool:
    """Whether an option label is an escape the client owns: Other, Skip, Not sure,
    None of the above, You decide and close variants ("Other…", "other:",
    "I don't know / Not sure")."""
    if label.isalnum() and label.isascii():  # one word: an escape only by its name
        return label.lower() in _ESCAPES
    if "/" not in label and "|" not in label and "or" not in label.casefold():
        return _is_escape_part(label)
    parts = [p for p in _ALTERNATIVES.split(label) if p.strip()]
    return bool(parts) and all(_is_escape_part(part) for part in parts)


def _is_escape_part(part: str) -> bool:
    plain = _plain(part)
    if not plain:
        return False
    if plain in _ESCAPES:
        return True
    if ("own" in plain or "specify" in plain) and any(p in plain for p in _ESCAPE_PHRASES):
        return True
    words = plain.split()
    return words[0] in ("other", "others") and all(w in _OTHER_TAIL for w in words[1:])


def split_recommended(label: str) -> tuple[str, bool]:
    """`("PostgreSQL", True)` for "PostgreSQL (Recommended)"; the label unchanged and
    False when there is no such suffix."""
    if "recommended" not in label.lower():
        return label, False
    stripped = _RECOMMENDED.sub("", label)
    return (stripped.strip(), True) if stripped != label else (label, False)


def _fit(words: list[str], limit: int) -> str:
    """The longest run of whole words from the start that fits `limit`, trailing filler
    dropped; "" when the first word does not fit."""
    taken: list[str] = []
    length = 0
    for word in words:
        extra = len(word) + (1 if taken else 0)
        if length + extra > limit:
            break
        taken.append(word)
        length += extra
    while len(taken) > 1 and taken[-1].casefold() in _FILLER:
        taken.pop()
    return " ".join(taken)


def _content_words(question: str) -> list[str]:
    words = _WORD.findall(question)
    start = 0
    while start < len(words) - 1 and words[start].casefold() in _FILLER:
        start += 1
    return words[start:]


def _capital(text: str) -> str:
    first = text[:1].upper()
    return (first if len(first) == 1 else text[:1]) + text[1:]  # "ß".upper() is "SS"


def derive_header(question: str, limit: int) -> str:
    """A short chip label for a question that came without one: its key noun phrase
    (`contract/_headers.py`), else its first words (see the module notes)."""
    phrase = key_phrase(question, limit)
    if phrase:
        return _capital(phrase)
    words = _content_words(question)
    if not words:
        return ""
    for start in range(len(words)):
        fitted = _fit(words[start:], limit)
        if fitted and (start == 0 or words[start].casefold() not in _FILLER):
            return _capital(fitted)
    every = _WORD.findall(question)  # a filler word that fits beats a cut one
    short = next((word for word in every if len(word) <= limit), None)
    if short is not None:
        return _capital(short)
    first = words[0]
    return _capital(first[: max(limit - 1, 0)] + "…") if limit > 1 else first[:limit]


def unique_header(header: str, taken: set[str], limit: int, position: int) -> str:
    """`header`, or a numbered variant of it that fits `limit` and is not in `taken`
    (compared case-insensitively). `position` is the question's 1-based number."""
    if header and header.casefold() not in taken:
        return header
    words = header.split()
    for number in range(2, 100):
        suffix = f" {number}"
        base = _fit(words, limit - len(suffix))
        candidate = f"{base}{suffix}" if base else ""
        if candidate and candidate.casefold() not in taken:
            return candidate
    for fallback in (f"Q{position}", f"Question {position}"):
        if len(fallback) <= limit and fallback.casefold() not in taken:
            return fallback
    for number in range(1, 1000):  # pragma: no cover - only with absurd limits
        candidate = str(number)[:limit]
        if candidate.casefold() not in taken:
            return candidate
    return header  # pragma: no cover
