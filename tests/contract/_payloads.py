"""Tool inputs as each product's model sends them, shared by the dialect and tool spec
tests."""

from __future__ import annotations

from typing import Any

DB = "Which database should the billing service use?"
FEATURES = "Which features should ship in the first release?"
REGION = "Which region should it run in?"

CLAUDE: dict[str, Any] = {
    "questions": [
        {
            "question": DB,
            "header": "Database",
            "multiSelect": False,
            "options": [
                {"label": "PostgreSQL (Recommended)", "description": "Managed, scales out"},
                {"label": "SQLite", "description": "Embedded, zero setup"},
            ],
        },
        {
            "question": FEATURES,
            "header": "Features",
            "multiSelect": True,
            "options": [
                {"label": "Auth", "description": "Sign-in and sessions"},
                {"label": "Billing", "description": "Invoices and payments"},
                {"label": "Search", "description": "Full-text search"},
            ],
        },
    ]
}

MAKA: dict[str, Any] = {
    "questions": [
        {
            "question": DB,
            "options": [
                {"label": "PostgreSQL", "description": "Managed, scales out"},
                {"label": "SQLite", "description": "Embedded, zero setup"},
            ],
        },
        {
            "question": REGION,
            "options": [{"label": "EU"}, {"label": "US"}, {"label": "Asia"}],
        },
    ]
}

OMP: dict[str, Any] = {
    "questions": [
        {
            "id": "db",
            "question": DB,
            "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}],
            "recommended": 0,
        },
        {
            "id": "features",
            "question": FEATURES,
            "header": "Features",
            "options": [{"label": "Auth"}, {"label": "Billing"}, {"label": "Search"}],
            "multi": True,
        },
    ]
}

OMP_ONE: dict[str, Any] = {
    "questions": [
        {
            "id": "db",
            "question": DB,
            "options": [
                {"label": "PostgreSQL", "description": "Managed"},
                {"label": "SQLite", "description": "Embedded"},
            ],
        }
    ]
}

NEO: dict[str, Any] = {
    "question_id": "db_choice",
    "title": DB,
    "description": "The service stores invoices and customer records.",
    "kind": "single_choice",
    "options": [
        {"label": "PostgreSQL", "description": "Managed, scales out"},
        {"label": "SQLite", "description": "Embedded, zero setup"},
    ],
    "required": True,
    "allow_skip": True,
    "timeout_sec": 120,
}

NEO_MULTI: dict[str, Any] = {
    "question_id": "features",
    "title": FEATURES,
    "kind": "multi_choice",
    "options": [{"label": "Auth"}, {"label": "Billing"}, {"label": "Search"}],
    "required": False,
    "allow_skip": True,
    "max_choices": 2,
}

NEO_TEXT: dict[str, Any] = {
    "question_id": "service_name",
    "title": "What should the service be called?",
    "kind": "text",
    "required": True,
    "allow_skip": False,
}

AGENTCORE: dict[str, Any] = {
    "questions": [
        {
            "header": "Database",
            "question": DB,
            "multiSelect": False,
            "options": [
                {"label": "PostgreSQL", "description": "Managed, scales out"},
                {"label": "SQLite", "description": "Embedded, zero setup"},
            ],
        },
        {
            "header": "Features",
            "question": FEATURES,
            "options": [
                {"label": "Auth", "description": "Sign-in and sessions"},
                {"label": "Billing", "description": "Invoices and payments"},
            ],
            "multiSelect": True,
        },
        {
            "header": "Region",
            "question": REGION,
            "options": [
                {"label": "EU", "description": "Frankfurt"},
                {"label": "US", "description": "Virginia"},
            ],
        },
    ]
}

PI_SELECT: dict[str, Any] = {
    "question": "Which environment should I deploy to?",
    "kind": "select",
    "options": ["staging", "production"],
    "allowCustom": False,
    "default": "staging",
    "timeoutMs": 30000,
    "sensitivity": "internal",
    "reason": "Both environments are configured.",
}

PI_MULTI: dict[str, Any] = {
    "question": "Which checks should run before the deploy?",
    "kind": "multi-select",
    "options": ["lint", "unit tests", "e2e tests"],
    "allowCustom": True,
}

PI_SECRET: dict[str, Any] = {
    "question": "What is the deploy token?",
    "kind": "text",
    "sensitivity": "secret",
    "reason": "The CI variable is not set.",
}

PI_EDITOR: dict[str, Any] = {
    "question": "Write the release notes for this version.",
    "kind": "editor",
    "default": "Bug fixes and improvements",
    "sensitivity": "public",
}

MIDTURN: dict[str, Any] = {
    "questions": [
        {
            "id": "db",
            "header": "Database",
            "question": "Which database should the service use?",
            "options": [
                {"label": "PostgreSQL", "description": "Managed, scales out"},
                {"label": "SQLite", "description": "Embedded, zero setup"},
            ],
            "multi": False,
            "recommended": "PostgreSQL",
        },
        {"id": "name", "question": "What should the service be called?", "kind": "text"},
    ],
}

BY_DIALECT: dict[str, list[dict[str, Any]]] = {
    "midturn": [MIDTURN],
    "claude": [CLAUDE],
    "maka": [MAKA],
    "omp": [OMP, OMP_ONE],
    "neo": [NEO, NEO_MULTI, NEO_TEXT],
    "agentcore": [AGENTCORE],
    "pi-legacy": [PI_SELECT, PI_MULTI, PI_SECRET, PI_EDITOR],
}
