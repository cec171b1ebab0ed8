"""DeviceState -> AVD `eos_cli_config_gen` structured config.

The structured config is the one input of the EOS render (tasks/platforms/eos/render.py)
and of the pyavd oracle in the tests, so both are provably built from the same data.
Key names follow the AVD schema, which rejects unknown keys.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from flatfab.errors import FlatfabError
from flatfab.model.state import (
    DEFAULT_VRF,
    BgpInstance,
    DeviceQos,
    DeviceState,
    IfKind,
    Interface,
    PortQos,
)
from flatfab.platforms.base import PlatformFacts
from flatfab.platforms.names import natural_key, sort_interfaces

PEER_GROUP = "FABRIC"
TRUST = {"dscp": "dscp", "pcp": "cos"}
# Trident's dynamic thresholds are powers of two: alpha 2^n for n in -7..3
ALPHAS = {-7: "1/128", -6: "1/64", -5: "1/32", -4: "1/16", -3: "1/8", -2: "1/4", -1: "1/2",
          0: "1", 1: "2", 2: "4", 3: "8"}
MMU_PROFILE = "flatfab"

StructuredConfig = dict[str, Any]


class EosRenderError(FlatfabError):
    """The device's plan cannot be written as EOS config (names the device and why)."""


def sets_buffers(qos: DeviceQos | None, facts: PlatformFacts) -> bool:
    """Whether the render carries buffer settings (Trident's `platform trident mmu`): the
    data file's families that cannot express them keep the switch's defaults. The load
    refuses what the data file says EOS cannot do (a family it does not run on, buffers on
    one of those), so the render relies on it and checks none of it again."""
    return qos is not None and "buffers" not in facts.capabilities.family_limits(
        qos.asic.family)


def capability_problems(device: DeviceState, facts: PlatformFacts) -> list[str]:
    """What of the device's plan EOS qos profiles cannot write, one sentence each (empty
    when fine): plan shapes the data file does not describe."""
    problems: list[str] = []
    if device.qos is not None and sets_buffers(device.qos, facts):
        problems += [f"{device.name}: {p}" for p in _mmu_problems(device.qos)]
    for iface in device.interfaces.values():
        if iface.qos is not None and iface.qos.trust not in TRUST:
            problems.append(f"{device.name}: {iface.name} trusts {iface.qos.trust!r}; EOS "
                            "qos profiles trust dscp or cos")
    return problems


def _mmu_problems(qos: DeviceQos) -> list[str]:
    problems = []
    for name, profile in sorted(qos.profiles.items()):
        if profile.static_th is not None or profile.dynamic_th is None:
            problems.append(f"buffer profile {name} has a static threshold; Trident MMU "
                            "thresholds are dynamic (alpha) only")
        elif profile.dynamic_th < min(ALPHAS):
            problems.append(f"buffer profile {name} has dynamic_th {profile.dynamic_th}; "
                            "Trident's smallest alpha is 2^-7")
    return problems


# ---- interfaces -------------------------------------------------------------------------

def _unnumbered(device: DeviceState) -> set[str]:
    return {p.interface for b in device.bgp.values() for p in b.peers.values()
            if p.interface is not None and p.address is None}


