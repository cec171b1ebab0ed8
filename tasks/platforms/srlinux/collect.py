"""Read an SR Linux switch into observed DeviceState with reads only (JSON-RPC).

Sources (shapes from Nokia's SR Linux YANG models v25.3.1; commands from the SR Linux CLI
and JSON-RPC guides): `info from state /interface` (oper state, MTU, speed, addresses),
`info from state /network-instance` (membership, BGP neighbors with session state, the
IPv4 route table with its next-hop groups), `info from state /system lldp` (cabling),
`info from state /qos interfaces` (PFC frames, ECN-marked packets per queue), and
the running configuration (get_config: JSON of `/`) for the lossless plane, read back
through the objects flatfab renders (tasks/platforms/srlinux/render.py), and for the ECMP
hashing (`/system/load-balancing/hash-options`, hashing.py, and each routed
network-instance's `ip-load-balancing`, resilient.py).

`info <path>` printed the whole path from the root up to SR Linux 25.7 and prints only the
node's contents from 25.10: both are read, by shape (node, entries). The `mgmt`
network-instance is the management port's, no VRF. LLDP gives every neighbour of a port, the
far port picked by its port-id-type (readback.lldp_far_port).

What SR Linux does not state is recorded in `unknown`, never guessed: the cable length, the
PG buffer profile of a lossy priority (7220 has PFC-queue buffers only), the PFC watchdog's
action and poll interval (deadlock detection has neither).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from flatfab.model.physical import PortPhysical
from flatfab.model.state import (
    DEFAULT_VRF,
    BgpInstance,
    BgpPeer,
    DeviceQos,
    DeviceState,
    EcnProfile,
    Endpoint,
    IfKind,
    Interface,
    PortCounters,
    PortQos,
    QosMaps,
    QueueQos,
    Route,
    Watchdog,
)
from flatfab.platforms import phy_read, readback
from flatfab.platforms.base import DeviceDriver, InterfaceNames
from flatfab.platforms.readback import (
    Routes,
    asn_of,
    identity_from_bgp,
    lldp_device,
    read_errors,
    tenant,
)
from flatfab.platforms.srlinux import hashing, phy, resilient
from flatfab.platforms.srlinux.render import ETHERNET_HEADER, NATIVE_IRB, VLAN_TAG, alpha_mbs
from flatfab.platforms.srlinux.sections import unprefixed

Json = dict[str, Any]
INTERFACES = phy.INTERFACES  # "info from state /interface": its transceivers too
INSTANCES = "info from state /network-instance"
LLDP = "info from state /system lldp"
QOS_STATE = "info from state /qos interfaces"
# the box's clock (`current-datetime`), against which an LLDP neighbour's last-update is an age
CLOCK = "info from state /system information"
COMMANDS = (INTERFACES, INSTANCES, LLDP)
# counters: a box without PFC statistics (or a container lab) may refuse it: not an error;
# without the clock, LLDP ages are unknown
COUNTER_COMMANDS = (QOS_STATE, CLOCK)
SPEEDS = {"1G": 1_000, "10G": 10_000, "25G": 25_000, "40G": 40_000, "50G": 50_000,
          "100G": 100_000, "200G": 200_000, "400G": 400_000, "800G": 800_000}
_OWN_FC = re.compile(r"^ff-tc([0-7])$")
_PROTOCOLS = {"bgp": "bgp", "local": "connected", "host": "connected", "static": "static"}


def _list(value: Any) -> list[Json]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _read(driver: DeviceDriver, device: DeviceState) -> dict[str, Json]:
    shown = readback.json_shows(driver, device, COMMANDS, COUNTER_COMMANDS)
    return {command: unprefixed(reply) for command, reply in shown.items()}


# Where each reply's node sits below the root. `info <path>` printed the whole path from
# the root up to SR Linux 25.7 ({"system": {"lldp": {...}}}); from 25.10 it prints only the
# node's contents ({"admin-state": ..., "interface": [...]}). Both are read, by shape.
PATHS = {INTERFACES: (), INSTANCES: (), LLDP: ("system", "lldp"),
         QOS_STATE: ("qos", "interfaces"), CLOCK: ("system", "information")}


def node(reply: Any, path: tuple[str, ...]) -> Any:
    """The node a reply shows, in either form: each step of `path` the reply has is taken
    (the full-path form has them all, the contents-only form none)."""
    for key in path:
        if isinstance(reply, dict) and isinstance(reply.get(key), dict):
            reply = reply[key]
    return reply


def entries(reply: Any, key: str) -> list[Json]:
    """The entries of list `key` in a node: {key: [...]} (both forms of a list path), the
    entries themselves, or the one entry a keyed path printed."""
    if isinstance(reply, list):
        return _list(reply)
    if not isinstance(reply, dict):
        return []
    if key in reply:
        return _list(reply[key])
    return [reply] if "name" in reply else []


def _port_name(sub: str, native: dict[str, str]) -> str:
    """The planned interface a subinterface stands for: `ethernet-1/3.0` and `system0.0`
    their port, `irb1.<n>` the port whose untagged side it routes; others themselves."""
    if sub in native:
        return native[sub]
    return sub[:-2] if sub.endswith(".0") and not sub.startswith("irb") else sub


def _interfaces(device: DeviceState, planned: DeviceState, shown: Json,
                members: dict[str, str], bridges: dict[str, str],
                native: dict[str, str]) -> None:
    clock = node(shown.get(CLOCK, {}), PATHS[CLOCK])
    now = timestamp(clock.get("current-datetime")) if isinstance(clock, dict) else None
    peers = _lldp(device, node(shown.get(LLDP, {}), PATHS[LLDP]), now)
    ports = [p for p in entries(shown.get(INTERFACES, {}), "interface")
             if p.get("name") != "mgmt0"]
    irb_subs = {f"{p.get('name')}.{sub.get('index')}": sub for p in ports
                if str(p.get("name")).startswith("irb") for sub in _list(p.get("subinterface"))}
    routed_by = {port: irb for irb, port in native.items()}
    for port in ports:
        name = str(port.get("name"))
        subs = _list(port.get("subinterface"))
        tagged = port.get("vlan-tagging") is True
        speed = SPEEDS.get(str((port.get("ethernet") or {}).get("port-speed", "")))
        up = port.get("oper-state") == "up"
        mtu = port.get("mtu")
        overhead = ETHERNET_HEADER + (VLAN_TAG if tagged else 0)
        port_mtu = mtu - overhead if isinstance(mtu, int) else None
        if name.startswith("irb"):
            for sub in subs:
                gw = f"{name}.{sub.get('index')}"
                if gw in native:
                    continue  # read as its port's L3 side
                device.interfaces[gw] = Interface(
                    name=gw, kind=IfKind.BRIDGE, vrf=members.get(gw, DEFAULT_VRF),
                    mtu=sub.get("ip-mtu"), up=sub.get("oper-state") == "up",
                    addresses=_addresses(sub))
            continue
        kind = planned.interfaces[name].kind if name in planned.interfaces else (
            IfKind.LOOPBACK if name.startswith("system") else IfKind.OTHER)
        # the port's own L3 side: its subinterface 0, or the irb1 subinterface its
        # untagged frames are bridged to
        l3_name = routed_by.get(name, f"{name}.0")
        head = irb_subs.get(l3_name) if name in routed_by else next(
            (s for s in subs if s.get("index") == 0), None)
        bridge = bridges.get(f"{name}.0")
        iface = device.interfaces[name] = Interface(
            name=name, kind=kind,
            vrf=members.get(bridge, DEFAULT_VRF) if bridge else members.get(l3_name,
                                                                          DEFAULT_VRF),
            mtu=None if name.startswith("system") else port_mtu, up=up,
            addresses=_addresses(head) if head else [], bridge=bridge,
            speed_mbps=speed)
        iface.peer, iface.lldp_neighbours = readback.lldp_neighbours(peers.get(name, []))
        freshest = iface.peer
        for sub in subs:
            index = sub.get("index")
            if index == 0:
                continue
            child = f"{name}.{index}"
            device.interfaces[child] = Interface(
                name=child, kind=planned.interfaces[child].kind if child in planned.interfaces
                else IfKind.FABRIC, vrf=members.get(child, DEFAULT_VRF),
                mtu=sub.get("ip-mtu"), up=sub.get("oper-state") == "up",
                addresses=_addresses(sub), parent=name, speed_mbps=speed,
                peer=(Endpoint(device=freshest.device, port=f"{freshest.port}.{index}")
                      if freshest is not None else None))


def _addresses(sub: Json) -> list[str]:
    return sorted(str(a["ip-prefix"]) for a in _list((sub.get("ipv4") or {}).get("address"))
                  if a.get("ip-prefix"))


def timestamp(value: Any) -> datetime | None:
    """An SR Linux date-and-time (RFC 3339, `2025-11-24T16:00:02.000Z`; the CLI may add
    ` (2 seconds ago)`), None when there is none or it does not parse."""
    text = str(value or "").split(" ", 1)[0]
    try:
        return datetime.fromisoformat(text) if text else None
    except ValueError:
        return None


def _lldp(device: DeviceState, lldp: Json, now: datetime | None) -> dict[str, list[Endpoint]]:
    """Port -> its LLDP neighbours, the most recently updated first: SR Linux states when each
    was last heard (`last-update`), an age against the box's clock; it keeps no hold time of
    the neighbour's, so when the entry expires stays unknown. The far port is picked by its
    port-id-type (readback.lldp_far_port); a neighbour whose port cannot be named is in
    not_modelled."""
    found: dict[str, list[Endpoint]] = {}
    for iface in entries(lldp, "interface"):
        heard = sorted(_list(iface.get("neighbor")), key=lambda n: str(n.get("last-update", "")),
                       reverse=True)
        for neighbor in heard:
            if not neighbor.get("system-name"):
                device.not_modelled[
                    f"{iface.get('name')} LLDP neighbour {neighbor.get('chassis-id', '?')}"] = (
                    readback.NO_SYSTEM_NAME)
                continue
            system = lldp_device(neighbor["system-name"])
            port, why = readback.lldp_far_port(neighbor.get("port-id"),
                                               neighbor.get("port-id-type"),
                                               neighbor.get("port-description"))
            if port is None:
                device.not_modelled[f"{iface.get('name')} LLDP neighbour {system}"] = why
                continue
            last = timestamp(neighbor.get("last-update"))
            age = (max(int((now - last).total_seconds()), 0) if now and last
                   and (now.tzinfo is None) == (last.tzinfo is None) else None)
            found.setdefault(str(iface.get("name")), []).append(
                Endpoint(device=system, port=port, age_s=age))
    return found


def _membership(instances: list[Json], names: InterfaceNames
                ) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """(subinterface -> tenant of its routing instance, bridged host subinterface -> its
    gateway's irb subinterface, irb1 subinterface -> the port whose untagged side it
    routes)."""
    routed: dict[str, str] = {}
    bridged: dict[str, str] = {}
    native: dict[str, str] = {}
    for ni in instances:
        listed = [str(i.get("name")) for i in _list(ni.get("interface"))]
        if ni.get("type") == "mac-vrf":
            irb = next((i for i in listed if i.startswith("irb")), None)
            others = [sub for sub in listed if sub != irb]
            if irb is not None and irb.startswith(f"{NATIVE_IRB}.") and len(others) == 1:
                native[irb] = others[0].rsplit(".", 1)[0]
                continue
            for sub in others:
                if irb is not None:
                    bridged[sub] = irb
            continue
        vrf = tenant(names, str(ni.get("name")))
        for sub in listed:
            routed[sub] = vrf
    return routed, bridged, native


MANAGEMENT_INSTANCE = "mgmt"


def _management(ni: Json) -> bool:
    """SR Linux's management network-instance: `mgmt`, of type ip-vrf, made by the factory
    configuration for mgmt0 (Nokia, SR Linux Configuration Basics, "Management network
    instance")."""
    return ni.get("name") == MANAGEMENT_INSTANCE and ni.get("type") in ("ip-vrf", None)


def _ipv4_unicast(container: Json) -> Json:
    """The IPv4 unicast family of a BGP instance or neighbor: an `afi-safi` list entry (the
    25.3 models), or the `ipv4-unicast` container of releases up to 22.11."""
    family = next((a for a in _list(container.get("afi-safi"))
                   if a.get("afi-safi-name") == "ipv4-unicast"), None)
    if family is None and isinstance(container.get("ipv4-unicast"), dict):
        family = container["ipv4-unicast"]
    return family or {}


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def maximum_paths(multipath: Any) -> int | None:
    """BGP multipath of IPv4 unicast in any release's shape (srl_nokia-bgp.yang): the
    BGP ECMP count `max-paths-level-1` of releases up to 22.11 (level 2 bounds the next hops
    per resolved BGP next hop: no BGP path count), `maximum-paths` (all peers) and
    `ebgp/maximum-paths`, `ibgp/maximum-paths` (per peer type), both in the 25.3 models.
    State prints every leaf with its default (1): of the all-peers and eBGP values the
    larger is the configured one (the fabric's sessions are eBGP); the iBGP one counts only
    when nothing else is stated."""
    if not isinstance(multipath, dict):
        return None
    ebgp: Json = multipath["ebgp"] if isinstance(multipath.get("ebgp"), dict) else {}
    ibgp: Json = multipath["ibgp"] if isinstance(multipath.get("ibgp"), dict) else {}
    stated = [n for n in (_count(multipath.get("maximum-paths")),
                          _count(ebgp.get("maximum-paths"))) if n is not None]
    if stated:
        return max(stated)
    return _count(multipath.get("max-paths-level-1")) or _count(ibgp.get("maximum-paths"))


def _peer(raw: str, native: dict[str, str]) -> tuple[str, str | None, str | None]:
    """(key, interface, address): an unnumbered session is shown with its link-local
    address scoped to the subinterface (fe80::1%ethernet-1/51.0, fe80::1%irb1.51)."""
    if "%" in raw:
        port = _port_name(raw.split("%", 1)[1], native)
        return port, port, None
    return raw, None, raw


def _bgp(device: DeviceState, native: dict[str, str], instances: list[Json],
         names: InterfaceNames) -> None:
    for ni in instances:
        bgp = (ni.get("protocols") or {}).get("bgp")
        if not isinstance(bgp, dict):
            continue
        vrf = tenant(names, str(ni.get("name")))
        where = f"bgp: network-instance {ni.get('name')}"
        instance = BgpInstance(vrf=vrf, asn=asn_of(device, bgp.get("autonomous-system"), where),
                               router_id=str(bgp.get("router-id", "")))
        for neighbor in _list(bgp.get("neighbor")):
            raw = str(neighbor.get("peer-address"))
            key, interface, address = _peer(raw, native)
            received = _ipv4_unicast(neighbor).get("received-routes")
            state = str(neighbor.get("session-state", ""))
            instance.peers[key] = BgpPeer(
                key=key, interface=interface, address=address,
                remote_asn=asn_of(device, neighbor.get("peer-as"), f"{where} peer {raw}"),
                peer_device=neighbor.get("description") or None,
                state=state.capitalize() if state else None,
                prefixes_received=_count(received))
        instance.maximum_paths = maximum_paths(_ipv4_unicast(bgp).get("multipath"))
        device.bgp[vrf] = instance
    identity_from_bgp(device)
    for instance in device.bgp.values():  # unnumbered peers: named by LLDP
        for peer in instance.peers.values():
            if peer.peer_device is None and peer.interface in device.interfaces:
                iface = device.interfaces[peer.interface]
                if iface.peer is not None:
                    peer.peer_device = iface.peer.device


def _routes(device: DeviceState, instances: list[Json], names: InterfaceNames,
            native: dict[str, str]) -> None:
    tables: dict[str, dict[str, Route]] = {}
    made = Routes()
    for ni in instances:
        if ni.get("type") == "mac-vrf":
            continue
        table = ni.get("route-table") or {}
        hops = {h.get("index"): h for h in _list(table.get("next-hop"))}
        groups = {g.get("index"): g for g in _list(table.get("next-hop-group"))}
        routes: dict[str, Route] = {}
        for route in _list((table.get("ipv4-unicast") or {}).get("route")):
            prefix = str(route.get("ipv4-prefix"))
            group = groups.get(route.get("next-hop-group"), {})
            nexthops = []
            for member in _list(group.get("next-hop")):
                hop = hops.get(member.get("next-hop"), {})
                sub = hop.get("subinterface")
                nexthops.append((_port_name(str(sub), native) if sub else None,
                                 hop.get("ip-address") or None))
            kind = str(route.get("route-type", ""))
            routes[made.prefix(prefix)] = made.route(_PROTOCOLS.get(kind, kind),
                                                     tuple(nexthops))
        tables[tenant(names, str(ni.get("name")))] = dict(sorted(routes.items()))
    device.routes = tables


# ---- the lossless plane, from the running configuration --------------------------------------


def _by(entries: Any, key: str) -> dict[str, Json]:
    return {str(e.get(key)): e for e in _list(entries)}


def port_qos(qos: Json, port: str, plan: PortQos, speed: int | None, mtu: int | None,
             planned: DeviceState) -> PortQos:
    """A port's lossless state as the running config states it (flatfab's objects or any
    others bound to the port); what SR Linux does not state comes from the plan, marked."""
    unknown: dict[str, str] = {}
    bindings = _by((qos.get("interfaces") or {}).get("interface"), "interface-id")
    binding = bindings.get(port, {})
    queues = {str(q.get("name")): q.get("queue-index")
              for q in _list((qos.get("queues") or {}).get("queue"))}
    fcs = _by((qos.get("forwarding-classes") or {}).get("forwarding-class"), "name")

    def tc_of(fc: str) -> int | None:
        own = _OWN_FC.match(fc)
        if own:
            return int(own.group(1))
        index = queues.get(str((fcs.get(fc, {}).get("output") or {}).get("unicast-queue")))
        return index if isinstance(index, int) else None

    tc_to_queue = list(range(8))
    for name, fc in fcs.items():
        tc, index = tc_of(name), queues.get(str((fc.get("output") or {}).get("unicast-queue")))
        if tc is not None and isinstance(index, int):
            tc_to_queue[tc] = index
    # classification: the DSCP policy on the port's subinterfaces (all must agree)
    policies = {str(((b.get("input") or {}).get("classifiers") or {}).get("dscp-policy"))
                for b in bindings.values()
                if (b.get("interface-ref") or {}).get("interface") == port
                and "subinterface" in (b.get("interface-ref") or {})}
    policies.discard("None")
    dscp_to_tc = [0] * 64
    trust = plan.trust
    if len(policies) == 1:
        policy = _by((qos.get("classifiers") or {}).get("dscp-policy"), "name").get(
            next(iter(policies)), {})
        for entry in _list(policy.get("dscp")):
            tc = tc_of(str(entry.get("forwarding-class")))
            value = entry.get("value")
            if isinstance(value, int) and 0 <= value < 64 and tc is not None:
                dscp_to_tc[value] = tc
        trust = "dscp"
    else:
        unknown["trust"] = (f"{len(policies)} DSCP policies on the port's subinterfaces"
                            if policies else "no DSCP classifier on the port")
    # PFC
    tc_to_pg, pfc_to_pg, pfc_to_queue = [0] * 8, list(range(8)), list(range(8))
    pfc: list[int] = []
    watchdog = None
    pfc_bind = binding.get("pfc") or {}
    profile = _by(qos.get("pfc-mapping-profile"), "name").get(
        str(pfc_bind.get("pfc-mapping-profile")), {})
    pfc_index = {str(q.get("pfc-queue-name")): q.get("queue-index")
                 for q in _list((qos.get("queues") or {}).get("pfc-queue"))}
    for entry in _list(((profile.get("received-traffic") or {}).get("unicast-mapping")
                        or {}).get("pfc-queue")):
        pg = pfc_index.get(str(entry.get("pfc-queue-name")))
        if not isinstance(pg, int):
            continue
        for fc in entry.get("forwarding-class") or []:
            tc = tc_of(str(fc))
            if tc is not None:
                tc_to_pg[tc] = pg
        priority = entry.get("pfc-pause-frame-priority")
        if isinstance(priority, int):
            pfc_to_pg[priority] = pg
    frames = profile.get("received-pfc-pause-frames") or {}
    for entry in _list(frames.get("queue")):
        priority, index = entry.get("pfc-pause-frame-priority"), queues.get(
            str(entry.get("queue-name")))
        if isinstance(priority, int) and isinstance(index, int):
            pfc_to_queue[priority] = index
            if entry.get("enable-pfc") is True and pfc_bind.get("pfc-enable") is True:
                pfc.append(priority)
    pfc.sort()
    deadlock = frames.get("deadlock") or {}
    if pfc and deadlock.get("enable") is True:
        # recovery ignores pause frames for recovery-timer ms: SR Linux's one action
        poll = plan.watchdog.poll_ms if plan.watchdog else 0
        watchdog = Watchdog(priorities=pfc, detect_ms=int(deadlock.get("detection-timer", 750)),
                            restore_ms=int(deadlock.get("recovery-timer", 750)),
                            action="forward", poll_ms=poll,
                            unknown={"poll_ms": "SR Linux deadlock detection has no poll "
                                                "interval setting"})
    # buffers, ECN, scheduler
    output = binding.get("output") or {}
    management = qos.get("buffer-management") or {}
    allocation = (_by(management.get("buffer-allocation-profile"), "name").get(
        str(output.get("buffer-allocation-profile")), {}).get("queues") or {})
    reserved = {pfc_index.get(str(q.get("pfc-queue-name"))): q
                for q in _list(allocation.get("pfc-queue"))}
    profiles = planned.qos.profiles if planned.qos else {}
    pgs: dict[int, str] = {}
    for pg, name in sorted(plan.pgs.items()):
        share = reserved.get(pg)
        if share is None:
            pgs[pg] = name
            unknown[f"pgs.{pg}"] = "7220 reserves buffers per PFC queue only"
            continue
        xoff, mbs = share.get("maximum-pfc-reserved-share-bytes"), share.get(
            "maximum-burst-size")
        # the planned profile whose headroom and alpha share the box holds, if one does
        pgs[pg] = next((n for n, p in sorted(profiles.items())
                        if p.pool.startswith("ingress") and p.xoff and p.xoff == xoff
                        and alpha_mbs(planned, n, p.xon) == mbs),
                       f"reserved-{xoff}-mbs-{mbs}")
    burst = {str(q.get("queue-name")): q.get("maximum-burst-size")
             for q in _list(allocation.get("queue"))}
    qmps = _by(management.get("queue-management-profile"), "name")
    managed = {str(q.get("queue-name")): str(q.get("queue-management-profile"))
               for q in _list((output.get("queues") or {}).get("queue"))}
    sched = _by((qos.get("scheduler-policies") or {}).get("scheduler-policy"), "name").get(
        str((output.get("scheduler") or {}).get("scheduler-policy")), {})
    strict: set[int] = set()
    weights: dict[int, int] = {}
    for scheduler in _list(sched.get("scheduler")):
        for entry in _list(scheduler.get("input")):
            index = queues.get(str(entry.get("queue-name")))
            if not isinstance(index, int):
                continue
            if scheduler.get("priority") == "strict":
                strict.add(index)
            elif isinstance(entry.get("weight"), int):
                weights[index] = entry["weight"]
    by_index = {i: n for n, i in queues.items() if isinstance(i, int)}
    out_queues: dict[int, QueueQos] = {}
    for index in range(8):
        name = by_index.get(index, "")
        ecn = None
        slope = next((s for s in _list(((qmps.get(managed.get(name, ""), {}).get("wred")
                                         or {}).get("wred-slope")))
                      if s.get("enable-ecn") is True), None)
        if slope is not None:
            ecn = EcnProfile(min_bytes=int(slope.get("min-threshold", 0)),
                             max_bytes=int(slope.get("max-threshold", 0)),
                             probability=int(slope.get("max-drop-probability-percent", 0)))
        planned_q = plan.queues.get(index)
        profile_name = planned_q.profile if planned_q else ""
        if name in burst and planned_q is not None and planned.qos is not None:
            floor = planned_q.ecn.max_bytes if planned_q.ecn else 0
            if burst[name] != alpha_mbs(planned, planned_q.profile, floor):
                profile_name = f"mbs-{burst[name]}"
        elif planned_q is not None:
            unknown[f"queues.{index}.profile"] = "no MBS set: the ASIC's own alpha applies"
        out_queues[index] = QueueQos(strict=index in strict, weight=weights.get(index),
                                     ecn=ecn, profile=profile_name)
    if speed is None:
        unknown["speed_mbps"] = "the port reports no speed"
    unknown["cable_m"] = "SR Linux does not know the cable length"
    return PortQos(trust=trust, maps=QosMaps(dscp_to_tc=dscp_to_tc, tc_to_pg=tc_to_pg,
                                             tc_to_queue=tc_to_queue, pfc_to_pg=pfc_to_pg,
                                             pfc_to_queue=pfc_to_queue),
                   pfc=pfc, watchdog=watchdog, pgs=pgs, queues=out_queues,
                   speed_mbps=speed or plan.speed_mbps, cable_m=plan.cable_m,
                   mtu=mtu if mtu is not None else plan.mtu, unknown=unknown)


def device_qos(device: DeviceState, planned: DeviceState) -> DeviceQos | None:
    """The buffer profiles the ports were read back as. Each name was matched by the values
    SR Linux states (a PFC queue's reserved share = the PG's xoff, a queue's MBS = the
    profile's alpha share of its pool), so the planned profile of that name is what the
    box holds for those; what 7220 does not state (XON) is marked unknown."""
    if planned.qos is None:
        return None
    used = {n for i in device.interfaces.values() if i.qos is not None
            for n in (*i.qos.pgs.values(), *(q.profile for q in i.qos.queues.values()))}
    profiles = {n: p for n, p in planned.qos.profiles.items() if n in used}
    # pools: SR Linux states no pool size, but every matched MBS is exactly alpha/(1+alpha)
    # of the planned pool, so the XOFF and ECN points the checks derive from it are the box's
    unknown: dict[str, str] = {}
    for name, profile in sorted(profiles.items()):
        if profile.pool.startswith("ingress") and profile.xoff:
            unknown[f"profiles.{name}.xon"] = "7220 pauses at the PFC queue's MBS; no XON"
    return DeviceQos(asic=planned.qos.asic, pools=planned.qos.pools, profiles=profiles,
                     unknown=unknown)


def _lossless(device: DeviceState, planned: DeviceState, running: Json) -> None:
    qos = running.get("qos")
    for name, iface, plan_qos in readback.planned_qos_ports(device, planned):
        if not isinstance(qos, dict):
            device.errors.append("qos: the running configuration has no qos tree")
            return
        iface.qos = port_qos(qos, name, plan_qos, iface.speed_mbps, iface.mtu, planned)
    device.qos = device_qos(device, planned)


def _hashing(device: DeviceState, running: Json, names: InterfaceNames) -> None:
    """The ECMP hashing the running configuration sets: the configured `hash-seed`, not the
    state's, which shows the value generate-from-mac derived (the switch's own seed, the
    plan's None); and whether it is resilient, from the `ip-load-balancing` of every routed
    network-instance (resilient.py: mgmt and the mac-vrfs left out). What flatfab cannot map
    (resilient on some instances or prefixes only) is named in not_modelled, the mode unread."""
    routed = [ni for ni in _list(running.get("network-instance"))
              if ni.get("type") in resilient.ROUTED and not _management(ni)]
    paths: dict[str, int | None] = {}
    for ni in routed:
        bgp = device.bgp.get(tenant(names, str(ni.get("name"))))
        paths[str(ni.get("name"))] = bgp.maximum_paths if bgp is not None else None
    lb, notes = resilient.read(routed, hashing.read(running), paths)
    device.lb = lb
    device.not_modelled.update(notes)


def _counters(device: DeviceState, reply: Json, running_qos: Json) -> None:
    """PFC frames per port (pfc/statistics) and ECN-marked packets per queue
    (output/queues/queue/queue-statistics/aggregate-statistics), srl_nokia-qos.yang."""
    queues = {str(q.get("name")): q.get("queue-index")
              for q in _list((running_qos.get("queues") or {}).get("queue"))}
    for entry in entries(node(reply, PATHS[QOS_STATE]), "interface"):
        ref = entry.get("interface-ref") or {}
        name = str(ref.get("interface") or entry.get("interface-id"))
        if "subinterface" in ref or name not in device.interfaces:
            continue
        stats = (entry.get("pfc") or {}).get("statistics") or {}
        marked: dict[int, int] = {}
        for queue in _list(((entry.get("output") or {}).get("queues") or {}).get("queue")):
            index = queues.get(str(queue.get("queue-name")))
            count = ((queue.get("queue-statistics") or {}).get("aggregate-statistics")
                     or {}).get("ecn-marked-packets")
            if isinstance(index, int) and isinstance(count, int):
                marked[index] = count
        rx, tx = (stats.get("total-pfc-pause-frames-received"),
                  stats.get("total-pfc-pause-frames-generated"))
        if not stats and not marked:
            continue
        device.interfaces[name].counters = PortCounters(
            pfc_rx_frames=rx if isinstance(rx, int) else None,
            pfc_tx_frames=tx if isinstance(tx, int) else None,
            ecn_marked=dict(sorted(marked.items())))


def collect(driver: DeviceDriver, planned: DeviceState, names: InterfaceNames) -> DeviceState:
    device = DeviceState(name=planned.name, role=planned.role, platform=planned.platform)
    try:
        running = unprefixed(json.loads(str(driver.get_config(retrieve="running")["running"])))
    except read_errors() as exc:
        device.errors.append(f"running config: {str(exc).splitlines()[0] if str(exc) else exc}")
        running = {}
    shown = _read(driver, device)
    # the management instance is the management port's (mgmt0.0), no tenant's VRF
    instances = [ni for ni in entries(shown[INSTANCES], "network-instance")
                 if not _management(ni)]
    members, bridges, native = _membership(instances, names)
    readback.guarded(device, "interfaces",
                     lambda: _interfaces(device, planned, shown, members, bridges, native))
    device.loopback = readback.loopback_address(device, names.loopback)
    device.vrfs = {tenant(names, str(ni.get("name"))): planned.vrfs.get(
        tenant(names, str(ni.get("name"))), 0) for ni in instances
        if ni.get("type") == "ip-vrf"}
    readback.guarded(device, "bgp", lambda: _bgp(device, native, instances, names))
    readback.guarded(device, "routes", lambda: _routes(device, instances, names, native))
    _lossless(device, planned, running)
    if running:  # unread (named in errors above): the hashing stays unknown
        readback.guarded(device, "load-balancing", lambda: _hashing(device, running, names))
    qos = running.get("qos")
    _counters(device, shown[QOS_STATE], qos if isinstance(qos, dict) else {})
    return device


def physical(driver: DeviceDriver, planned: DeviceState) -> dict[str, PortPhysical]:
    """Each cabled port's transceiver, FEC and flaps from the interfaces' state
    (srlinux/phy.py); {}: the switch did not answer."""
    shown = readback.json_shows(driver, phy_read.scratch(planned), (), phy.COMMANDS)
    outputs = {command: unprefixed(reply) for command, reply in shown.items() if reply}
    return phy_read.read_answered(outputs, readback.cabled_ports(planned), phy.read_ports)
