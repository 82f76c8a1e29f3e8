"""The dialect registry: names, auto-detection of every product's shape, and the round
trip of each shape through the canonical form (docs/dialects.md)."""

from __future__ import annotations

from typing import Any

import pytest

import midturn
from midturn.contract import DIALECTS, get_dialect
from midturn.contract.dialects import detect_dialect

from . import _payloads as p

SEVEN = ["midturn", "claude", "maka", "omp", "neo", "agentcore", "pi-legacy"]
LATER = ["gemini", "codex", "copilot", "deepagents", "mcp-elicitation"]
ALL = SEVEN + LATER


def canonical_input(ask: midturn.Ask) -> dict[str, Any]:
    """A validated ask written back as canonical tool input."""
    questions: list[dict[str, Any]] = []
    for q in ask.questions:
        item: dict[str, Any] = {"id": q.id, "header": q.header, "question": q.question}
        item["kind"] = q.kind
        if q.kind == "choice":
            item["options"] = [o.model_dump(exclude_none=True) for o in q.options]
            item.update(multi=q.multi, allow_other=q.allow_other)
            if q.multi:
                item["min_choices"] = q.min_choices
                if q.max_choices is not None:
                    item["max_choices"] = q.max_choices
            if q.recommended is not None:
                item["recommended"] = q.recommended
        else:
            item.update(secret=q.secret)
            if q.placeholder is not None:
                item["placeholder"] = q.placeholder
        questions.append(item)
    data: dict[str, Any] = {"questions": questions, "on_timeout": ask.on_timeout}
    if ask.timeout_s is not None:
        data["timeout_s"] = ask.timeout_s
    return data


def test_every_dialect_is_registered_in_order() -> None:
    assert list(DIALECTS) == ALL
    for name in ALL:
        dialect = get_dialect(name)
        assert dialect.name == name
        assert dialect is DIALECTS[name]


def test_tool_names_are_each_products_own() -> None:
    names = {name: get_dialect(name).tool_name for name in ALL}
    assert names == {
        "midturn": "ask_user_question",
        "claude": "AskUserQuestion",
        "maka": "AskUserQuestion",
        "omp": "ask",
        "neo": "ask_user",
        "agentcore": "ask_user_question",
        "pi-legacy": "askUserQuestion",
        "gemini": "ask_user",
        "codex": "request_user_input",
        "copilot": "ask_questions",
        "deepagents": "ask_user",
        "mcp-elicitation": "elicit",
    }


def test_an_unknown_dialect_is_a_usage_error_naming_the_known_ones() -> None:
    with pytest.raises(midturn.UsageError) as caught:
        get_dialect("openai")
    message = str(caught.value)
    assert "'openai'" in message
    for name in ALL:
        assert repr(name) in message
    with pytest.raises(midturn.UsageError):
        midturn.parse_ask(p.CLAUDE, dialect="Claude")
    with pytest.raises(midturn.UsageError):
        midturn.render(midturn.AskResult(outcome="skipped"), dialect="nope")


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (p.MIDTURN, "midturn"),
        (p.CLAUDE, "claude"),
        (p.MAKA, "maka"),
        (p.OMP, "omp"),
        (p.OMP_ONE, "omp"),
        (p.NEO, "neo"),
        (p.NEO_MULTI, "neo"),
        (p.NEO_TEXT, "neo"),
        (p.AGENTCORE, "agentcore"),
        (p.PI_SELECT, "pi-legacy"),
        (p.PI_MULTI, "pi-legacy"),
        (p.PI_SECRET, "pi-legacy"),
        (p.PI_EDITOR, "pi-legacy"),
    ],
)
def test_auto_detects_each_products_shape(payload: dict[str, Any], expected: str) -> None:
    assert detect_dialect(payload).name == expected
    ask = midturn.parse_ask(payload, dialect="auto")
    assert ask.dialect == expected
    assert ask == midturn.parse_ask(payload, dialect=expected)


def test_auto_detection_signals() -> None:
    bare = {"questions": [{"question": "Which one?", "options": [{"label": "A"}, {"label": "B"}]}]}
    assert detect_dialect(bare).name == "maka"
    four = {"questions": [{**bare["questions"][0], "options": [{"label": x} for x in "ABCD"]}]}
    assert detect_dialect(four).name == "midturn"  # beyond maka's 3 options
    with_header = {"questions": [{**bare["questions"][0], "header": "Pick"}]}
    assert detect_dialect(with_header).name == "agentcore"  # a header but no multiSelect
    flagged = {"questions": [{**with_header["questions"][0], "multiSelect": False}]}
    assert detect_dialect(flagged).name == "claude"  # Claude's two required keys
    labelled = {"questions": [{**bare["questions"][0], "id": "x", "recommended": "A"}]}
    assert detect_dialect(labelled).name == "midturn"  # omp recommends by index
    assert detect_dialect({**labelled, "timeout_s": 30}).name == "midturn"
    assert detect_dialect({"question": "Deploy now?"}).name == "pi-legacy"


@pytest.mark.parametrize("payload", [{"prompt": "Which one?"}, [p.CLAUDE], "Which one?", None])
def test_auto_refuses_input_of_no_known_shape_and_names_the_shape_to_use(payload: Any) -> None:
    with pytest.raises(midturn.InvalidAsk) as caught:
        midturn.parse_ask(payload, dialect="auto")
    text = str(caught.value)
    assert '"questions"' in text and '"options"' in text
    assert caught.value.problems[0].path == ""


