"""Answers from a client, read leniently (docs/contract.md#answers), and the results the runtime
makes without one (timeout, cancelled, unavailable, redirected).

Every unambiguous shape is accepted; `InvalidAnswer` is raised only where there is no
sound reading, and its reason says what to send instead. Nothing here changes the ask.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import SecretStr

from midturn.contract._checks import NOT_TEXT, kind_of, lone_surrogate_at
from midturn.contract._models import (
    SECRET_MARK,
    AnswerStatus,
    Ask,
    AskResult,
    Limits,
    Question,
    QuestionAnswer,
    from_fields,
)
from midturn.contract._normalize import split_recommended
from midturn.errors import InvalidAnswer

__all__ = ["parse_answer", "redirect_result", "timeout_result", "uniform_result"]

_DEFAULT_LIMITS = Limits()
_SKIP_KEYS = ("skip", "skipped", "dismiss")
_SELECTED_KEYS = ("selected", "labels")
_TEXT_KEYS = ("text", "other")
_VALUE_KEYS = frozenset({*_SELECTED_KEYS, *_TEXT_KEYS})
_SKIP_STATUSES = frozenset({"skip", "skipped", "dismissed", "cancelled", "timeout", "timed_out"})
_UNSET: Any = object()
_SEQUENCES = (list, tuple)
"""What reads as a list. A tuple of types, not `list | tuple`: a union is a new object
each time the expression runs, and these checks run on every answer."""
_EMPTY = (
    "an empty answer has no reading (and would skip every question for good); send the "
    'answers, e.g. {"answers": {<question id>: <value>}}, or skip explicitly with '
    '{"skip": true}'
)


def _short(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else str(value)
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _choices_hint(question: Question) -> str:
    labels = ", ".join(repr(option.label) for option in question.options)
    return f"one of {labels} (or its 0-based index)"


def parse_answer(ask: Ask, payload: Any, *, limits: Limits | None = None) -> AskResult:
    """Read a client's answer to `ask` (docs/contract.md#answers). Raises `InvalidAnswer` only where
    there is no sound reading; the ask is then untouched and can be answered again.

    `limits.max_text_chars` bounds everything the person typed: a text answer, Other text
    and a redirect's message. The counts of choices are the ask's own (each question's
    `min_choices`/`max_choices`, already within the limits it was parsed under)."""
    where = lone_surrogate_at(payload)
    if where is not None:
        raise InvalidAnswer(f"the answer {f'at {where} ' if where else ''}{NOT_TEXT}")
    reader = _Reader(ask, limits or _DEFAULT_LIMITS)
    if isinstance(payload, dict):
        return reader.object(payload)
    if isinstance(payload, _SEQUENCES):
        return reader.sequence(list(payload))
    if payload is None:
        raise InvalidAnswer(_EMPTY)
    return reader.bare(payload)


class _Reader:
    def __init__(self, ask: Ask, limits: Limits) -> None:
        self.ask = ask
        self.limits = limits

    # -- payload shapes -----------------------------------------------------------------

    def object(self, payload: dict[str, Any]) -> AskResult:
        payload = _without_zero_controls(payload)
        if not payload:
            raise InvalidAnswer(_EMPTY)
        for key in _SKIP_KEYS:
            if payload.get(key) is True:
                return uniform_result(self.ask, "skipped")
        if payload.get("redirect") is not None:
            message = payload["redirect"]
            if not isinstance(message, str) or not message.strip():
                raise InvalidAnswer(
                    f"redirect is {kind_of(message)}; send the user's chat message as a "
                    'non-empty string: {"redirect": "..."}'
                )
            message = message.strip()
            if len(message) > self.limits.max_text_chars:
                raise InvalidAnswer(
                    f"a redirect of {len(message)} characters given; send at most "
                    f"{self.limits.max_text_chars}"
                )
            return redirect_result(self.ask, message)
        if "answers" in payload:
            inner = payload["answers"]
            if inner is None or inner == {}:
                raise InvalidAnswer(_EMPTY)
            if isinstance(inner, dict):
                return self.mapping(inner)
            if isinstance(inner, _SEQUENCES):
                return self.sequence(list(inner))
            return self.bare(inner)
        if "question_id" in payload:
            return self.actions([payload])
        return self.mapping(payload)

    def mapping(self, payload: dict[str, Any]) -> AskResult:
        """Answers keyed by question, or one question's `{"selected", "text"}` object."""
        keys = set(payload)
        if (
            len(self.ask.questions) == 1
            and keys
            and keys <= _VALUE_KEYS
            and not any(self._find(key) for key in keys)
        ):
            return self.bare(payload)
        return self.keyed(payload)

    def sequence(self, items: list[Any]) -> AskResult:
        if items and all(isinstance(item, dict) and "question_id" in item for item in items):
            return self.actions(items)
        count = len(self.ask.questions)
        if count == 1 and len(items) != 1:  # the list is the one question's value
            return self.result([self.value(self.ask.questions[0], items)])
        if len(items) != count:
            raise InvalidAnswer(
                f"{len(items)} positional answers given for {count} question"
                f"{'' if count == 1 else 's'}; send exactly {count}, in order, with null for "
                "a skipped question"
            )
        return self.result(
            [self.value(q, item) for q, item in zip(self.ask.questions, items, strict=True)]
        )

    def bare(self, value: Any) -> AskResult:
        if value is None:
            return uniform_result(self.ask, "skipped")
        if len(self.ask.questions) != 1:
            ids = ", ".join(repr(q.id) for q in self.ask.questions)
            raise InvalidAnswer(
                f"a bare value answers only a one-question ask; this ask has "
                f'{len(self.ask.questions)} questions: send {{"answers": {{<id>: <value>}}}} '
                f"keyed by {ids}"
            )
        return self.result([self.value(self.ask.questions[0], value)])

    def keyed(self, mapping: dict[str, Any]) -> AskResult:
        given: dict[str, Any] = {}
        for key, value in mapping.items():
            question = self._find(key)
            if question is None:
                ids = ", ".join(repr(q.id) for q in self.ask.questions)
                raise InvalidAnswer(
                    f"no question has the id, header or text {str(key)!r}; key answers by "
                    f"question id ({ids})"
                )
            if question.id in given:
                raise InvalidAnswer(
                    "answered twice under different keys; send one answer per question",
                    question=question.id,
                )
            given[question.id] = value
        return self.result([self.value(q, given.get(q.id)) for q in self.ask.questions])

    def _find(self, key: Any) -> Question | None:
        if not isinstance(key, str):
            return None
        questions = self.ask.questions
        for field in ("id", "header", "question"):
            for question in questions:
                if getattr(question, field) == key:
                    return question
        folded = key.strip().casefold()
        for field in ("id", "header", "question"):
            for question in questions:
                if getattr(question, field).casefold() == folded:
                    return question
        return None

    def actions(self, items: list[dict[str, Any]]) -> AskResult:
        """neo-style actions: `{question_id, status, values, message}` or
        `{question_id, answer_type, selected_option_ids, text}`, or both at once with the
        unused one zeroed (one Go struct): the filled shape is read, and two filled
        shapes must agree."""
        mapping: dict[str, Any] = {}
        for item in items:
            key = item["question_id"]
            if not isinstance(key, str):
                raise InvalidAnswer(f"question_id is {kind_of(key)}; send the question's id")
            question = self._find(key)
            mapping[key] = None if question is None else self.action_value(question, item)
        return self.keyed(mapping)  # an unknown question_id is worded there

    def action_value(self, question: Question, item: dict[str, Any]) -> Any:
        filled = [
            value
            for value in (_status_shape(question, item), _typed_shape(question, item))
            if value is not _UNSET
        ]
        if not filled:
            raise InvalidAnswer(
                "the action carries no answer; send the selected labels in values (or "
                'selected_option_ids), the typed text in message (or text), or status "skipped"',
                question=question.id,
            )
        if len(filled) == 2 and self.value(question, filled[0]) != self.value(question, filled[1]):
            raise InvalidAnswer(
                "the action carries two different answers, one in status/values/message and "
                "one in answer_type/selected_option_ids/text; send one of them (zero the other)",
                question=question.id,
            )
        return filled[0]

    # -- one question ---------------------------------------------------------------------

    def value(self, question: Question, value: Any) -> QuestionAnswer:
        if value is None:
            return _status(question, "skipped")
        if question.kind == "text":
            return self.text_value(question, value)
        return self.choice_value(question, value)

    def text_value(self, question: Question, value: Any) -> QuestionAnswer:
        text = value
        if isinstance(value, dict):
            if not any(k in value for k in (*_SELECTED_KEYS, *_TEXT_KEYS)):
                raise InvalidAnswer(
                    'an object answer needs "text"; send {"text": "..."}, the text itself, or '
                    "null to skip",
                    question=question.id,
                )
            text = next((value[k] for k in _TEXT_KEYS if value.get(k) is not None), None)
            if text is None:
                selected = next((value[k] for k in _SELECTED_KEYS if value.get(k)), None)
                if selected is None:
                    return _status(question, "skipped")
                text = selected
        if isinstance(text, _SEQUENCES) and len(text) == 1:
            text = text[0]
        if isinstance(text, int | float) and not isinstance(text, bool):
            text = str(text)
        if not isinstance(text, str):
            raise InvalidAnswer(
                f"{kind_of(value)} given for a text question; send the typed text as a "
                "string, or null to skip",
                question=question.id,
            )
        text = text.strip()
        if not text:
            raise InvalidAnswer(
                "empty text given; send the typed text, or null to skip", question=question.id
            )
        self._check_length(question, text)
        if question.secret:
            return _answer(question, answer=SECRET_MARK, secret_value=SecretStr(text))
        return _answer(question, text=text, answer=text)

    def _check_length(self, question: Question, text: str) -> None:
        if len(text) > self.limits.max_text_chars:
            raise InvalidAnswer(
                f"{len(text)} characters of text given; send at most {self.limits.max_text_chars}",
                question=question.id,
            )

    def choice_value(self, question: Question, value: Any) -> QuestionAnswer:
        indices: list[int] = []
        others: list[str] = []
        explicit_selection = False
        if isinstance(value, dict):
            if not any(k in value for k in (*_SELECTED_KEYS, *_TEXT_KEYS)):
                raise InvalidAnswer(
                    'an object answer needs "selected" and/or "text"; send '
                    '{"selected": [...], "text": "..."}, a label, or null to skip',
                    question=question.id,
                )
            explicit_selection = any(k in value for k in _SELECTED_KEYS)
            selected = next((value[k] for k in _SELECTED_KEYS if k in value), None)
            text = next((value[k] for k in _TEXT_KEYS if value.get(k) is not None), None)
            items = [] if selected is None else selected
            if not isinstance(items, _SEQUENCES):
                items = [items]
            for item in items:
                indices.append(self._strict_option(question, item))
            if text is not None:
                if not isinstance(text, str):
                    raise InvalidAnswer(
                        f'"text" is {kind_of(text)}; send the typed Other text as a string',
                        question=question.id,
                    )
                if text.strip() or not explicit_selection:
                    others.append(text)
        else:
            items = list(value) if isinstance(value, _SEQUENCES) else [value]
            for item in items:
                index, other = self._lenient_option(question, item)
                if index is not None:
                    indices.append(index)
                else:
                    others.append(other or "")
        return self._choice_answer(question, indices, others)

    def _strict_option(self, question: Question, item: Any) -> int:
        index, _ = self._lenient_option(question, item)
        if index is None:
            raise InvalidAnswer(
                f"{_short(item)} in selected is not an option; select {_choices_hint(question)}, "
                'and put typed text in "text"',
                question=question.id,
            )
        return index

    def _lenient_option(self, question: Question, item: Any) -> tuple[int | None, str | None]:
        """An option index, or the string to read as Other text."""
        options = question.options
        if isinstance(item, int) and not isinstance(item, bool):
            if 0 <= item < len(options):
                return item, None
            raise InvalidAnswer(
                f"index {item} given; options are numbered 0–{len(options) - 1}",
                question=question.id,
            )
        if not isinstance(item, str):
            raise InvalidAnswer(
                f"{kind_of(item)} given; send {_choices_hint(question)}, typed text, or null "
                "to skip",
                question=question.id,
            )
        for index, option in enumerate(options):
            if option.id is not None and option.id == item:
                return index, None
        for index, option in enumerate(options):
            if option.label == item:
                return index, None
        wanted = item.strip().casefold()
        for index, option in enumerate(options):
            if option.label.casefold() == wanted:
                return index, None
        unsuffixed, marked = split_recommended(item.strip())
        if marked:
            for index, option in enumerate(options):
                if option.label.casefold() == unsuffixed.casefold():
                    return index, None
        if wanted.isdigit() and wanted.isascii() and int(wanted) < len(options):
            return int(wanted), None
        return None, item

    def _choice_answer(
        self, question: Question, indices: list[int], others: list[str]
    ) -> QuestionAnswer:
        chosen = sorted(set(indices))
        other: str | None = None
        if others:
            if len(others) > 1:
                raise InvalidAnswer(
                    f"{len(others)} free-text answers given; send at most one typed answer "
                    f"beside {_choices_hint(question)}",
                    question=question.id,
                )
            other = others[0].strip()
            if not other:
                raise InvalidAnswer(
                    "empty Other text given; send the typed text, an option, or null to skip",
                    question=question.id,
                )
            if not question.allow_other:
                raise InvalidAnswer(
                    f"{_short(others[0])} is not an option and this question takes no typed "
                    f"answer; send {_choices_hint(question)}",
                    question=question.id,
                )
            self._check_length(question, other)
        count = len(chosen) + (other is not None)
        if not question.multi:
            if count != 1:
                raise InvalidAnswer(
                    f"{count} choices given for a single-choice question; send exactly one: "
                    f"{_choices_hint(question)} or typed text, or null to skip",
                    question=question.id,
                )
        else:
            low = question.min_choices
            high = question.max_choices
            if count < low or (high is not None and count > high):
                span = f"{low}–{high}" if high is not None else f"at least {low}"
                raise InvalidAnswer(
                    f"{count} choices given; choose {span}, or send null to skip",
                    question=question.id,
                )
        labels = tuple(question.options[i].label for i in chosen)
        shown = [*labels, other] if other is not None else list(labels)
        if question.secret:  # a dialect's secret choice: nothing of it outside memory
            value = SecretStr(", ".join(shown))
            return _answer(question, answer=SECRET_MARK, secret_value=value)
        return _answer(question, selected=labels, text=other, answer=", ".join(shown))

    def result(self, answers: list[QuestionAnswer]) -> AskResult:
        answered = any(answer.status == "answered" for answer in answers)
        return from_fields(
            AskResult,
            {
                "outcome": "answered" if answered else "skipped",
                "answers": tuple(answers),
                "message": None,
            },
        )