def _addressing(iface: Interface, unnumbered: set[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    v4 = [a for a in iface.addresses if ":" not in a]
    v6 = [a for a in iface.addresses if ":" in a]
    if v4:
        out["ip_address"] = v4[0]
        if len(v4) > 1:
            out["ip_address_secondaries"] = v4[1:]
    if v6 or iface.name in unnumbered:
        out["ipv6_enable"] = True
    if v6:
        out["ipv6_address"] = v6[0]
    return out


def _vlan_of(device: DeviceState, gateway: str) -> int:
    digits = gateway.removeprefix("Vlan")
    if not digits.isdigit():
        raise EosRenderError(f"{device.name}: host gateway {gateway!r} is not a Vlan<N> SVI")
    return int(digits)


def _ethernet(device: DeviceState, profiles: dict[str, str]) -> list[dict[str, Any]]:
    unnumbered = _unnumbered(device)
    out = []
    kinds = (IfKind.FABRIC, IfKind.HOST_PORT, IfKind.OTHER)
    ports = {i.name: i for i in device.interfaces.values()
             if i.kind in kinds and i.name.startswith("Ethernet")}
    for name in sort_interfaces(list(ports)):
        iface = ports[name]
        entry: dict[str, Any] = {"name": name}
        if iface.peer is not None:
            entry["description"] = f"{iface.peer.device}:{iface.peer.port}"
        if iface.up is False:
            entry["shutdown"] = True
        if iface.mtu is not None:
            entry["mtu"] = iface.mtu
        if iface.kind is IfKind.HOST_PORT and iface.bridge is not None:
            entry["switchport"] = {"enabled": True, "mode": "access",
                                   "access_vlan": _vlan_of(device, iface.bridge)}
        elif iface.parent is not None:
            entry["encapsulation_dot1q"] = {"vlan": int(name.rsplit(".", 1)[1])}
        else:
            entry["switchport"] = {"enabled": False}
        if iface.vrf != DEFAULT_VRF and iface.kind is not IfKind.HOST_PORT:
            entry["vrf"] = iface.vrf
        if iface.kind is not IfKind.HOST_PORT:
            entry |= _addressing(iface, unnumbered)
        if name in profiles:
            entry["service_profile"] = profiles[name]
        out.append(entry)
    return out


def _svis(device: DeviceState) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    vlans, svis = [], []
    unnumbered = _unnumbered(device)
    gateways = {i.name: i for i in device.interfaces.values() if i.kind is IfKind.BRIDGE}
    for name in sort_interfaces(list(gateways)):
        iface = gateways[name]
        vlan = _vlan_of(device, name)
        vlans.append({"id": vlan, "name": iface.vrf})
        svi: dict[str, Any] = {"name": name}
        if iface.vrf != DEFAULT_VRF:
            svi["vrf"] = iface.vrf
        if iface.mtu is not None:
            svi["mtu"] = iface.mtu
        svis.append(svi | _addressing(iface, unnumbered))
    return vlans, svis


# ---- lossless plane ---------------------------------------------------------------------

def _profile_body(qos: PortQos) -> dict[str, Any]:
    """The qos profile of a port: what EOS holds per port (maps are global, buffers MMU)."""
    body: dict[str, Any] = {"trust": TRUST[qos.trust]}
    if qos.pfc:
        pfc: dict[str, Any] = {"enabled": True,
                               "priorities": [{"priority": p, "no_drop": True}
                                              for p in sorted(qos.pfc)]}
        if qos.watchdog is not None:
            pfc["watchdog"] = {"enabled": True, "action": _watchdog_action(qos.watchdog.action)}
        body["priority_flow_control"] = pfc
    queues = []
    for tc in sorted(qos.queues):
        queue = qos.queues[tc]
        entry: dict[str, Any] = {"id": tc}
        if queue.strict:
            entry["priority"] = "priority strict"
        else:
            # EOS tx-queues are strict by default: every other queue leaves strict priority,
            # with its ETS share when it has one (none: it takes what the others leave)
            entry["priority"] = "no priority"
            if queue.weight is not None:
                entry["bandwidth_percent"] = queue.weight
        if queue.ecn is not None:
            entry["random_detect"] = {"ecn": {"threshold": {
                "units": "bytes", "min": queue.ecn.min_bytes, "max": queue.ecn.max_bytes,
                "max_probability": queue.ecn.probability}}}
        if len(entry) > 1:
            queues.append(entry)
    if queues:
        body["tx_queues"] = queues
    return body


def _watchdog_action(action: str | None) -> str:  # plans always set one
    return "notify-only" if action in {"notify", "alert", "notify-only"} else "drop"


def _profiles(device: DeviceState) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """One qos profile per distinct port body, named by its content (stable as ports come
    and go), and which profile each port takes."""
    bodies: dict[str, dict[str, Any]] = {}
    by_port: dict[str, str] = {}
    for iface in device.interfaces.values():
        if iface.qos is None or iface.parent is not None:
            continue
        if iface.qos.trust not in TRUST:
            raise EosRenderError(f"{device.name}: {iface.name} trusts {iface.qos.trust!r}; "
                                 "EOS qos profiles trust dscp or cos")
        body = _profile_body(iface.qos)
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:8]
        name = f"FLATFAB-{digest.upper()}"
        bodies[name] = body
        by_port[iface.name] = name
    return [{"name": n, **bodies[n]} for n in sorted(bodies)], by_port


def _dscp_map(device: DeviceState) -> list[str]:
    """Global DSCP -> TC lines; every port must agree, as EOS has one map per switch."""
    maps = {tuple(i.qos.maps.dscp_to_tc) for i in device.interfaces.values()
            if i.qos is not None}
    if not maps:
        return []
    if len(maps) > 1:
        raise EosRenderError(f"{device.name}: ports plan different DSCP maps; EOS has one "
                             "qos map per switch")
    table = next(iter(maps))
    by_tc: dict[int, list[int]] = {}
    for dscp, tc in enumerate(table):
        by_tc.setdefault(tc, []).append(dscp)
    lines = []
    for tc in sorted(by_tc):
        values = by_tc[tc]
        # EOS takes a bounded list of code points a line: eight is the safe size
        for start in range(0, len(values), 8):
            chunk = " ".join(str(v) for v in values[start:start + 8])
            lines.append(f"{chunk} to traffic-class {tc}")
    # AVD prints map lines in natural order: keep the config in the order it renders
    return sorted(lines, key=natural_key)


def _watchdog_timers(device: DeviceState) -> dict[str, Any] | None:
    dogs = {(w.detect_ms, w.restore_ms, w.poll_ms, w.action)
            for i in device.interfaces.values() if i.qos is not None
            for w in [i.qos.watchdog] if w is not None}
    if not dogs:
        return None
    if len(dogs) > 1:
        raise EosRenderError(f"{device.name}: ports plan different PFC watchdog timers; EOS "
                             "has one set per switch")
    detect, restore, poll, action = next(iter(dogs))
    return {"action": _watchdog_action(action), "timeout": _seconds(detect),
            "polling_interval": _seconds(poll), "recovery_time": _seconds(restore)}


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g}"