@pytest.mark.parametrize(
    ("dialect", "payload"),
    [(name, payload) for name, payloads in p.BY_DIALECT.items() for payload in payloads],
)
def test_each_shape_round_trips_through_the_canonical_form(
    dialect: str, payload: dict[str, Any]
) -> None:
    ask = midturn.parse_ask(payload, dialect=dialect)
    limits = get_dialect(dialect).limits  # wider than the canonical defaults for some
    again = midturn.parse_ask(canonical_input(ask), dialect="midturn", limits=limits)
    assert again.questions == ask.questions
    assert (again.timeout_s, again.on_timeout) == (ask.timeout_s, ask.on_timeout)
    assert again.dialect == "midturn" and ask.dialect == dialect


@pytest.mark.parametrize("dialect", ALL)
def test_every_dialect_renders_every_outcome(dialect: str) -> None:
    ask = midturn.parse_ask(p.MIDTURN)
    answered = midturn.parse_answer(ask, {"answers": {"db": "SQLite", "name": "billing-api"}})
    results = [
        answered,
        midturn.parse_answer(ask, {"skip": True}),
        midturn.parse_answer(ask, {"redirect": "Use MySQL instead"}),
        midturn.AskResult(
            outcome="unavailable",
            answers=tuple(
                midturn.QuestionAnswer(
                    id=q.id, header=q.header, question=q.question, status="unavailable"
                )
                for q in ask.questions
            ),
        ),
    ]
    for result in results:
        out = midturn.render(result, dialect=dialect)
        assert out.text.strip()
        assert out == midturn.render(result, dialect=dialect)  # deterministic
    redirected = midturn.render(results[2], dialect=dialect)
    assert "Use MySQL instead" in redirected.text
    assert "do not ask these questions again" in redirected.text


def test_auto_leaves_a_malformed_questions_list_to_canonical_validation() -> None:
    one = {"questions": {"question": "Which one?", "options": ["A", "B"]}}
    assert midturn.parse_ask(one, dialect="auto").dialect == "midturn"
    with pytest.raises(midturn.InvalidAsk) as caught:
        midturn.parse_ask({"questions": "Which one?"}, dialect="auto")
    assert caught.value.problems[0].path == "questions"


@pytest.mark.parametrize("dialect", ALL)
def test_a_result_without_answers_reads_as_a_plain_sentence(dialect: str) -> None:
    out = midturn.render(midturn.AskResult(outcome="unavailable"), dialect=dialect)
    assert out.text.startswith("No one is available to answer questions here.")
    assert out.is_error is False


@pytest.mark.parametrize(
    ("expected", "payload"),
    [(name, payload) for name, payloads in p.BY_DIALECT.items() for payload in payloads],
)
def test_every_dialects_sample_payloads_detect_as_that_dialect(
    expected: str, payload: dict[str, Any]
) -> None:
    assert set(p.BY_DIALECT) == set(ALL)
    assert detect_dialect(payload).name == expected
    assert midturn.parse_ask(payload, dialect="auto") == midturn.parse_ask(
        payload, dialect=expected
    )


def test_auto_detection_tie_breaks_of_the_later_dialects() -> None:
    text_only = {"questions": [{"question": "What name?", "type": "text"}]}
    assert detect_dialect(text_only).name == "deepagents"  # no header: deep agents
    headed = {"questions": [{**text_only["questions"][0], "header": "Name"}]}
    assert detect_dialect(headed).name == "gemini"  # Gemini requires the header
    yes_no = {"questions": [{"question": "Go?", "type": "yesno"}]}
    assert detect_dialect(yes_no).name == "gemini"  # only Gemini has yesno
    codex_like = {
        "questions": [
            {"id": "db", "header": "DB", "question": "Which?", "options": [{"label": "A"}]}
        ]
    }
    assert detect_dialect(codex_like).name == "codex"  # ids and headers: Codex's four keys
    headerless = {"questions": [{**codex_like["questions"][0]}]}
    del headerless["questions"][0]["header"]
    assert detect_dialect(headerless).name == "omp"  # ids without headers
    recommended = {"questions": [{**codex_like["questions"][0], "recommended": 0}]}
    assert detect_dialect(recommended).name == "omp"  # Codex has no recommended index
    claude_like = {
        "questions": [
            {
                "header": "DB",
                "question": "Which?",
                "multiSelect": False,
                "options": [{"label": "A"}],
            }
        ]
    }
    assert detect_dialect(claude_like).name == "claude"
    flagged = {
        "questions": [
            {**claude_like["questions"][0], "options": [{"label": "A", "recommended": True}]}
        ]
    }
    assert detect_dialect(flagged).name == "copilot"  # a recommended flag on an option
    free = {"questions": [{"header": "Name", "question": "What name?"}]}
    assert detect_dialect(free).name == "copilot"  # a headed question with no options
    six = {
        "questions": [
            {"header": "Pick", "question": "Which?", "options": [{"label": x} for x in "ABCDEF"]}
        ]
    }
    assert detect_dialect(six).name == "copilot"  # beyond Claude's and AgentCore's 4
    assert detect_dialect({"requestedSchema": {}}).name == "mcp-elicitation"
