"""The README and docs/ stand alone in a clone: every relative link, and every path they name in
code (`parley/…`, `tests/…::test_name`), points at something in this repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\s]+)`")
NAMED_PATH = re.compile(r"(?:\.\./)*[\w.-]+(?:/[\w.-]+)+\.(?:py|md|toml|yaml|txt)")


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for the page's headings."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def relative_links(page: Path) -> list[str]:
    return [t for t in LINK.findall(page.read_text()) if not re.match(r"[a-z]+:", t)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_points_into_the_repository(page: Path) -> None:
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.is_relative_to(ROOT), f"{page.name} links outside the repository: {target}"
        assert linked.exists(), f"{page.name} links to a missing file: {target}"
        if anchor and linked.suffix == ".md":
            assert anchor in anchors(linked), f"{page.name} links to a missing heading: {target}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_path_named_in_code_exists(page: Path) -> None:
    current_file: Path | None = None
    for code in CODE.findall(page.read_text()):
        path, _, test = code.partition("::")
        if NAMED_PATH.fullmatch(path):
            current_file = (ROOT / path).resolve()
            assert current_file.is_relative_to(ROOT), f"{page.name} names {code}, outside"
            assert current_file.exists(), f"{page.name} names a missing file: {code}"
        elif path or not test:
            continue
        if test:
            assert current_file is not None, f"{page.name}: {code} follows no test file"
            defined = re.search(
                rf"^(async )?def {re.escape(test)}\(", current_file.read_text(), re.M
            )
            assert defined, f"{page.name} names a missing test: {current_file.name}::{test}"


def test_the_check_finds_a_link_out_of_the_repository(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("see [design](../shared/DESIGN.md) and [docs](https://example.org)\n")
    assert relative_links(page) == ["../shared/DESIGN.md"]
    assert NAMED_PATH.fullmatch("../shared/DESIGN.md")


def test_nothing_in_the_repository_points_at_the_design_notes_outside_it() -> None:
    """The design notes live beside the repository, not in it: a clone has no ``../shared``."""
    outside = re.compile(r"\.\./shared|shared/DESIGN|DESIGN(?:\.md| §)")
    this_file = Path(__file__).resolve()
    files = [*PAGES, *(ROOT / "bench").rglob("*.md")]
    for folder in ("parley", "tests", "bench"):
        files += (ROOT / folder).rglob("*.py")
    for path in files:
        if path.resolve() == this_file:
            continue
        found = outside.search(path.read_text())
        assert found is None, f"{path.relative_to(ROOT)} mentions {found.group()}"
