"""YAML loading that remembers where every key came from, so errors can name a line."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from tasks.errors import InputError

PathPart = str | int


def load_yaml(path: Path, *, display: str | None = None) -> Any:
    """Parse one YAML file; syntax errors become an InputError naming file and line."""
    shown = display or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError.single(shown, "", "file not found") from None
    except OSError as exc:
        raise InputError.single(shown, "", f"cannot read: {exc.strerror}") from None
    yaml = YAML(typ="rt")
    try:
        return yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        reason = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise InputError.single(shown, "", f"malformed YAML: {reason}", line) from None
    except YAMLError as exc:
        raise InputError.single(shown, "", f"malformed YAML: {exc}") from None


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
