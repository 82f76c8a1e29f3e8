"""The key noun phrase of a question, for a header the model did not give
(docs/contract.md#derived-headers).

A header is read beside the answer (`Caching: No`), so it must name what the question is
about, not its first word (`Enable: No`). A small, deterministic reading of English
questions finds it, with word lists and no language model:

1. Of several sentences, the asking one (ending in `?`) is read first.
2. `Which/What/Whose X …` is about X: `Which test framework do you prefer?` → the noun
   phrase `test framework`.
3. Otherwise the lead-in is dropped (`Should I`, `Do you want me to`, `Is it OK to`, …);
   a verb then is read with its object (`enable caching`, `run the migrations`), and a
   subject with a verb and an object is read as that object (`Should the service use
   PostgreSQL?` → `PostgreSQL`).
4. The phrase is fitted to the limit in whole words: the verb with its object, else the
   object alone, else its head noun with as many words before it as fit
   (`existing config file` → `Config file`). A generic head (`entry`, `mode`, `type`)
   keeps its modifier instead (`CHANGELOG entry` → `CHANGELOG`); `kind of X`, `type of X`
   read as X (`Node version`).
5. Alternatives (`tabs or spaces`) are the header when they fit, else what they are for
   (`… for the frontend` → `Frontend`).

`key_phrase` returns "" when it finds nothing that fits; the caller then falls back to
the question's first words.
"""

from __future__ import annotations

import re

__all__ = ["key_phrase"]

_WORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[?!;:])\s*|(?<=\.)\s+")
_ENDS_BEFORE_LAST = re.compile(r"[?!;:.]")
"""A character after which `_SENTENCE_END` may split: without one before the last
character, the question is one sentence (the regex split costs as much as the rest of
the reading)."""


_ASCII_SPACED = bytes(
    code if chr(code).isalnum() or chr(code) in "'.-" else ord(" ") for code in range(256)
)
"""Every ASCII byte a `_WORD` match cannot hold, as a space."""


def _words_of(clause: str) -> tuple[list[str], list[str]]:
    """`_WORD.findall(clause)` and each word case-folded, the same lists. In an ASCII
    clause without `'`, `.` or `-`, the words are the runs of letters and digits: the
    clause with every other character made a space, split, in C. A regex over the whole
    clause cost as much as the rest of its reading."""
    if clause.isascii():
        spaced = clause.encode("ascii").translate(_ASCII_SPACED).decode("ascii")
        if "'" not in spaced and "." not in spaced and "-" not in spaced:
            return spaced.split(), spaced.lower().split()
    words = _WORD.findall(clause)
    return words, [word.casefold() for word in words]


def _clauses(question: str) -> list[str]:
    """The question's sentences, trimmed, the empty ones left out."""
    if _ENDS_BEFORE_LAST.search(question, 0, len(question) - 1) is None:
        whole = question.strip()
        return [whole] if whole else []
    return [part.strip() for part in _SENTENCE_END.split(question) if part.strip()]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_WH = _words("which what whose who whom when where why how")
