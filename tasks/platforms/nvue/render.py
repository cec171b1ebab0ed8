"""DeviceState -> NVUE's declarative config: an `nv config patch` document.

The render is a YAML list of `set` operations, one per top-level NVUE object (system,
interface, bridge, router, vrf, qos): each operation is one section, so the file is both the
input of `nv config patch` and its own section split. Sources (NVIDIA docs, Cumulus Linux
5.x user guide): "NVUE CLI" / "NVUE API" (set/unset documents), "Interface Configuration",
"Border Gateway Protocol - BGP" (unnumbered neighbours), "Virtual Routing and Forwarding",
"Ethernet Bridging - VLAN-aware Mode" (br_default, SVIs named vlan<N>), "Quality of Service"
and its "RDMA over Converged Ethernet - RoCE" page (qos mapping/pfc/congestion-control/
egress-scheduler/traffic-pool/pfc-watchdog), "Equal Cost Multipath Load Sharing" and the NVUE
command reference's "System Forwarding" (system forwarding ecmp-hash, hash-seed); packet
trimming from the user guide's "Packet Trimming" page (5.14-5.18) and the NVUE reference's
"Packet Trimming" set commands, keys and value types from nvueschema v5_14..v5_18; adaptive
routing from the user guide's "Adaptive Routing" page and the NVUE reference's "Adaptive
Routing" set/show commands (`router adaptive-routing state`, `interface <id> router
adaptive-routing state`; not on sub-interfaces, SVIs, bonds or bond members), keys and value
types from nvueschema v5_6..v5_18 (`/router/adaptive-routing`,
`/interface/{interface-id}/router/adaptive-routing`).

Releases: the tree is spelled for one release line (see RELEASES). Cumulus Linux 5.15
renamed booleans (on/off -> enabled/disabled, `enable` -> `state`) and moved interface
addressing (`ip.address`/`ip.vrf` -> `ipv4.address` and `vrf`), so a 5.14 tree is refused
by 5.15 and the reverse; flatfab renders 5.15-5.18 (TARGET) and can spell 5.x up to 5.14.
Packet trimming came in 5.14: the 5.14 line (5.6-5.14) refuses it, one line naming why.

Not `nv set qos roce`: the one-knob mode fixes DSCP 26/48, TC 3/6, ECN 150/1500 KB and
NVIDIA's buffer split, and regenerates them per Spectrum generation; flatfab's plan sets
each of these per fabric (and checks them against hosts and peers of other vendors), so
every knob is written out explicitly and nothing is left to the one-knob expansion.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from flatfab.errors import FlatfabError
from flatfab.model.state import (
    DEFAULT_VRF,
    TRIM,
    BgpInstance,
    DeviceState,
    HashField,
    IfKind,
    Interface,
    LbMode,
    LoadBalancing,
    PortQos,
)
from flatfab.platforms.base import InterfaceNames, NotSupportedError
from flatfab.platforms.names import natural_key, sort_interfaces
from flatfab.platforms.nvue.nvyaml import Tree, dump

SECTIONS = ("system", "interface", "bridge", "router", "vrf", "qos")
BRIDGE = "br_default"  # NVUE's default VLAN-aware bridge
GLOBAL = "default-global"  # NVUE's profile that applies to every port without a binding
LOSSLESS_POOL = "roce-lossless"
LOSSY_POOL = "default-lossy"
SPEEDS = {10_000: "10G", 25_000: "25G", 40_000: "40G", 50_000: "50G", 100_000: "100G",
          200_000: "200G", 400_000: "400G", 800_000: "800G"}
_VLAN = re.compile(r"(\d+)$")
# `system forwarding ecmp-hash`: NVUE's key of each field flatfab hashes on (nvueschema
# NvueConfigSystemForwardingEcmpHash, 5.2-5.18), and the fields NVUE has beyond flatfab's
# (ingress port, GTP TEID, inner headers): rendered disabled, so the hash reads the
# intent's fields and nothing a default or an operator added
HASH_KEYS = {HashField.SRC_IP: "source-ip", HashField.DST_IP: "destination-ip",
             HashField.PROTOCOL: "ip-protocol", HashField.FLOW_LABEL: "ipv6-label",
             HashField.SRC_PORT: "source-port", HashField.DST_PORT: "destination-port"}
OTHER_HASH_KEYS = ("gtp-teid", "ingress-interface", "inner-destination-ip",
                   "inner-destination-port", "inner-ip-protocol", "inner-ipv6-label",
                   "inner-source-ip", "inner-source-port")
PACKET_TRIM = "packet-trim"  # under `system forwarding` and under each interface
PORT_LEVEL = "port-level"  # `remark dscp`: each port's remark profile gives the DSCP
TRIM_SIZE_STEP = 4  # NVUE takes a trim size of 256-1024 bytes in steps of 4 (user guide)
ADAPTIVE = "adaptive-routing"  # under `router` (the switch's) and each interface's `router`


@dataclass(frozen=True)
class Release:
    """How one Cumulus Linux release line spells the tree."""

    line: str
    models: tuple[str, ...]  # nvueschema modules of the releases the spelling is valid for
    on: str
    off: str
    switch: str  # the key that turns a feature on: `enable` (<=5.14) or `state` (5.15+)
    split_ip: bool  # 5.15+: interface ipv4.address and vrf (not ip.address, ip.vrf)
    # every release of the line has `system forwarding packet-trim` (nvueschema: 5.14+)
    trims: bool = False


RELEASES = {
    "5.14": Release("5.14", ("v5_6", "v5_7", "v5_8", "v5_9", "v5_10", "v5_11", "v5_12",
                             "v5_13", "v5_14"), "on", "off", "enable", False),
    "5.15": Release("5.15", ("v5_15", "v5_16", "v5_17", "v5_18"), "enabled", "disabled",
                    "state", True, trims=True),
}
TARGET = RELEASES["5.15"]


class NvueRenderError(FlatfabError, NotSupportedError):
    """The plan asks for something NVUE cannot express (one line, naming the device)."""


def vlan_of(name: str) -> int:
    found = _VLAN.search(name.rpartition(".")[2] if "." in name else name)
    if found is None:
        raise NvueRenderError(f"{name!r} carries no VLAN id")
    return int(found.group(1))


def speed(mbps: int) -> str:
    if mbps not in SPEEDS:
        raise NvueRenderError(f"NVUE has no link speed for {mbps} Mb/s "
                              f"({', '.join(SPEEDS.values())})")
    return SPEEDS[mbps]


def _addresses(tree: Tree, addresses: list[str], vrf: str | None, rel: Release) -> None:
    where: Tree = tree if rel.split_ip else tree.setdefault("ip", {})
    if addresses:
        family: Tree = where.setdefault("ipv4", {}) if rel.split_ip else where
        family["address"] = {a: {} for a in addresses}
    if vrf is not None:
        where["vrf"] = vrf


def _link(iface: Interface, physical: bool) -> Tree:
    link: Tree = {}
    if iface.mtu:
        link["mtu"] = iface.mtu
    if physical and iface.speed_mbps:
        link["speed"] = speed(iface.speed_mbps)
    link["state"] = {"down" if iface.up is False else "up": {}}
    return link


# ---- lossless plane -----------------------------------------------------------------------


def _key(value: Tree) -> str:
    return json.dumps(value, sort_keys=True)


def _name(kind: str, value: Tree) -> str:
    return f"flatfab-{kind}-{hashlib.sha1(_key(value).encode()).hexdigest()[:6]}"


def _mapping(q: PortQos) -> Tree:
    trust = {"dscp": "l3", "pcp": "l2"}.get(q.trust)
    if trust is None:
        raise NvueRenderError(f"NVUE trusts l2 (pcp) or l3 (dscp), not {q.trust!r}")
    return {"trust": trust, "dscp": {str(d): {"switch-priority": tc}
                                     for d, tc in enumerate(q.maps.dscp_to_tc)}}


def _congestion(q: PortQos) -> Tree:
    classes: Tree = {}
    for queue, qq in sorted(q.queues.items()):
        if qq.ecn is not None:
            classes[str(queue)] = {"ecn": "enable", "red": "disable",
                                   "min-threshold": qq.ecn.min_bytes,
                                   "max-threshold": qq.ecn.max_bytes,
                                   "probability": qq.ecn.probability}
    return {"traffic-class": classes}


def _scheduler(q: PortQos) -> Tree:
    # an unweighted class gets bw-percent 0: NVUE's way of "no ETS share"
    return {"traffic-class": {str(queue): {"mode": "strict"} if qq.strict else
                              {"mode": "dwrr", "bw-percent": qq.weight or 0}
                              for queue, qq in sorted(q.queues.items())}}


def _check_maps(name: str, q: PortQos) -> None:
    """What NVUE derives itself: a PFC priority's PG and paused queue are its own class."""
    m = q.maps
    for p in q.pfc:
        tc = p  # switch priority p is flatfab TC p (DSCP -> switch-priority is DSCP -> TC)
        if m.pfc_to_pg[p] != m.tc_to_pg[tc] or m.pfc_to_queue[p] != m.tc_to_queue[tc]:
            raise NvueRenderError(f"{name}: NVUE pauses switch priority {p} on its own class; "
                                  "PFC-to-PG/queue maps other than the class's own are not "
                                  "expressible")
    lossless = {m.tc_to_pg[p] for p in q.pfc}
    for tc, pg in enumerate(m.tc_to_pg):
        if (tc in q.pfc) != (pg in lossless and pg != 0):
            raise NvueRenderError(f"{name}: NVUE gives every PFC priority a lossless group "
                                  "and every other priority the lossy one; this TC-to-PG map "
                                  "is not expressible")


