"""Normalization (SPEC §2.2) and strict validation (SPEC §2.3) of a canonical ask.

Every problem is collected, not just the first, and each message says what was given
and what to give, so a model can fix its call in one retry. Each normalization fix is
reported as a warning on the `Ask`.

Unknown keys are ignored with a warning rather than refused: models add harmless extra
fields, and refusing them would cost a retry for nothing.
"""

from __future__ import annotations

import math
import re
from typing import Any

from midturn.contract._models import Ask, Limits, OnTimeout, Option, Question
from midturn.contract._normalize import (
    derive_header,
    fold,
    is_escape_label,
    split_recommended,
    unique_header,
)
from midturn.errors import InvalidAsk, Problem

__all__ = ["build_ask"]

_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_ASK_KEYS = frozenset({"questions", "timeout_s", "on_timeout"})
_QUESTION_KEYS = frozenset(
    {
        "id",
        "header",
        "question",
        "kind",
        "options",
        "multi",
        "multiSelect",
        "min_choices",
        "max_choices",
        "recommended",
        "allow_other",
        "secret",
        "placeholder",
    }
)
_OPTION_KEYS = frozenset({"label", "description", "id"})
_NO_OTHER = 'Do not add an "Other" option: the user can always type their own answer.'


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _short(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _range(low: int, high: int) -> str:
    return f"{low}" if low == high else f"{low}–{high}"


class _Checker:
    """Collects problems and warnings while one ask is checked."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.problems: list[Problem] = []
        self.warnings: list[str] = []

    def problem(self, path: str, message: str) -> None:
        self.problems.append(Problem(path, message))

    def warn(self, path: str, message: str) -> None:
        self.warnings.append(f"{path}: {message}")

    def unknown_keys(self, data: dict[str, Any], known: frozenset[str], path: str) -> None:
        if known.issuperset(data):
            return
        for key in data:
            if key not in known:
                self.warn(f"{path}.{key}" if path else str(key), "unknown field, ignored")

    def text(self, value: Any, where: str, field: str, *, required: bool, flat: bool) -> str | None:
        """A trimmed string (whitespace folded when `flat`), None when absent or empty
        and not required. The path `where.field` is only built for a problem."""
        if isinstance(value, str):
            cleaned = fold(value) if flat else value.strip()
            if cleaned and (not flat or cleaned == value.strip()):
                return cleaned
            if cleaned:
                self.warn(f"{where}.{field}", "folded line breaks into spaces")
                return cleaned
            if required:
                self.problem(f"{where}.{field}", "empty; give a non-empty string")
            return None
        if value is None:
            if required:
                self.problem(f"{where}.{field}", "missing; give a non-empty string")
            return None
        self.problem(f"{where}.{field}", f"{_kind_of(value)} given; give a string")
        return None

    def flag(self, value: Any, where: str, field: str, default: bool) -> bool:
        if value is None:
            return default
        if not isinstance(value, bool):
            self.problem(f"{where}.{field}", f"{_kind_of(value)} given; give true or false")
            return default
        return value

    def count(self, value: Any, path: str) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem(path, f"{_kind_of(value)} given; give a whole number")
            return None
        return value


def build_ask(canonical: Any, *, limits: Limits, dialect: str) -> Ask:
    """Normalize a canonical-shaped dict, validate it strictly, return the `Ask`.

    Raises `InvalidAsk` with every problem found."""
    check = _Checker(limits)
    if not isinstance(canonical, dict):
        raise InvalidAsk(
            [
                Problem(
                    "",
                    f"the tool input is {_kind_of(canonical)}; give an object "
                    '{"questions": [...]} with 1–'
                    f"{limits.max_questions} questions",
                )
            ]
        )
    check.unknown_keys(canonical, _ASK_KEYS, "")
    raw_questions = _question_list(check, canonical.get("questions"))
    drafts = [_question(check, raw, i) for i, raw in enumerate(raw_questions)]
    questions = _finish(check, drafts)
    timeout_s = _timeout(check, canonical.get("timeout_s"))
    on_timeout = _on_timeout(check, canonical.get("on_timeout"))
    if check.problems:
        raise InvalidAsk(check.problems)
    return Ask(
        questions=tuple(questions),
        timeout_s=timeout_s,
        on_timeout=on_timeout,
        dialect=dialect,
        warnings=tuple(check.warnings),
    )


def _question_list(check: _Checker, value: Any) -> list[Any]:
    most = check.limits.max_questions
    if value is None:
        check.problem("questions", f"missing; give a list of 1–{most} questions")
        return []
    if isinstance(value, dict):
        check.warn("questions", "one question object given; read it as a list of one")
        return [value]
    if not isinstance(value, list):
        check.problem("questions", f"{_kind_of(value)} given; give a list of 1–{most} questions")
        return []
    if not value:
        check.problem("questions", f"empty list given; give 1–{most} questions")
    elif len(value) > most:
        check.problem(
            "questions",
            f"{len(value)} questions given; ask at most {most} at once: keep the ones you "
            "need answered to continue now",
        )
        return []
    return value


def _timeout(check: _Checker, value: Any) -> float | None:
    if value is None:
        return None
    ceiling = check.limits.max_timeout_s
    bound = f" and at most {ceiling:g}" if ceiling is not None else ""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        check.problem(
            "timeout_s", f"{_kind_of(value)} given; give seconds, above 0{bound}, or null"
        )
        return None
    if value <= 0 or (ceiling is not None and value > ceiling):
        check.problem("timeout_s", f"{value:g} given; give seconds above 0{bound}, or null")
        return None
    return float(value)


def _on_timeout(check: _Checker, value: Any) -> OnTimeout:
    if value is None or (isinstance(value, str) and value.strip().lower() == "skip"):
        return "skip"
    if isinstance(value, str) and value.strip().lower() == "recommended":
        return "recommended"
    shown = _short(value) if isinstance(value, str) else _kind_of(value)
    check.problem("on_timeout", f'{shown} given; give "skip" or "recommended"')
    return "skip"


class _Draft:
    """One question checked field by field; headers are settled over the whole ask."""

    __slots__ = ("fields", "given_id", "header", "path", "position")

    def __init__(self, position: int, fields: dict[str, Any]) -> None:
        self.position = position
        self.path = f"questions[{position}]"
        self.fields = fields
        self.given_id: str | None = None
        self.header: str | None = None


def _question(check: _Checker, raw: Any, position: int) -> _Draft | None:
    path = f"questions[{position}]"
    if not isinstance(raw, dict):
        check.problem(path, f'{_kind_of(raw)} given; give an object with a "question" string')
        return None
    check.unknown_keys(raw, _QUESTION_KEYS, path)
    limits = check.limits
    draft = _Draft(position, {})
    draft.given_id = _question_id(check, raw.get("id"), path)
    draft.header = check.text(raw.get("header"), path, "header", required=False, flat=True)
    if draft.header is not None and len(draft.header) > limits.max_header_chars:
        check.problem(
            f"{path}.header",
            f"{_short(draft.header)} is {len(draft.header)} characters; give at most "
            f"{limits.max_header_chars}, or leave it out to derive one from the question",
        )
    text = check.text(raw.get("question"), path, "question", required=True, flat=False)
    if text is not None and len(text) > limits.max_question_chars:
        check.problem(
            f"{path}.question",
            f"{len(text)} characters given; keep the question to at most "
            f"{limits.max_question_chars} characters",
        )
    kind = _question_kind(check, raw, path)
    fields: dict[str, Any] = {"question": text, "kind": kind}
    multi = check.flag(raw.get("multi"), path, "multi", False)
    if raw.get("multiSelect") is not None:
        multi_select = check.flag(raw.get("multiSelect"), path, "multiSelect", False)
        if multi_select and not multi:
            check.warn(f"{path}.multiSelect", "read as multi: true")
        multi = multi or multi_select
    secret = check.flag(raw.get("secret"), path, "secret", False)
    placeholder = check.text(raw.get("placeholder"), path, "placeholder", required=False, flat=True)
    fields["allow_other"] = check.flag(raw.get("allow_other"), path, "allow_other", True)
    if kind == "text":
        _text_only_fields(check, raw, path, multi)
        fields.update(secret=secret, placeholder=placeholder)
        if placeholder is not None and len(placeholder) > limits.max_question_chars:
            check.problem(f"{path}.placeholder", "too long; keep it to a short hint")
    elif kind == "choice":
        if secret:
            check.problem(
                f"{path}.secret",
                'only a text question can be secret; use kind "text" for a secret value',
            )
        if placeholder is not None:
            check.problem(
                f"{path}.placeholder",
                "only text questions take a placeholder; remove it from this choice question",
            )
        options, suggested = _options(check, raw.get("options"), path)
        fields.update(options=options, multi=multi)
        fields["recommended"] = _recommended(
            check, raw.get("recommended"), options, suggested, path
        )
        fields.update(_choices(check, raw, path, multi, len(options)))
    draft.fields = fields
    return draft


def _question_id(check: _Checker, value: Any, where: str) -> str | None:
    """A valid id from `value`, or None; problems are reported at `where` + ".id"."""
    if isinstance(value, str) and _ID.fullmatch(value):
        return value
    if value is None:
        return None
    path = f"{where}.id"
    if isinstance(value, int) and not isinstance(value, bool):
        check.warn(path, f"number {value} read as the id {str(value)!r}")
        value = str(value)
    if not isinstance(value, str):
        check.problem(path, f"{_kind_of(value)} given; give a short string id, or leave it out")
        return None
    cleaned: str = value.strip()
    if not _ID.fullmatch(cleaned):
        check.problem(
            path,
            f"{_short(cleaned)} is not a valid id; use 1–64 letters, digits, '_', '.' or '-', "
            "or leave it out",
        )
        return None
    return cleaned


def _question_kind(check: _Checker, raw: dict[str, Any], path: str) -> str | None:
    value = raw.get("kind")
    has_options = raw.get("options") not in (None, [])
    if value is None:
        return "choice" if has_options else "text"
    if isinstance(value, str) and value.strip().lower() in ("choice", "text"):
        kind = value.strip().lower()
        if kind == "text" and has_options:
            check.problem(
                f"{path}.options",
                'a text question takes no options; remove them, or set kind to "choice"',
            )
        return kind
    shown = _short(value) if isinstance(value, str) else _kind_of(value)
    check.problem(f"{path}.kind", f'{shown} given; give "choice" (with options) or "text"')
    return None


def _text_only_fields(check: _Checker, raw: dict[str, Any], path: str, multi: bool) -> None:
    if multi:
        check.problem(
            f"{path}.multi", "only choice questions can be multi; remove it or add options"
        )
    for key in ("recommended", "min_choices", "max_choices"):
        if raw.get(key) is not None:
            check.problem(f"{path}.{key}", "applies to choice questions only; remove it")


def _options(check: _Checker, value: Any, path: str) -> tuple[list[Option], list[int]]:
    """The options after normalization, and the indices labelled "(Recommended)"."""
    limits = check.limits
    where = f"{path}.options"
    if not isinstance(value, list) or not value:
        span = _range(limits.min_options, limits.max_options)
        if value is None or value == []:
            check.problem(where, f'no options given; give {span} options, or set kind to "text"')
        else:
            check.problem(where, f"{_kind_of(value)} given; give a list of {span} options")
        return [], []
    options: list[Option] = []
    suggested: list[int] = []
    seen_labels: dict[str, int] = {}
    seen_ids: dict[str, int] = {}
    dropped: list[str] = []
    for index, raw in enumerate(value):
        at = f"{where}[{index}]"
        if isinstance(raw, str):
            if not any(isinstance(earlier, str) for earlier in value[:index]):
                check.warn(where, "options given as strings; read each as a label")
            raw = {"label": raw}
        if not isinstance(raw, dict):
            check.problem(at, f'{_kind_of(raw)} given; give an object {{"label": ...}}')
            continue
        check.unknown_keys(raw, _OPTION_KEYS, at)
        label = check.text(raw.get("label"), at, "label", required=True, flat=True)
        if label is None:
            continue
        label, marked = split_recommended(label)
        if marked:
            check.warn(f"{at}.label", "moved the '(Recommended)' suffix to recommended")
        if is_escape_label(label):
            dropped.append(label)
            check.warn(at, f"dropped {label!r}: the client offers Other and Skip itself")
            continue
        if not label:
            check.problem(f"{at}.label", "empty; give the option's text")
            continue
        if len(label) > limits.max_label_chars:
            check.problem(
                f"{at}.label",
                f"{len(label)} characters given; keep labels to at most "
                f"{limits.max_label_chars} (put detail in the description)",
            )
        if label.casefold() in seen_labels:
            check.warn(
                at, f"dropped {label!r}: the same label as options[{seen_labels[label.casefold()]}]"
            )
            continue
        seen_labels[label.casefold()] = index
        description = check.text(
            raw.get("description"), at, "description", required=False, flat=False
        )
        if description is not None and len(description) > limits.max_description_chars:
            check.problem(
                f"{at}.description",
                f"{len(description)} characters given; keep it to at most "
                f"{limits.max_description_chars}",
            )
        option_id = _question_id(check, raw.get("id"), at)
        if option_id is not None:
            if option_id in seen_ids:
                check.problem(
                    f"{at}.id",
                    f"{option_id!r} is also the id of options[{seen_ids[option_id]}]; give each "
                    "option a unique id, or leave ids out",
                )
            seen_ids[option_id] = index
        if marked:
            suggested.append(len(options))
        options.append(Option(label=label, description=description, id=option_id))
    _option_count(check, where, len(options), dropped)
    return options, suggested


def _option_count(check: _Checker, where: str, count: int, dropped: list[str]) -> None:
    limits = check.limits
    if limits.min_options <= count <= limits.max_options:
        return
    span = _range(limits.min_options, limits.max_options)
    given = f"{count} option{'' if count == 1 else 's'}"
    if dropped:
        names = ", ".join(repr(label) for label in dropped)
        given += f" left after dropping {names}, which the client adds itself"
    else:
        given += " given"
    if count > limits.max_options:
        check.problem(where, f"{given}; give at most {limits.max_options}: keep the likeliest")
    else:
        check.problem(where, f"{given}; give {span} mutually exclusive options. {_NO_OTHER}")


def _recommended(
    check: _Checker, value: Any, options: list[Option], suggested: list[int], path: str
) -> int | None:
    where = f"{path}.recommended"
    chosen: int | None = None
    if value is not None:
        chosen = _recommended_index(check, value, options, where)
    marks = set(suggested)
    if chosen is not None:
        marks.add(chosen)
    if len(marks) > 1:
        labels = ", ".join(repr(options[i].label) for i in sorted(marks))
        check.problem(where, f"{labels} are all recommended; recommend at most one option")
        return None
    return next(iter(marks), None)


def _recommended_index(
    check: _Checker, value: Any, options: list[Option], where: str
) -> int | None:
    if not options:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if 0 <= value < len(options):
            return value
        check.problem(
            where, f"index {value} given; give a 0-based index below {len(options)}, or a label"
        )
        return None
    if isinstance(value, str):
        wanted, _ = split_recommended(fold(value))
        for index, option in enumerate(options):
            if wanted.casefold() in (option.label.casefold(), (option.id or "").casefold()):
                return index
        if wanted.isdigit() and int(wanted) < len(options):
            return int(wanted)
        labels = ", ".join(repr(option.label) for option in options)
        check.problem(
            where, f"{_short(wanted)} is not an option; give one of {labels}, or its index"
        )
        return None
    check.problem(where, f"{_kind_of(value)} given; give an option's label or 0-based index")
    return None


def _choices(
    check: _Checker, raw: dict[str, Any], path: str, multi: bool, count: int
) -> dict[str, Any]:
    low = check.count(raw.get("min_choices"), f"{path}.min_choices")
    high = check.count(raw.get("max_choices"), f"{path}.max_choices")
    if not multi:
        for key, given in (("min_choices", low), ("max_choices", high)):
            if given is not None and given != 1:
                check.problem(
                    f"{path}.{key}",
                    f"{given} given on a single-choice question; set multi: true, or remove it",
                )
        return {"min_choices": 1, "max_choices": None}
    if low is not None and (low < 0 or (count and low > count)):
        check.problem(
            f"{path}.min_choices", f"{low} given; give 0–{count} (0 lets the user choose none)"
        )
        low = None
    if high is not None and (high < 1 or (count and high > count)):
        check.problem(
            f"{path}.max_choices", f"{high} given; give 1–{count}, or leave it out for all"
        )
        high = None
    if low is not None and high is not None and low > high:
        check.problem(
            f"{path}.min_choices",
            f"{low} is above max_choices {high}; give min_choices ≤ max_choices",
        )
    return {"min_choices": 1 if low is None else low, "max_choices": high}


def _finish(check: _Checker, drafts: list[_Draft | None]) -> list[Question]:
    """Settle ids and headers across the ask and build the questions."""
    ids: dict[str, int] = {}
    for draft in drafts:
        if draft is None or draft.given_id is None:
            continue
        if draft.given_id in ids:
            check.problem(
                f"{draft.path}.id",
                f"{draft.given_id!r} is also the id of questions[{ids[draft.given_id]}]; give each "
                "question a unique id, or leave ids out",
            )
        ids.setdefault(draft.given_id, draft.position)
    limit = check.limits.max_header_chars
    headers: set[str] = set()
    for draft in drafts:  # given headers first: they keep their text when they can
        if draft is not None and draft.header is not None and len(draft.header) <= limit:
            header = unique_header(draft.header, headers, limit, draft.position + 1)
            if header != draft.header:
                check.warn(f"{draft.path}.header", f"{draft.header!r} repeats; renamed {header!r}")
            draft.header = header
            headers.add(header.casefold())
    questions: list[Question] = []
    for draft in drafts:
        if (
            draft is None
            or draft.fields.get("question") is None
            or draft.fields.get("kind") is None
        ):
            continue
        if draft.header is None:
            derived = derive_header(draft.fields["question"], limit)
            draft.header = unique_header(derived, headers, limit, draft.position + 1)
            headers.add(draft.header.casefold())
        question_id = draft.given_id or _default_id(draft.position, ids)
        fields = draft.fields
        questions.append(
            Question(
                id=question_id,
                header=draft.header,
                question=fields["question"],
                kind=fields["kind"],
                options=tuple(fields.get("options", ())),
                multi=fields.get("multi", False),
                min_choices=fields.get("min_choices", 1),
                max_choices=fields.get("max_choices"),
                recommended=fields.get("recommended"),
                allow_other=fields["allow_other"],
                secret=fields.get("secret", False),
                placeholder=fields.get("placeholder"),
            )
        )
    return questions


def _default_id(position: int, ids: dict[str, int]) -> str:
    candidate = f"q{position + 1}"
    suffix = 2
    while candidate in ids:
        candidate = f"q{position + 1}_{suffix}"
        suffix += 1
    ids[candidate] = position
    return candidate
