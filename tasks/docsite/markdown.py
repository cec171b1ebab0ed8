"""Small Markdown helpers the generated pages share.

Text from the code (help texts, descriptions, docstrings) is prose: its `<fabric>` must not
become an HTML tag, nor a `runbooks/*.yaml` the start of emphasis, while its code spans stay
as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

_CODE = re.compile(r"(`+)(.+?)\1")
_ESCAPES = {"<": "&lt;", ">": "&gt;", "*": "\\*"}
_SPECIAL = re.compile("[<>*]")


def _outside_code(text: str, change: Callable[[str], str]) -> str:
    """`text` with `change` applied to every part that is not a code span."""
    out, at = [], 0
    for match in _CODE.finditer(text):
        out += [change(text[at:match.start()]), match.group(0)]
        at = match.end()
    return "".join([*out, change(text[at:])])


def prose(text: str) -> str:
    """Text from the code as Markdown: angle brackets and asterisks outside code spans
    escaped."""
    return _outside_code(text, lambda part: _SPECIAL.sub(lambda m: _ESCAPES[m.group(0)], part))


def authored(text: str) -> str:
    """Markdown written as data (a platform's notes): its emphasis kept, its angle brackets
    outside code spans escaped (`<tenant>` is no HTML tag)."""
    return _outside_code(text, lambda part: part.replace("<", "&lt;").replace(">", "&gt;"))


def cell(text: str) -> str:
    """Markdown for one cell of a table: one line, no column break (a pipe inside a code
    span is no column break to the table extension; one outside is escaped)."""
    line = " ".join(text.split())
    return _outside_code(line, lambda part: part.replace("|", "\\|"))


def code(text: str) -> str:
    """`text` as a code span, with a longer fence when it holds a backtick."""
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A Markdown table; cells are made one line each (their text already Markdown)."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


def anchor(text: str) -> str:
    """An anchor id from a name: lowercase letters, digits and '-'."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


_ITEM = re.compile(r"^(?:[-*+]|\d+[.)]) ")
_FENCE = re.compile(r"^\s*(```|~~~)")


def lists_after_paragraphs(text: str) -> str:
    """A blank line before every list that follows a paragraph line directly: GitHub starts
    a list there, Python-Markdown would read the items as the paragraph's text."""
    out: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        elif (not fenced and _ITEM.match(line) and out and out[-1].strip()
              and not _ITEM.match(out[-1]) and not out[-1].startswith((" ", "\t", "|", "#"))):
            out.append("")
        out.append(line)
    return "\n".join(out)
