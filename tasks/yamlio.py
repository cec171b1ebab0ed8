"""YAML loading that remembers where every key came from, so errors can name a line."""

from __future__ import annotations

import errno
import io
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from tasks.errors import InputError

PathPart = str | int


MAX_BYTES = 16 << 20  # an intent of the largest fabric is a few MB
MAX_DEPTH = 64  # no flatfab file nests deeper than a handful of levels
MAX_NODES = 2_000_000  # values once aliases are expanded (alias and merge-key bombs)
MAX_ALIASED = 10_000  # containers reached again through an alias
_BOMS = {b"\xff\xfe\x00\x00": "UTF-32", b"\x00\x00\xfe\xff": "UTF-32",
         b"\xff\xfe": "UTF-16", b"\xfe\xff": "UTF-16"}


def read_text_file(path: Path, shown: str) -> str:
    """A regular UTF-8 text file's content, or one InputError saying why not. A FIFO or
    device is refused without reading it (opened non-blocking, judged by fstat)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        why = (f"cannot read: dangling symbolic link (to {path.readlink()})"
               if path.is_symlink() else "file not found")
        raise InputError.single(shown, "", why) from None
    except OSError as exc:
        why = "symbolic link loop" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
        raise InputError.single(shown, "", f"cannot read: {why}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
        raise InputError.single(shown, "", f"is {kind}, not a file")
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise InputError.single(shown, "", f"is larger than {MAX_BYTES >> 20} MB")
    for bom, encoding in _BOMS.items():
        if data.startswith(bom):
            raise InputError.single(shown, "", f"is {encoding} text; flatfab reads UTF-8")
    if b"\x00" in data:
        raise InputError.single(shown, "", f"holds a NUL byte at offset {data.index(0)}: "
                                "binary, not text")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputError.single(shown, "", f"is not UTF-8 text (byte {data[exc.start]:#04x} "
                                f"at offset {exc.start})", line) from None


def _flow_depth(text: str) -> int:
    """Deepest [ / { nesting outside quotes and comments: checked before parsing, because
    the parser itself takes seconds to give up on thousands of levels."""
    depth = deepest = 0
    quote = ""
    comment = False
    for char in text:
        if comment:
            comment = char != "\n"
        elif quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "#":
            comment = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _bounded(doc: Any, shown: str) -> None:
    """Refuse documents nested too deep or that expand, through aliases, beyond reason:
    a container met a second time was reached through an alias."""
    seen: set[int] = set()
    nodes = repeated = 0
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if not isinstance(node, dict | list):
            continue
        if id(node) in seen:
            repeated += 1
        seen.add(id(node))
        if nodes > MAX_NODES or repeated > MAX_ALIASED:
            raise InputError.single(shown, "", "expands beyond reason through aliases (an "
                                    "alias or merge-key bomb?)")
        if depth > MAX_DEPTH:
            raise InputError.single(shown, "", f"nests deeper than {MAX_DEPTH} levels "
                                    "(or an alias refers to itself)")
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children)


def load_yaml(path: Path, *, display: str | None = None) -> Any:
    """Parse one YAML file; every way it can be unreadable becomes an InputError naming the
    file (and line, where there is one)."""
    shown = display or str(path)
    text = read_text_file(path, shown)
    if _flow_depth(text) > MAX_DEPTH:
        raise InputError.single(shown, "", f"nests deeper than {MAX_DEPTH} levels")
    yaml = YAML(typ="rt")
    try:
        doc = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        reason = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise InputError.single(shown, "", f"malformed YAML: {reason}", line) from None
    except YAMLError as exc:
        raise InputError.single(shown, "", f"malformed YAML: {exc}") from None
    except RecursionError:
        raise InputError.single(shown, "", f"nests deeper than {MAX_DEPTH} levels") from None
    _bounded(doc, shown)
    return doc


def format_path(parts: Sequence[PathPart]) -> str:
    """('spines', 1, 'name') -> 'spines[1].name'."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def line_of(doc: Any, parts: Sequence[PathPart]) -> int | None:
    """1-based line of the deepest node of `parts` that exists in `doc`."""
    line: int | None = None
    node = doc
    for part in parts:
        if isinstance(node, CommentedMap) and part in node:
            line = node.lc.key(part)[0] + 1
            node = node[part]
        elif isinstance(node, CommentedSeq) and isinstance(part, int) and 0 <= part < len(node):
            line = node.lc.item(part)[0] + 1
            node = node[part]
        else:
            break
    if line is None and isinstance(node, CommentedMap | CommentedSeq) and node.lc.line is not None:
        line = node.lc.line + 1
    return line


def dump_yaml(data: Any) -> str:
    """Deterministic block-style YAML for generated files."""
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    buf = io.StringIO()
    yaml.dump(data, buf)
    return buf.getvalue()