def _alpha(dynamic_th: int | None) -> str:
    # above 2^3 means "practically unlimited" (lossless egress): Trident's largest alpha
    return ALPHAS[min(dynamic_th or 0, max(ALPHAS))]


def _mmu(device: DeviceState, facts: PlatformFacts) -> dict[str, Any] | None:
    """Trident MMU: one switch-wide queue profile (EOS activates one), sized for the
    port with the largest planned headroom."""
    qos = device.qos
    problems = capability_problems(device, facts)
    if problems:
        raise EosRenderError("; ".join(problems))
    if qos is None or not sets_buffers(qos, facts):
        return None
    pgs: dict[int, tuple[int, str, int]] = {}  # pg -> (headroom, threshold, reserved)
    queues: dict[int, str] = {}
    for iface in device.interfaces.values():
        if iface.qos is None:
            continue
        for pg, name in iface.qos.pgs.items():
            ingress = qos.profiles[name]
            entry = (ingress.xoff, _alpha(ingress.dynamic_th), ingress.xon)
            pgs[pg] = max(pgs.get(pg, entry), entry)
        for tc, queue in iface.qos.queues.items():
            egress = qos.profiles[queue.profile]
            queues[tc] = _alpha(egress.dynamic_th)
    if not pgs and not queues:
        return None
    headroom = sum(h for h, _, _ in pgs.values())
    profile: dict[str, Any] = {"name": MMU_PROFILE, "ingress": {
        "headroom": {"unit": "bytes", "memory": headroom},
        "priority_groups": [{"id": pg, "threshold": pgs[pg][1],
                             "reserved": {"unit": "bytes", "memory": pgs[pg][2]}}
                            for pg in sorted(pgs)]}}
    if queues:
        profile["unicast_queues"] = [{"id": tc, "threshold": queues[tc]}
                                     for tc in sorted(queues)]
    return {"trident": {"mmu": {"active_profile": MMU_PROFILE, "queue_profiles": [profile]}}}


# ---- routing ----------------------------------------------------------------------------

def _bgp_peers(instance: BgpInstance) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    neighbors, interfaces = [], []
    for key in sorted(instance.peers):
        peer = instance.peers[key]
        remote = str(peer.remote_asn) if peer.remote_asn is not None else "external"
        entry: dict[str, Any] = {"peer_group": PEER_GROUP, "remote_as": remote}
        if peer.peer_device:
            entry["description"] = peer.peer_device
        if peer.address is not None:
            neighbors.append({"ip_address": peer.address, **entry})
        elif peer.interface is not None:
            interfaces.append({"name": peer.interface, **entry})
    # AVD prints neighbors in address order and interfaces in port order
    return (sorted(neighbors, key=lambda e: natural_key(e["ip_address"])),
            sorted(interfaces, key=lambda e: natural_key(e["name"])))


