"""midturn for LangGraph (docs/adapters/langgraph.md): the question tool, one
`interrupt()` per call carrying all its questions; a `Host` that turns a graph's pending
interrupts (the question tool's and `HumanInTheLoopMiddleware`'s) into midturn asks and
permissions in the session's one queue and resumes with `Command(resume={id: ...})`;
`fan_out` for hand-built graphs; `MidturnMiddleware` for `create_agent`.

    pip install "midturn[langgraph]"
"""

try:
    import langchain_core  # noqa: F401
    import langgraph.types  # noqa: F401
except ImportError as error:  # pragma: no cover - exercised in a subprocess
    raise ImportError(
        'midturn.adapters.langgraph needs LangGraph: pip install "midturn[langgraph]"'
    ) from error

from midturn.adapters.langgraph._host import Host, Run
from midturn.adapters.langgraph._tool import QuestionTool, fan_out, question_tool

__all__ = ["Host", "MidturnMiddleware", "QuestionTool", "Run", "fan_out", "question_tool"]


def __getattr__(name: str) -> object:
    if name == "MidturnMiddleware":  # needs `langchain` (v1) as well
        from midturn.adapters.langgraph._middleware import MidturnMiddleware

        return MidturnMiddleware
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
