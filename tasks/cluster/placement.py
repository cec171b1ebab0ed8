"""What a scheduler topology means for placement, so two can be compared whatever their
switches are called: for every node, the nodes under its lowest switch (its block mates),
then the nodes one switch level up, two, and so on.

Two files that group and stack the nodes alike place jobs alike; a node whose mates differ
sits under another switch than it should, and a block that reaches other nodes a level up
hangs from other switches.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from flatfab.cluster.hostlist import natural
from flatfab.cluster.slurm import TopologyFile
from flatfab.cluster.tree import SchedulerTree


@dataclass(frozen=True)
class Placement:
    """Node -> (its block mates, the nodes within one switch level more, two, ...)."""

    reach: dict[str, tuple[frozenset[str], ...]]


def placement(leaf_nodes: Mapping[str, frozenset[str]],
              children: Mapping[str, frozenset[str]]) -> Placement:
    """The placement of a tree given as the nodes right under each lowest switch and the
    switches right under each other one."""
    parents: dict[str, set[str]] = {}
    for parent, kids in children.items():
        for kid in kids:
            parents.setdefault(kid, set()).add(parent)
    under: dict[str, frozenset[str]] = {}

    def nodes_under(switch: str, seen: frozenset[str] = frozenset()) -> frozenset[str]:
        if switch not in under:
            found = set(leaf_nodes.get(switch, frozenset()))
            for kid in children.get(switch, frozenset()):
                if kid not in seen:  # a loop is the file's fault, not a reason to hang
                    found |= nodes_under(kid, seen | {switch})
            under[switch] = frozenset(found)
        return under[switch]

    reach: dict[str, tuple[frozenset[str], ...]] = {}
    holders: dict[str, set[str]] = {}
    for switch, nodes in leaf_nodes.items():
        for node in nodes:
            holders.setdefault(node, set()).add(switch)
    for node, lowest in holders.items():
        levels: list[frozenset[str]] = []
        visited: set[str] = set()
        ring = lowest
        while ring and len(levels) < 16:
            visited |= ring
            levels.append(frozenset().union(*(nodes_under(s) for s in ring)))
            ring = {p for s in ring for p in parents.get(s, ())} - visited
        reach[node] = tuple(levels)
    return Placement(reach)


def of_tree(tree: SchedulerTree) -> Placement:
    return placement({b.name: frozenset(b.nodes) for b in tree.blocks},
                     {s.name: frozenset((*s.blocks, *s.switches)) for s in tree.switches})


def of_file(parsed: TopologyFile) -> Placement:
    return placement({s.name: s.nodes for s in parsed.switches.values() if s.nodes},
                     {s.name: s.switches for s in parsed.switches.values() if s.switches})


class Difference(StrEnum):
    MISSING = "missing"  # a planned node the topology does not place
    UNKNOWN = "unknown"  # a node the topology places that the plan does not know
    BLOCK = "block"  # the node shares its lowest switch with other nodes
    LEVEL = "level"  # a block reaches other nodes at a level above


@dataclass(frozen=True)
class Mismatch:
    kind: Difference
    node: str  # the node (for LEVEL: the first node of the expected block)
    level: int  # 0: the block; n: n switch levels above it
    expected: frozenset[str]
    actual: frozenset[str]


def compare(expected: Placement, actual: Placement) -> list[Mismatch]:
    """Where `actual` places nodes otherwise than `expected`: each node missing, unknown or in
    another block once, and each expected block whose reach differs once per level."""
    out: list[Mismatch] = []
    empty: frozenset[str] = frozenset()
    for node in sorted(expected.reach.keys() - actual.reach.keys(), key=natural):
        out.append(Mismatch(Difference.MISSING, node, 0, expected.reach[node][0], empty))
    for node in sorted(actual.reach.keys() - expected.reach.keys(), key=natural):
        out.append(Mismatch(Difference.UNKNOWN, node, 0, empty, actual.reach[node][0]))
    # judged on the nodes both know: a node missing or unknown is named once, not again in
    # every block or level it would change
    common = frozenset(expected.reach.keys() & actual.reach.keys())
    judged: set[frozenset[str]] = set()
    for node in sorted(common, key=natural):
        want = tuple(level & common for level in expected.reach[node])
        got = tuple(level & common for level in actual.reach[node])
        if want[0] != got[0]:
            out.append(Mismatch(Difference.BLOCK, node, 0, want[0], got[0]))
            continue
        if want[0] in judged:
            continue  # a block's levels are judged once, at its first node
        judged.add(want[0])
        for level in range(1, max(len(want), len(got))):
            mine = want[level] if level < len(want) else empty
            theirs = got[level] if level < len(got) else empty
            if mine != theirs:
                out.append(Mismatch(Difference.LEVEL, node, level, mine, theirs))
    return out
