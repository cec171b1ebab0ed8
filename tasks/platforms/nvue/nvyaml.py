"""A small, deterministic YAML writer for NVUE trees (mappings of str/int), and its reader.

NVUE trees hold mappings, strings and integers only. Writing them by hand keeps the output
byte-stable and fast (a spine renders thousands of keys); every string that YAML 1.1 would
read as something else (on/off, numbers, addresses) is quoted, so reading back gives the same
tree (a test asserts it for every golden file).
"""

from __future__ import annotations

import re
from typing import Any

import yaml

Tree = dict[str, Any]

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]*$")
# YAML 1.1 scalars that a plain string would turn into (PyYAML's resolver)
_RESERVED = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null", "none"})


def scalar(value: object) -> str:
    if isinstance(value, bool):
        raise TypeError("NVUE trees hold no booleans (NVUE spells them as words)")
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if _PLAIN.match(text) and text.lower() not in _RESERVED:
        return text
    return "'" + text.replace("'", "''") + "'"


def dump(tree: Tree, indent: int = 0) -> list[str]:
    """Block-style lines of a mapping, keys in the mapping's own (deterministic) order."""
    lines: list[str] = []
    pad = " " * indent
    for key, value in tree.items():
        if isinstance(value, dict):
            if value:
                lines.append(f"{pad}{scalar(key)}:")
                lines.extend(dump(value, indent + 2))
            else:
                lines.append(f"{pad}{scalar(key)}: {{}}")
        else:
            lines.append(f"{pad}{scalar(key)}: {scalar(value)}")
    return lines


class NvueYamlError(ValueError):
    """A config text that is not an NVUE set/unset document (one line)."""


def load_ops(text: str) -> list[Tree]:
    """An `nv config patch` document: a list of {set: tree} / {unset: tree} operations."""
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        value = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise NvueYamlError(f"not YAML: {str(exc).splitlines()[0]}") from None
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(op, dict) for op in value):
        raise NvueYamlError("expected a list of set/unset operations")
    return value


def merge(into: Tree, tree: Tree) -> Tree:
    """`set` semantics: mappings merge, values replace."""
    for key, value in tree.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = _copy(value)
    return into


def unset(into: Tree, tree: Tree) -> Tree:
    """`unset` semantics: an empty mapping (or a value) removes the key, else recurse."""
    for key, value in tree.items():
        if key not in into:
            continue
        if isinstance(value, dict) and value and isinstance(into[key], dict):
            unset(into[key], value)
        else:
            del into[key]
    return into


def _copy(value: Any) -> Any:
    return {k: _copy(v) for k, v in value.items()} if isinstance(value, dict) else value


def applied(ops: list[Tree]) -> Tree:
    """The tree a list of operations leaves when applied to nothing."""
    tree: Tree = {}
    for op in ops:
        for verb, body in op.items():
            if verb == "set" and isinstance(body, dict):
                merge(tree, body)
            elif verb == "unset" and isinstance(body, dict):
                unset(tree, body)
            elif verb not in ("header", "set", "unset"):
                raise NvueYamlError(f"unknown operation {verb!r} (set, unset, header)")
    return tree
