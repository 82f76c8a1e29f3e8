"""Public homes and light imports: every public class and function reports the module
users import it from, the aliases users annotate with live in `midturn.types`, and
importing the contract (or `midturn` itself) loads no HTTP library, runtime or store."""

from __future__ import annotations

import importlib
import inspect
import pickle
import subprocess
import sys
import typing

import pytest

import midturn
import midturn.types

PUBLIC_PACKAGES = [
    "midturn.contract",
    "midturn.store",
    "midturn.runtime",
    "midturn.client",
    "midturn.testing",
    "midturn.testing.conformance",
    "midturn.testing.pilot",
    "midturn.tui",
]
HEAVY = ["httpx", "fastapi", "starlette", "uvicorn", "asyncpg", "prompt_toolkit"]
LAYERS_ABOVE_CONTRACT = ["midturn.runtime", "midturn.store", "midturn.client", "midturn.gateway"]


def _ours(value: object) -> bool:
    return isinstance(value, type) or inspect.isfunction(value)


@pytest.mark.parametrize("name", [n for n in midturn.__all__ if n != "__version__"])
def test_every_top_level_class_and_function_reports_midturn(name: str) -> None:
    value = getattr(midturn, name)
    if _ours(value):
        assert value.__module__ == "midturn", f"midturn.{name} reports {value.__module__}"


@pytest.mark.parametrize("package", PUBLIC_PACKAGES)
def test_other_public_names_report_their_public_package(package: str) -> None:
    module = importlib.import_module(package)
    contract = importlib.import_module("midturn.contract")
    checked = 0
    for name in module.__all__:
        value = getattr(module, name)
        if not _ours(value):
            continue
        if name in midturn.__all__:
            home = "midturn"
        elif getattr(contract, name, None) is value:
            home = "midturn.contract"  # re-exported here, defined in the contract
        else:
            home = package
        assert value.__module__ == home, f"{package}.{name} reports {value.__module__}"
        checked += 1
    assert checked


def test_a_model_with_its_public_module_still_pickles_and_reprs() -> None:
    ask = midturn.parse_ask({"questions": [{"question": "Which database?", "options": ["A", "B"]}]})
    assert pickle.loads(pickle.dumps(ask)) == ask
    assert repr(midturn.Ask).startswith("<class 'midturn.Ask'")
    error = midturn.InvalidAnswer("no")
    assert type(pickle.loads(pickle.dumps(error))) is midturn.InvalidAnswer


def test_the_aliases_are_the_literals_the_models_use() -> None:
    from midturn.contract import Interaction, PermissionDecision, PermissionRequest

    types = midturn.types
    assert typing.get_args(types.Decision) == ("allow", "deny", "allow_for_turn")
    assert typing.get_args(types.Risk) == ("low", "medium", "high")
    assert "redirected" in typing.get_args(types.Outcome)
    assert "turn_waiting" in typing.get_args(types.EventType)
    assert typing.get_args(types.ToolSpecFormat) == ("openai", "anthropic", "gemini", "mcp")
    assert PermissionDecision.model_fields["outcome"].annotation == types.PermissionOutcome
    assert PermissionRequest.model_fields["risk"].annotation == types.Risk
    assert Interaction.model_fields["status"].annotation == types.InteractionStatus
    assert Interaction.model_fields["kind"].annotation == types.InteractionKind
    assert midturn.AskResult.model_fields["outcome"].annotation == types.Outcome
    assert midturn.Question.model_fields["kind"].annotation == types.QuestionKind
    for name in types.__all__:
        assert typing.get_origin(getattr(types, name)) is typing.Literal, name


def _loaded_after(statement: str) -> list[str]:
    probe = (
        f"{statement}\nimport sys\n"
        f"print(' '.join(m for m in {HEAVY + LAYERS_ABOVE_CONTRACT!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.split()


@pytest.mark.parametrize(
    "statement",
    [
        "import midturn.contract",
        "import midturn",
        "import midturn.types",
        "import midturn; midturn.parse_ask({'questions': [{'question': 'Name?'}]})",
        "from midturn import tool_spec; tool_spec('claude', 'gemini')",
    ],
)
def test_the_contract_imports_no_http_runtime_or_store(statement: str) -> None:
    assert _loaded_after(statement) == []


def test_the_runtime_and_the_client_load_on_first_use() -> None:
    assert _loaded_after("import midturn; midturn.Runtime") == ["midturn.runtime", "midturn.store"]
    assert "httpx" in _loaded_after("from midturn import Client")
