"""The contract's fast paths give what the full reading they stand for gives: each is
run beside it over generated input (the public tests pin the outcomes; these pin that a
shortcut cannot drift from the rule it skips)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from midturn.contract import _headers

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
