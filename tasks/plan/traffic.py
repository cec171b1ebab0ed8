"""The flows `verify --traffic` sends, and where each must be seen: pure and deterministic.

Per tenant VRF, the hosts of the leaves carrying it form a ring; the first host of each leaf
sends to the first host of the next leaf, over enough UDP source ports that ECMP puts flows
on every spine. Each flow carries RoCEv2 data (UDP 4791) and one CNP (BTH opcode 0x81); the
sending host marks them (DSCP) and every hop must queue them in the profile's classes. The
expectations name the egress ports on the way: the source leaf's uplinks in the VRF, each
spine's downlink to the destination leaf, and the destination leaf's port to the host; in a
5-stage fabric, between pods, also the source pod's spine uplinks and the super-spines'
ports into the target pod. A multi-NIC server sends from one NIC's address (each plane is a
ring of its own), rails add same-rail rings, and every storage NIC receives a flow.
O(leaves x spines) ports, never O(host pairs x paths).
"""

from __future__ import annotations

from dataclasses import dataclass

from flatfab.model.state import DEFAULT_VRF, FabricState, IfKind, Role

FLOWS_PER_SPINE = 16
DATA_PACKETS_PER_FLOW = 4
SOURCE_PORT_BASE = 49152


@dataclass(frozen=True)
class FlowGroup:
    vrf: str
    source: str  # host
    target: str  # host
    address: str  # target's address
    source_leaf: str
    target_leaf: str
    flows: int
    data_packets: int  # per flow
    sport_base: int
    source_address: str | None = None  # a multi-NIC server sends from this NIC's address
    source_nic: str | None = None
    target_nic: str | None = None

    @property
    def roce_packets(self) -> int:
        return self.flows * self.data_packets

    @property
    def cnp_packets(self) -> int:
        return self.flows


@dataclass(frozen=True)
class Hop:
    """Egress ports of one device that together must carry a flow group's packets."""

    device: str
    ports: tuple[str, ...]
    role: str  # "uplinks" (sum over the ports), "spine" (some), "host-port" (all)
    tier: int = 0  # the spine hops of one tier share the flows between them (ECMP)


@dataclass(frozen=True)
class _End:
    host: str
    nic: str
    address: str
    leaf: str
    plane: int | None
    rail: int | None
    storage: bool
    multi: bool


def _ends(state: FabricState) -> dict[tuple[str, int | None], dict[str, list[_End]]]:
    """(VRF, plane) -> leaf -> its endpoints (a host, or each NIC of a multi-NIC server),
    leaves in plan order."""
    order = {d.name: i for i, d in enumerate(state.of_role(Role.LEAF))}
    ends: list[_End] = []
    for host in state.of_role(Role.HOST):
        nics = [i for i in host.interfaces.values() if i.peer is not None and i.addresses]
        for nic in nics if len(nics) > 1 else nics[:1]:
            assert nic.peer is not None
            leaf = state.devices[nic.peer.device]
            ends.append(_End(host=host.name, nic=nic.name,
                             address=nic.addresses[0].split("/")[0], leaf=leaf.name,
                             plane=leaf.plane, rail=leaf.rail,
                             storage=host.server_role == "storage", multi=len(nics) > 1))
    rings: dict[tuple[str, int | None], dict[str, list[_End]]] = {}
    tenant = {h.name: h.tenant or DEFAULT_VRF for h in state.of_role(Role.HOST)}
    for end in sorted(ends, key=lambda e: order[e.leaf]):
        rings.setdefault((tenant[end.host], end.plane), {}).setdefault(end.leaf, []).append(end)
    return dict(sorted(rings.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)))