_HOW_MEASURE = _words("many much often long soon far big large old")
_DETERMINERS = _words(
    """the a an this that these those my your our their its his her some any all every
    each both another other no such same"""
)
_NUMBERS = _words("one two three four five six seven eight nine ten several few many")
_AUX = _words(
    """do does did should shall would could can will may might must is are was were am
    be been being has have had don't doesn't isn't aren't shouldn't can't won't wouldn't"""
)
_PRONOUNS = _words("i you we me us it they them he she him one")
_LEAD = (
    _AUX
    | _PRONOUNS
    | _words(
        """want wants like prefer need please ok okay fine alright sure go ahead and let
        lets let's to also now first still just really mind if able allowed safe good
        idea better a rather instead actually already maybe perhaps i'd i'll we'd we'll
        you'd it's there's there either neither"""
    )
)
_PREPOSITIONS = _words(
    """to for of in on at by with from into onto over under about after before during
    without via as than per between across through against within toward towards
    behind beyond since until upon around off out"""
)
_CONJUNCTIONS = _words("and or but nor so yet if when while because unless whether then")
_ADVERBS = _words(
    """now first also still yet again too just already later today tonight tomorrow
    instead really automatically immediately locally globally anyway here there
    everywhere only even right soon asap directly manually permanently"""
)
_PREDICATES = _words(
    """ready ok okay fine correct right safe needed required enough done good better
    worth possible necessary acceptable allowed expected intended wanted supported
    available true false on off enabled disabled"""
)
_VERBS = _words(
    """add allow apply approve archive back block bump build cache call cancel change
    check choose clean clear close combine commit compress configure confirm continue
    convert copy create decrease delete deploy disable document downgrade drop enable
    encrypt enforce exclude export expose extract fix force format generate handle
    ignore import include increase index install keep kill limit lint load lock lower
    make mark merge migrate mock move name notify open overwrite patch pause pick pin
    proceed prune publish pull purge push raise rebase rebuild recreate redeploy
    refactor regenerate reinstall release reload remove rename reorder replace rerun
    reset restart restore resume retry revert review rewrite roll rollback rotate run
    save schedule seed send set ship skip split squash start stop store stub switch
    sync tag test translate try turn uninstall unpin update upgrade upload use validate
    put place host mount serve expose listen target support rename assign give grant
    vendor wipe write backfill bundle shard cherry-pick log link unlink reformat
    squash-merge fast-forward own"""
)
_NOUNISH = _words(
    """test build release cache commit merge deploy format update tag change fix name
    index patch backup review lint log schedule check limit store export import upload
    lock seed bundle retry mock stub restart upgrade rollback install cleanup"""
)
_OTHER_VERBS = _words(
    """pass fail work need support return accept listen happen look seem get go come stay
    wait expire live belong contain point respond show print send receive say mean read
    become remain stay"""
)
_STOP_VERBS = (_VERBS - _NOUNISH) | _OTHER_VERBS
_GENERIC = _words(
    """entry entries file files mode setting settings option options value values type
    types kind kinds sort version versions name names level style format method approach
    way strategy thing things stuff one ones part parts manager provider tool"""
)
_OF_HEADS = _words("kind type sort version name number amount size level format style")
_WEAK = _words("one ones thing things option options it this that way approach choice")
_FOR = _words("for of")
_BACK_REFERENCES = _words("it them these those this that all both")
_ENDS = _PREPOSITIONS | _CONJUNCTIONS | _AUX | _PRONOUNS | _WH | _ADVERBS | _PREDICATES


def _fits(words: list[str], limit: int) -> str:
    text = " ".join(words)
    return text if words and len(text) <= limit else ""


def _is_verb(low: str) -> bool:
    """A verb of the list, or a compound with one (`force-push`)."""
    return low in _VERBS or ("-" in low and any(part in _VERBS for part in low.split("-")))


def _is_number(low: str) -> bool:
    return low in _NUMBERS or low.replace(".", "").isdigit()


def _is_stop_verb(low: str) -> bool:
    if low in _STOP_VERBS:
        return True
    return any(low.endswith(end) and low[: -len(end)] in _STOP_VERBS for end in ("es", "s"))


class _Reader:
    """One clause, read left to right."""

    def __init__(self, clause: str) -> None:
        self.words, self.low = _words_of(clause)

    def at(self, i: int) -> str:
        return self.low[i] if i < len(self.low) else ""

    def skip(self, i: int, kinds: frozenset[str]) -> int:
        while i < len(self.low) and self.low[i] in kinds:
            i += 1
        return i

    def noun_phrase(self, i: int) -> tuple[list[str], int]:
        """The noun phrase starting at `i` (determiners skipped): its words and the
        index after it."""
        while i < len(self.low) and (self.low[i] in _DETERMINERS or _is_number(self.low[i])):
            i += 1
        phrase: list[str] = []
        while i < len(self.low) and len(phrase) < 4:
            low = self.low[i]
            if low in _ENDS or low in _DETERMINERS or (phrase and _is_number(low)):
                break
            if phrase and (_is_stop_verb(low) or (low.endswith("ed") and len(low) > 4)):
                break
            phrase.append(self.words[i])
            i += 1
        if phrase and phrase[-1].casefold() in _OF_HEADS and self.at(i) == "of":
            complement, after = self.noun_phrase(i + 1)
            if complement:
                return [*complement, phrase[-1]], after
        return phrase, i


