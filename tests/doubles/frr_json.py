"""FRR's JSON of a switch in a converged fabric: `show bgp vrf all summary json` and `show ip
route vrf <vrf> json`, shaped like the recordings in tests/fixtures/frr/leaf1 (FRR 8.4 on the
embedded lab) and filled from the plan and its converged routes (tests/doubles/rib.py). FRR
runs inside SONiC too, so the sonic double prints the same shapes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from flatfab.model.state import DEFAULT_VRF, DeviceState
from tests.doubles.rib import Learned, connected, link_local, session_port

Rib = dict[str, dict[str, Learned]]


def bgp_summary(device: DeviceState, rib: Rib,
                frr_vrf: Callable[[str], str] = lambda vrf: vrf) -> dict[str, Any]:
    """Every VRF's IPv4 unicast summary: each planned session Established, with the prefixes
    received over its port."""
    summary: dict[str, Any] = {}
    for vrf, instance in device.bgp.items():
        received_on: dict[str, int] = {}
        for learned in rib.get(vrf, {}).values():
            for port in learned.ports:
                received_on[port] = received_on.get(port, 0) + 1
        peers = {}
        for key, peer in instance.peers.items():
            port = session_port(device, peer)
            peers[key] = {"hostname": peer.peer_device, "remoteAs": peer.remote_asn,
                          "localAs": instance.asn, "version": 4, "msgRcvd": 120,
                          "msgSent": 118, "tableVersion": 0, "outq": 0, "inq": 0,
                          "peerUptime": "00:10:02", "pfxRcd": received_on.get(port or "", 0),
                          "pfxSnt": len(rib.get(vrf, {})) + len(instance.networks),
                          "state": "Established", "peerState": "OK",
                          "connectionsEstablished": 1, "connectionsDropped": 0,
                          "idType": "interface" if peer.address is None else "ipv4"}
        summary[frr_vrf(vrf)] = {"ipv4Unicast": {
            "routerId": instance.router_id, "as": instance.asn, "vrfId": 0,
            "vrfName": frr_vrf(vrf), "tableVersion": 9, "ribCount": 9,
            "peerCount": len(peers), "peers": peers, "failedPeers": 0,
            "totalPeers": len(peers), "dynamicPeers": 0,
            "bestPath": {"multiPathRelax": "true"}}}
    return summary


def route_table(device: DeviceState, rib: Rib, vrf: str) -> dict[str, list[dict[str, Any]]]:
    """One VRF's routes: the device's connected subnets, then what it learned by BGP."""
    table: dict[str, list[dict[str, Any]]] = {}
    for prefix, port in sorted(connected(device).get(vrf, {}).items()):
        table[prefix] = [{"prefix": prefix, "protocol": "connected", "selected": True,
                          "installed": True, "distance": 0, "metric": 0,
                          "nexthops": [{"fib": True, "directlyConnected": True,
                                        "interfaceName": port, "active": True}]}]
    hops: dict[tuple[str, ...], list[dict[str, Any]]] = {}  # one list per ECMP group
    ids: dict[tuple[str, ...], int] = {}  # zebra's next-hop group id of each
    for prefix, learned in sorted(rib.get(vrf, {}).items()):
        group = hops.get(learned.ports)
        if group is None:
            group = hops[learned.ports] = [
                {"fib": True, "ip": link_local(port), "afi": "ipv6", "interfaceName": port,
                 "active": True} for port in learned.ports]
            ids[learned.ports] = 32 + 8 * len(ids)
        table.setdefault(prefix, [{"prefix": prefix, "protocol": "bgp", "selected": True,
                                   "installed": True, "distance": 20, "metric": 0,
                                   "nexthopGroupId": ids[learned.ports],
                                   "installedNexthopGroupId": ids[learned.ports],
                                   "nexthops": group}])
    return table


class RouteText:
    """`route_table` as FRR prints it (compact JSON), each learned route's entry written once
    for every switch that learns it the same way (a fleet's leaves print the same thousand
    entries): the fleet answers a leaf's RIB by joining them."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, Learned], str] = {}
        self._groups: dict[tuple[str, ...], int] = {}

    def table(self, device: DeviceState, rib: Rib, vrf: str) -> str:
        parts = [f"{json.dumps(prefix)}:{json.dumps(entry, separators=(',', ':'))}"
                 for prefix, entry in route_table(device, {}, vrf).items()]
        seen = set(connected(device).get(vrf, {}))
        for prefix, learned in sorted(rib.get(vrf, {}).items()):
            if prefix not in seen:
                parts.append(self._entry(prefix, learned))
        # a route per line and the closing brace alone, as vtysh's pretty print ends a table
        return "{\n" + ",\n".join(parts) + "\n}\n"

    def _entry(self, prefix: str, learned: Learned) -> str:
        text = self._entries.get((prefix, learned))
        if text is None:
            group = self._groups.setdefault(learned.ports, 32 + 8 * len(self._groups))
            entry = [{"prefix": prefix, "protocol": "bgp", "selected": True, "installed": True,
                      "distance": 20, "metric": 0, "nexthopGroupId": group,
                      "installedNexthopGroupId": group,
                      "nexthops": [{"fib": True, "ip": link_local(port), "afi": "ipv6",
                                    "interfaceName": port, "active": True}
                                   for port in learned.ports]}]
            text = self._entries[(prefix, learned)] = (
                f"{json.dumps(prefix)}:{json.dumps(entry, separators=(',', ':'))}")
        return text


def route_tables(device: DeviceState, rib: Rib,
                 frr_vrf: Callable[[str], str] = lambda vrf: vrf
                 ) -> dict[str, dict[str, list[dict[str, Any]]]]:
    return {frr_vrf(vrf): route_table(device, rib, vrf)
            for vrf in sorted({DEFAULT_VRF, *device.vrfs})}
