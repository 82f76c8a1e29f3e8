"""The options of a choice question (docs/contract.md#the-canonical-ask,
docs/contract.md#normalization): escape options dropped, repeats dropped, the "(Recommended)"
suffix read, and the bounds on options, the recommended option and the number of choices checked."""

from __future__ import annotations

from typing import Any

from midturn.contract._checks import ID, Checker, checked_id, count_range, kind_of, short
from midturn.contract._models import Limits, Option, from_fields
from midturn.contract._normalize import fold, is_escape_label, split_recommended

__all__ = ["MAX_PREVIEW_CHARS", "read_choice_bounds", "read_options", "read_recommended"]

_OPTION_KEYS = frozenset({"label", "description", "id", "preview"})
MAX_PREVIEW_CHARS = 4000
"""The longest option preview kept: a mock-up, not a document."""
_READ_AT_MOST = 100
"""Longer option lists are refused by their length alone, without reading each option."""
_NO_OTHER = 'Do not add an "Other" option: the user can always type their own answer.'


def read_options(check: Checker, value: Any, path: str) -> tuple[list[Option], list[int]]:
    """The options after normalization, and the indices labelled "(Recommended)"."""
    limits = check.limits
    where = f"{path}.options"
    if not isinstance(value, list) or not value:
        span = count_range(limits.min_options, limits.max_options)
        if value is None or value == []:
            check.problem(where, f'no options given; give {span} options, or set kind to "text"')
        else:
            check.problem(where, f"{kind_of(value)} given; give a list of {span} options")
        return [], []
    if len(value) > _READ_AT_MOST:
        check.problem(
            where,
            f"{len(value)} options given; give at most {limits.max_options}: keep the likeliest",
        )
        return [], []
    options: list[Option] = []
    suggested: list[int] = []
    seen_labels: dict[str, int] = {}
    seen_ids: dict[str, int] = {}
    dropped: list[str] = []
    repeats = 0
    strings_read = False
    for index, raw in enumerate(value):
        clean = _clean_option(raw, limits, seen_labels, seen_ids) if type(raw) is dict else None
        if clean is not None:
            seen_labels[clean.label.casefold()] = index
            if clean.id is not None:
                seen_ids[clean.id] = index
            options.append(clean)
            continue
        at = f"{where}[{index}]"
        if isinstance(raw, str):
            if not strings_read:
                check.warn(where, "options given as strings; read each as a label")
                strings_read = True
            raw = {"label": raw}
        if not isinstance(raw, dict):
            check.problem(at, f'{kind_of(raw)} given; give an object {{"label": ...}}')
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
            repeats += 1
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
        preview = _preview(check, raw.get("preview"), at)
        option_id = checked_id(check, raw.get("id"), at)
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
        options.append(
            from_fields(
                Option,
                {"label": label, "description": description, "id": option_id, "preview": preview},
            )
        )
    _option_count(check, where, len(options), dropped, repeats)
    return options, suggested


def _clean_option(
    raw: dict[str, Any], limits: Limits, seen_labels: dict[str, int], seen_ids: dict[str, int]
) -> Option | None:
    """The option `raw` is when the full reading below would find nothing to fix, warn
    about or refuse in it (known keys only; a label already trimmed and folded, within
    its limit, new, neither marked "(Recommended)" nor an escape; a description trimmed
    and within its limit, or none; a valid new id, or none; no preview), the same
    `Option` it would make; else None, for the full reading to word what it finds."""
    if not _OPTION_KEYS.issuperset(raw):
        return None
    label = raw.get("label")
    if (
        type(label) is not str
        or not label
        or len(label) > limits.max_label_chars
        or label != " ".join(label.split())
        or "recommended" in label.lower()
        or is_escape_label(label)
        or label.casefold() in seen_labels
    ):
        return None
    description = raw.get("description")
    if description is not None and (
        type(description) is not str
        or not description
        or len(description) > limits.max_description_chars
        or description != description.strip()
    ):
        return None
    option_id = raw.get("id")
    if option_id is not None and (
        type(option_id) is not str or ID.fullmatch(option_id) is None or option_id in seen_ids
    ):
        return None
    if raw.get("preview") is not None:
        return None
    return from_fields(
        Option, {"label": label, "description": description, "id": option_id, "preview": None}
    )


def _preview(check: Checker, value: Any, at: str) -> str | None:
    """An option's preview: text kept as given (line breaks and indentation matter in a
    mock-up), blank read as none, at most `MAX_PREVIEW_CHARS`."""
    if value is None:
        return None
    if not isinstance(value, str):
        check.problem(f"{at}.preview", f"{kind_of(value)} given; give the preview as a string")
        return None
    if not value.strip():
        return None
    if len(value) > MAX_PREVIEW_CHARS:
        check.problem(
            f"{at}.preview",
            f"{len(value)} characters given; keep a preview to at most {MAX_PREVIEW_CHARS}",
        )
        return None
    return value


def _option_count(check: Checker, where: str, count: int, dropped: list[str], repeats: int) -> None:
    limits = check.limits
    if limits.min_options <= count <= limits.max_options:
        return
    span = count_range(limits.min_options, limits.max_options)
    given = f"{count} option{'' if count == 1 else 's'}"
    reasons = []
    if dropped:
        names = ", ".join(repr(label) for label in dropped[:5])
        reasons.append(f"{names}, which the client adds itself")
    if repeats:
        reasons.append(f"{repeats} repeated label{'' if repeats == 1 else 's'}")
    given += f" left after dropping {' and '.join(reasons)}" if reasons else " given"
    if count > limits.max_options:
        check.problem(where, f"{given}; give at most {limits.max_options}: keep the likeliest")
    else:
        check.problem(where, f"{given}; give {span} mutually exclusive options. {_NO_OTHER}")


def read_recommended(
    check: Checker, value: Any, options: list[Option], suggested: list[int], path: str
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


def _recommended_index(check: Checker, value: Any, options: list[Option], where: str) -> int | None:
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
        if wanted.isascii() and wanted.isdigit() and int(wanted) < len(options):
            return int(wanted)
        labels = ", ".join(repr(option.label) for option in options)
        check.problem(
            where, f"{short(wanted)} is not an option; give one of {labels}, or its index"
        )
        return None
    check.problem(where, f"{kind_of(value)} given; give an option's label or 0-based index")
    return None


def read_choice_bounds(
    check: Checker, raw: dict[str, Any], path: str, multi: bool, count: int
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
