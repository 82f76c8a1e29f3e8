"""The sample ask most suites use: two questions (a choice with descriptions and a typed
answer) in the canonical dialect, and an answer to it by label."""

from __future__ import annotations

from typing import Any

ASK: dict[str, Any] = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use?",
            "options": [
                {"label": "PostgreSQL", "description": "Managed, scales out"},
                {"label": "SQLite", "description": "Embedded, zero setup"},
            ],
        },
        {"id": "name", "question": "What should the service be called?", "kind": "text"},
    ]
}
ANSWER: dict[str, Any] = {"answers": {"db": "PostgreSQL", "name": "billing-api"}}
