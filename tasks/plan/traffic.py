"""The flows `verify --traffic` sends, and where each must be seen: pure and deterministic.

Per tenant VRF, the hosts of the leaves carrying it form a ring; the first host of each leaf
sends to the first host of the next leaf, over enough UDP source ports that ECMP puts flows
on every spine. Each flow carries RoCEv2 data (UDP 4791) and one CNP (BTH opcode 0x81); the
sending host marks them (DSCP) and every hop must queue them in the profile's classes. The
expectations name the egress ports on the way: the source leaf's uplinks in the VRF, each
spine's downlink to the destination leaf, and the destination leaf's port to the host.
O(leaves x spines) ports, never O(host pairs x paths).
"""

from __future__ import annotations

from dataclasses import dataclass

from tasks.model.state import DEFAULT_VRF, FabricState, IfKind, Role

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


def plan_flows(state: FabricState) -> list[FlowGroup]:
    spines = len(state.of_role(Role.SPINE))
    groups: list[FlowGroup] = []
    leaf_order = [d.name for d in state.of_role(Role.LEAF)]
    by_vrf: dict[str, dict[str, str]] = {}  # vrf -> leaf -> first host
    for host in state.of_role(Role.HOST):
        nic = next(iter(host.interfaces.values()))
        if nic.peer is None:
            continue
        by_vrf.setdefault(host.tenant or DEFAULT_VRF, {}).setdefault(nic.peer.device, host.name)
    port = SOURCE_PORT_BASE
    for vrf in sorted(by_vrf):
        leaves = [leaf for leaf in leaf_order if leaf in by_vrf[vrf]]
        if len(leaves) < 2:
            continue
        for index, leaf in enumerate(leaves):
            nxt = leaves[(index + 1) % len(leaves)]
            source, target = by_vrf[vrf][leaf], by_vrf[vrf][nxt]
            address = next(iter(state.devices[target].interfaces.values())).addresses[0]
            flows = FLOWS_PER_SPINE * max(spines, 1)
            groups.append(FlowGroup(vrf=vrf, source=source, target=target,
                                    address=address.split("/")[0], source_leaf=leaf,
                                    target_leaf=nxt, flows=flows,
                                    data_packets=DATA_PACKETS_PER_FLOW, sport_base=port))
            port += flows
    return groups


def hops(state: FabricState, group: FlowGroup) -> list[Hop]:
    source_leaf = state.devices[group.source_leaf]
    uplinks = tuple(sorted(i.name for i in source_leaf.interfaces.values()
                           if i.kind is IfKind.FABRIC and i.vrf == group.vrf))
    result = [Hop(group.source_leaf, uplinks, "uplinks")]
    for iface in state.devices[group.target_leaf].interfaces.values():
        if iface.kind is IfKind.FABRIC and iface.vrf == group.vrf and iface.peer is not None:
            result.append(Hop(iface.peer.device, (iface.peer.port,), "spine"))
    host_port = next(iter(state.devices[group.target].interfaces.values())).peer
    if host_port is not None:
        result.append(Hop(host_port.device, (host_port.port,), "host-port"))
    return result
