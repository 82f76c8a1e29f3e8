"""The code's citations of the contract point into `docs/` and land on a heading there:
`docs/contract.md#answers` in a comment, `[Answers](contract.md#answers)` in a page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SOURCES = [
    path
    for folder in ("src", "tests", "bench")
    for path in sorted((ROOT / folder).rglob("*"))
    if path.suffix in (".py", ".js", ".html", ".css") and path.name != "test_doc_links.py"
]
PAGES = sorted(DOCS.glob("*.md"))
CODE_CITATION = re.compile(r"docs/([\w-]+\.md)(?:#([\w-]+))?")
PAGE_LINK = re.compile(r"\]\(((?:[\w-]+\.md)?)(?:#([\w-]+))?\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # a '#' in a code block is no heading
    return {slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def check(page_name: str, anchor: str | None, where: str) -> None:
    page = DOCS / page_name
    assert page.is_file(), f"{where} cites docs/{page_name}, which does not exist"
    if anchor:
        assert anchor in anchors(page), f"{where} cites {page_name}#{anchor}: no such heading"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_citation_in_the_code_lands_on_a_heading(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "SPEC §" not in text, f"{path.name} cites a SPEC section; cite docs/ instead"
    for match in CODE_CITATION.finditer(text):
        check(match.group(1), match.group(2), str(path.relative_to(ROOT)))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_between_pages_lands_on_a_heading(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert "SPEC §" not in text
    for match in PAGE_LINK.finditer(text):
        check(match.group(1) or page.name, match.group(2), page.name)


def test_the_anchor_rule_is_githubs() -> None:
    assert slug("Events (server-sent)") == "events-server-sent"
    assert slug("The `midturn` command") == "the-midturn-command"
    assert slug("Asks from a model (`midturn.parse_ask`)") == "asks-from-a-model-midturnparse_ask"
