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

# Gemini CLI `ask_user` (google-gemini/gemini-cli packages/core/src/tools/ask-user.ts and its
# tests): typed questions, a header of at most 16 characters, yes/no without options.
GEMINI: dict[str, Any] = {
    "questions": [
        {
            "question": DB,
            "header": "Database",
            "type": "choice",
            "options": [
                {"label": "PostgreSQL", "description": "Relational"},
                {"label": "SQLite", "description": "Embedded"},
            ],
        },
        {
            "question": "What is the name of your new project?",
            "header": "Project Name",
            "type": "text",
        },
        {"question": "The build failed.\\nRetry it?", "header": "Retry", "type": "yesno"},
    ]
}
GEMINI_MULTI: dict[str, Any] = {
    "questions": [
        {
            "question": "Which sections of the documentation should be updated?",
            "header": "Docs",
            "type": "choice",
            "options": [
                {"label": "User Guide", "description": "The main user-facing documentation."},
                {"label": "API Reference", "description": "The detailed API documentation."},
            ],
            "multiSelect": True,
            "placeholder": "Type another section...",
        }
    ]
}

# Codex `request_user_input` (openai/codex codex-rs/tools/src/request_user_input_tool.rs,
# codex-rs/protocol/src/request_user_input.rs): ids, headers, 2-3 options each.
CODEX: dict[str, Any] = {
    "questions": [
        {
            "id": "database",
            "header": "Database",
            "question": DB,
            "options": [
                {"label": "PostgreSQL (Recommended)", "description": "Managed and scales out."},
                {"label": "SQLite", "description": "Embedded, with zero setup."},
            ],
        },
        {
            "id": "region",
            "header": "Region",
            "question": REGION,
            "options": [
                {"label": "EU", "description": "Closest to most users."},
                {"label": "US", "description": "Cheapest compute."},
                {"label": "Asia", "description": "Lowest latency for the new market."},
            ],
        },
    ]
}

# VS Code Copilot's ask-questions tool (microsoft/vscode
# src/vs/workbench/contrib/chat/common/tools/builtinTools/askQuestionsTool.ts): headers as
# keys, 0 or 2-6 options, a recommended flag, free-form input when allowed.
COPILOT: dict[str, Any] = {
    "questions": [
        {
            "header": "Database",
            "question": DB,
            "options": [
                {"label": "PostgreSQL", "description": "Managed, scales out", "recommended": True},
                {"label": "SQLite", "description": "Embedded, zero setup"},
            ],
            "allowFreeformInput": True,
        },
        {"header": "Name", "question": "What should the service be called?"},
        {
            "header": "Features",
            "question": FEATURES,
            "multiSelect": True,
            "options": [
                {"label": "Dark mode"},
                {"label": "Auto-save"},
                {"label": "Spell check"},
                {"label": "Search"},
                {"label": "Export"},
                {"label": "Sharing"},
            ],
        },
    ]
}

# Deep agents `ask_user` (langchain-ai/deepagents libs/cli/deepagents_cli/ask_user.py,
# _ask_user_types.py): text or multiple_choice questions, choices as {value}.
DEEPAGENTS: dict[str, Any] = {
    "questions": [
        {
            "question": DB,
            "type": "multiple_choice",
            "choices": [{"value": "PostgreSQL"}, {"value": "SQLite"}],
        },
        {"question": "What should the service be called?", "type": "text", "required": False},
    ]
}

# MCP `elicitation/create` form params (modelcontextprotocol schema 2025-11-25): every
# primitive, titled and untitled enums, the legacy enumNames, a multi-select array.
ELICITATION: dict[str, Any] = {
    "mode": "form",
    "message": "Please provide your contact information",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Your full name"},
            "email": {"type": "string", "format": "email", "description": "Your email address"},
            "age": {"type": "integer", "minimum": 18, "description": "Your age"},
            "score": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5},
            "subscribe": {"type": "boolean", "title": "Subscribe to news?", "default": True},
            "color": {
                "type": "string",
                "title": "Favourite colour",
                "oneOf": [{"const": "#f00", "title": "Red"}, {"const": "#00f", "title": "Blue"}],
            },
            "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]},
            "tags": {
                "type": "array",
                "title": "Tags",
                "items": {"type": "string", "enum": ["alpha", "beta", "gamma"]},
                "minItems": 1,
                "maxItems": 2,
                "default": ["beta"],
            },
        },
        "required": ["name", "email"],
    },
}

BY_DIALECT: dict[str, list[dict[str, Any]]] = {
    "midturn": [MIDTURN],
    "claude": [CLAUDE],
    "maka": [MAKA],
    "omp": [OMP, OMP_ONE],
    "neo": [NEO, NEO_MULTI, NEO_TEXT],
    "agentcore": [AGENTCORE],
    "pi-legacy": [PI_SELECT, PI_MULTI, PI_SECRET, PI_EDITOR],
    "gemini": [GEMINI, GEMINI_MULTI],
    "codex": [CODEX],
    "copilot": [COPILOT],
    "deepagents": [DEEPAGENTS],
    "mcp-elicitation": [ELICITATION],
}