def _fit_phrase(phrase: list[str], limit: int) -> str:
    """The phrase, or the part of it that fits and keeps its meaning: the head noun with
    the words before it that fit; for a generic head alone, its modifiers instead."""
    if whole := _fits(phrase, limit):
        return whole
    for start in range(1, len(phrase) - 1):  # the head noun and at least one word before
        if kept := _fits(phrase[start:], limit):
            return kept
    if phrase[-1].casefold() in _GENERIC and len(phrase) > 1:
        for end in range(len(phrase) - 1, 0, -1):  # the modifiers, without the generic head
            for start in range(end):
                if kept := _fits(phrase[start:end], limit):
                    return kept
    return _fits(phrase[-1:], limit)


def _alternatives(reader: _Reader, first: list[str], after: int, limit: int) -> str | None:
    """`X or Y` (header `X or Y` when it fits, else what they are `for`); None when the
    phrase is not followed by an alternative."""
    if reader.at(after) != "or":
        return None
    second, end = reader.noun_phrase(after + 1)
    if first and second and (both := _fits([*first, "or", *second], limit)):
        return both
    if len(first) == len(second) == 1 and (pair := _fits([f"{first[0]}/{second[0]}"], limit)):
        return pair
    if len(first) == 1 and len(second) > 1:  # `a dark or a light theme`: both are themes
        return _fit_phrase(second[1:], limit)
    for i in range(end, len(reader.low)):
        if reader.low[i] in _FOR:
            purpose, _ = reader.noun_phrase(i + 1)
            if purpose and (kept := _fit_phrase(purpose, limit)):
                return kept
    return _fit_phrase(first, limit) if first else ""


def _verb_header(
    reader: _Reader, verb: int, limit: int, *, with_verb: bool, antecedent: list[str]
) -> str:
    """A verb and what it acts on: its object, else a short prepositional phrase, else
    the verb alone (only `with_verb`: `Which … should I keep?` is about the object)."""
    if reader.at(verb + 1) in _BACK_REFERENCES and not reader.noun_phrase(verb + 1)[0]:
        # `40 warnings. Fix them all?`: what "them" is comes from the sentence before
        if with_verb and (both := _fits([reader.words[verb], *antecedent], limit)):
            return both
        return _fit_phrase(antecedent, limit) if antecedent else ""
    start = reader.skip(verb + 1, _ADVERBS | _PRONOUNS)
    obj, after = reader.noun_phrase(start)
    if obj:
        alternative = _alternatives(reader, obj, after, limit)
        if alternative is not None:
            return alternative
        if with_verb and (both := _fits([reader.words[verb], *obj], limit)):
            return both
        return _fit_phrase(obj, limit)
    if reader.at(start) in _PREPOSITIONS and with_verb:
        target, _ = reader.noun_phrase(start + 1)
        if target and (phrase := _fits([reader.words[verb], reader.words[start], *target], limit)):
            return phrase
    return _fits([reader.words[verb]], limit) if with_verb else ""


