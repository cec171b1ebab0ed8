"""nvueschema as an offline oracle for rendered NVUE trees.

nvueschema (generated pydantic models of NVUE's OpenAPI schema, one module per release)
ignores keys it does not model, so a tree it accepts may still hold keys NVUE refuses. The
oracle therefore validates and dumps the tree again: every key the dump lost is a key the
release does not know (or a part the models do not describe), and is reported by path.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

from pydantic import BaseModel, ValidationError

from flatfab.platforms.nvue.nvyaml import Tree


@cache
def model(module: str) -> type[BaseModel]:
    found: type[BaseModel] = importlib.import_module(f"nvueschema.models.{module}").NvueConfig
    return found


def lost(before: Any, after: Any, path: str = "") -> list[str]:
    """Paths of `before` whose key or value the round trip did not give back."""
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[str] = []
        for key, value in before.items():
            where = f"{path}/{key}"
            if key not in after:
                out.append(f"{where}: dropped")
            else:
                out.extend(lost(value, after[key], where))
        out.extend(f"{path}/{key}: added" for key in after if key not in before)
        return out
    if before != after or type(before) is not type(after):
        return [f"{path or '/'}: {before!r} came back as {after!r}"]
    return []


def violations(tree: Tree, module: str) -> list[str]:
    """What the release's schema refuses or does not model in the tree (empty: accepted)."""
    try:
        parsed = model(module).model_validate(tree)
    except ValidationError as exc:
        return [f"{'/'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
    return lost(tree, parsed.model_dump(by_alias=True, exclude_none=True, mode="json"))
