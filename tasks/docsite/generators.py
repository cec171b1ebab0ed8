"""What the documentation site generates, by name, and how a page asks for it.

A page in docs/ holds `<!-- flatfab:generate NAME -->` on a line of its own where a
generated part goes (its intro stays hand-written around it); `INSERTS[NAME]` makes that
part. `virtual_pages(root)` makes whole pages from files outside docs/: the runbooks and the
inventory guide, read from the checkout at build time.
"""

from __future__ import annotations

import re
import runpy
from collections.abc import Callable
from pathlib import Path

from flatfab.docsite import (
    check_catalog,
    cli_reference,
    intent_reference,
    layers_picture,
    platform_table,
)
from flatfab.docsite import runbooks as runbook_pages
from flatfab.docsite.markdown import lists_after_paragraphs
from flatfab.platforms.registry import PLATFORMS
from flatfab.telemetry import platform_paths

MARKER = re.compile(r"^<!-- flatfab:generate ([a-z-]+) -->$", re.MULTILINE)


def _telemetry_paths() -> str:
    return platform_paths.markdown([p.telemetry for p in PLATFORMS.values() if p.telemetry])


INSERTS: dict[str, Callable[[], str]] = {
    "intent-reference": intent_reference.markdown,
    "check-catalog": check_catalog.markdown,
    "platform-table": platform_table.markdown,
    "cli-reference": cli_reference.markdown,
    "telemetry-paths": _telemetry_paths,
}


class UnknownInsertError(ValueError):
    """A page asks for a generated part that does not exist."""


def fill(page: str, markdown: str) -> str:
    """`markdown` (the page `page`) with every marker replaced by what it names, its lists
    read as GitHub reads them (the runbooks and the developers' pages are read there too)."""

    def made(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in INSERTS:
            raise UnknownInsertError(f"{page}: <!-- flatfab:generate {name} --> names no generated "
                                f"part (known: {', '.join(sorted(INSERTS))})")
        return INSERTS[name]().strip()

    return lists_after_paragraphs(MARKER.sub(made, markdown))


def virtual_pages(root: Path) -> dict[str, str]:
    """Pages made from the checkout's files: site path -> Markdown."""
    pages = runbook_pages.pages(root / "runbooks")
    guide = root / "inventory" / "README.md"
    pages["reference/inventory.md"] = runbook_pages.inventory_page(guide)
    pages["development/layers.svg"] = layers_svg(root)
    return pages


def layers_svg(root: Path) -> str:
    """The developers' picture of the layers, from the declaration the layering tests
    enforce (tests/conformance/layers.py: data only, read as a file)."""
    declared = runpy.run_path(str(root / "tests" / "conformance" / "layers.py"))
    return layers_picture.svg(declared["LAYERS"], declared["WORKFLOWS"])
