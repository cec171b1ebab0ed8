"""The pings verify sends: planned from the fabric state, pure and deterministic.

Hosts of one VRF are put on a ring of the leaves that carry it; each host pings the first
host of the next `fanout` leaves (small, then full MTU with don't-fragment), the next host on
its own leaf, and, of every other VRF, one host on its own leaf and one behind another leaf,
which must not answer (so every tenant pair is tried at every leaf). A multi-NIC server
probes from each NIC (its own address, through its own NIC) on the ring of its plane, and
once into every other plane, which must not answer. With the default fanout,
half the ring, every pair of leaves is covered in at least one direction, at O(hosts x
fanout) pings rather than O(hosts^2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from flatfab.model.build import cloner
from flatfab.model.state import DEFAULT_VRF, DeviceState, FabricState, Interface, Probe, Role

# a fleet's hosts send a few hundred thousand probes: copies of one validated prototype
# (its values are plain names, addresses and numbers) take a third of the memory
_probe = cloner(Probe(target="", address="", size=0, dont_fragment=False, expect_reply=False))

MAX_DEFAULT_FANOUT = 16
ICMP_IP_HEADERS = 28


@dataclass(frozen=True)
class _End:
    """One probing endpoint: a host, or one NIC of a multi-NIC server (its own address,
    leaf and plane: each NIC is probed on its own)."""

    host: DeviceState
    nic: Interface
    leaf: str
    plane: int | None
    multi: bool

    @property
    def address(self) -> str:
        return self.nic.addresses[0].split("/", 1)[0]

    def probe(self, peer: _End, size: int, dont_fragment: bool, expect: bool) -> Probe:
        return _probe(target=peer.host.name, address=peer.address, size=size,
                      dont_fragment=dont_fragment, expect_reply=expect,
                      source=self.address if self.multi else None,
                      nic=self.nic.name if self.multi else None)


def _ends(state: FabricState) -> list[_End]:
    ends: list[_End] = []
    for host in state.of_role(Role.HOST):
        nics = [i for i in host.interfaces.values() if i.addresses and i.peer is not None]
        for nic in nics if len(nics) > 1 else nics[:1]:
            assert nic.peer is not None
            leaf = state.devices.get(nic.peer.device)
            ends.append(_End(host=host, nic=nic, leaf=nic.peer.device,
                             plane=leaf.plane if leaf is not None else None,
                             multi=len(nics) > 1))
    return ends


def plan_probes(state: FabricState, fanout: int | None = None) -> dict[str, list[Probe]]:
    order = {d.name: i for i, d in enumerate(state.of_role(Role.LEAF))}
    ends = _ends(state)
    # (VRF, plane) -> leaf -> endpoints on it, leaves in plan order: a NIC reaches only its
    # own plane, so each plane is a ring of its own
    rings: dict[tuple[str, int | None], dict[str, list[_End]]] = {}
    for end in sorted(ends, key=lambda e: order[e.leaf]):
        rings.setdefault((end.host.tenant or DEFAULT_VRF, end.plane), {}).setdefault(
            end.leaf, []).append(end)
    probes: dict[str, list[Probe]] = {}
    for end in ends:
        vrf = end.host.tenant or DEFAULT_VRF
        ring = rings[(vrf, end.plane)]
        leaves = list(ring)
        here = leaves.index(end.leaf)
        others = len(leaves) - 1
        reach = others if fanout == 0 else min(
            others, fanout if fanout is not None else
            min(math.ceil(others / 2), MAX_DEFAULT_FANOUT))
        mtu = end.nic.mtu or 1500
        mine = probes.setdefault(end.host.name, [])
        # the next endpoint on its own leaf (cyclic): every endpoint is someone's target
        beside = ring[leaves[here]]
        at = beside.index(end)
        neighbours = [p for p in beside[at + 1:] + beside[:at] if p.host.name != end.host.name]
        if neighbours:
            mine.append(end.probe(neighbours[0], 56, False, True))
        for step in range(1, reach + 1):
            # another server's NIC: a server's own other NIC is local, not across the fabric
            peer = next((p for p in ring[leaves[(here + step) % len(leaves)]]
                         if p.host.name != end.host.name), None)
            if peer is None:
                continue
            mine.append(end.probe(peer, 56, False, True))
            mine.append(end.probe(peer, mtu - ICMP_IP_HEADERS, True, True))
        for (other_vrf, plane), other in rings.items():
            if plane != end.plane or other_vrf == vrf:
                continue
            # isolation from every host: a host of the other VRF on this very leaf (where
            # one gateway bridge serves both) and one behind a remote leaf, so every
            # (leaf, tenant, other tenant) is tried; tenant.leak judges every table
            beside = other.get(end.leaf, [])[:1]
            remote = [hs[0] for leaf, hs in other.items() if leaf != end.leaf][:1]
            for peer in (*beside, *remote):
                mine.append(end.probe(peer, 56, False, False))
        # planes: the first endpoint of this VRF in every other plane must stay out of reach
        # (plane.independence judges these)
        for (other_vrf, plane), other in rings.items():
            if other_vrf == vrf and plane != end.plane:
                first = next((p for ps in other.values() for p in ps
                              if p.host.name != end.host.name), None)
                if first is not None:
                    mine.append(end.probe(first, 56, False, False))
    return probes