def _pairs(vrf: str, ring: dict[str, list[_End]]) -> list[tuple[str, _End, _End]]:
    leaves = list(ring)
    if len(leaves) < 2:
        return []
    pairs: list[tuple[str, _End, _End]] = []
    seen: set[tuple[str, str, str]] = set()

    def pair(source_leaf: str, target: _End) -> None:
        source = next((e for e in ring[source_leaf] if e.host != target.host
                       and not e.storage), None)
        if source is not None and (source.leaf, target.leaf, target.host) not in seen:
            seen.add((source.leaf, target.leaf, target.host))
            pairs.append((vrf, source, target))

    firsts = {leaf: next((e for e in ring[leaf] if not e.storage), ring[leaf][0])
              for leaf in leaves}
    for index, leaf in enumerate(leaves):
        pair(leaf, firsts[leaves[(index + 1) % len(leaves)]])
    by_rail: dict[int, list[str]] = {}
    for leaf in leaves:
        rail = ring[leaf][0].rail
        if rail is not None:
            by_rail.setdefault(rail, []).append(leaf)
    for rail_leaves in by_rail.values():
        if len(rail_leaves) > 1:
            for index, leaf in enumerate(rail_leaves):
                pair(leaf, firsts[rail_leaves[(index + 1) % len(rail_leaves)]])
    for index, leaf in enumerate(leaves):
        for end in ring[leaf]:
            if end.storage:
                pair(leaves[(index + 1) % len(leaves)], end)
    return pairs


def plan_flows(state: FabricState) -> list[FlowGroup]:
    """Per VRF (and plane) a ring of leaves, the first endpoint of each sending to the next
    leaf's; where leaves are rails, also a ring of each rail's leaves (same-rail traffic
    between SUs); and a flow into every storage NIC (GPU to storage)."""
    spines = len(state.of_role(Role.SPINE))
    groups: list[FlowGroup] = []
    port = SOURCE_PORT_BASE
    flows = FLOWS_PER_SPINE * max(spines, 1)
    pairs = [pair for (vrf, _), ring in _ends(state).items() for pair in _pairs(vrf, ring)]
    for vrf, source, target in pairs:
        groups.append(FlowGroup(
            vrf=vrf, source=source.host, target=target.host, address=target.address,
            source_leaf=source.leaf, target_leaf=target.leaf, flows=flows,
            data_packets=DATA_PACKETS_PER_FLOW, sport_base=port,
            source_address=source.address if source.multi else None,
            source_nic=source.nic if source.multi else None,
            target_nic=target.nic if target.multi else None))
        port += flows
    return groups


def hops(state: FabricState, group: FlowGroup) -> list[Hop]:
    """Source leaf uplinks; in a 5-stage fabric, between pods, the source pod's spine
    uplinks and the super-spines' ports into the target pod; then the target leaf's spines'
    ports to it and the target's host port."""
    devices = state.devices
    source_leaf = devices[group.source_leaf]
    target_leaf = devices[group.target_leaf]
    uplinks = tuple(sorted(i.name for i in source_leaf.interfaces.values()
                           if i.kind is IfKind.FABRIC and i.vrf == group.vrf))
    result = [Hop(group.source_leaf, uplinks, "uplinks")]
    if source_leaf.pod is not None and target_leaf.pod is not None \
            and source_leaf.pod != target_leaf.pod:
        result += _between_pods(state, group, source_leaf.pod, target_leaf.pod)
    for iface in target_leaf.interfaces.values():
        if iface.kind is IfKind.FABRIC and iface.vrf == group.vrf and iface.peer is not None:
            result.append(Hop(iface.peer.device, (iface.peer.port,), "spine", tier=3))
    target = devices[group.target].interfaces
    nic = target[group.target_nic] if group.target_nic else next(iter(target.values()))
    if nic.peer is not None:
        result.append(Hop(nic.peer.device, (nic.peer.port,), "host-port"))
    return result


def _between_pods(state: FabricState, group: FlowGroup, source_pod: int,
                  target_pod: int) -> list[Hop]:
    devices = state.devices
    plane = devices[group.source_leaf].plane
    out: list[Hop] = []
    for spine in state.of_role(Role.SPINE):
        if spine.pod != source_pod or spine.plane != plane:
            continue
        ports = tuple(sorted(
            i.name for i in spine.interfaces.values()
            if i.kind is IfKind.FABRIC and i.vrf == group.vrf and i.peer is not None
            and devices[i.peer.device].role is Role.SUPERSPINE))
        if ports:
            out.append(Hop(spine.name, ports, "spine", tier=1))
    for top in state.of_role(Role.SUPERSPINE):
        if top.plane != plane:
            continue
        ports = tuple(sorted(
            i.name for i in top.interfaces.values()
            if i.kind is IfKind.FABRIC and i.vrf == group.vrf and i.peer is not None
            and devices[i.peer.device].pod == target_pod))
        if ports:
            out.append(Hop(top.name, ports, "spine", tier=2))
    return out
