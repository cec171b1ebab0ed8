"""The fabric as a scheduler sees it: which compute nodes share their leaves, and the switches
above them, level by level.

A topology-aware scheduler (Slurm's topology/tree, Kueue's topology-aware scheduling) places
a job on the nodes under the lowest switch that holds them all; what it needs is which nodes
are one hop apart and which are two, three or four. flatfab's unit at the bottom is the
*block*: the nodes cabled to the same set of leaves. A single-homed host's block is its leaf;
a rail-optimized server's is its scalable unit (NIC k on the SU's rail-k leaf, so servers of
an SU talk over one leaf on every rail). Above the blocks come the real switches: a spine
over every block one of its leaves belongs to, a super-spine over its spines. A switch may
sit under several (every spine of a 3-stage fabric is above every leaf): Slurm takes a
switch with many parents.

The same tree comes from the plan (how the hosts are meant to be cabled) or from what LLDP
sees on the leaves' ports (how they are), so a scheduler's file can be judged against both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from flatfab.cluster.hostlist import natural
from flatfab.model.state import DeviceState, FabricState, LinkKind, Role

# a block's level; a switch's is its role's
LEVELS = {Role.LEAF: 0, Role.SPINE: 1, Role.SUPERSPINE: 2}


@dataclass(frozen=True)
class Block:
    """Compute nodes cabled to the same leaves: one hop apart on every rail."""

    name: str
    nodes: tuple[str, ...]
    leaves: tuple[str, ...]


@dataclass(frozen=True)
class TreeSwitch:
    """A real switch above the blocks, with what sits directly under it."""

    name: str
    level: int
    blocks: tuple[str, ...] = ()
    switches: tuple[str, ...] = ()


@dataclass(frozen=True)
class SchedulerTree:
    """Blocks at the bottom, switches above, each list in natural order."""

    fabric: str
    blocks: tuple[Block, ...]
    switches: tuple[TreeSwitch, ...]
    plane: int | None = None  # the tree of one plane's switches only
    # nodes whose leaves were not seen (live: a leaf unread, no LLDP neighbour), with why
    unseen: dict[str, str] = field(default_factory=dict)

    def block_of(self, node: str) -> Block | None:
        return next((b for b in self.blocks if node in b.nodes), None)

    @property
    def nodes(self) -> list[str]:
        return sorted((n for b in self.blocks for n in b.nodes), key=natural)


def compute_nodes(plan: FabricState) -> list[str]:
    """The hosts a scheduler places jobs on: every host but storage servers."""
    return sorted((n for n, d in plan.devices.items()
                   if d.role is Role.HOST and d.server_role != "storage"), key=natural)


def planned_leaves(plan: FabricState, plane: int | None = None) -> dict[str, set[str]]:
    """Node -> the leaves its NICs are planned on (of `plane`, where given)."""
    out: dict[str, set[str]] = {}
    for node in compute_nodes(plan):
        leaves = out.setdefault(node, set())
        for nic in plan.devices[node].interfaces.values():
            leaf = plan.devices.get(nic.peer.device) if nic.peer is not None else None
            if leaf is not None and leaf.role is Role.LEAF and _in(leaf, plane):
                leaves.add(leaf.name)
    return out


def seen_leaves(plan: FabricState, seen: Mapping[str, DeviceState],
                plane: int | None = None) -> tuple[dict[str, set[str]], dict[str, str]]:
    """Node -> the leaves whose ports LLDP sees it on; and the nodes that cannot be placed
    that way, with why: a planned leaf of theirs unread, or a planned leaf not hearing them
    while LLDP hears them on no leaf but their planned ones (a NIC unplugged, or a move
    heard at one end only: not yet known where it went)."""
    planned = planned_leaves(plan, plane)
    found: dict[str, set[str]] = {node: set() for node in planned}
    unheard: dict[str, str] = {}  # node -> where a planned port does not hear it
    unread: dict[str, str] = {}
    for leaf in (d for d in plan.devices.values() if d.role is Role.LEAF and _in(d, plane)):
        device = seen.get(leaf.name)
        if device is None or not device.reachable:
            for node in _planned_on(plan, leaf.name):
                unread.setdefault(node, f"{leaf.name} was not read")
            continue
        for iface in device.interfaces.values():
            if iface.peer is not None and iface.peer.device in found:
                found[iface.peer.device].add(leaf.name)
        for port, iface in leaf.interfaces.items():
            node = iface.peer.device if iface.peer is not None else ""
            read = device.interfaces.get(port)
            heard = read.peer if read is not None else None
            if node in found and (heard is None or heard.device != node):
                unheard.setdefault(node, f"LLDP hears {heard.device if heard else 'nothing'} "
                                   f"on {leaf.name}:{port}")
    unseen = {node: why for node, why in unread.items() if node in found}
    for node, leaves in found.items():
        if node in unseen:
            continue
        if not leaves:
            unseen[node] = unheard.get(node, "LLDP hears it on no leaf port")
        elif node in unheard and leaves <= planned[node]:
            unseen[node] = unheard[node]  # missing where planned, heard nowhere new
    return found, unseen


def _planned_on(plan: FabricState, leaf: str) -> list[str]:
    device = plan.devices[leaf]
    return [i.peer.device for i in device.interfaces.values()
            if i.peer is not None and i.peer.device in plan.devices
            and plan.devices[i.peer.device].role is Role.HOST]


def _in(device: DeviceState, plane: int | None) -> bool:
    return plane is None or device.plane == plane


def block_name(plan: FabricState, leaves: Iterable[str]) -> str:
    """A block's name: its leaf; the scalable unit of a rail-optimized block (`su3`); else its
    leaves joined."""
    names = sorted(leaves, key=natural)
    if len(names) == 1:
        return names[0]
    units = {plan.devices[n].su for n in names}
    if len(units) == 1 and None not in units:
        return f"su{units.pop()}"
    return "_".join(names)


def build(plan: FabricState, leaves_of: Mapping[str, set[str]], plane: int | None = None,
          unseen: Mapping[str, str] | None = None) -> SchedulerTree:
    """The tree of the given node -> leaves cabling, with the plan's switches above."""
    grouped: dict[frozenset[str], list[str]] = {}
    for node, leaves in leaves_of.items():
        if leaves:
            grouped.setdefault(frozenset(leaves), []).append(node)
    blocks = sorted((Block(name=block_name(plan, leaves),
                           nodes=tuple(sorted(nodes, key=natural)),
                           leaves=tuple(sorted(leaves, key=natural)))
                     for leaves, nodes in grouped.items()), key=lambda b: natural(b.name))
    return SchedulerTree(fabric=plan.fabric, blocks=tuple(blocks),
                         switches=_switches(plan, blocks, plane), plane=plane,
                         unseen=dict(unseen or {}))


