"""The values of the question contract: an ask, its questions and options, the limits a
host sets, the result, and the tool output the model reads (docs/contract.md#the-canonical-ask,
docs/contract.md#results).

These are plain data. `parse_ask` and `parse_answer` build them from untrusted input and
do all the checking; constructing them directly (for example when reading them back from a
store) trusts the data as it is.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

__all__ = [
    "HARD_LIMITS",
    "MAX_TIMEOUT_S",
    "SECRET_MARK",
    "AnswerStatus",
    "Ask",
    "AskResult",
    "Limits",
    "OnTimeout",
    "Option",
    "Outcome",
    "Question",
    "QuestionAnswer",
    "QuestionKind",
    "ToolOutput",
    "built",
]

SECRET_MARK = "[secret provided]"
"""What the model, the store and every event see in place of a secret answer."""

QuestionKind = Literal["choice", "text"]
OnTimeout = Literal["skip", "recommended"]
Outcome = Literal["answered", "skipped", "timed_out", "cancelled", "unavailable", "redirected"]
AnswerStatus = Literal["answered", "skipped", "timed_out", "cancelled", "unavailable"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


_M = TypeVar("_M", bound=BaseModel)
_ALL_SET: dict[type[BaseModel], set[str]] = {}
# The setters of a model's four slots, taken from `BaseModel` once: calling them costs
# about half of `object.__setattr__`, which looks each one up by name on every call.
_new = object.__new__  # no model of the contract defines a `__new__` of its own
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def built(cls: type[_M], **fields: Any) -> _M:
    """An instance of `cls` from values its maker has already checked (`parse_ask` and
    `parse_answer` check everything they read, then build), without validating them
    again: every field given, in declaration order, each of its declared type (a tuple
    where the field is a tuple). All instances of a class share one fields-set, which
    pydantic copies before it ever changes one."""
    instance = from_fields(cls, fields)
    assert len(fields) == len(_ALL_SET[cls]), f"{cls.__name__} needs every field"
    return instance


def from_fields(cls: type[_M], fields: dict[str, Any]) -> _M:
    """`built(cls, **fields)` with the dict handed over as the model's own (no keyword
    arguments packed and unpacked: on a dozen fields that was most of the cost), on the
    same terms. The dict may also hold an event's data to be made later
    (`DATA_LATER`, contract/_interactions.py)."""
    every = _ALL_SET.get(cls)
    if every is None:
        every = _ALL_SET[cls] = set(cls.model_fields)
    instance = _new(cls)
    _set_dict(instance, fields)
    _set_fields_set(instance, every)
    _set_extra(instance, None)
    _set_private(instance, None)
    return instance


MAX_TIMEOUT_S = 365 * 24 * 3600
"""The longest timeout any ask or permission may have (a year, in seconds): a deadline
is a date, and beyond a few thousand years there is no date to hold it. A host's
`max_timeout_s` may only tighten it."""


class Limits(_Frozen):
    """The bounds an ask must keep. A host may tighten or widen them up to the hard caps
    (`HARD_LIMITS`); the defaults are the widest common contract (Claude Code's)."""

    max_questions: int = Field(default=4, ge=1, le=8)
    min_options: int = Field(default=2, ge=1, le=10)
    max_options: int = Field(default=4, ge=1, le=10)
    max_header_chars: int = Field(default=12, ge=1, le=40)
    max_question_chars: int = Field(default=500, ge=1, le=2000)
    max_label_chars: int = Field(default=80, ge=1, le=200)
    max_description_chars: int = Field(default=240, ge=0, le=1000)
    max_text_chars: int = Field(default=10_000, ge=1, le=100_000)
    max_timeout_s: float | None = Field(default=None, gt=0, le=MAX_TIMEOUT_S)

    @model_validator(mode="after")
    def _ordered(self) -> Limits:
        if self.min_options > self.max_options:
            raise ValueError("min_options must not exceed max_options")
        return self


HARD_LIMITS = Limits(
    max_questions=8,
    min_options=1,
    max_options=10,
    max_header_chars=40,
    max_question_chars=2000,
    max_label_chars=200,
    max_description_chars=1000,
    max_text_chars=100_000,
)
"""The widest a host may go."""


class Option(_Frozen):
    """One choice the model offers. `id` is optional; answers may name an option by id,
    by label (any case) or by 0-based index. `preview` is text shown beside the option
    (Claude Code's preview: a code or layout mock-up), as given."""

    label: str
    description: str | None = None
    id: str | None = None
    preview: str | None = None


class Question(_Frozen):
    """One normalized, validated question. `recommended` is an option index."""

    id: str
    header: str
    question: str
    kind: QuestionKind = "choice"
    options: tuple[Option, ...] = ()
    multi: bool = False
    min_choices: int = 1
    max_choices: int | None = None
    recommended: int | None = None
    allow_other: bool = True
    secret: bool = False
    placeholder: str | None = None

    @property
    def labels(self) -> list[str]:
        return [option.label for option in self.options]


class Ask(_Frozen):
    """A validated call of the question tool: 1–N questions, shown and answered together.

    `warnings` lists what normalization fixed (docs/contract.md#normalization), for the host to
    log; it is not part of what the user sees.
    """

    questions: tuple[Question, ...]
    timeout_s: float | None = None
    on_timeout: OnTimeout = "skip"
    dialect: str = "midturn"
    warnings: tuple[str, ...] = ()

    def question(self, key: str) -> Question | None:
        """The question with this id, header or question text, or None."""
        for question in self.questions:
            if key in (question.id, question.header, question.question):
                return question
        return None


class QuestionAnswer(_Frozen):
    """What became of one question. `answer` is the display string (a label, labels joined
    with `, `, or the typed text); a secret shows `[secret provided]` and its value rides
    only in memory, on `secret_value`, which is never serialized."""

    id: str
    header: str
    question: str
    status: AnswerStatus
    selected: tuple[str, ...] = ()
    text: str | None = None
    answer: str | None = None
    auto_selected: bool = False
    secret_value: SecretStr | None = Field(default=None, exclude=True, repr=False)

    @property
    def is_secret(self) -> bool:
        return self.status == "answered" and self.answer == SECRET_MARK and self.text is None


class AskResult(_Frozen):
    """The canonical result of an ask (docs/contract.md#results). `message` carries the user's chat
    text when the outcome is `redirected`."""

    outcome: Outcome
    answers: tuple[QuestionAnswer, ...] = ()
    message: str | None = None

    def answer_for(self, key: str) -> QuestionAnswer | None:
        """The answer to the question with this id, header or question text."""
        for answer in self.answers:
            if key in (answer.id, answer.header, answer.question):
                return answer
        return None

    def without_secrets(self) -> AskResult:
        """A copy safe to persist, publish or log: no secret value anywhere."""
        if not any(answer.secret_value is not None for answer in self.answers):
            return self
        return self.model_copy(
            update={
                "answers": tuple(
                    answer.model_copy(update={"secret_value": None}) for answer in self.answers
                )
            }
        )


class ToolOutput(_Frozen):
    """What goes back to the model: `text` it reads, `data` in the dialect's JSON shape
    (None where a dialect has only text), and `is_error` for an error tool result."""

    text: str
    data: Any = None
    is_error: bool = False
