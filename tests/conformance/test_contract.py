"""The fences around the platforms: layers above them that speak no platform's vocabulary,
and layers that import only downwards (every part of the package placed in one declared
order, none in a cycle).

What every platform must satisfy alike (facts, names, render, section split, read-only
guard, collect over recorded outputs, connection) is the importable suite
flatfab.testing.conformance, which flatfab's own platforms run in test_platforms.py and a
platform package of its own runs on itself. Per-platform suites (tests/platforms/<platform>/)
drive each driver against a stateful double of its device (tests/doubles/).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from flatfab.platforms.base import DeviceDriver, Platform
from flatfab.platforms.registry import PLATFORMS
from tests.conformance import layers

ROOT = Path(__file__).resolve().parents[2]
NEUTRAL_LAYERS = ("tasks/plan", "tasks/checks", "tasks/workflows", "tasks/lab", "tasks/reports",
                  "tasks/intent", "tasks/runbook", "tasks/sot", "tasks/catalog",
                  "tasks/distributed", "tasks/scaffold", "tasks/testing")


def _spellings(platform: Platform) -> list[str]:
    """The names that are one platform's own: its ports, loopback, gateways and VRFs (from
    its naming) and what its data file lists under `vocabulary`."""
    found = list(platform.facts.vocabulary)
    naming = platform.facts.naming
    if naming is not None:
        for pattern in (naming.physical, naming.gateway, naming.vrf):
            head = pattern.split("{", 1)[0]
            if head:
                found.append(re.escape(head) + r"\w*")
        found.append(re.escape(naming.loopback))
    return found


# spellings that belong to one platform's folder, never to the layers above it
VOCABULARY = re.compile("[\"'](" + "|".join(sorted({s for p in PLATFORMS.values()
                                                   for s in _spellings(p)})) + ")[\"']")


class _Recorder:
    """A device driver that records every call it gets."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            return {}
        return call


def test_a_double_satisfies_the_driver_protocol() -> None:
    assert isinstance(_Recorder(), DeviceDriver)


def _python_files(layer: str) -> list[Path]:
    return sorted((ROOT / layer).rglob("*.py"))


@pytest.mark.parametrize("layer", NEUTRAL_LAYERS)
def test_layers_above_the_platforms_speak_no_platform_vocabulary(layer: str) -> None:
    found = []
    for path in _python_files(layer):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if VOCABULARY.search(line.split("#", 1)[0]):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