def _pfc(name: str, q: PortQos, device: DeviceState) -> tuple[str, Tree]:
    profiles = sorted({q.pgs[q.maps.pfc_to_pg[p]] for p in q.pfc if q.maps.pfc_to_pg[p] in q.pgs})
    if len(profiles) != 1:
        raise NvueRenderError(f"{name}: an NVUE PFC profile has one headroom for all its "
                              f"priorities; the plan gives {profiles or 'none'}")
    if device.qos is None or profiles[0] not in device.qos.profiles:
        raise NvueRenderError(f"{name}: buffer profile {profiles[0]!r} is not in the plan")
    profile = device.qos.profiles[profiles[0]]
    tree: Tree = {"switch-priority": {str(p): {} for p in q.pfc},
                  "cable-length": max(1, math.ceil(q.cable_m)),
                  "tx": "enable", "rx": "enable"}
    if profile.size:
        tree["port-buffer"] = profile.size
    if profile.xoff:
        tree["xoff-threshold"] = profile.xoff
    if profile.xon:
        tree["xon-threshold"] = profile.xon
    return profiles[0], tree


def _shared(kind: str, per_port: dict[str, Tree], qos: Tree,
            interfaces: dict[str, Tree]) -> None:
    """The most common variant is NVUE's default-global; ports that differ get a named
    profile bound to them."""
    if not per_port:
        return
    counts = Counter(_key(v) for v in per_port.values())
    common = min(counts, key=lambda k: (-counts[k], k))
    profiles: Tree = {GLOBAL: json.loads(common)}
    for port, value in per_port.items():
        if _key(value) != common:
            name = _name(kind, value)
            profiles[name] = value
            interfaces[port].setdefault("qos", {})[kind] = {"profile": name}
    qos[kind] = dict(sorted(profiles.items()))


