"""A distribution that declares entry points, written to a folder for `sys.path`: what
`pip install` of a package outside midturn leaves behind, without installing anything;
and the sources of a sample dialect and a sample store backend to put in it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path


def write_distribution(
    root: Path, name: str, entry_points: dict[str, dict[str, str]], modules: dict[str, str]
) -> Path:
    """`root` holding the modules `{module_name: source}` and a `<name>-0.1.dist-info`
    whose entry_points.txt declares `{group: {entry_name: "module:attr"}}`. Returns
    `root`, to put on `sys.path` (or PYTHONPATH)."""
    root.mkdir(parents=True, exist_ok=True)
    for module, source in modules.items():
        (root / f"{module}.py").write_text(source, encoding="utf-8")
    info = root / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8"
    )
    lines = []
    for group, points in entry_points.items():
        lines.append(f"[{group}]")
        lines += [f"{entry} = {target}" for entry, target in points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def run_python(code: str, path: Path) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter with `path` first on its import path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(path), *sys.path])}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )


# A dialect outside midturn: a poll tool, {"poll": "Question?", "choices": [...]}.
DIALECT_SOURCE = textwrap.dedent(
    """
    from typing import Any

    import midturn


    class PollDialect(midturn.Dialect):
        '''A poll tool: {"poll": "Question?", "choices": ["A", "B"]}.'''

        name = "poll"
        tool_name = "run_poll"

        def to_canonical(self, tool_input: Any) -> dict[str, Any]:
            return {
                "questions": [
                    {
                        "question": tool_input.get("poll"),
                        "options": [{"label": c} for c in tool_input.get("choices", [])],
                    }
                ]
            }

        def render(self, result: midturn.AskResult) -> midturn.ToolOutput:
            answer = result.answers[0].answer if result.answers else None
            return midturn.ToolOutput(text=f"POLL RESULT: {answer}", data={"vote": answer})

        def description(self, limits: midturn.Limits) -> str:
            return "Run a poll with the user within this same turn."

        def input_schema(self, limits: midturn.Limits) -> dict[str, Any]:
            return {
                "type": "object",
                "properties": {
                    "poll": {"type": "string", "maxLength": limits.max_question_chars},
                    "choices": {"type": "array", "maxItems": limits.max_options},
                },
                "required": ["poll", "choices"],
            }

        def matches(self, tool_input: Any) -> int:
            return 6 if isinstance(tool_input, dict) and "poll" in tool_input else 0
    """
)
POLL = {"poll": "Which database?", "choices": ["PostgreSQL", "SQLite"]}

# A backend outside midturn: here a thin one that keeps its data in a memory store, under
# its own scheme, written only against the public `midturn.store` names.
BACKEND_SOURCE = textwrap.dedent(
    """
    from midturn.store import Store, open_store

    OPENED = []


    class ScratchStore:
        def __new__(cls, url: str) -> Store:
            OPENED.append(url)
            store = open_store("memory://")
            store.url = url
            return store


    def factory(url: str) -> Store:
        return ScratchStore(url)


    def not_a_store(url: str) -> object:
        return {"url": url}


    NOT_CALLABLE = 3
    """
)
