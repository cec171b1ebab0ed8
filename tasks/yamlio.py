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
from ruamel.yaml.comments import CommentedMap, CommentedSeq, merge_attrib
from ruamel.yaml.composer import Composer
from ruamel.yaml.constructor import RoundTripConstructor, SafeConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, SequenceNode

from flatfab.errors import InputError

PathPart = str | int


MAX_BYTES = 16 << 20  # an intent of the largest fabric is a few MB
MAX_DEPTH = 64  # no flatfab file nests deeper than a handful of levels
MAX_NODES = 2_000_000  # values once aliases are expanded (alias and merge-key bombs)
MAX_ALIASED = 10_000  # containers reached again through an alias
# merge keys cost the parser time quadratic in their number (measured: 1000 merges of one
# anchor take a second, 3000 of a 1000-key mapping several minutes): bounded before building
MAX_MERGES = 1_000  # merge keys (<<) in one file
MAX_MERGED = 50_000  # values merge keys copy, over all of them
MERGE_TAG = "tag:yaml.org,2002:merge"
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
    try:
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise InputError.single(shown, "", f"cannot read: {exc.strerror or exc}") from None
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


class _RefusedError(Exception):
    """A composed document refused before it is built: why, and the line (1-based)."""

    def __init__(self, reason: str, line: int) -> None:
        super().__init__(reason)
        self.reason, self.line = reason, line


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1


def _merge_size(value: Node) -> int:
    """How many values one merge key copies: its mapping's, or its list of mappings'."""
    sources = value.value if isinstance(value, SequenceNode) else [value]
    return sum(len(s.value) for s in sources if isinstance(s, MappingNode))


def _too_many_merges(merges: int, merged: int, line: int) -> _RefusedError | None:
    if merges > MAX_MERGES or merged > MAX_MERGED:
        return _RefusedError(f"merges beyond reason (more than {MAX_MERGES} merge keys or "
                             f"{MAX_MERGED} merged values: a merge-key bomb?)", line)
    return None


class _CountingComposer(Composer):
    """Counts merge keys while it composes, so a merge-key flood is refused where it crosses
    the bounds, not after the whole file is parsed (parsing is most of a refusal's time)."""

    merges = merged = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        node = super().compose_node(parent, index)
        # `index` is the key node when `node` is a mapping value
        if isinstance(index, Node) and index.tag == MERGE_TAG:
            self.merges += 1
            self.merged += _merge_size(node)
            refused = _too_many_merges(self.merges, self.merged, _line(index))
            if refused is not None:
                raise refused
        return node


def _composed_bounds(root: Node) -> None:
    """Judge the composed node graph, where an alias is the very node it names, before the
    parser builds (and merges) it: the expanded size, merge keys and what they copy, keys
    that are not scalars, and nodes that contain themselves. Linear in the text."""
    size: dict[int, int] = {}
    merges = merged = 0
    on_path: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            children = _children(node)
            size[key] = min(1 + sum(size[id(c)] for c in children), MAX_NODES + 1)
            continue
        if key in size:
            continue
        if key in on_path:
            raise _RefusedError("an alias or merge key refers to the node that holds it",
                                _line(node))
        on_path.add(key)
        stack.append((node, True))
        if isinstance(node, MappingNode):
            for key_node, value_node in node.value:
                if key_node.tag == MERGE_TAG:
                    merges += 1
                    merged += _merge_size(value_node)
                    refused = _too_many_merges(merges, merged, _line(key_node))
                    if refused is not None:
                        raise refused
                elif isinstance(key_node, MappingNode | SequenceNode):
                    raise _RefusedError("a key is a mapping or a list; flatfab's keys are plain "
                                   "names", _line(key_node))
        stack.extend((child, False) for child in _children(node) if id(child) not in size)
    if size[id(root)] > MAX_NODES:
        raise _RefusedError("expands beyond reason through aliases (an alias or merge-key bomb?)",
                       _line(root))


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


class _Guarded(SafeConstructor):
    """Judges the composed document before it is built (RoundTripConstructor is a
    SafeConstructor too)."""

    def construct_document(self, node: Any) -> Any:
        _composed_bounds(node)
        return super().construct_document(node)


class _GuardedConstructor(_Guarded, RoundTripConstructor):
    """The round-trip constructor (line numbers), guarded."""


class _GuardedSafeConstructor(_Guarded):
    """Plain dicts and lists, guarded."""


def load_yaml(path: Path, *, display: str | None = None, lines: bool = True) -> Any:
    """Parse one YAML file; every way it can be unreadable becomes an InputError naming the
    file (and line, where there is one).

    `lines=False` builds plain dicts and lists with libyaml's parser (ruamel.yaml.clib) where
    it is installed: several times faster (a 10,000-host inventory), but `line_of` then
    finds no line; for a caller that reads again with lines to explain a problem.
    """
    shown = display or str(path)
    text = read_text_file(path, shown)
    if _flow_depth(text) > MAX_DEPTH:
        raise InputError.single(shown, "", f"nests deeper than {MAX_DEPTH} levels")
    yaml = YAML(typ="rt" if lines else "safe")
    yaml.Constructor = _GuardedConstructor if lines else _GuardedSafeConstructor
    if lines:  # libyaml's composer (safe) is C: its document is judged once composed
        yaml.Composer = _CountingComposer
    try:
        doc = yaml.load(text)
    except _RefusedError as exc:
        raise InputError.single(shown, "", exc.reason, exc.line) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        reason = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise InputError.single(shown, "", f"malformed YAML: {reason}", line) from None
    except YAMLError as exc:
        raise InputError.single(shown, "", f"malformed YAML: {exc}") from None
    except RecursionError:
        raise InputError.single(shown, "", f"nests deeper than {MAX_DEPTH} levels") from None
    except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
        # the parser's own failure on a shape the checks above did not foresee: still the
        # file's fault, never a traceback
        raise InputError.single(shown, "", f"cannot be read as YAML ({type(exc).__name__}: "
                                f"{exc})") from None
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
            line = _key_line(node, part)
            node = node[part]
        elif isinstance(node, CommentedSeq) and isinstance(part, int) and 0 <= part < len(node):
            line = node.lc.item(part)[0] + 1
            node = node[part]
        else:
            break
    if line is None and isinstance(node, CommentedMap | CommentedSeq) and node.lc.line is not None:
        line = node.lc.line + 1
    return line


def _key_line(node: CommentedMap, key: Any) -> int | None:
    """1-based line where `key` of `node` is written: in the mapping itself, or, for a key
    a merge (<<) brought in, in the mapping it was merged from."""
    if key in node.lc.data:
        return int(node.lc.key(key)[0]) + 1
    for merged in getattr(node, merge_attrib, []):
        if isinstance(merged, CommentedMap) and key in merged:
            return _key_line(merged, key)
    return node.lc.line + 1 if node.lc.line is not None else None


def dump_yaml(data: Any) -> str:
    """Deterministic block-style YAML for generated files."""
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    buf = io.StringIO()
    yaml.dump(data, buf)
    return buf.getvalue()


def roundtrip() -> YAML:
    """A YAML writer that edits a file in place: comments, key order, flow style and quotes
    survive (the layout flatfab's files use: lists indented two spaces under their key)."""
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 100
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def dump_roundtrip(doc: Any) -> str:
    """A document read with `roundtrip` (or `load_yaml`), written back in its own layout."""
    buf = io.StringIO()
    roundtrip().dump(doc, buf)
    return buf.getvalue()
