"""The runbooks as pages: runbooks/*.md as they are, and the files they point at (rollout
plans, schedules) shown on one page, so every link of a procedure lands on a page.

The runbooks stay where flatfab ships them (an installed flatfab hands them out with
`init`); the site reads them from the checkout at build time, never a copy.
"""

from __future__ import annotations

import re
from pathlib import Path

from flatfab.docsite.markdown import anchor, code

INDEX = "README.md"
FILES_PAGE = "files.md"
LANGUAGES = {".yaml": "yaml", ".yml": "yaml", ".service": "ini", ".timer": "ini",
             ".cron": "text"}
# a Markdown link whose target is a relative path (no scheme, no anchor-only link)
_LINK = re.compile(r"\]\((?![a-z]+:|#)([^)#\s]+)(#[^)\s]*)?\)")


def _files(folder: Path) -> list[Path]:
    """The runbooks' other files: rollout plans, then schedules, each sorted."""
    return sorted((p for p in folder.rglob("*") if p.is_file() and p.suffix != ".md"
                   and "__pycache__" not in p.parts),
                  key=lambda p: (len(p.relative_to(folder).parts), str(p)))


def _relinked(text: str, folder: Path) -> str:
    """Links to a runbook's files point at their place on the files page."""

    def target(match: re.Match[str]) -> str:
        path = match.group(1)
        if path.endswith(".md") or not (folder / path).is_file():
            return match.group(0)
        return f"]({FILES_PAGE}#{anchor(path)})"

    return _LINK.sub(target, text)


def _files_page(folder: Path) -> str:
    lines = ["# Rollout plans and schedules", "",
             "The files the runbooks use, as flatfab ships them in `runbooks/`: rollout plans "
             "for `flatfab rollout --runbook`, and the files that schedule audits and run "
             "distributed workers.", ""]
    for path in _files(folder):
        name = path.relative_to(folder).as_posix()
        language = LANGUAGES.get(path.suffix, "text")
        text = path.read_text(encoding="utf-8").rstrip("\n")
        fence = "````" if "```" in text else "```"
        lines += [f"## {code(name)} {{#{anchor(name)}}}", "",
                  f"{fence}{language}", text, fence, ""]
    return "\n".join(lines)


def pages(folder: Path) -> dict[str, str]:
    """Site path -> Markdown: the index (the folder's README), each procedure, the files."""
    found = {}
    for path in sorted(folder.glob("*.md")):
        name = "index.md" if path.name == INDEX else path.name
        found[f"runbooks/{name}"] = _relinked(path.read_text(encoding="utf-8"), folder)
    found[f"runbooks/{FILES_PAGE}"] = _files_page(folder)
    return found


def order(folder: Path) -> list[str]:
    """Procedure pages in the order the index lists them, then any it does not list."""
    index = (folder / INDEX).read_text(encoding="utf-8")
    listed = [m.group(1) for m in _LINK.finditer(index) if m.group(1).endswith(".md")]
    rest = sorted(p.name for p in folder.glob("*.md") if p.name != INDEX)
    return [*dict.fromkeys(n for n in listed if n in rest), *(n for n in rest if n not in listed)]


def inventory_page(guide: Path) -> str:
    """The inventory guide (inventory/README.md) as it is."""
    return guide.read_text(encoding="utf-8")
