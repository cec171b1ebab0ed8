"""DeviceState -> SR Linux configuration: JSON-RPC `replaces` of the trees flatfab owns.

The rendered text is the gNMI-style JSON napalm-srlinux's load_replace_candidate takes
(`{"replaces": [{"path": ..., "value": ...}]}`): one replace per physical/loopback/irb
interface, per network-instance (default, each tenant ip-vrf, each gateway mac-vrf), and
the whole `/routing-policy` and `/qos` containers (irb1 routes the untagged side of ports
that carry VRF VLANs, see NATIVE below), and `/system/load-balancing/hash-options` where the
plan sets the switch's ECMP hashing (hashing.py), with `ip-load-balancing` in each
routed network-instance where the plan's mode is resilient (resilient.py). Never `/`
itself: mgmt0, the mgmt network-instance and the rest of /system (AAA, the JSON-RPC server)
stay as the box has them. Each entry starts a line `{"path": "/<tree>...` at column 0 (the
section split keys on it).

Shapes and constraints: Nokia SR Linux YANG v25.3.1 (srl_nokia-interfaces, -if-ip,
-interfaces-vlans, -interfaces-router-adv, -network-instance, -bgp, -routing-policy, -qos,
-load-balancing) and the SR Linux QoS guide 25.10 (PFC on 7220 IXR-D4/D5/H4/H5).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from flatfab.model.state import (
    DEFAULT_VRF,
    BgpInstance,
    DeviceState,
    IfKind,
    Interface,
    LbMode,
    PortQos,
)
from flatfab.platforms.base import InterfaceNames
from flatfab.platforms.names import sort_interfaces
from flatfab.platforms.srlinux import hashing, resilient

Json = dict[str, Any]

# one place for every object name flatfab gives the box (the `vocabulary` of platform.yaml)
DSCP_POLICY = "ff-dscp"
FABRIC_GROUP = "ff-fabric"
IMPORT_POLICY = "ff-import"
BRIDGE = "bridge-{vlan}"  # the mac-vrf of one gateway
# A port that carries VRF VLANs (vlan-tagging) and also routes untagged in its own VRF:
# SR Linux allows `untagged` only on a bridged subinterface (srl_nokia-interfaces-vlans.yang;
# SR Linux interfaces guide, "Subinterface VLAN configuration"), so the untagged traffic
# is bridged in a mac-vrf `native-<n>` to `irb1.<n>`, which holds the port's L3 settings.
NATIVE = "native-{index}"
NATIVE_IRB = "irb1"
_PORT_NUMBER = re.compile(r"^ethernet-1/(\d+)(?:/(\d+))?$")


def fc(tc: int) -> str:
    return f"ff-tc{tc}"


def queue(index: int) -> str:
    return f"ff-q{index}"


def pfc_queue(pg: int) -> str:
    return f"pfc{pg}"  # SR Linux reserves pfc0..pfc7; pfcN must have queue-index N


def export_policy(vrf: str) -> str:
    return f"ff-export-{vrf}"


def networks_set(vrf: str) -> str:
    return f"ff-networks-{vrf}"


# ranges the intent's own are wider than: srl_nokia-qos.yang (deadlock timers), and the
# 7220 IXR-D1..D5/H2..H4 limits srl_nokia-interfaces.yang states in its descriptions (port
# MTU 1500..9412, IP MTU up to 9398; the YANG ranges 1450..9500 / 1280..9486 are wider)
DETECT_MS = (10, 1500)
RECOVER_MS = (100, 1500)
PORT_MTU = (1500, 9412)
IP_MTU = (1280, 9398)
ETHERNET_HEADER = 14
VLAN_TAG = 4
_VLAN = re.compile(r"\.(\d+)$")


class RenderError(ValueError):
    """The device asks for something SR Linux (7220) cannot hold; names what and where."""


def _vlan(name: str) -> int:
    found = _VLAN.search(name)
    if found is None:
        raise RenderError(f"{name!r} carries no subinterface index")
    return int(found.group(1))


def _within(value: int, bounds: tuple[int, int], what: str) -> int:
    if not bounds[0] <= value <= bounds[1]:
        raise RenderError(f"{what} {value} is outside SR Linux's {bounds[0]}..{bounds[1]}")
    return value


def _admin(iface: Interface) -> str:
    return "disable" if iface.up is False else "enable"


@dataclass
class _Interned:
    """Distinct objects of one kind, named in order of first use (deterministic)."""

    base: str
    found: dict[str, tuple[str, Json]] = field(default_factory=dict)

    def name(self, body: Json) -> str:
        key = json.dumps(body, sort_keys=True)
        if key not in self.found:
            suffix = "" if not self.found else f"-{len(self.found) + 1}"
            self.found[key] = (f"{self.base}{suffix}", body)
        return self.found[key][0]

    def items(self) -> list[tuple[str, Json]]:
        return list(self.found.values())


# ---- interfaces ---------------------------------------------------------------------------


def _unnumbered(device: DeviceState) -> set[str]:
    return {p.interface for b in device.bgp.values() for p in b.peers.values()
            if p.interface and p.address is None}


def _ipv4(addresses: list[str]) -> Json:
    return {"admin-state": "enable",
            "address": [{"ip-prefix": a} for a in sorted(addresses)]}


def native_index(port: str) -> int:
    """irb1's subinterface index for a port: its number (1..128), or for a breakout
    port ethernet-1/P/C 1000 + 10 P + C (irb subinterfaces go up to 9999)."""
    found = _PORT_NUMBER.match(port)
    if found is None:
        raise RenderError(f"{port!r} is not an SR Linux port name")
    number, channel = int(found.group(1)), found.group(2)
    return number if channel is None else 1000 + 10 * number + int(channel)


def _routed(iface: Interface, index: int, unnumbered: bool, tagged: bool,
            irb: bool = False) -> Json:
    sub: Json = {"index": index, "admin-state": _admin(iface)}
    if not irb:
        sub["type"] = "routed"
    if iface.mtu is not None:
        sub["ip-mtu"] = _within(iface.mtu, IP_MTU, f"{iface.name}: ip-mtu")
    if unnumbered:
        # RFC 8950: IPv4 over the IPv6 link-local session; RAs trigger the dynamic peer
        sub["ipv4"] = {"admin-state": "enable"}
        sub["ipv6"] = {"admin-state": "enable",
                       "router-advertisement": {"router-role": {"admin-state": "enable"}}}
    elif iface.addresses:
        sub["ipv4"] = _ipv4(iface.addresses)
    if tagged:
        sub["vlan"] = {"encap": {"single-tagged": {"vlan-id": index}}}
    return sub


def routes_untagged(port: Interface, children: list[Interface], unnumbered: set[str]) -> bool:
    """Whether the port itself (untagged) is an L3 interface."""
    return port.bridge is None and (bool(port.addresses) or port.name in unnumbered
                                    or port.vrf != DEFAULT_VRF or not children)


def _port(port: Interface, children: list[Interface], unnumbered: set[str]) -> Json:
    tagged = bool(children)
    body: Json = {"name": port.name, "admin-state": _admin(port)}
    if port.peer is not None:
        body["description"] = f"to {port.peer}"
    if port.mtu is not None:
        # SR Linux port MTU counts the Ethernet header (and the tag on a tagged port)
        body["mtu"] = _within(port.mtu + ETHERNET_HEADER + (VLAN_TAG if tagged else 0),
                              PORT_MTU, f"{port.name}: port mtu")
    if tagged:
        body["vlan-tagging"] = True
    subs: list[Json] = []
    if port.bridge is not None or (tagged and routes_untagged(port, children, unnumbered)):
        # a host port of a gateway's mac-vrf, or the untagged side of a tagged port
        sub: Json = {"index": 0, "type": "bridged", "admin-state": _admin(port)}
        if tagged:
            sub["vlan"] = {"encap": {"untagged": {}}}
        subs.append(sub)
    elif routes_untagged(port, children, unnumbered):
        subs.append(_routed(port, 0, port.name in unnumbered, tagged=False))
    for child in children:
        subs.append(_routed(child, _vlan(child.name), child.name in unnumbered, tagged))
    body["subinterface"] = subs
    return body


def _loopback(iface: Interface) -> Json:
    return {"name": iface.name, "admin-state": "enable",
            "subinterface": [{"index": 0, "admin-state": "enable",
                              "ipv4": _ipv4(iface.addresses)}]}


def _irb(bridges: list[Interface]) -> Json:
    subs = []
    for gw in bridges:
        sub: Json = {"index": _vlan(gw.name), "admin-state": _admin(gw)}
        if gw.mtu is not None:
            sub["ip-mtu"] = _within(gw.mtu, IP_MTU, f"{gw.name}: ip-mtu")
        sub["ipv4"] = _ipv4(gw.addresses)
        subs.append(sub)
    return {"name": bridges[0].name.split(".")[0], "admin-state": "enable",
            "subinterface": subs}


# ---- network instances ------------------------------------------------------------------


def _bgp(instance: BgpInstance, l3: dict[str, str]) -> Json:
    vrf = instance.vrf
    group: Json = {"group-name": FABRIC_GROUP, "admin-state": "enable",
                   "export-policy": [export_policy(vrf)], "import-policy": [IMPORT_POLICY]}
    if instance.hold is not None or instance.keepalive is not None:
        group["timers"] = {k: v for k, v in (("hold-time", instance.hold),
                                              ("keepalive-interval", instance.keepalive))
                           if v is not None}
    unicast: Json = {"afi-safi-name": "ipv4-unicast", "admin-state": "enable"}
    if instance.maximum_paths is not None:
        unicast["multipath"] = {"allow-multiple-as": True,
                                "maximum-paths": instance.maximum_paths}
    neighbors, dynamic = [], []
    for key in sorted(instance.peers):
        peer = instance.peers[key]
        if peer.address is not None:
            entry: Json = {"peer-address": peer.address, "peer-group": FABRIC_GROUP,
                           "admin-state": "enable"}
            if peer.remote_asn is not None:
                entry["peer-as"] = peer.remote_asn
            if peer.peer_device:
                entry["description"] = peer.peer_device
            neighbors.append(entry)
        elif peer.interface is not None:
            if peer.remote_asn is None:
                raise RenderError(f"BGP {vrf}: unnumbered peer {key} needs its AS "
                                  "(SR Linux dynamic neighbors list the allowed peer AS)")
            dynamic.append({"interface-name": l3.get(peer.interface, peer.interface),
                            "peer-group": FABRIC_GROUP,
                            "allowed-peer-as": [str(peer.remote_asn)]})
    if dynamic:
        unicast["ipv4-unicast"] = {"advertise-ipv6-next-hops": True,
                                   "receive-ipv6-next-hops": True}
    if instance.asn is None:
        raise RenderError(f"BGP {vrf}: no AS number")
    body: Json = {"admin-state": "enable", "autonomous-system": instance.asn,
                  "router-id": instance.router_id, "afi-safi": [unicast],
                  "group": [group]}
    if neighbors:
        body["neighbor"] = neighbors
    if dynamic:
        body["dynamic-neighbors"] = {"interface": dynamic}
    return body


def _instance(name: str, kind: str, members: Iterable[str], device: DeviceState,
              l3: dict[str, str], vrf: str | None) -> Json:
    body: Json = {"name": name, "type": kind, "admin-state": "enable"}
    if kind == "default" and device.router_id:
        body["router-id"] = device.router_id
    bgp = device.bgp.get(vrf) if vrf is not None else None
    if kind in resilient.ROUTED and device.lb is not None \
            and device.lb.mode is LbMode.RESILIENT:
        # every route of every routed instance (resilient.py): BGP's ECMP routes among them
        try:
            body[resilient.CONTAINER] = resilient.render(bgp)
        except resilient.ResilientError as exc:
            raise RenderError(f"network-instance {name}: {exc}") from None
    body["interface"] = [{"name": m} for m in sort_interfaces(sorted(set(members)))]
    if bgp is not None:
        body["protocols"] = {"bgp": _bgp(bgp, l3)}
    return body


def _routing_policy(device: DeviceState) -> Json:
    sets: list[Json] = []
    policies: list[Json] = [{"name": IMPORT_POLICY,
                             "default-action": {"policy-result": "accept"}}]
    for vrf in sorted(device.bgp, key=lambda v: (v != DEFAULT_VRF, v)):
        instance = device.bgp[vrf]
        statements: list[Json] = [
            # a spine re-advertises what it learned (transit); a leaf too (its VRF peers)
            {"name": "bgp", "match": {"protocol": "bgp"},
             "action": {"policy-result": "accept"}}]
        if instance.networks:
            sets.append({"name": networks_set(vrf),
                         "prefix": [{"ip-prefix": p, "mask-length-range": "exact"}
                                    for p in sorted(instance.networks)]})
            statements.append({"name": "networks",
                               "match": {"prefix": {"prefix-set": networks_set(vrf)}},
                               "action": {"policy-result": "accept"}})
        policies.append({"name": export_policy(vrf),
                         "default-action": {"policy-result": "reject"},
                         "statement": statements})
    body: Json = {}
    if sets:
        body["prefix-set"] = sets
    body["policy"] = policies
    return body


# ---- qos ----------------------------------------------------------------------------------


def _same(values: Iterable[Any], what: str) -> Any:
    distinct = {json.dumps(v, sort_keys=True): v for v in values}
    if len(distinct) > 1:
        raise RenderError(f"flatfab renders one {what} per SR Linux switch; the ports ask "
                          f"for {len(distinct)} different ones")
    return next(iter(distinct.values()), None)


def _pg_profile(device: DeviceState, name: str) -> tuple[int, int]:
    """(xon, xoff) of a planned ingress PG profile: its MBS and its headroom."""
    if device.qos is None or name not in device.qos.profiles:
        raise RenderError(f"PG buffer profile {name!r} is not in the device's qos.profiles")
    profile = device.qos.profiles[name]
    return profile.xon, profile.xoff


def _pfc_profile(qos: PortQos) -> Json | None:
    """A port's PFC: which FCs fill which PFC queue and pause which priority, which queue
    a received pause stops, and deadlock detection (the PFC watchdog)."""
    if not qos.pfc:
        return None
    unicast, paused = [], []
    for priority in sorted(qos.pfc):
        pg = qos.maps.pfc_to_pg[priority]
        unicast.append({"pfc-queue-name": pfc_queue(pg),
                        "forwarding-class": [fc(tc) for tc in range(8)
                                             if qos.maps.tc_to_pg[tc] == pg],
                        "pfc-pause-frame-priority": priority})
        paused.append({"queue-name": queue(qos.maps.pfc_to_queue[priority]),
                       "pfc-pause-frame-priority": priority, "enable-pfc": True})
    frames: Json = {}
    dog = qos.watchdog
    if dog is not None:
        frames["deadlock"] = {
            "enable": True,
            "detection-timer": _within(dog.detect_ms, DETECT_MS, "PFC watchdog detect_ms"),
            "recovery-timer": _within(dog.restore_ms, RECOVER_MS, "PFC watchdog restore_ms")}
    frames["queue"] = paused
    return {"received-traffic": {"unicast-mapping": {"pfc-queue": unicast}},
            "received-pfc-pause-frames": frames}


def _qos(device: DeviceState, ports: list[Interface], subinterfaces: dict[str, list[str]]
         ) -> Json | None:
    planned = [p.qos for p in ports if p.qos is not None]
    if not planned:
        return None
    for p in planned:
        if p.trust != "dscp":
            raise RenderError(f"trust {p.trust!r}: flatfab renders DSCP classification only")
    # classifier and forwarding classes are switch-wide here; PFC maps are per port
    dscp_to_tc: list[int] = _same([p.maps.dscp_to_tc for p in planned], "DSCP classifier")
    tc_to_queue: list[int] = _same([p.maps.tc_to_queue for p in planned],
                                   "forwarding-class to queue map")
    queues = [{"name": queue(i), "queue-index": i} for i in range(8)]
    pfc_queues = sorted({p.maps.pfc_to_pg[pr] for p in planned for pr in p.pfc})
    qos: Json = {"explicit-congestion-notification": {}}
    qos_queues: Json = {"queue": queues}
    if pfc_queues:
        qos_queues["pfc-queue"] = [{"pfc-queue-name": pfc_queue(pg), "queue-index": pg}
                                   for pg in pfc_queues]
    qos["queues"] = qos_queues
    qos["forwarding-classes"] = {"forwarding-class": [
        {"name": fc(tc), "output": {"unicast-queue": queue(tc_to_queue[tc])}}
        for tc in range(8)]}
    qos["classifiers"] = {"dscp-policy": [{"name": DSCP_POLICY, "dscp": [
        {"value": d, "forwarding-class": fc(tc)} for d, tc in enumerate(dscp_to_tc)]}]}

    pfc_profiles, ecn_profiles = _Interned("ff-pfc"), _Interned("ff-ecn")
    allocations, schedulers = _Interned("ff-buffers"), _Interned("ff-sched")
    bindings: list[Json] = []
    reserved = 0
    for port in ports:
        pq = port.qos
        if pq is None:
            continue
        binding: Json = {"interface-id": port.name, "interface-ref": {"interface": port.name}}
        profile = _pfc_profile(pq)
        if profile is not None:
            binding["pfc"] = {"pfc-mapping-profile": pfc_profiles.name(profile),
                              "pfc-enable": True}
        # buffers: an ECN queue needs a non-zero MBS; a PFC queue's MBS is the shared buffer
        # it may hold before the 7220 pauses (its PG's alpha share), its reserved share the
        # PG's headroom (xoff)
        alloc_queues, alloc_pfc, managed = [], [], []
        for index in sorted(pq.queues):
            q = pq.queues[index]
            if q.ecn is not None:
                mbs = alpha_mbs(device, q.profile, q.ecn.max_bytes)
                alloc_queues.append({"queue-name": queue(index), "maximum-burst-size": mbs})
                managed.append({"queue-name": queue(index),
                                "queue-management-profile": ecn_profiles.name(_ecn(q.ecn))})
        for priority in sorted(pq.pfc):
            pg = pq.maps.pfc_to_pg[priority]
            if pg not in pq.pgs:
                raise RenderError(f"{port.name}: PFC priority {priority} has no PG profile")
            xon, xoff = _pg_profile(device, pq.pgs[pg])
            reserved += xoff
            alloc_pfc.append({"pfc-queue-name": pfc_queue(pg),
                              "maximum-burst-size": alpha_mbs(device, pq.pgs[pg], xon),
                              "maximum-pfc-reserved-share-bytes": xoff})
        output: Json = {}
        if alloc_queues or alloc_pfc:
            allocation: Json = {}
            if alloc_queues:
                allocation["queue"] = alloc_queues
            if alloc_pfc:
                allocation["pfc-queue"] = alloc_pfc
            output["buffer-allocation-profile"] = allocations.name({"queues": allocation})
        if managed:
            output["queues"] = {"queue": managed}
        output["scheduler"] = {"scheduler-policy": schedulers.name(_scheduler(pq))}
        binding["output"] = output
        bindings.append(binding)
        for sub in subinterfaces.get(port.name, []):
            index = int(sub.rsplit(".", 1)[1])
            bindings.append({"interface-id": sub,
                             "interface-ref": {"interface": port.name, "subinterface": index},
                             "input": {"classifiers": {"dscp-policy": DSCP_POLICY}}})
    if pfc_profiles.items():
        qos["pfc-mapping-profile"] = [{"name": n, **b} for n, b in pfc_profiles.items()]
    management: Json = {}
    if ecn_profiles.items():
        management["queue-management-profile"] = [{"name": n, **b}
                                                  for n, b in ecn_profiles.items()]
    if allocations.items():
        management["buffer-allocation-profile"] = [{"name": n, **b}
                                                   for n, b in allocations.items()]
    if management:
        qos["buffer-management"] = management
    qos["scheduler-policies"] = {"scheduler-policy": [{"name": n, **b}
                                                      for n, b in schedulers.items()]}
    qos["interfaces"] = {"interface": _port_order(bindings)}
    if reserved and device.qos is not None:
        # PFC headroom of every lossless PG, as a share of the forwarding complex's buffer
        share = -(-100 * reserved // device.qos.asic.buffer_bytes)
        qos["linecard"] = [{"slot": 1, "forwarding-complex": [
            {"name": "0", "input": {"pfc-buffer-reservation": min(100, max(1, share))}}]}]
    return qos


def _port_order(bindings: list[Json]) -> list[Json]:
    """Ports first, then subinterfaces, each in interface order."""
    ports = [b for b in bindings if "subinterface" not in b["interface-ref"]]
    subs = [b for b in bindings if "subinterface" in b["interface-ref"]]
    order = {n: i for i, n in enumerate(sort_interfaces([b["interface-id"] for b in bindings]))}
    return (sorted(ports, key=lambda b: order[b["interface-id"]])
            + sorted(subs, key=lambda b: order[b["interface-id"]]))


def _ecn(ecn: Any) -> Json:
    if ecn.min_bytes >= ecn.max_bytes:
        raise RenderError(f"ECN min {ecn.min_bytes} is not below max {ecn.max_bytes}")
    return {"wred": {"wred-slope": [{
        "traffic-type": "all", "drop-probability": "all", "enable-ecn": True,
        "min-threshold": ecn.min_bytes, "max-threshold": ecn.max_bytes,
        "max-drop-probability-percent": ecn.probability, "slope-enabled": True}]}}


def alpha_mbs(device: DeviceState, profile: str, floor: int) -> int:
    """An egress queue's MBS: the share its planned profile's alpha gives of its pool (the
    static equivalent: a non-zero MBS turns alpha off on 7220), never below the ECN max."""
    if device.qos is None or profile not in device.qos.profiles:
        raise RenderError(f"egress buffer profile {profile!r} is not in the device's "
                          "qos.profiles")
    planned = device.qos.profiles[profile]
    pool = device.qos.pools.get(planned.pool)
    if pool is None:
        raise RenderError(f"buffer profile {profile!r}: pool {planned.pool!r} is not planned")
    if planned.static_th:
        share = planned.static_th
    else:
        alpha = 2.0 ** (planned.dynamic_th or 0)
        share = int(pool.size * alpha / (1 + alpha))
    return max(share, 2 * floor)


def _scheduler(qos: PortQos) -> Json:
    strict = [i for i in sorted(qos.queues) if qos.queues[i].strict]
    weighted = [i for i in sorted(qos.queues)
                if not qos.queues[i].strict and qos.queues[i].weight is not None]
    if not strict:
        raise RenderError("SR Linux scheduler 0 is strict priority: at least one strict "
                          "traffic class (ets.strict) is needed")
    return {"scheduler": [
        {"sequence": 0, "priority": "strict",
         "input": [{"id": f"q{i}", "queue-name": queue(i)} for i in strict]},
        {"sequence": 1,  # weighted round robin: no priority leaf (only `strict` exists)
         "input": [{"id": f"q{i}", "queue-name": queue(i),
                    "weight": qos.queues[i].weight} for i in weighted]}]}


# ---- the whole device ---------------------------------------------------------------------


def config_tree(device: DeviceState, names: InterfaceNames) -> list[tuple[str, Json]]:
    """(path, value) of every replace, in section order."""
    unnumbered = _unnumbered(device)
    ifaces = device.interfaces
    order = sort_interfaces(list(ifaces))
    children: dict[str, list[Interface]] = {}
    for name in order:
        if ifaces[name].parent is not None:
            children.setdefault(str(ifaces[name].parent), []).append(ifaces[name])
    out: list[tuple[str, Json]] = []
    ports: list[Interface] = []
    members: dict[tuple[str, str, str | None], list[str]] = {}
    bridges = [ifaces[n] for n in order if ifaces[n].kind is IfKind.BRIDGE]
    subs: dict[str, list[str]] = {}
    natives: list[Json] = []  # irb1 subinterfaces
    l3: dict[str, str] = {}  # planned interface -> the SR Linux subinterface routing it
    for name in order:
        iface = ifaces[name]
        if iface.kind is IfKind.LOOPBACK:
            if name != names.loopback:
                raise RenderError(f"loopback {name!r}: SR Linux's is {names.loopback}")
            out.append((f"/interface[name={name}]", _loopback(iface)))
            members.setdefault((DEFAULT_VRF, "default", DEFAULT_VRF), []).append(f"{name}.0")
        elif iface.kind in (IfKind.FABRIC, IfKind.HOST_PORT) and iface.parent is None:
            if not names.is_port(name):
                raise RenderError(f"{name!r} is not an SR Linux port name")
            kids = children.get(name, [])
            body = _port(iface, kids, unnumbered)
            out.append((f"/interface[name={name}]", body))
            ports.append(iface)
            subs[name] = [f"{name}.{s['index']}" for s in body["subinterface"]]
            for sub in body["subinterface"]:
                sub_name = f"{name}.{sub['index']}"
                if sub["type"] == "bridged" and iface.bridge is not None:
                    members.setdefault((BRIDGE.format(vlan=_vlan(iface.bridge)), "mac-vrf",
                                        None), []).append(sub_name)
                elif sub["type"] == "bridged":  # the untagged side of a tagged port
                    index = native_index(name)
                    gateway = f"{NATIVE_IRB}.{index}"
                    natives.append(_routed(iface, index, name in unnumbered, tagged=False,
                                           irb=True))
                    members.setdefault((NATIVE.format(index=index), "mac-vrf", None),
                                       []).extend([sub_name, gateway])
                    members.setdefault((_ni(iface.vrf, names), _kind(iface.vrf), iface.vrf),
                                       []).append(gateway)
                    l3[name] = gateway
                else:
                    routed = ifaces.get(sub_name, iface)
                    members.setdefault((_ni(routed.vrf, names), _kind(routed.vrf),
                                        routed.vrf), []).append(sub_name)
                    l3[routed.name] = sub_name
        elif iface.kind in (IfKind.BRIDGE,) or iface.parent is not None:
            continue
        else:
            raise RenderError(f"{name}: interface kind {iface.kind.value} is not rendered "
                              "on SR Linux")
    if natives:
        out.append((f"/interface[name={NATIVE_IRB}]",
                    {"name": NATIVE_IRB, "admin-state": "enable", "subinterface": natives}))
    if bridges:
        out.append((f"/interface[name={bridges[0].name.split('.')[0]}]", _irb(bridges)))
        for gw in bridges:
            members.setdefault((BRIDGE.format(vlan=_vlan(gw.name)), "mac-vrf", None),
                               []).append(gw.name)
            members.setdefault((_ni(gw.vrf, names), _kind(gw.vrf), gw.vrf),
                               []).append(gw.name)
            l3[gw.name] = gw.name
    for vrf in device.bgp:  # a VRF with BGP but no interface still exists
        members.setdefault((_ni(vrf, names), _kind(vrf), vrf), [])
    for tenant in device.vrfs:
        members.setdefault((_ni(tenant, names), "ip-vrf", tenant), [])
    rank = {"default": 0, "ip-vrf": 1, "mac-vrf": 2}
    for (instance, kind, owner), listed in sorted(members.items(),
                                                  key=lambda i: (rank[i[0][1]], i[0][0])):
        out.append((f"/network-instance[name={instance}]",
                    _instance(instance, kind, listed, device, l3, owner)))
    out.append(("/routing-policy", _routing_policy(device)))
    qos = _qos(device, ports, subs)
    if qos is not None:
        out.append(("/qos", qos))
    if device.lb is not None:  # None: the switch's own hashing, left alone
        try:
            resilient.refuse_other_modes(device.lb)
            out.append((hashing.PATH, hashing.render(device.lb)))
        except (hashing.HashingError, resilient.ResilientError) as exc:
            raise RenderError(str(exc)) from None
    return out


def _kind(vrf: str) -> str:
    return "default" if vrf == DEFAULT_VRF else "ip-vrf"


def _ni(vrf: str, names: InterfaceNames) -> str:
    return DEFAULT_VRF if vrf == DEFAULT_VRF else names.vrf(vrf)


def dump(entries: list[tuple[str, Json]]) -> str:
    """The replaces as text: one entry a block, its first line `{"path": ...` at column 0."""
    lines = ['{"replaces": [']
    for number, (path, value) in enumerate(entries):
        body = json.dumps(value, indent=2)
        tail = "," if number < len(entries) - 1 else ""
        lines.append(f'{{"path": {json.dumps(path)}, "value": {body}}}{tail}')
    lines.append("]}")
    return "\n".join(lines) + "\n"


def render(device: DeviceState, names: InterfaceNames) -> str:
    return dump(config_tree(device, names))


def as_tree(entries: list[tuple[str, Json]]) -> Json:
    """The replaces as one configuration object (what the YANG oracle validates): a list
    entry's path is `/<list>[name=...]`, a container's its steps from the root."""
    tree: Json = {}
    for path, value in entries:
        if "[" in path:
            tree.setdefault(path.strip("/").split("[", 1)[0], []).append(value)
            continue
        *parents, leaf = path.strip("/").split("/")
        where = tree
        for step in parents:
            where = where.setdefault(step, {})
        where[leaf] = value
    return tree