def test_checks_never_import_the_planner() -> None:
    """A check that reuses the planner's helpers cannot catch the planner's bugs."""
    for path in _python_files("tasks/checks"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("flatfab.plan"), (path, node.module)


# The layers of the package (tasks/, imported as flatfab), bottom to top: a module imports only
# its own layer and the layers below it. Every folder and top-level module of tasks/ is in
# exactly one layer, so a new one is refused until it is placed. No import goes upwards.
LAYERS: tuple[tuple[str, ...], ...] = tuple(parts for parts, _ in layers.LAYERS)
RANK = {part: rank for rank, layer in enumerate(LAYERS) for part in layer}
APART = layers.APART
PACKAGE = ROOT / "tasks"


def _parts_on_disk() -> set[str]:
    """The folders of tasks/ that hold Python files, and its top-level modules."""
    return {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
            if (p.is_file() and p.suffix == ".py")
            or (p.is_dir() and p.name != "__pycache__" and any(p.rglob("*.py")))}


def _part_of(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _package_of(path: Path) -> str:
    """The dotted package a module of tasks/ is in (its relative imports start there)."""
    relative = path.relative_to(PACKAGE).with_suffix("")
    parts = ["flatfab", *relative.parts]
    return ".".join(parts[:-1])


def _imports(source: str, package: str = "flatfab") -> list[tuple[int, str]]:
    """(line, dotted name) of every module and module attribute the source imports, wherever
    the statement is: a function's lazy import counts, as does one under TYPE_CHECKING.
    Relative imports are resolved against `package`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            found += [(node.lineno, base)] + [(node.lineno, f"{base}.{a.name}")
                                               for a in node.names]
    return found


def _imported_part(dotted: str, parts: Collection[str]) -> str | None:
    """The part of the package a dotted name is in (None: not flatfab); a name of the
    package's own __init__ (`from flatfab import __version__`) is "__init__"."""
    head, _, rest = dotted.partition(".")
    if head != "flatfab":
        return None
    first = rest.split(".", 1)[0]
    return first if first in parts else "__init__"


@cache
def _part_imports() -> dict[tuple[str, str], list[str]]:
    """(importing part, imported part) -> where: every import between two parts of tasks/."""
    parts = _parts_on_disk()
    edges: dict[tuple[str, str], list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _part_of(path)
        seen: set[tuple[int, str]] = set()
        for line, dotted in _imports(path.read_text(encoding="utf-8"), _package_of(path)):
            target = _imported_part(dotted, parts)
            if target is not None and target != source and (line, target) not in seen:
                seen.add((line, target))  # a statement once, not once per name it imports
                edges.setdefault((source, target), []).append(
                    f"{path.relative_to(ROOT)}:{line}: {dotted}")
    return edges


def _cycles(edges: Collection[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan): every set of parts
    that import each other, directly or around a loop."""
    graph: dict[str, list[str]] = {}
    for source, target in sorted(edges):
        graph.setdefault(source, []).append(target)
        graph.setdefault(target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return sorted(found)


def test_every_part_of_the_package_has_a_layer() -> None:
    """A new folder (or top-level module) of tasks/ cannot escape the fence: it fails here
    until LAYERS places it; a part that is gone fails too, so the order stays the code's."""
    declared = [part for layer in LAYERS for part in layer]
    assert len(declared) == len(set(declared)), "a part is declared in two layers"
    on_disk = _parts_on_disk()
    assert not on_disk - set(declared), f"not in LAYERS: {sorted(on_disk - set(declared))}"
    assert not set(declared) - on_disk, f"in LAYERS, not in tasks/: " \
                                        f"{sorted(set(declared) - on_disk)}"
    assert set(APART) | {p for apart in APART.values() for p in apart} <= set(declared)


@pytest.mark.parametrize("part", sorted(RANK))
def test_layers_import_only_downwards(part: str) -> None:
    """A part imports only its own layer and those below it: a layer that imported one above
    it (the workflows and the source of truth once did, both ways; so did telemetry and the
    platforms) could not be tested or replaced on its own."""
    found = [f"{where} ({target} is {'above' if RANK[target] > RANK[part] else 'kept apart'})"
             for (source, target), wheres in sorted(_part_imports().items()) if source == part
             and (RANK.get(target, len(LAYERS)) > RANK[part] or target in APART.get(part, ()))
             for where in wheres]
    assert not found, "\n".join(found)


def _loop(component: list[str], edges: Collection[tuple[str, str]]) -> list[str]:
    """A shortest loop from the component's first part back to it, e.g. [a, b, a]."""
    start, inside = component[0], set(component)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for source, target in sorted(edges):
                if source != node or target not in inside:
                    continue
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if target not in came_from:
                    came_from[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"{component} is no loop")


def test_no_parts_import_each_other() -> None:
    """No cycle between the parts of tasks/, read from the actual imports (lazy ones too),
    whatever LAYERS says: two folders that import each other are one in disguise. Each loop
    is shown by one of its shortest cycles, with an import that makes each step, and by every
    pair in it that imports each other directly."""
    edges = _part_imports()
    found = []
    for component in _cycles(edges):
        loop = _loop(component, edges)
        found.append(f"{' -> '.join(loop)} (a loop among {', '.join(component)})")
        for source, target in pairwise(loop):
            wheres = edges[(source, target)]
            more = f" (+{len(wheres) - 1} more)" if len(wheres) > 1 else ""
            found.append(f"  {source} -> {target}: {wheres[0]}{more}")
        found += [f"  {a} <-> {b}: {edges[(a, b)][0]} and {edges[(b, a)][0]}"
                  for a in component for b in component if a < b and (b, a) in edges
                  and (a, b) in edges]
    assert not found, "\n".join(found)


WORKFLOWS = tuple(group for group, _ in layers.WORKFLOWS)


def test_the_workflows_are_grouped_and_import_only_downwards() -> None:
    """Every module of tasks/workflows/ is in one of its groups, and a group imports only its
    own and those below it (bookkeeping never calls a command)."""
    folder = PACKAGE / "workflows"
    loose = sorted(p.name for p in folder.glob("*.py") if p.name != "__init__.py")
    assert not loose, f"tasks/workflows/ modules in no group: {loose}"
    groups = {p.name for p in folder.iterdir() if p.is_dir() and any(p.glob("*.py"))}
    assert groups == set(WORKFLOWS), f"groups on disk {sorted(groups)}, declared {WORKFLOWS}"
    rank = {group: index for index, group in enumerate(WORKFLOWS)}
    found = []
    for path in sorted(folder.rglob("*.py")):
        source = path.relative_to(folder).parts[0]
        if source not in rank:
            continue
        for line, dotted in _imports(path.read_text(encoding="utf-8"), _package_of(path)):
            head, _, rest = dotted.partition("flatfab.workflows.")
            target = rest.split(".", 1)[0]
            if not head and target in rank and rank[target] > rank[source]:
                found.append(f"{path.relative_to(ROOT)}:{line}: {dotted} ({target} is above "
                             f"{source})")
    assert not found, "\n".join(found)


def test_the_layer_guards_see_what_they_guard() -> None:
    """The import reader sees lazy, TYPE_CHECKING and relative imports; the cycle finder
    finds a pair and a longer loop, and nothing in a chain."""
    source = ("from typing import TYPE_CHECKING\n"
              "if TYPE_CHECKING:\n    from flatfab.workflows import audit\n"
              "def f() -> None:\n    import flatfab.cli.app\n"
              "from ..model import state\n")
    found = {dotted for _, dotted in _imports(source, "flatfab.telemetry")}
    assert {"flatfab.workflows.audit", "flatfab.cli.app", "flatfab.model.state"} <= found
    parts = {"workflows", "cli", "model"}
    assert _imported_part("flatfab.workflows.commands.audit", parts) == "workflows"
    assert _imported_part("flatfab.__version__", parts) == "__init__"
    assert _imported_part("nornir.core", parts) is None
    assert _cycles([("a", "b"), ("b", "a"), ("c", "d"), ("d", "e"), ("e", "c"),
                    ("e", "f")]) == [["a", "b"], ["c", "d", "e"]]
    assert _cycles([("a", "b"), ("b", "c")]) == []
    assert _loop(["c", "d", "e"], [("c", "d"), ("d", "e"), ("e", "c"), ("d", "c")]) == \
        ["c", "d", "c"]
