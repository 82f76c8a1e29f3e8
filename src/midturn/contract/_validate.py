"""Normalization (docs/contract.md#normalization) and strict validation
(docs/contract.md#strict-validation) of a canonical ask.

Every problem is collected, not just the first, and each message says what was given
and what to give, so a model can fix its call in one retry. Each normalization fix is
reported as a warning on the `Ask`.

Unknown keys are ignored with a warning rather than refused: models add harmless extra
fields, and refusing them would cost a retry for nothing.
"""

from __future__ import annotations

import math
from typing import Any

from midturn.contract._checks import Checker, checked_id, kind_of, short
from midturn.contract._models import MAX_TIMEOUT_S, Ask, Limits, OnTimeout, Question, from_fields
from midturn.contract._normalize import derive_header, unique_header
from midturn.contract._options import read_choice_bounds, read_options, read_recommended
from midturn.errors import InvalidAsk, Problem

__all__ = ["build_ask"]


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


def build_ask(canonical: Any, *, limits: Limits, dialect: str, secret_choices: bool = False) -> Ask:
    """Normalize a canonical-shaped dict, validate it strictly, return the `Ask`.

    `secret_choices` lets a choice question be `secret` too (a dialect whose product
    has such questions: its whole answer, selection and typed text, is then secret); the
    canonical shape keeps `secret` for text questions (docs/contract.md#the-canonical-ask).

    Raises `InvalidAsk` with every problem found."""
    check = Checker(limits)
    check.secret_choices = secret_choices
    if not isinstance(canonical, dict):
        raise InvalidAsk(
            [
                Problem(
                    "",
                    f"the tool input is {kind_of(canonical)}; give an object "
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
    return from_fields(
        Ask,
        {
            "questions": tuple(questions),
            "timeout_s": timeout_s,
            "on_timeout": on_timeout,
            "dialect": dialect,
            "warnings": tuple(check.warnings),
        },
    )


def _question_list(check: Checker, value: Any) -> list[Any]:
    most = check.limits.max_questions
    if value is None:
        check.problem("questions", f"missing; give a list of 1–{most} questions")
        return []
    if isinstance(value, dict):
        check.warn("questions", "one question object given; read it as a list of one")
        return [value]
    if not isinstance(value, list):
        check.problem("questions", f"{kind_of(value)} given; give a list of 1–{most} questions")
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


def _timeout(check: Checker, value: Any) -> float | None:
    if value is None:
        return None
    ceiling = check.limits.max_timeout_s or MAX_TIMEOUT_S
    shown_ceiling = f"{ceiling:.0f}" if ceiling == int(ceiling) else f"{ceiling:g}"
    bound = f" and at most {shown_ceiling}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        check.problem("timeout_s", f"{kind_of(value)} given; give seconds, above 0{bound}, or null")
        return None
    try:
        seconds = float(value)
    except OverflowError:  # an int too large for a float
        seconds = math.inf
    if not 0 < seconds <= ceiling:
        shown = f"{seconds:g}" if math.isfinite(seconds) else str(value)
        shown = shown if len(shown) <= 20 else shown[:19] + "…"
        check.problem("timeout_s", f"{shown} given; give seconds above 0{bound}, or null")
        return None
    return seconds


def _on_timeout(check: Checker, value: Any) -> OnTimeout:
    if value is None or (isinstance(value, str) and value.strip().lower() == "skip"):
        return "skip"
    if isinstance(value, str) and value.strip().lower() == "recommended":
        return "recommended"
    shown = short(value) if isinstance(value, str) else kind_of(value)
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


def _question(check: Checker, raw: Any, position: int) -> _Draft | None:
    path = f"questions[{position}]"
    if not isinstance(raw, dict):
        check.problem(path, f'{kind_of(raw)} given; give an object with a "question" string')
        return None
    check.unknown_keys(raw, _QUESTION_KEYS, path)
    limits = check.limits
    draft = _Draft(position, {})
    draft.given_id = checked_id(check, raw.get("id"), path)
    draft.header = check.text(raw.get("header"), path, "header", required=False, flat=True)
    if draft.header is not None and len(draft.header) > limits.max_header_chars:
        check.problem(
            f"{path}.header",
            f"{short(draft.header)} is {len(draft.header)} characters; give at most "
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
        if secret and check.secret_choices:
            fields["secret"] = True
        elif secret:
            check.problem(
                f"{path}.secret",
                'only a text question can be secret; use kind "text" for a secret value',
            )
        if placeholder is not None:
            check.problem(
                f"{path}.placeholder",
                "only text questions take a placeholder; remove it from this choice question",
            )
        options, suggested = read_options(check, raw.get("options"), path)
        fields.update(options=options, multi=multi)
        fields["recommended"] = read_recommended(
            check, raw.get("recommended"), options, suggested, path
        )
        fields.update(read_choice_bounds(check, raw, path, multi, len(options)))
    draft.fields = fields
    return draft


def _question_kind(check: Checker, raw: dict[str, Any], path: str) -> str | None:
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
    shown = short(value) if isinstance(value, str) else kind_of(value)
    check.problem(f"{path}.kind", f'{shown} given; give "choice" (with options) or "text"')
    return None


def _text_only_fields(check: Checker, raw: dict[str, Any], path: str, multi: bool) -> None:
    if multi:
        check.problem(
            f"{path}.multi", "only choice questions can be multi; remove it or add options"
        )
    for key in ("recommended", "min_choices", "max_choices"):
        if raw.get(key) is not None:
            check.problem(f"{path}.{key}", "applies to choice questions only; remove it")


def _finish(check: Checker, drafts: list[_Draft | None]) -> list[Question]:
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
            from_fields(
                Question,
                {
                    "id": question_id,
                    "header": draft.header,
                    "question": fields["question"],
                    "kind": fields["kind"],
                    "options": tuple(fields.get("options", ())),
                    "multi": fields.get("multi", False),
                    "min_choices": fields.get("min_choices", 1),
                    "max_choices": fields.get("max_choices"),
                    "recommended": fields.get("recommended"),
                    "allow_other": fields["allow_other"],
                    "secret": fields.get("secret", False),
                    "placeholder": fields.get("placeholder"),
                },
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
