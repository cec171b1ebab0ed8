"""Junos configuration as data (the JSON of `show configuration | display json`) and as the
curly-brace text NAPALM loads, and the split of that text into sections.

The renderer builds one tree in Junos's own JSON form (Juniper, "Mapping Junos OS
Configuration Statements to JSON": a container is an object, a list is an array of objects
keyed by "name", an empty leaf is `[null]`, attributes go in an "@" member). The tests
validate that tree against Juniper's QFX YANG; `to_text` prints it as the text that is
pushed, so the validated tree and the pushed text are the same data.

`"@": {"operation": "replace"}` on a statement is Junos's JSON spelling of the `replace:`
tag: with `load replace` only such statements replace what the switch has, everything else
(system, login, the management interface and instance) stays as it is.
"""

from __future__ import annotations

import re
from typing import Any

INDENT = "    "
REPLACE = {"operation": "replace"}
_BARE = re.compile(r"^[A-Za-z0-9_.:/*+-]+$")  # a word Junos prints without quotes
# lists whose entries Junos prints without the list's keyword (`interfaces { et-0/0/0 {`)
HIDDEN = frozenset({("interfaces", "interface"), ("routing-instances", "instance"),
                    ("vlans", "vlan"), ("prefix-list", "prefix-list-item")})
# lists Junos prints inside a brace of their own name (`schedulers { s1 { ... } }`)
WRAPPED = frozenset({("class-of-service", "drop-profiles"), ("class-of-service", "schedulers"),
                     ("class-of-service", "scheduler-maps"),
                     ("class-of-service", "congestion-notification-profile")})
_TOP = re.compile(r"^(?:replace: |delete: )?([A-Za-z0-9_-]+)[ ;{]")

Tree = dict[str, Any]


class JunosTextError(ValueError):
    """A tree the printer cannot spell (names the path)."""


def word(value: Any) -> str:
    text = str(value)
    return text if _BARE.match(text) else '"' + text.replace('"', '\\"') + '"'


def to_text(tree: Tree) -> str:
    """The tree as Junos curly-brace text, four spaces an indent, in the tree's order."""
    lines: list[str] = []
    _members(tree, 0, lines, "")
    return "\n".join(lines) + "\n"


def _tag(node: Any) -> str:
    if isinstance(node, dict) and node.get("@") == REPLACE:
        return "replace: "
    return ""


def _members(tree: Tree, depth: int, lines: list[str], path: str) -> None:
    parent = path.rsplit("/", 1)[-1].split("[", 1)[0]
    for key, value in tree.items():
        if key in {"@", "name"}:
            continue
        if (parent, key) in WRAPPED and isinstance(value, list):
            lines.append(f"{INDENT * depth}{key} {{")
            _statement(key, value, depth + 1, lines, f"{path}/{key}", True)
            lines.append(f"{INDENT * depth}}}")
            continue
        _statement(key, value, depth, lines, f"{path}/{key}", (parent, key) in HIDDEN)


def _statement(key: str, value: Any, depth: int, lines: list[str], path: str,
               hidden: bool = False) -> None:
    pad = INDENT * depth
    if value == [None] or (isinstance(value, dict) and not set(value) - {"@"}):
        lines.append(f"{pad}{_tag(value)}{key};")
    elif isinstance(value, dict):
        lines.append(f"{pad}{_tag(value)}{key} {{")
        _members(value, depth + 1, lines, path)
        lines.append(f"{pad}}}")
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for entry in value:
            _entry("" if hidden else key, entry, depth, lines, path)
    elif isinstance(value, list) and value:
        if any(isinstance(v, (dict, list)) or v is None for v in value):
            raise JunosTextError(f"{path}: a leaf-list of scalars expected")
        items = " ".join(word(v) for v in value)
        lines.append(f"{pad}{key} {items};" if len(value) == 1 else f"{pad}{key} [ {items} ];")
    elif isinstance(value, (str, int)) and not isinstance(value, bool):
        lines.append(f"{pad}{key} {word(value)};")
    else:
        raise JunosTextError(f"{path}: cannot print {value!r}")


