"""The pings verify sends: planned from the fabric state, pure and deterministic.

Hosts of one VRF are put on a ring of the leaves that carry it; each host pings the first
host of the next `fanout` leaves (small, then full MTU with don't-fragment), one peer on its
own leaf, and, of every other VRF, one host on its own leaf and one behind another leaf,
which must not answer (so every tenant pair is tried at every leaf). With the default fanout,
half the ring, every pair of leaves is covered in at least one direction, at O(hosts x
fanout) pings rather than O(hosts^2).
"""

from __future__ import annotations

import math

from tasks.model.state import DEFAULT_VRF, DeviceState, FabricState, Probe, Role

MAX_DEFAULT_FANOUT = 16
ICMP_IP_HEADERS = 28


def _address(host: DeviceState) -> str:
    return next(iter(host.interfaces.values())).addresses[0].split("/", 1)[0]


def plan_probes(state: FabricState, fanout: int | None = None) -> dict[str, list[Probe]]:
    hosts = state.of_role(Role.HOST)
    leaf_of = {h.name: next(iter(h.interfaces.values())).peer.device  # type: ignore[union-attr]
               for h in hosts}
    order = {d.name: i for i, d in enumerate(state.of_role(Role.LEAF))}
    # VRF -> leaf -> hosts on it, leaves in plan order
    rings: dict[str, dict[str, list[DeviceState]]] = {}
    for host in sorted(hosts, key=lambda h: order[leaf_of[h.name]]):
        rings.setdefault(host.tenant or DEFAULT_VRF, {}).setdefault(leaf_of[host.name],
                                                                    []).append(host)
    probes: dict[str, list[Probe]] = {}
    for host in hosts:
        vrf = host.tenant or DEFAULT_VRF
        leaves = list(rings[vrf])
        here = leaves.index(leaf_of[host.name])
        others = len(leaves) - 1
        reach = others if fanout == 0 else min(
            others, fanout if fanout is not None else
            min(math.ceil(others / 2), MAX_DEFAULT_FANOUT))
        mtu = next(iter(host.interfaces.values())).mtu or 1500
        mine: list[Probe] = []
        neighbours = [p for p in rings[vrf][leaves[here]] if p.name != host.name]
        if neighbours:
            mine.append(Probe(target=neighbours[0].name, address=_address(neighbours[0]),
                              size=56, dont_fragment=False, expect_reply=True))
        for step in range(1, reach + 1):
            peer = rings[vrf][leaves[(here + step) % len(leaves)]][0]
            mine.append(Probe(target=peer.name, address=_address(peer), size=56,
                              dont_fragment=False, expect_reply=True))
            mine.append(Probe(target=peer.name, address=_address(peer),
                              size=mtu - ICMP_IP_HEADERS, dont_fragment=True, expect_reply=True))
        for other_vrf, ring in rings.items():
            if other_vrf == vrf:
                continue
            # isolation from every host: a host of the other VRF on this very leaf (where
            # one gateway bridge serves both) and one behind a remote leaf, so every
            # (leaf, tenant, other tenant) is tried; tenant.leak judges every table
            beside = ring.get(leaf_of[host.name], [])[:1]
            remote = [hs[0] for leaf, hs in ring.items() if leaf != leaf_of[host.name]][:1]
            for peer in (*beside, *remote):
                mine.append(Probe(target=peer.name, address=_address(peer), size=56,
                                  dont_fragment=False, expect_reply=False))
        probes[host.name] = mine
    return probes