def _one(kind: str, values: dict[str, Any]) -> Any:
    distinct = {_key(v) if isinstance(v, dict) else json.dumps(v) for v in values.values()}
    if len(distinct) > 1:
        raise NvueRenderError(f"NVUE sets {kind} once per switch; the plan gives its ports "
                              f"{len(distinct)} different ones")
    return next(iter(values.values()))


def _ports(device: DeviceState) -> dict[str, PortQos]:
    """The physical ports with a lossless state (sub-interfaces share their port's)."""
    return {n: i.qos for n, i in device.interfaces.items()
            if i.qos is not None and i.parent is None}


def _qos(device: DeviceState, interfaces: dict[str, Tree]) -> Tree:
    ports = _ports(device)
    if not ports or device.qos is None:
        return {}
    qos: Tree = {}
    ordered = sort_interfaces(list(ports))
    for name in ordered:
        _check_maps(name, ports[name])
    _shared("mapping", {n: _mapping(ports[n]) for n in ordered}, qos, interfaces)
    tc_to_queue = _one("the switch-priority to traffic-class map",
                       {n: ports[n].maps.tc_to_queue for n in ordered})
    qos["egress-queue-mapping"] = {GLOBAL: {"switch-priority": {
        str(sp): {"traffic-class": tc} for sp, tc in enumerate(tc_to_queue)}}}
    pfc_profiles: Tree = {}
    for name in ordered:
        if ports[name].pfc:
            profile, tree = _pfc(name, ports[name], device)
            if pfc_profiles.setdefault(profile, tree) != tree:
                raise NvueRenderError(f"{name}: PFC profile {profile!r} differs between ports "
                                      "(cable length or priorities)")
            interfaces[name].setdefault("qos", {})["pfc"] = {"profile": profile}
    if pfc_profiles:
        qos["pfc"] = dict(sorted(pfc_profiles.items()))
    _shared("congestion-control", {n: _congestion(ports[n]) for n in ordered
                                   if any(q.ecn for q in ports[n].queues.values())},
            qos, interfaces)
    _shared("egress-scheduler", {n: _scheduler(ports[n]) for n in ordered}, qos, interfaces)
    watched = {n: ports[n].watchdog for n in ordered if ports[n].watchdog is not None}
    if watched:
        # it drops: the load refuses another action (the data file's capabilities)
        dog = _one("the PFC watchdog", {n: w.model_dump() for n, w in watched.items() if w})
        if dog["detect_ms"] % dog["poll_ms"]:
            raise NvueRenderError(f"NVUE detects a storm after whole polls: detect_ms "
                                  f"{dog['detect_ms']} is not a multiple of poll_ms "
                                  f"{dog['poll_ms']}")
        # detection = polling-interval x robustness (polls in a row that see the stall)
        qos["pfc-watchdog"] = {"polling-interval": dog["poll_ms"],
                               "robustness": dog["detect_ms"] // dog["poll_ms"]}
        for name in watched:
            interfaces[name].setdefault("qos", {})["pfc-watchdog"] = {"state": "enable"}
    qos["traffic-pool"] = _pools(device, ports)
    return qos


def _pools(device: DeviceState, ports: dict[str, PortQos]) -> Tree:
    """Ingress pools as NVUE traffic pools: a percent of the ASIC's buffer each."""
    assert device.qos is not None
    total = device.qos.asic.buffer_bytes
    lossless = sorted({p for q in ports.values() for p in q.pfc})
    pools: Tree = {}
    for role, name, prios in (("ingress_lossless", LOSSLESS_POOL, lossless),
                              ("ingress_lossy", LOSSY_POOL,
                               [p for p in range(8) if p not in lossless])):
        pool = device.qos.pools.get(role)
        if pool is None or not prios:
            continue
        percent = round(pool.size * 100 / total) if total else 0
        if not 1 <= percent <= 100:
            raise NvueRenderError(f"pool {role}: {pool.size} bytes is {percent} % of the "
                                  f"{total}-byte buffer; NVUE takes 1..100 %")
        pools[name] = {"memory-percent": percent,
                       "switch-priority": {str(p): {} for p in prios}}
    return pools


# ---- packet trimming ----------------------------------------------------------------------


def _trim_queues(q: PortQos, device: DeviceState) -> list[int]:
    """The port's queues whose egress profile trims what it cannot admit: on NVUE the
    traffic classes of that egress port eligible for trimming."""
    profiles = device.qos.profiles if device.qos is not None else {}
    return sorted(queue for queue, qq in q.queues.items()
                  if (profile := profiles.get(qq.profile)) is not None
                  and profile.discard == TRIM)


def _trim_remark(ports: dict[str, PortQos], tc: int, qos: Tree,
                 interfaces: dict[str, Tree]) -> int | str:
    """`remark dscp` of a trimming switch: the one DSCP every port gives trimmed packets, or
    `port-level` with a `qos remark` profile bound to each port (switch priority `tc` -> that
    port's DSCP; no `rewrite`: NVIDIA's page says a trimming remark profile sets none, so
    the profile re-marks trimmed packets only)."""
    ordered = sort_interfaces(list(ports))
    unmarked = [n for n in ordered if ports[n].trim_dscp is None]
    if unmarked:
        raise NvueRenderError(f"{unmarked[0]}: NVUE re-marks the trimmed packets of every "
                              "port; the plan gives this port no trim DSCP")
    dscps = {d for n in ordered if (d := ports[n].trim_dscp) is not None}
    if len(dscps) == 1:
        return dscps.pop()
    profiles: Tree = {}
    for name in ordered:
        value = {"switch-priority": {str(tc): {"dscp": ports[name].trim_dscp}}}
        profile = _name("remark", value)
        profiles[profile] = value
        interfaces[name].setdefault("qos", {})["remark"] = {"profile": profile}
    qos["remark"] = dict(sorted(profiles.items()))
    return PORT_LEVEL


def trimming(device: DeviceState, interfaces: dict[str, Tree], qos: Tree,
             rel: Release = TARGET) -> Tree | None:
    """`system forwarding packet-trim` of a trimming switch (None: it does not trim). Also
    sets each port's `packet-trim egress-eligibility traffic-class` (the queues whose egress
    profile trims) and, where the ports' trim DSCPs differ, their `qos remark` profiles.
    NVUE sends a trimmed packet with `switch-priority` (flatfab's trim TC) in the traffic
    class that priority maps to, so the plan's trim queue must be that class."""
    ports = _ports(device)
    eligible = {n: queues for n in sort_interfaces(list(ports))
                if (queues := _trim_queues(ports[n], device))}
    trim = device.qos.trimming if device.qos is not None else None
    if trim is None:
        if eligible:
            raise NvueRenderError(f"{next(iter(eligible))}: a queue's egress profile trims, "
                                  "but the plan gives the switch no packet trimming")
        return None
    if not rel.trims:
        raise NvueRenderError(f"Cumulus Linux has packet trimming from 5.14 on; the "
                              f"{rel.line} spelling is also that of "
                              f"{rel.models[0].replace('v5_', '5.')}-5.13, which have none")
    if trim.size % TRIM_SIZE_STEP:
        raise NvueRenderError(f"NVUE trims packets to a size in steps of {TRIM_SIZE_STEP} "
                              f"bytes; the plan gives {trim.size}")
    if ports:
        tc_to_queue = _one("the switch-priority to traffic-class map",
                           {n: q.maps.tc_to_queue for n, q in ports.items()})
        if tc_to_queue[trim.tc] != trim.queue:
            raise NvueRenderError(f"NVUE sends trimmed packets (switch priority {trim.tc}) in "
                                  f"traffic class {tc_to_queue[trim.tc]}, the plan in queue "
                                  f"{trim.queue}")
    for name, queues in eligible.items():
        interfaces[name][PACKET_TRIM] = {"egress-eligibility": {
            "traffic-class": {str(q): {} for q in queues}}}
    # `state` is enabled/disabled in every release that has packet-trim (5.14 included)
    out: Tree = {"state": "enabled", "size": trim.size, "switch-priority": trim.tc}
    if ports:
        out["remark"] = {"dscp": _trim_remark(ports, trim.tc, qos, interfaces)}
    return out


# ---- ECMP hashing -------------------------------------------------------------------------


def forwarding(lb: LoadBalancing, rel: Release = TARGET) -> Tree:
    """`system forwarding` of a switch that hashes as planned: every ecmp-hash field NVUE has
    set on or off (NVUE's defaults hash the IPv6 flow label too), and the tier's hash-seed.
    No seed in the plan: no hash-seed, and switchd picks its own (random, kept over restarts).
    Cumulus Linux hashes once per switch, for every VRF alike."""
    if lb.vrfs:
        raise NvueRenderError(f"NVUE hashes once per switch; the plan hashes VRF(s) "
                              f"{', '.join(sorted(lb.vrfs))} otherwise")
    fields = {key: rel.on if field in lb.hash_fields else rel.off
              for field, key in HASH_KEYS.items()}
    fields.update(dict.fromkeys(OTHER_HASH_KEYS, rel.off))
    out: Tree = {"ecmp-hash": dict(sorted(fields.items()))}
    if lb.seed is not None:
        # a new seed restarts switchd: every port resets (change_notes says so)
        out["hash-seed"] = lb.seed
    return out


# ---- adaptive routing ---------------------------------------------------------------------


def adaptive_ports(device: DeviceState) -> list[str]:
    """The fabric ports NVUE can steer adaptively: physical routed ports. NVIDIA's Adaptive
    Routing page excludes sub-interfaces, SVIs, bonds and bond members, so a port that carries
    VRF sub-interfaces, is bridged or is in a LAG keeps static hashing (the check
    `lb.adaptive_ports` names it)."""
    parents = {i.parent for i in device.interfaces.values() if i.parent is not None}
    return [name for name in sort_interfaces(list(device.interfaces))
            if (iface := device.interfaces[name]).kind is IfKind.FABRIC
            and iface.parent is None and iface.lag is None and iface.bridge is None
            and name not in parents]


def adaptive(device: DeviceState, interfaces: dict[str, Tree],
             rel: Release = TARGET) -> Tree | None:
    """`router adaptive-routing` of a switch in mode `adaptive` (None: it hashes), and each
    steerable fabric port's `router adaptive-routing` (NVUE routes adaptively only where both
    the switch and the egress port have it on). A switch none of whose fabric ports can take
    it still gets the global state: the plan's mode is recorded on the switch and read back,
    and `lb.adaptive_ports` (an error, static and live) names every port it cannot steer,
    where a render error would only name the switch. The other modes are refused at load
    (platform.yaml); one that reaches the render without that check is refused here."""
    lb = device.lb
    if lb is None or lb.mode is LbMode.HASH:
        return None
    if lb.mode is not LbMode.ADAPTIVE:
        raise NvueRenderError(f"flatfab renders load balancing by hash or adaptive routing "
                              f"on NVUE, not {lb.mode.value}")
    on: Tree = {rel.switch: rel.on}  # `state: enabled` 5.15+, `enable: on` up to 5.14
    for name in adaptive_ports(device):
        interfaces[name].setdefault("router", {})[ADAPTIVE] = dict(on)
    return on


# ---- the tree -----------------------------------------------------------------------------


def _bgp(instance: BgpInstance, rel: Release, router_id_here: bool) -> Tree:
    neighbors: Tree = {}
    for key in sorted(instance.peers, key=natural_key):
        peer = instance.peers[key]
        entry: Tree = {"type": "numbered" if peer.address else "unnumbered",
                       "remote-as": peer.remote_asn if peer.remote_asn else "external"}
        if peer.peer_device:
            entry["description"] = peer.peer_device
        if instance.keepalive and instance.hold:
            entry["timers"] = {"keepalive": instance.keepalive, "hold": instance.hold}
        neighbors[peer.address or peer.interface or key] = entry
    unicast: Tree = {rel.switch: rel.on}
    if instance.networks:
        unicast["network"] = {n: {} for n in instance.networks}
    if instance.maximum_paths:
        unicast["multipaths"] = {"ebgp": instance.maximum_paths}
    bgp: Tree = {rel.switch: rel.on}
    if instance.asn is not None:
        bgp["autonomous-system"] = instance.asn
    if router_id_here:
        bgp["router-id"] = instance.router_id
    bgp["neighbor"] = neighbors
    bgp["address-family"] = {"ipv4-unicast": unicast}
    bgp["path-selection"] = {"multipath": {"aspath-ignore": rel.on}}
    return bgp


def tree(device: DeviceState, names: InterfaceNames, rel: Release = TARGET) -> Tree:
    """The device's NVUE tree (what the `set` operations carry), in a stable order."""
    def vrf(tenant: str) -> str | None:
        return None if tenant == DEFAULT_VRF else names.vrf(tenant)

    interfaces: Tree = {}
    vlans: list[int] = []
    for name in sort_interfaces(list(device.interfaces)):
        iface = device.interfaces[name]
        if iface.kind is IfKind.LOOPBACK:
            entry: Tree = {"type": "loopback"}
            _addresses(entry, iface.addresses, None, rel)
        elif iface.kind is IfKind.BRIDGE:
            vid = vlan_of(name)
            vlans.append(vid)
            entry = {"type": "svi", "vlan": vid, "link": _link(iface, False)}
            _addresses(entry, iface.addresses, vrf(iface.vrf), rel)
        elif iface.parent is not None:
            entry = {"type": "sub", "base-interface": iface.parent, "vlan": vlan_of(name),
                     "link": _link(iface, False)}
            _addresses(entry, iface.addresses, vrf(iface.vrf), rel)
        elif iface.kind in (IfKind.FABRIC, IfKind.HOST_PORT):
            entry = {"type": "swp", "link": _link(iface, True)}
            if iface.bridge is not None:
                entry["bridge"] = {"domain": {BRIDGE: {"access": vlan_of(iface.bridge)}}}
            else:
                _addresses(entry, iface.addresses, vrf(iface.vrf), rel)
        else:
            raise NvueRenderError(f"{name}: flatfab renders no {iface.kind.value} interface "
                                  "on NVUE")
        interfaces[name] = entry
    qos = _qos(device, interfaces)
    trim = trimming(device, interfaces, qos, rel)
    steer = adaptive(device, interfaces, rel)
    system: Tree = {"hostname": device.name}
    if device.lb is not None:  # None: the switch's own hashing, left alone
        system["forwarding"] = forwarding(device.lb, rel)
    if trim is not None:
        system.setdefault("forwarding", {})[PACKET_TRIM] = trim
    out: Tree = {"system": system, "interface": interfaces}
    if vlans:
        out["bridge"] = {"domain": {BRIDGE: {"vlan": {str(v): {} for v in sorted(set(vlans))}}}}
    default = device.bgp.get(DEFAULT_VRF)
    if default is not None:
        router: Tree = {rel.switch: rel.on}
        if default.asn is not None:
            router["autonomous-system"] = default.asn
        router["router-id"] = default.router_id
        out["router"] = {"bgp": router}
    if steer is not None:
        out.setdefault("router", {})[ADAPTIVE] = steer
    vrfs: Tree = {}
    tenants = set(device.vrfs) | {b.vrf for b in device.bgp.values()}
    for tenant in sorted(tenants, key=lambda t: (t != DEFAULT_VRF, t)):
        entry = {}
        if tenant != DEFAULT_VRF:
            entry["table"] = "auto"
        instance = device.bgp.get(tenant)
        if instance is not None:
            entry["router"] = {"bgp": _bgp(instance, rel, tenant != DEFAULT_VRF)}
        vrfs[vrf(tenant) or DEFAULT_VRF] = entry
    if vrfs:
        out["vrf"] = vrfs
    if qos:
        out["qos"] = qos
    return out


def canonical(nvue: Tree) -> Tree:
    """The tree with every mapping in natural key order: a switch returns its config in its
    own order, so drift and diffs compare trees in this one."""
    return {key: canonical(value) if isinstance(value, dict) else value
            for key, value in sorted(nvue.items(), key=lambda item: natural_key(item[0]))}


def text(nvue: Tree) -> str:
    """One `- set:` operation per top-level object: the sections of the render."""
    lines: list[str] = []
    for section in SECTIONS:
        if section in nvue:
            lines.append("- set:")
            lines.extend(dump({section: nvue[section]}, 4))
    return "\n".join(lines) + "\n"


def render(device: DeviceState, names: InterfaceNames, rel: Release = TARGET) -> str:
    try:
        return text(tree(device, names, rel))
    except NvueRenderError as exc:
        raise NvueRenderError(f"{device.name}: {exc}") from None


def sections(config: str) -> dict[str, list[str]]:
    """Each `- set:` (or `- unset:`) operation is a section, named by the object it holds;
    its lines (the operation line included) are the section's."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    pending: list[str] = []
    for line in config.splitlines():
        if not line.strip():
            continue
        if line.startswith("- "):
            if current is None and pending:  # an operation with no object: its own section
                out.setdefault("config", []).extend(pending)
            pending, current = [line], None
            continue
        if current is None:
            head = line.strip().split(":", 1)[0].strip("'")
            section = head if head in SECTIONS else "config"
            current = out.setdefault(section, [])
            current.extend(pending)
            pending = []
        current.append(line)
    if pending:
        out.setdefault("config", []).extend(pending)
    return out