def _entry(key: str, entry: Tree, depth: int, lines: list[str], path: str) -> None:
    """One list entry: `key NAME { ... }`, or, for a list keyed by several leaves (a
    scheduler's drop-profile-map), all its leaves on one line."""
    pad = INDENT * depth
    if "name" not in entry:
        if any(isinstance(v, (dict, list)) for v in entry.values()):
            raise JunosTextError(f"{path}: an entry without a name must be flat")
        lines.append(f"{pad}{key} " + " ".join(f"{k} {word(v)}" for k, v in entry.items()) + ";")
        return
    head = f"{pad}{_tag(entry)}{key + ' ' if key else ''}{word(entry['name'])}"
    body = {k: v for k, v in entry.items() if k not in ("name", "@")}
    if not body:
        lines.append(f"{head};")
        return
    lines.append(f"{head} {{")
    _members(body, depth + 1, lines, f"{path}[{entry['name']}]")
    lines.append(f"{pad}}}")


def split_sections(text: str) -> dict[str, list[str]]:
    """Each top-level statement's lines under its name (`interfaces`, `class-of-service`);
    blank lines are not content, a comment before a statement belongs to that statement
    (flatfab's header, `## Last commit`), one after the last to `config`. Works on the
    rendered text and on `show configuration` alike."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    comments: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith(("#", "/*")):
            comments.append(line)
            continue
        if not line.startswith((" ", "}")):
            match = _TOP.match(line + " ")
            if match:
                current = match.group(1)
        out.setdefault(current or "config", []).extend([*comments, line])
        comments = []
    if comments:
        out.setdefault(current or "config", []).extend(comments)
    return out


# ---- reading text back (drift, change notes) ----------------------------------------------


class Statement:
    """One statement of curly-brace text: its words, and its block (None for `x y;`)."""

    __slots__ = ("block", "head")

    def __init__(self, head: str, block: list[Statement] | None) -> None:
        self.head = head
        self.block = block


_TAGS = re.compile(r"^(replace|delete|inactive|protect): ")


def parse(text: str) -> list[Statement]:
    """Curly-brace text, one statement a line (as flatfab and `show configuration` print
    it); comments, `##` annotations and tags are dropped. Bad nesting is a ValueError."""
    root: list[Statement] = []
    stack: list[list[Statement]] = [root]
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", "/*")):
            continue
        line = _TAGS.sub("", line)
        if line == "}":
            if len(stack) == 1:
                raise ValueError(f"line {number}: unbalanced }}")
            stack.pop()
        elif line.endswith("{"):
            block: list[Statement] = []
            stack[-1].append(Statement(line[:-1].strip(), block))
            stack.append(block)
        elif line.endswith(";"):
            stack[-1].append(Statement(line[:-1].strip(), None))
        else:
            raise ValueError(f"line {number}: {line!r} is not a statement")
    if len(stack) != 1:
        raise ValueError("missing }")
    return root


def canonical(text: str) -> str:
    """The text with every block's statements in one order (Junos prints in schema order,
    flatfab in its own): drift then shows only what differs."""
    def dump(statements: list[Statement], depth: int) -> list[str]:
        lines: list[str] = []
        for statement in sorted(statements, key=lambda s: (s.head, s.block is not None)):
            pad = INDENT * depth
            if statement.block is None:
                lines.append(f"{pad}{statement.head};")
            else:
                lines += [f"{pad}{statement.head} {{", *dump(statement.block, depth + 1),
                          f"{pad}}}"]
        return lines
    return "\n".join(dump(parse(text), 0)) + "\n"


def children(statements: list[Statement], head: str) -> list[str]:
    """The heads of the statements in the block of top-level `head`."""
    return [s.head for statement in statements
            if statement.head == head and statement.block is not None
            for s in statement.block]