def _switches(plan: FabricState, blocks: list[Block], plane: int | None
              ) -> tuple[TreeSwitch, ...]:
    """Every spine and super-spine (of `plane`) over what its downlinks reach."""
    below: dict[str, set[str]] = {}  # upper switch -> lower switches (planned fabric links)
    for link in plan.links:
        if link.kind is LinkKind.FABRIC and link.parent is None:
            below.setdefault(link.b.device, set()).add(link.a.device)
    out: list[TreeSwitch] = []
    # bottom up: a switch lists only what the tree holds (Slurm refuses an unknown child)
    for device in sorted(plan.devices.values(), key=lambda d: LEVELS.get(d.role, 0)):
        level = LEVELS.get(device.role, 0)
        if level == 0 or not _in(device, plane):
            continue
        under = below.get(device.name, set())
        if level == 1:
            held = tuple(b.name for b in blocks if under & set(b.leaves))
            if held:
                out.append(TreeSwitch(device.name, level, blocks=held))
            continue
        known = {s.name for s in out}
        lower = tuple(sorted(under & known, key=natural))
        if lower:
            out.append(TreeSwitch(device.name, level, switches=lower))
    return tuple(sorted(out, key=lambda s: (s.level, natural(s.name))))


def planned_tree(plan: FabricState, plane: int | None = None) -> SchedulerTree:
    return build(plan, planned_leaves(plan, plane), plane)


def seen_tree(plan: FabricState, seen: Mapping[str, DeviceState],
              plane: int | None = None) -> SchedulerTree:
    leaves, unseen = seen_leaves(plan, seen, plane)
    return build(plan, leaves, plane, unseen)