def _router_bgp(device: DeviceState) -> dict[str, Any] | None:
    default = device.bgp.get(DEFAULT_VRF)
    if default is None:
        return None
    if default.asn is None:
        raise EosRenderError(f"{device.name}: the default BGP instance has no AS number")
    bgp: dict[str, Any] = {"as": str(default.asn), "router_id": default.router_id}
    if default.keepalive is not None and default.hold is not None:
        bgp["timers"] = {"keepalive_time": default.keepalive, "hold_time": default.hold}
    if default.maximum_paths:
        bgp["maximum_paths"] = {"paths": default.maximum_paths,
                                "ecmp": default.maximum_paths}
    # AVD does not model multipath-relax: it passes as a raw default line
    bgp["bgp_defaults"] = ["bgp bestpath as-path multipath-relax"]
    # peer groups are global on EOS: the VRF sessions take the group's address family too
    bgp["peer_groups"] = [{"name": PEER_GROUP}]
    neighbors, interfaces = _bgp_peers(default)
    if neighbors:
        bgp["neighbors"] = neighbors
    if interfaces:
        bgp["neighbor_interfaces"] = interfaces
    group: dict[str, Any] = {"name": PEER_GROUP, "activate": True}
    if any(p.address is None for b in device.bgp.values() for p in b.peers.values()):
        # RFC 5549: IPv4 routes over the IPv6 link-local sessions
        group["next_hop"] = {"address_family_ipv6": {"enabled": True, "originate": True}}
    af: dict[str, Any] = {"peer_groups": [group]}
    if default.networks:
        af["networks"] = _networks(default.networks)
    bgp["address_family_ipv4"] = af
    vrfs = []
    for name in sorted(v for v in device.bgp if v != DEFAULT_VRF):
        vrf = _bgp_vrf(device.bgp[name])
        vrfs.append(vrf)
    if vrfs:
        bgp["vrfs"] = vrfs
    return bgp


def _networks(prefixes: list[str]) -> list[dict[str, str]]:
    return [{"prefix": n} for n in sorted(prefixes, key=natural_key)]


def _bgp_vrf(instance: BgpInstance) -> dict[str, Any]:
    vrf: dict[str, Any] = {"name": instance.vrf, "router_id": instance.router_id}
    if instance.maximum_paths:
        vrf["maximum_paths"] = {"paths": instance.maximum_paths,
                                "ecmp": instance.maximum_paths}
    neighbors, interfaces = _bgp_peers(instance)
    if neighbors:
        vrf["neighbors"] = neighbors
    if interfaces:
        vrf["neighbor_interfaces"] = interfaces
    if instance.networks:
        vrf["networks"] = _networks(instance.networks)
    return vrf


# ---- the whole device -------------------------------------------------------------------

def structured_config(device: DeviceState, facts: PlatformFacts) -> StructuredConfig:
    """The AVD structured config of one EOS switch (deterministic for the same state)."""
    unnumbered = bool(_unnumbered(device))
    profiles, by_port = _profiles(device)
    vlans, svis = _svis(device)
    sc: StructuredConfig = {"hostname": device.name, "ip_routing": True}
    if unnumbered:
        sc["ip_routing_ipv6_interfaces"] = True
        sc["ipv6_unicast_routing"] = True
    if device.vrfs:
        sc["vrfs"] = [{"name": v, "ip_routing": True, "ipv6_routing": unnumbered,
                       "ip_routing_ipv6_interfaces": unnumbered}
                      for v in sorted(device.vrfs)]
    if vlans:
        sc["vlans"] = vlans
    dscp = _dscp_map(device)
    if dscp:
        sc["qos"] = {"map": {"dscp": dscp}}
    if profiles:
        sc["qos_profiles"] = profiles
    timers = _watchdog_timers(device)
    if timers is not None:
        sc["priority_flow_control"] = {"watchdog": timers}
    mmu = _mmu(device, facts)
    if mmu is not None:
        sc["platform"] = mmu
    sc["ethernet_interfaces"] = _ethernet(device, by_port)
    loopbacks = [i for i in device.interfaces.values() if i.kind is IfKind.LOOPBACK]
    if loopbacks:
        sc["loopback_interfaces"] = [{"name": i.name, **_addressing(i, set())}
                                     for i in sorted(loopbacks, key=lambda i: i.name)]
    if svis:
        sc["vlan_interfaces"] = svis
    bgp = _router_bgp(device)
    if bgp is not None:
        sc["router_bgp"] = bgp
    return sc
