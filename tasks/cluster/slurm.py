"""Slurm's topology.conf for `TopologyPlugin=topology/tree`, written from a scheduler tree and
read back.

The file (topology.conf(5)) is one `SwitchName=` line per switch with the nodes directly under
it (`Nodes=`, a host list) or the switches (`Switches=`); Slurm derives each switch's level
from that, and places a job under the lowest switch that holds all its nodes. flatfab writes
the blocks as the lowest switches (named after their leaf, or their scalable unit), the
spines and super-spines above them by their own names, and the leaves a block stands for as a
comment above it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from flatfab.cluster.hostlist import HostlistError, compress, expand, natural
from flatfab.cluster.tree import SchedulerTree

_KEYS = ("switchname", "nodes", "switches", "linkspeed")
_PAIR = re.compile(r"(\w+)=(\S+)")


class TopologyFileError(ValueError):
    """A topology.conf that Slurm would not read, or not as flatfab would mean it."""


def render(tree: SchedulerTree) -> str:
    """topology.conf text of the tree: deterministic, a header naming the fabric."""
    scope = f", plane {tree.plane}" if tree.plane is not None else ""
    lines = [f"# Slurm topology (TopologyPlugin=topology/tree) of fabric {tree.fabric}{scope}",
             "# written by flatfab from its plan: `flatfab cluster topology`; a block is the",
             "# nodes cabled to the same leaves (a leaf, or a scalable unit's rail leaves)"]
    for block in tree.blocks:
        if block.leaves != (block.name,):
            lines.append(f"# {block.name}: {' '.join(block.leaves)}")
        lines.append(f"SwitchName={block.name} Nodes={compress(block.nodes)}")
    for switch in tree.switches:
        lines.append(f"SwitchName={switch.name} "
                     f"Switches={compress((*switch.blocks, *switch.switches))}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class FileSwitch:
    name: str
    line: int
    nodes: frozenset[str] = frozenset()
    switches: frozenset[str] = frozenset()


@dataclass
class TopologyFile:
    """A parsed topology.conf: its switches by name, in the file's order."""

    switches: dict[str, FileSwitch] = field(default_factory=dict)

    @property
    def nodes(self) -> set[str]:
        return {n for s in self.switches.values() for n in s.nodes}

    def parents(self) -> dict[str, set[str]]:
        """Switch -> the switches that list it."""
        out: dict[str, set[str]] = {name: set() for name in self.switches}
        for switch in self.switches.values():
            for child in switch.switches:
                out.setdefault(child, set()).add(switch.name)
        return out


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each line, comments dropped and `\\` continuations
    joined, as Slurm's configuration parser reads them."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        body = raw.split("#", 1)[0].rstrip()
        if not pending:
            start = number
        if body.endswith("\\"):
            pending += body[:-1] + " "
            continue
        whole = (pending + body).strip()
        pending = ""
        if whole:
            out.append((start, whole))
    if pending.strip():
        out.append((start, pending.strip()))
    return out


def parse(text: str) -> TopologyFile:
    """The switches of a topology.conf; an error names the line and the reason."""
    parsed = TopologyFile()
    for number, line in _logical_lines(text):
        where = f"line {number}"
        pairs = _PAIR.findall(line)
        if not pairs or " ".join(f"{k}={v}" for k, v in pairs) != " ".join(line.split()):
            raise TopologyFileError(f"{where}: not a list of Key=Value: {line!r}")
        values: dict[str, str] = {}
        for key, value in pairs:
            lowered = key.lower()
            if lowered not in _KEYS:
                raise TopologyFileError(f"{where}: unknown key {key!r} (topology/tree takes "
                                        "SwitchName, Nodes, Switches, LinkSpeed)")
            values[lowered] = value
        name = values.get("switchname")
        if name is None:
            raise TopologyFileError(f"{where}: a line without SwitchName")
        if name in parsed.switches:
            raise TopologyFileError(f"{where}: switch {name} is listed twice (first on line "
                                    f"{parsed.switches[name].line})")
        try:
            nodes = frozenset(expand(values.get("nodes", "")))
            switches = frozenset(expand(values.get("switches", "")))
        except HostlistError as error:
            raise TopologyFileError(f"{where}: {error}") from None
        parsed.switches[name] = FileSwitch(name, number, nodes, switches)
    for switch in parsed.switches.values():
        unknown = sorted(switch.switches - parsed.switches.keys(), key=natural)
        if unknown:
            raise TopologyFileError(f"line {switch.line}: switch {switch.name} lists "
                                    f"{unknown[0]}, which no SwitchName line defines")
    return parsed
