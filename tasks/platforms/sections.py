"""Splitting a config into named sections, the two ways flatfab's configs are written.

Drift is reported per section on every platform: a platform's `sections()` picks one of
these (or its own) for the text it renders and reads back.
"""

from __future__ import annotations

HEADER = "!! "


def by_header(text: str) -> dict[str, list[str]]:
    """`!! name` lines open a section; blank lines are not content."""
    out: dict[str, list[str]] = {}
    current = "config"
    for line in text.splitlines():
        if line.startswith(HEADER):
            current = line[len(HEADER):].strip() or "config"
            out.setdefault(current, [])
            continue
        if line.strip():
            out.setdefault(current, []).append(line)
    return out


def by_first_word(text: str) -> dict[str, list[str]]:
    """One statement a line: its first word is its section."""
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.strip():
            out.setdefault(line.split(maxsplit=1)[0], []).append(line)
    return out


def cli_blocks(text: str) -> list[list[str]]:
    """An indented CLI config's top-level blocks (a line and its indented lines); `!`
    comments, blank lines and `end` are not content (EOS, NX-OS)."""
    found: list[list[str]] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("!") or line == "end":
            continue
        if line.startswith(" ") and found:
            found[-1].append(line)
        else:
            found.append([line])
    return found
