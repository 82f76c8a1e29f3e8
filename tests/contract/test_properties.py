"""Properties over arbitrary input: the contract raises only its own errors, every ask it
accepts keeps its limits, and rendering is deterministic."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import midturn
from midturn import InvalidAnswer, InvalidAsk, Limits

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=30),
)
any_json = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=25,
)

labels = st.one_of(
    st.sampled_from(
        [
            "PostgreSQL",
            "SQLite",
            "sqlite",
            "Other",
            "Not sure",
            "Auth (Recommended)",
            "  Bill\ning ",
            "",
        ]
    ),
    st.text(max_size=90),
)
options = st.lists(
    st.one_of(
        labels,
        st.fixed_dictionaries(
            {"label": labels},
            optional={
                "description": st.one_of(st.none(), st.text(max_size=250)),
                "id": st.one_of(st.sampled_from(["a", "b", "a b"]), any_json),
            },
        ),
        any_json,
    ),
    max_size=6,
)
question_fields = st.fixed_dictionaries(
    {
        "question": st.one_of(
            st.text(max_size=60), st.sampled_from(["Which one?", "Name?"]), any_json
        )
    },
    optional={
        "id": st.one_of(st.sampled_from(["db", "q1", "q2", "bad id"]), any_json),
        "header": st.one_of(
            st.sampled_from(["Database", "database", "A very long header"]), any_json
        ),
        "kind": st.sampled_from(["choice", "text", "TEXT", "list", None]),
        "options": st.one_of(options, any_json),
        "multi": st.one_of(st.booleans(), any_json),
        "multiSelect": st.booleans(),
        "min_choices": st.one_of(st.integers(-1, 5), any_json),
        "max_choices": st.one_of(st.integers(-1, 5), any_json),
        "recommended": st.one_of(st.integers(-1, 5), labels, any_json),
        "allow_other": st.one_of(st.booleans(), any_json),
        "secret": st.booleans(),
        "placeholder": st.one_of(st.text(max_size=20), any_json),
        "extra": any_json,
    },
)
clean_labels = st.sampled_from(
    [
        "PostgreSQL",
        "SQLite",
        "sqlite",
        "Other",
        "Not sure",
        "Auth (Recommended)",
        " Bill\ning ",
        "1",
        "MySQL",
        "Redis",
        "EU",
        "US",
        "Search",
    ]
)


@st.composite
def clean_questions(draw: st.DrawFn) -> dict[str, Any]:
    """A question that is mostly well formed, so the accepting path is exercised."""
    question: dict[str, Any] = {
        "question": draw(
            st.one_of(
                st.sampled_from(["Which one?", "  Deploy\nnow? "]),
                st.text(min_size=1).filter(str.strip),
            )
        )
    }
    if draw(st.booleans()):
        question["id"] = draw(
            st.sampled_from(["db", "q1", "q2", "name", "x.y", "a", "b", "c", "d-1", "e_2"])
        )
    if draw(st.booleans()):
        question["header"] = draw(st.sampled_from(["Database", "database", "Region", "Db"]))
    if draw(st.booleans()):
        question["kind"] = "text"
        if draw(st.booleans()):
            question["secret"] = True
        return question
    question["options"] = draw(
        st.lists(
            st.one_of(clean_labels, st.builds(dict, label=clean_labels)), min_size=1, max_size=5
        )
    )
    if draw(st.booleans()):
        question[draw(st.sampled_from(["multi", "multiSelect"]))] = True
        if draw(st.booleans()):
            question["min_choices"] = draw(st.integers(0, 2))
        if draw(st.booleans()):
            question["max_choices"] = draw(st.integers(2, 4))
    if draw(st.booleans()):
        question["recommended"] = draw(st.one_of(st.integers(0, 3), clean_labels))
    if draw(st.booleans()):
        question["allow_other"] = draw(st.booleans())
    return question


clean_lists = st.lists(clean_questions(), min_size=1, max_size=4)
asks = st.fixed_dictionaries(
    {  # mostly clean, so that accepted asks are common
        "questions": st.one_of(
            clean_lists, clean_lists, clean_lists, st.lists(question_fields, max_size=6), any_json
        )
    },
    optional={
        "timeout_s": st.one_of(st.none(), st.floats(0.5, 1e5), st.floats(-1, 1e6), any_json),
        "on_timeout": st.sampled_from(["skip", "recommended", "never"]),
    },
)
limit_sets = st.builds(
    Limits,
    max_questions=st.integers(1, 8),
    min_options=st.integers(1, 3),
    max_options=st.integers(3, 10),
    max_header_chars=st.integers(1, 40),
    max_timeout_s=st.one_of(st.none(), st.floats(1, 1e5)),
)

ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
ESCAPES = {"other", "not sure"}
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_limits(ask: midturn.Ask, limits: Limits) -> None:
    assert 1 <= len(ask.questions) <= limits.max_questions
    ids = [q.id for q in ask.questions]
    assert len(set(ids)) == len(ids) and all(ID.match(i) for i in ids)
    headers = [q.header.casefold() for q in ask.questions]
    assert len(set(headers)) == len(headers)
    for q in ask.questions:
        assert 0 < len(q.header) <= limits.max_header_chars and "\n" not in q.header
        assert 0 < len(q.question) <= limits.max_question_chars and q.question == q.question.strip()
        if q.kind == "text":
            assert q.options == () and not q.multi and q.recommended is None
            continue
        assert not q.secret and q.placeholder is None
        assert limits.min_options <= len(q.options) <= limits.max_options
        folded = [o.label.casefold() for o in q.options]
        assert len(set(folded)) == len(folded) and not ESCAPES & set(folded)
        for option in q.options:
            assert 0 < len(option.label) <= limits.max_label_chars and "\n" not in option.label
            assert (
                option.description is None
                or len(option.description) <= limits.max_description_chars
            )
        assert q.recommended is None or 0 <= q.recommended < len(q.options)
        high = len(q.options) if q.max_choices is None else q.max_choices
        assert 0 <= q.min_choices <= high <= len(q.options)
    if ask.timeout_s is not None:
        assert ask.timeout_s > 0
        assert limits.max_timeout_s is None or ask.timeout_s <= limits.max_timeout_s


def check_render(ask: midturn.Ask, result: midturn.AskResult) -> None:
    assert [a.id for a in result.answers] == [q.id for q in ask.questions]
    answered = any(a.status == "answered" for a in result.answers)
    assert result.outcome in (("answered",) if answered else ("skipped", "redirected"))
    first = midturn.render(result, dialect="midturn")
    second = midturn.render(result, dialect="midturn")
    assert (first.text, first.data) == (second.text, second.data)
    stored = midturn.AskResult.model_validate(json.loads(json.dumps(first.data)))
    assert midturn.render(stored, dialect="midturn").text == first.text


@SETTINGS
@given(any_json)
def test_any_json_as_an_ask_raises_only_invalid_ask(data: Any) -> None:
    try:
        check_limits(midturn.parse_ask(data, dialect="midturn"), Limits())
    except InvalidAsk as error:
        assert error.problems and str(error)


@SETTINGS
@given(asks, limit_sets)
def test_every_accepted_ask_keeps_its_limits(data: dict[str, Any], limits: Limits) -> None:
    try:
        ask = midturn.parse_ask(data, dialect="midturn", limits=limits)
    except InvalidAsk as error:
        assert all(problem.message for problem in error.problems)
        return
    check_limits(ask, limits)


@st.composite
def accepted_asks(draw: st.DrawFn) -> midturn.Ask:
    data = draw(asks)
    try:
        return midturn.parse_ask(data, dialect="midturn", limits=Limits(max_questions=8))
    except InvalidAsk:
        fallback = {
            "questions": [
                {
                    "id": "db",
                    "question": "Which?",
                    "options": ["A", "B", "C"],
                    "multi": draw(st.booleans()),
                },
                {"question": "Name?", "secret": draw(st.booleans())},
            ]
        }
        return midturn.parse_ask(fallback, dialect="midturn")


answer_values = st.one_of(
    any_json,
    st.lists(st.one_of(st.integers(-1, 4), st.sampled_from(["A", "b", "0", "PostgreSQL", "x"]))),
    st.fixed_dictionaries(
        {}, optional={"selected": any_json, "text": any_json, "other": any_json, "labels": any_json}
    ),
)


@SETTINGS
@given(accepted_asks(), st.one_of(any_json, answer_values, st.lists(answer_values, max_size=4)))
def test_any_answer_raises_only_invalid_answer(ask: midturn.Ask, payload: Any) -> None:
    try:
        result = midturn.parse_answer(ask, payload)
    except InvalidAnswer as error:
        assert error.reason
        return
    check_render(ask, result)


@SETTINGS
@given(accepted_asks(), st.data())
def test_a_sound_answer_is_always_accepted(ask: midturn.Ask, data: st.DataObject) -> None:
    answers: dict[str, Any] = {}
    for q in ask.questions:
        if data.draw(st.booleans()):
            continue
        if q.kind == "text":
            answers[q.id] = data.draw(st.text(min_size=1, max_size=20).filter(str.strip))
        elif q.multi:
            high = len(q.options) if q.max_choices is None else q.max_choices
            count = data.draw(st.integers(q.min_choices, high))
            answers[q.id] = [o.label for o in q.options[:count]]
        else:
            answers[q.id] = data.draw(st.integers(0, len(q.options) - 1))
    payload = {"answers": answers} if answers else {"skip": True}  # an empty body is refused
    result = midturn.parse_answer(ask, payload)
    assert [a.status == "answered" for a in result.answers] == [
        q.id in answers for q in ask.questions
    ]
    check_render(ask, result)