def _without_zero_controls(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload without the controls a Go struct marshals when unset: `skip`,
    `skipped`, `dismiss` as `false`, `redirect` as `""` or `null`."""
    zeroed = [
        key
        for key, value in payload.items()
        if (key in _SKIP_KEYS and value is False) or (key == "redirect" and value in (None, ""))
    ]
    if not zeroed:
        return payload
    return {key: value for key, value in payload.items() if key not in zeroed}


def _is_zero(value: Any) -> bool:
    """A Go zero value for a string, a slice or a nil pointer: `""`, `[]` or `null`."""
    return value is None or value == "" or value == []


def _nothing_chosen(question: Question) -> Any:
    """What an action that says "answered" but carries no value reads as: an empty
    selection (valid only where the question allows one) or empty text (refused)."""
    return "" if question.kind == "text" else []


def _status_shape(question: Question, item: dict[str, Any]) -> Any:
    """The value of `{status, values, message}`: None for a skip status, `_UNSET` when
    every one of them is missing or zeroed."""
    status, values, message = item.get("status"), item.get("values"), item.get("message")
    if isinstance(status, str) and status.lower() in _SKIP_STATUSES:
        return None
    if all(_is_zero(field) for field in (status, values, message)):
        return _UNSET
    if not _is_zero(values):  # read like a plain answer: a string that is no option is Other
        return list(values) if isinstance(values, _SEQUENCES) else values
    if not _is_zero(message):
        return message
    return _nothing_chosen(question)


def _typed_shape(question: Question, item: dict[str, Any]) -> Any:
    """The value of `{answer_type, selected_option_ids, text}`: None for `answer_type:
    "skip"`, `_UNSET` when every one of them is missing or zeroed."""
    kind, text = item.get("answer_type"), item.get("text")
    selected = item.get("selected_option_ids")
    if kind == "skip":
        return None
    if all(_is_zero(field) for field in (kind, selected, text)):
        return _UNSET
    if _is_zero(selected) and _is_zero(text):
        return _nothing_chosen(question)
    chosen = [] if _is_zero(selected) else selected
    if not isinstance(chosen, _SEQUENCES):
        chosen = [chosen]
    return {"selected": list(chosen), "text": None if _is_zero(text) else text}


def _status(
    question: Question,
    status: AnswerStatus,
    *,
    selected: tuple[str, ...] = (),
    text: str | None = None,
    answer: str | None = None,
    auto_selected: bool = False,
    secret_value: SecretStr | None = None,
) -> QuestionAnswer:
    return from_fields(
        QuestionAnswer,
        {
            "id": question.id,
            "header": question.header,
            "question": question.question,
            "status": status,
            "selected": selected,
            "text": text,
            "answer": answer,
            "auto_selected": auto_selected,
            "secret_value": secret_value,
        },
    )


def _answer(
    question: Question,
    *,
    selected: tuple[str, ...] = (),
    text: str | None = None,
    answer: str | None = None,
    auto_selected: bool = False,
    secret_value: SecretStr | None = None,
) -> QuestionAnswer:
    return _status(
        question,
        "answered",
        selected=selected,
        text=text,
        answer=answer,
        auto_selected=auto_selected,
        secret_value=secret_value,
    )


def uniform_result(
    ask: Ask,
    outcome: Literal["skipped", "timed_out", "cancelled", "unavailable"],
) -> AskResult:
    """Every question with the status of `outcome` (e.g. the turn stopped: cancelled)."""
    answers = tuple(_status(question, outcome) for question in ask.questions)
    return from_fields(AskResult, {"outcome": outcome, "answers": answers, "message": None})


def redirect_result(ask: Ask, message: str) -> AskResult:
    """The user wrote a chat message instead of answering (docs/runtime.md#redirect): every
    question is skipped and the message rides on the result."""
    answers = tuple(_status(question, "skipped") for question in ask.questions)
    return from_fields(AskResult, {"outcome": "redirected", "answers": answers, "message": message})


def timeout_result(ask: Ask) -> AskResult:
    """What an ask settles to when its timeout passes: every question timed out, or with
    `on_timeout="recommended"` each choice question's recommended option (else its
    first), marked auto-selected."""
    if ask.on_timeout != "recommended":
        return uniform_result(ask, "timed_out")
    answers: list[QuestionAnswer] = []
    for question in ask.questions:
        if question.kind != "choice" or not question.options:
            answers.append(_status(question, "timed_out"))
            continue
        label = question.options[question.recommended or 0].label
        answers.append(_answer(question, selected=(label,), answer=label, auto_selected=True))
    return from_fields(
        AskResult, {"outcome": "timed_out", "answers": tuple(answers), "message": None}
    )
