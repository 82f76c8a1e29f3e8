"""The contract's fast paths give what the full reading they stand for gives: each is
run beside it over generated input (the public tests pin the outcomes; these pin that a
shortcut cannot drift from the rule it skips)."""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import midturn
from midturn import Limits
from midturn.contract import _headers, _normalize, _options
from midturn.contract._answers import timeout_result
from midturn.contract._checks import Checker

from .test_properties import any_json, asks

# English-like text, heavy on what the shortcuts look for: sentence ends, the word
# joiners `'` `’` `.` `-`, underscores, whitespace of every kind, and some non-ASCII.
_TRICKY = list("abcXYZ019 '’.-?!;:,_()\"\n\t\x0b\x1cé߀")
texts = st.one_of(
    st.text(alphabet=st.sampled_from(_TRICKY), max_size=40),
    st.lists(
        st.sampled_from(["Which", "database", "don't", "v1.2", "re-run", "it?", "now.", " "]),
        max_size=8,
    ).map(" ".join),
    st.text(max_size=30),
)
SETTINGS = settings(max_examples=400, deadline=None)


@SETTINGS
@given(texts)
def test_words_of_a_clause_are_the_regex_words(clause: str) -> None:
    words, low = _headers._words_of(clause)
    expected = _headers._WORD.findall(clause)
    assert words == expected
    assert low == [word.casefold() for word in expected]


@SETTINGS
@given(texts)
def test_clauses_of_a_question_are_the_regex_split(question: str) -> None:
    expected = [part.strip() for part in _headers._SENTENCE_END.split(question) if part.strip()]
    assert _headers._clauses(question) == expected


def _fields_in_order(model: BaseModel) -> None:
    """Every field set, in declaration order (a model built without validation must
    look like one pydantic made), the same for the models it holds."""
    assert list(model.__dict__) == list(type(model).model_fields), type(model).__name__
    for value in model.__dict__.values():
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, BaseModel):
                _fields_in_order(item)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(asks, st.data())
def test_models_built_without_validation_have_every_field(
    tool_input: dict[str, Any], data: st.DataObject
) -> None:
    try:
        ask = midturn.parse_ask(tool_input)
    except midturn.InvalidAsk:
        return
    _fields_in_order(ask)
    question = data.draw(st.sampled_from(ask.questions))
    payloads = [
        {"answers": {question.id: data.draw(st.one_of(st.none(), st.integers(0, 3), any_json))}},
        {"skip": True},
        {"redirect": "go on"},
    ]
    for payload in payloads:
        try:
            result = midturn.parse_answer(ask, payload)
        except midturn.InvalidAnswer:
            continue
        _fields_in_order(result)
        _fields_in_order(midturn.render(result))
    _fields_in_order(timeout_result(ask))
    _fields_in_order(timeout_result(ask.model_copy(update={"on_timeout": "recommended"})))


_PUNCTUATION = str.maketrans({ch: " " for ch in '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~'} | {"'": None})
labels = st.one_of(
    st.text(alphabet=st.sampled_from(list("aborOTHEskipNnot sure/|'’-().,:1_é\t")), max_size=24),
    st.sampled_from(["Other", "OTHER", "or", "Or", "Others", "Skip", "Color", "Other…", "x"]),
    st.text(max_size=12),
)


@SETTINGS
@given(labels)
def test_a_plain_ascii_label_is_the_translated_one(label: str) -> None:
    if label.isascii():
        expected = " ".join(label.casefold().translate(_PUNCTUATION).split())
        assert _normalize._plain(label) == expected


@SETTINGS
@given(labels)
def test_a_one_word_label_is_an_escape_as_the_full_reading_says(label: str) -> None:
    if "/" not in label and "|" not in label and "or" not in label.casefold():
        expected = _normalize._is_escape_part(label)
    else:
        parts = [p for p in _normalize._ALTERNATIVES.split(label) if p.strip()]
        expected = bool(parts) and all(_normalize._is_escape_part(part) for part in parts)
    assert _normalize.is_escape_label(label) == expected


def _read(raw_options: Any, limits: Limits) -> tuple[Any, ...]:
    check = Checker(limits)
    options, suggested = _options.read_options(check, raw_options, "questions[0]")
    return [o.model_dump() for o in options], suggested, check.problems, check.warnings


option_lists = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {"label": labels},
            optional={
                "description": st.one_of(st.none(), st.sampled_from(["", " d ", "d"]), labels),
                "id": st.one_of(st.sampled_from(["a", "b", "a b", " a"]), any_json),
                "preview": st.one_of(st.none(), st.sampled_from(["", "x"])),
                "extra": any_json,
            },
        ),
        labels,
        any_json,
    ),
    max_size=6,
)


@SETTINGS
@given(
    option_lists, st.sampled_from([Limits(), Limits(max_label_chars=4, max_description_chars=2)])
)
def test_clean_options_read_as_the_full_reading_reads_them(
    raw_options: list[Any], limits: Limits
) -> None:
    fast = _read(raw_options, limits)
    with patch.object(_options, "_clean_option", lambda *_: None):
        full = _read(raw_options, limits)
    assert fast == full