def _clause_header(clause: str, limit: int, antecedent: list[str]) -> str:
    reader = _Reader(clause)
    if not reader.words:
        return ""
    i, wh = 0, ""
    if reader.at(0) in _WH:
        wh, i = reader.at(0), 1
        if wh == "how" and reader.at(1) in _HOW_MEASURE:
            i = 2
        names_it = wh in ("which", "what", "whose") or i == 2  # `Which database …`
        if names_it and reader.at(i) not in _LEAD and reader.at(i) not in _DETERMINERS:
            phrase, after = reader.noun_phrase(i)
            if phrase:
                alternative = _alternatives(reader, phrase, after, limit)
                return alternative if alternative is not None else _fit_phrase(phrase, limit)
    lead = reader.skip(i, _LEAD)
    if lead >= len(reader.words):
        return ""
    after_determiner = lead > 0 and reader.at(lead - 1) in _DETERMINERS
    yes_no = not wh
    if _is_verb(reader.at(lead)) and not after_determiner:
        about_object = wh in ("which", "what", "whose", "who", "whom")
        header = _verb_header(reader, lead, limit, with_verb=yes_no, antecedent=antecedent)
        if header or about_object or reader.at(lead + 1) in _BACK_REFERENCES:
            return header
        return _fits([reader.words[lead]], limit)  # `When should we deploy?`
    subject, after = reader.noun_phrase(lead)
    if not subject:
        return _any_alternatives(reader, limit)
    alternative = _alternatives(reader, subject, after, limit)
    if alternative is not None:
        return alternative
    verb = reader.skip(after, _ADVERBS)
    if (yes_no and _is_stop_verb(reader.at(verb))) or _is_verb(reader.at(verb)):
        acted_on, _ = reader.noun_phrase(reader.skip(verb + 1, _ADVERBS | _PRONOUNS))
        if acted_on and acted_on[0].casefold() not in _PREPOSITIONS:
            return _fit_phrase(acted_on, limit)
    return _fit_phrase(subject, limit) or _any_alternatives(reader, limit)


def _any_alternatives(reader: _Reader, limit: int) -> str:
    """`X or Y` anywhere in the clause (`… by email or Slack?` → `Email/Slack`)."""
    for i in range(1, len(reader.low) - 1):
        if reader.low[i] == "or" and reader.low[i - 1] not in _ENDS:
            found = _alternatives(reader, [reader.words[i - 1]], i, limit)
            if found:
                return found
    return ""


def _counted_nouns(clause: str) -> list[list[str]]:
    """The noun phrases after a determiner or a number (`I found two configs` →
    `configs`), for a clause with nothing better, or the one "them" refers to."""
    reader = _Reader(clause)
    found = []
    for i in range(1, len(reader.low)):
        before = reader.low[i - 1]
        if (before in _DETERMINERS or _is_number(before)) and reader.low[i] not in _ENDS:
            phrase, _ = reader.noun_phrase(i)
            if phrase:
                found.append(phrase)
    return found


def _antecedent(clause: str) -> list[str]:
    """What "it" or "them" in the next sentence most likely means: the last counted
    noun phrase of this one, else its subject."""
    counted = _counted_nouns(clause)
    if counted:
        return counted[-1]
    reader = _Reader(clause)
    return reader.noun_phrase(reader.skip(0, _LEAD))[0]


def _counted_noun(clause: str, limit: int) -> str:
    return next(
        (kept for phrase in _counted_nouns(clause) if (kept := _fit_phrase(phrase, limit))), ""
    )


def _weak(header: str) -> bool:
    return not header or all(word.casefold() in _WEAK for word in header.split())


def key_phrase(question: str, limit: int) -> str:
    """The key noun phrase of `question` in whole words within `limit` characters, or
    "" when none fits (see the module notes)."""
    clauses = _clauses(question)
    asking = [c for c in clauses if c.endswith("?")] + [c for c in clauses if not c.endswith("?")]
    for clause in asking:
        position = clauses.index(clause)
        antecedent = _antecedent(clauses[position - 1]) if position else []
        header = (
            _clause_header(clause, limit, antecedent)
            if clause.endswith("?")
            else _counted_noun(clause, limit) or _clause_header(clause, limit, antecedent)
        )
        if not _weak(header):
            return header
    for clause in clauses:
        header = _counted_noun(clause, limit)
        if not _weak(header):
            return header
    return ""
