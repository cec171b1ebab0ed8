"""DeviceState -> Junos configuration (QFX5220/5230/5240), as a tree in Junos JSON form.

`configuration(device, names)` is the one source of the render: `render()` prints it as
curly-brace text (tasks/platforms/junos/text.py) and the tests validate the same tree with
Juniper's QFX YANG. Statement names follow Juniper's CLI reference and the QFX CoS pages
(classifiers, forwarding-classes `no-loss`/`pfc-priority`, congestion-notification-profile,
drop-profiles, schedulers `explicit-congestion-notification`, scheduler-maps).

Decisions (see the platform's README section in the report):
- Fabric links: numbered sessions are `neighbor <address>`; unnumbered ones use BGP
  auto-discovered neighbors (Junos 21.1R1+, Juniper "BGP auto-discovered neighbors"): IPv6
  router advertisements plus `peer-auto-discovery family inet6 ipv6-nd` per interface,
  IPv4 routes over IPv6 next hops with `family inet unicast extended-nexthop`, and the peer
  AS numbers in an `as-list` named by `peer-as-list`.
- A port carrying VRF sub-interfaces is `vlan-tagging` with `native-vlan-id 1`: its unit 0
  (the default VRF) stays untagged as on the other platforms; VRF units are tagged.
- Host gateways: host ports are access ports of one VLAN per VRF, the gateway address is on
  that VLAN's IRB unit (`irb.<vlan>`), in the VRF's routing-instance.
- VRFs are `instance-type virtual-router` (VRF-lite: no route distinguisher or targets).
- ECMP hashing is `forwarding-options replace: enhanced-hash-key` (junos/hashing.py), only
  where the plan sets it: without, the switch keeps its own.
- Every rendered statement carries the `replace:` tag at the level it owns (a whole
  hierarchy, or one interface / instance where the management side shares it), for
  `load replace` (tasks/platforms/junos/driver.py).
"""

from __future__ import annotations

import math
from typing import Any

from flatfab.errors import FlatfabError
from flatfab.model.state import (
    DEFAULT_VRF,
    BgpInstance,
    DeviceState,
    EcnProfile,
    IfKind,
    Interface,
    PortQos,
    QueueQos,
    Watchdog,
)
from flatfab.platforms.base import InterfaceNames
from flatfab.platforms.junos import hashing
from flatfab.platforms.junos.text import REPLACE, Tree, to_text
from flatfab.platforms.names import natural_key

ECMP_POLICY = "ecmp"
FABRIC_GROUP = "fabric"
UNNUMBERED_GROUP = "fabric-auto"
NATIVE_VLAN = 1  # untagged frames of a tagged port land in unit 0 (the default VRF)
CLASSIFIER = "roce-dscp"
# Junos drop-profile fill levels are a percentage of the queue's buffer (Juniper "Configuring
# WRED drop profiles" / QFX "drop-profiles"), while the plan gives bytes. The reference is
# the buffer one egress queue may take under the default shared-buffer split, taken per
# family as a fixed share of the ASIC's buffer [assumption, not measured on a QFX].
QUEUE_SHARE = 0.05


class JunosRenderError(FlatfabError):
    """The device's plan cannot be written as Junos config (names the device and why)."""


def dscp_word(dscp: int) -> str:
    return format(dscp, "06b")


def queue_reference_bytes(buffer_bytes: int) -> int:
    return int(buffer_bytes * QUEUE_SHARE)


def percent(value: int, reference: int) -> int:
    return round(value * 100 / reference)


def ecn_levels(ecn: EcnProfile, reference: int) -> tuple[int, int]:
    """(min, max) fill levels in percent; the plan's byte thresholds must stay apart."""
    low, high = percent(ecn.min_bytes, reference), percent(ecn.max_bytes, reference)
    return max(low, 1), min(high, 100)


def _unit(name: str) -> tuple[str, int]:
    """(physical port, unit) of a planned interface name ("et-0/0/1.100" -> unit 100)."""
    port, _, unit = name.partition(".")
    return port, int(unit) if unit else 0


def _address_family(addresses: list[str], inet6: bool) -> Tree:
    family: Tree = {}
    inet = [a for a in addresses if ":" not in a]
    six = [a for a in addresses if ":" in a]
    family["inet"] = {"address": [{"name": a} for a in inet]} if inet else [None]
    if six or inet6:
        family["inet6"] = {"address": [{"name": a} for a in six]} if six else [None]
    return family


class _Render:
    def __init__(self, device: DeviceState, names: InterfaceNames) -> None:
        self.device = device
        self.names = names
        self.problems: list[str] = []
        # a session with an address is numbered (the plan names its interface too)
        self.unnumbered = {p.interface for b in device.bgp.values() for p in b.peers.values()
                           if p.interface is not None and p.address is None}

    # ---- interfaces ---------------------------------------------------------------------

    def interfaces(self) -> tuple[Tree, dict[int, str]]:
        """The interfaces hierarchy, and the VLANs of host gateways (id -> IRB unit)."""
        device = self.device
        units: dict[str, list[tuple[int, Tree]]] = {}
        physical: dict[str, Tree] = {}
        vlans: dict[int, str] = {}
        irb: list[tuple[int, Tree]] = []
        loopback: list[str] = []
        for iface in device.interfaces.values():
            if iface.kind is IfKind.LOOPBACK:
                loopback += iface.addresses
            elif iface.kind is IfKind.BRIDGE:
                vlan = self._irb_unit(iface.name)
                vlans[vlan] = iface.name
                family = _address_family(iface.addresses, False)
                if iface.mtu is not None:  # the IRB's IP MTU (its ports' media MTU is theirs)
                    inet = family["inet"] if isinstance(family["inet"], dict) else {}
                    family["inet"] = {"mtu": iface.mtu, **inet}
                unit: Tree = {"name": vlan, "family": family}
                irb.append((vlan, unit))
            elif iface.kind in (IfKind.FABRIC, IfKind.HOST_PORT):
                self._port(iface, physical, units)
            else:
                self.problems.append(f"{iface.name}: a {iface.kind.value} interface has no "
                                     "Junos rendering")
        out: list[Tree] = []
        for name in sorted(physical, key=natural_key):
            entry = physical[name]
            tagged = any(u for u, _ in units.get(name, []))
            if tagged:
                entry["vlan-tagging"] = [None]
                entry["native-vlan-id"] = NATIVE_VLAN
            entry["unit"] = [self._tag_unit(u, body, tagged) for u, body in
                             sorted(units.get(name, []), key=lambda x: x[0])]
            out.append(entry)
        if irb:
            out.append({"@": REPLACE, "name": "irb",
                        "unit": [u for _, u in sorted(irb, key=lambda x: x[0])]})
        lo_unit: Tree = {"name": 0, "family": {"inet": {"address": [
            {"name": a} for a in loopback if ":" not in a]}}}
        out.append({"@": REPLACE, "name": self.names.loopback, "unit": [lo_unit]})
        return {"interface": out}, vlans

    def _irb_unit(self, name: str) -> int:
        head, _, unit = name.partition(".")
        if head != "irb" or not unit.isdigit() or not 1 <= int(unit) <= 4094:
            self.problems.append(f"{name}: a gateway must be irb.<vlan 1-4094>")
            return 0
        return int(unit)

    def _port(self, iface: Interface, physical: dict[str, Tree],
              units: dict[str, list[tuple[int, Tree]]]) -> None:
        port, unit = _unit(iface.name)
        if not self.names.is_port(port):
            self.problems.append(f"{iface.name}: {port!r} is not a QFX port name (et-0/0/N)")
            return
        entry = physical.setdefault(port, {"@": REPLACE, "name": port})
        if iface.parent is None:
            if iface.peer is not None:
                entry["description"] = f"{iface.peer.device}:{iface.peer.port}"
            if iface.mtu is not None:
                entry["mtu"] = iface.mtu
        body: Tree = {"name": unit}
        if iface.kind is IfKind.HOST_PORT and iface.bridge is not None:
            vlan = self._irb_unit(iface.bridge)
            body["family"] = {"ethernet-switching": {"interface-mode": "access",
                                                     "vlan": {"members": [f"v{vlan}"]}}}
        else:
            inet6 = iface.name in self.unnumbered or not iface.addresses
            body["family"] = _address_family(iface.addresses, inet6)
        units.setdefault(port, []).append((unit, body))

    def _tag_unit(self, unit: int, body: Tree, tagged: bool) -> Tree:
        if not tagged:
            return body
        if unit == NATIVE_VLAN:
            self.problems.append(f"VLAN {NATIVE_VLAN} is the native VLAN of tagged ports; "
                                 "no VRF may use it")
        vlan = {"vlan-id": str(unit if unit else NATIVE_VLAN)}
        return {"name": body["name"], **vlan, **{k: v for k, v in body.items() if k != "name"}}

    # ---- routing ------------------------------------------------------------------------

    def _prefix_list(self, vrf: str) -> str:
        return f"networks-{vrf}"

    def _export(self, vrf: str) -> str:
        return f"export-{vrf}"

    def policies(self) -> Tree:
        prefix_lists: list[Tree] = []
        statements: list[Tree] = [{"name": ECMP_POLICY,
                                   "then": {"load-balance": {"per-packet": [None]}}}]
        as_lists: list[Tree] = []
        for vrf, bgp in self._instances():
            if bgp.networks:
                prefix_lists.append({"name": self._prefix_list(vrf), "prefix-list-item": [
                    {"name": n} for n in sorted(set(bgp.networks), key=natural_key)]})
                # routes not matched fall through to BGP's default export (learned BGP
                # routes are re-advertised, nothing else is)
                statements.append({"name": self._export(vrf), "term": [
                    {"name": "networks", "from": {"prefix-list": [
                        {"name": self._prefix_list(vrf)}]}, "then": {"accept": [None]}}]})
            remote = sorted({str(p.remote_asn) for p in bgp.peers.values()
                             if p.address is None and p.remote_asn is not None},
                            key=int)
            if remote:
                as_lists.append({"name": f"peers-{vrf}", "members": remote})
        out: Tree = {"@": REPLACE}
        if prefix_lists:
            out["prefix-list"] = prefix_lists
        out["policy-statement"] = statements
        if as_lists:
            out["as-list"] = as_lists
        return out

    def _instances(self) -> list[tuple[str, BgpInstance]]:
        """(device VRF name, instance), the default first, tenants by name."""
        found = []
        for tenant, bgp in sorted(self.device.bgp.items(),
                                  key=lambda kv: (kv[0] != DEFAULT_VRF, kv[0])):
            found.append((tenant if tenant == DEFAULT_VRF else self.names.vrf(tenant), bgp))
        return found

    def bgp(self, vrf: str, bgp: BgpInstance) -> tuple[Tree, list[str]]:
        """The BGP hierarchy of one instance, and the interfaces that need router
        advertisements (auto-discovered neighbors)."""
        groups: list[Tree] = []
        common: Tree = {"type": "external"}
        if bgp.hold is not None:
            common["hold-time"] = bgp.hold
        if bgp.networks:
            common["export"] = [self._export(vrf)]
        common["multipath"] = {"multiple-as": [None]}
        numbered = sorted((p for p in bgp.peers.values() if p.address is not None),
                          key=lambda p: natural_key(p.address or p.key))
        auto = sorted((p for p in bgp.peers.values() if p.address is None),
                      key=lambda p: natural_key(p.interface or p.key))
        if numbered:
            neighbors: list[Tree] = []
            for peer in numbered:
                if peer.address is None or peer.remote_asn is None:
                    self.problems.append(f"BGP peer {peer.key} in {vrf} has no address or AS")
                    continue
                neighbor: Tree = {"name": peer.address}
                if peer.peer_device:
                    neighbor["description"] = peer.peer_device
                neighbor["peer-as"] = str(peer.remote_asn)
                neighbors.append(neighbor)
            groups.append({"name": FABRIC_GROUP, **common, "neighbor": neighbors})
        ra: list[str] = []
        if auto:
            missing = [p.key for p in auto if p.interface is None]
            if missing:
                self.problems.append(f"BGP peers {', '.join(missing)} in {vrf} have neither an "
                                     "address nor an interface")
            interfaces = [self._logical(p.interface or "") for p in auto]
            ra = interfaces
            groups.append({
                "name": UNNUMBERED_GROUP, **common,
                "family": {"inet": {"unicast": {"extended-nexthop": [None]}},
                           "inet6": {"unicast": [None]}},
                "dynamic-neighbor": [{"name": "links", "peer-auto-discovery": {
                    "family": {"inet6": {"ipv6-nd": [None]}},
                    "interface": [{"name": i} for i in interfaces]}}],
                "peer-as-list": f"peers-{vrf}"})
        return {"group": groups}, ra

    @staticmethod
    def _routed(iface: Interface) -> bool:
        """An interface with an address in its VRF (host ports of a gateway are L2)."""
        return iface.kind in (IfKind.FABRIC, IfKind.BRIDGE) or (
            iface.kind is IfKind.HOST_PORT and iface.bridge is None)

    def _logical(self, name: str) -> str:
        return name if "." in name else f"{name}.0"

    def routing(self) -> tuple[Tree, Tree, Tree | None]:
        """(routing-options, protocols, routing-instances)."""
        device = self.device
        default = device.bgp.get(DEFAULT_VRF)
        options: Tree = {"@": REPLACE}
        router_id = default.router_id if default else device.router_id
        if router_id:
            options["router-id"] = router_id
        asn = default.asn if default and default.asn else device.asn
        if asn is not None:
            options["autonomous-system"] = {"as-number": str(asn)}
        options["forwarding-table"] = {"export": [ECMP_POLICY]}
        protocols: Tree = {"@": REPLACE}
        # router advertisements are configured for every instance's interfaces here: a
        # routing-instance has no `protocols router-advertisement` (Juniper's QFX YANG)
        advertised: list[str] = []
        if default is not None:
            bgp, advertised = self.bgp(DEFAULT_VRF, default)
            protocols["bgp"] = bgp
        protocols["lldp"] = {"interface": [{"name": "all"}]}
        instances: list[Tree] = []
        for tenant in sorted(set(device.vrfs) | {v for v in device.bgp if v != DEFAULT_VRF}):
            vrf = self.names.vrf(tenant)
            instance: Tree = {"@": REPLACE, "name": vrf, "instance-type": "virtual-router"}
            members = sorted((self._logical(i.name) for i in device.interfaces.values()
                              if i.vrf == tenant and self._routed(i)), key=natural_key)
            if members:
                instance["interface"] = [{"name": m} for m in members]
            bgp_vrf = device.bgp.get(tenant)
            if bgp_vrf is not None:
                instance["routing-options"] = {"router-id": bgp_vrf.router_id}
                if bgp_vrf.asn is not None and bgp_vrf.asn != asn:
                    instance["routing-options"]["autonomous-system"] = {
                        "as-number": str(bgp_vrf.asn)}
                bgp, ra = self.bgp(vrf, bgp_vrf)
                advertised += ra
                instance["protocols"] = {"bgp": bgp}
            instances.append(instance)
        if advertised:
            protocols = {"@": REPLACE, "router-advertisement": {"interface": [
                {"name": i} for i in sorted(advertised, key=natural_key)]},
                **{k: v for k, v in protocols.items() if k != "@"}}
        return options, protocols, {"instance": instances} if instances else None

    # ---- ECMP hashing ---------------------------------------------------------------------

    def hashing(self) -> Tree | None:
        """`forwarding-options enhanced-hash-key` (tasks/platforms/junos/hashing.py); None
        where the plan leaves the switch's hashing alone."""
        if self.device.lb is None:
            return None
        tree, problems = hashing.render(self.device.lb)
        self.problems += problems
        return tree

    # ---- class of service ---------------------------------------------------------------

    def cos(self) -> Tree | None:
        ports = {n: i.qos for n, i in self.device.interfaces.items()
                 if i.qos is not None and i.parent is None}
        if not ports:
            return None
        qos = self.device.qos
        if qos is None:
            self.problems.append("ports have lossless settings but the device has no ASIC")
            return None
        reference = queue_reference_bytes(qos.asic.buffer_bytes)
        first = next(iter(ports.values()))
        for name, port in ports.items():
            if port.trust != "dscp":
                self.problems.append(f"{name} trusts {port.trust!r}; the Junos render "
                                     "classifies on DSCP only (routed ports carry no PCP)")
            if port.maps != first.maps:
                self.problems.append(f"{name}: one DSCP classifier per switch; its maps "
                                     "differ from the other ports'")
        if self.problems:
            return None
        maps = first.maps
        tcs = sorted(set(maps.dscp_to_tc) | {tc for p in ports.values() for tc in p.queues
                                             if tc < 8 and self._queue_used(p.queues[tc])})
        classes = [self._class(tc, ports) for tc in tcs]
        classifier = {"name": CLASSIFIER, "forwarding-class": [
            {"name": f"tc{tc}", "loss-priority": [{"name": "low", "code-points": [
                dscp_word(d) for d, t in enumerate(maps.dscp_to_tc) if t == tc]}]}
            for tc in tcs if tc in maps.dscp_to_tc]}
        drops: dict[str, Tree] = {}
        schedulers: dict[str, Tree] = {}
        maps_by_key: dict[tuple[tuple[int, str], ...], str] = {}
        cnps: dict[str, Tree] = {}
        bindings: list[Tree] = []
        for name in sorted(ports, key=natural_key):
            port = ports[name]
            entries = []
            for tc in tcs:
                queue = port.queues.get(maps.tc_to_queue[tc])
                if queue is None or not self._queue_used(queue):
                    continue
                entries.append((tc, self._scheduler(tc, queue, reference, drops, schedulers)))
            key = tuple(entries)
            if key not in maps_by_key:
                maps_by_key[key] = f"roce-{len(maps_by_key) + 1}"
            binding: Tree = {"name": name, "scheduler-map": maps_by_key[key]}
            if port.pfc:
                cnp = self._cnp(port, cnps)
                binding["congestion-notification-profile"] = cnp
            binding["unit"] = [{"name": "*", "classifiers": {"dscp": [{"name": CLASSIFIER}]}}]
            bindings.append(binding)
        out: Tree = {"@": REPLACE, "classifiers": {"dscp": [classifier]}}
        if drops:
            out["drop-profiles"] = [drops[k] for k in sorted(drops)]
        out["forwarding-classes"] = {"class": classes}
        if cnps:
            out["congestion-notification-profile"] = [cnps[k] for k in sorted(cnps)]
        out["interfaces"] = {"interface": bindings}
        out["scheduler-maps"] = [
            {"name": sm, "forwarding-class": [{"name": f"tc{tc}", "scheduler": s}
                                              for tc, s in key]}
            for key, sm in sorted(maps_by_key.items(), key=lambda kv: kv[1])]
        out["schedulers"] = [schedulers[k] for k in sorted(schedulers)]
        return out

    @staticmethod
    def _queue_used(queue: QueueQos) -> bool:
        return queue.strict or queue.weight is not None or queue.ecn is not None

    def _class(self, tc: int, ports: dict[str, PortQos]) -> Tree:
        first = next(iter(ports.values()))
        entry: Tree = {"name": f"tc{tc}", "queue-num": first.maps.tc_to_queue[tc]}
        pg = first.maps.tc_to_pg[tc]
        priorities = [p for p in first.pfc if first.maps.pfc_to_pg[p] == pg]
        if priorities:
            entry["no-loss"] = [None]
            entry["pfc-priority"] = priorities[0]
        return entry

    def _scheduler(self, tc: int, queue: QueueQos, reference: int,
                   drops: dict[str, Tree], schedulers: dict[str, Tree]) -> str:
        body: Tree = {}
        name = f"s-tc{tc}"
        if queue.strict:
            body["priority"] = "strict-high"
            name += "-strict"
        if queue.weight is not None:
            body["transmit-rate"] = {"percent": queue.weight}
            name += f"-w{queue.weight}"
        if queue.ecn is not None:
            low, high = ecn_levels(queue.ecn, reference)
            if low >= high:
                self.problems.append(
                    f"ECN thresholds {queue.ecn.min_bytes}-{queue.ecn.max_bytes} bytes are "
                    f"{low}-{high} % of the {reference}-byte queue reference: Junos needs "
                    "min < max in whole percent")
            drop = f"ecn-{low}-{high}-{queue.ecn.probability}"
            drops[drop] = {"name": drop, "interpolate": {
                "fill-level": [low, high], "drop-probability": [0, queue.ecn.probability]}}
            body["drop-profile-map"] = [{"loss-priority": "any", "protocol": "any",
                                         "drop-profile": drop}]
            body["explicit-congestion-notification"] = [None]
            name += f"-{drop}"
        schedulers[name] = {"name": name, **body}
        return name

    def _cnp(self, port: PortQos, cnps: dict[str, Tree]) -> str:
        maps = port.maps
        cable = max(1, math.ceil(port.cable_m))  # whole metres, rounded up: more headroom
        dscps = [d for d, tc in enumerate(maps.dscp_to_tc)
                 if any(maps.tc_to_pg[tc] == maps.pfc_to_pg[p] for p in port.pfc)]
        body: Tree = {}
        name = f"pfc-{'-'.join(map(str, port.pfc))}-{cable}m"
        watchdog = port.watchdog
        if watchdog is not None:
            body["pfc-watchdog"] = self._watchdog(watchdog)
            name += f"-wd{watchdog.detect_ms}-{watchdog.restore_ms}-{watchdog.poll_ms}" \
                    f"-{watchdog.action}"
        body["input"] = {"dscp": {"code-point": [{"name": dscp_word(d), "pfc": [None]}
                                                 for d in dscps]},
                         "cable-length": str(cable)}
        body["output"] = {"ieee-802.1": {"code-point": [
            {"name": format(p, "03b"), "flow-control-queue": [maps.pfc_to_queue[p]]}
            for p in port.pfc]}}
        cnps[name] = {"name": name, **body}
        return name

    def _watchdog(self, watchdog: Watchdog) -> Tree:
        """Junos counts detection in polls: detect_ms must be a whole number of them."""
        if watchdog.poll_ms <= 0 or watchdog.detect_ms % watchdog.poll_ms:
            self.problems.append(f"PFC watchdog detect {watchdog.detect_ms} ms is not a whole "
                                 f"number of {watchdog.poll_ms} ms polls (Junos counts "
                                 "detection in polls)")
            return {}
        body: Tree = {"poll-interval": watchdog.poll_ms,
                      "detection": watchdog.detect_ms // watchdog.poll_ms,
                      "recovery": watchdog.restore_ms}
        if watchdog.action is not None:
            if watchdog.action not in ("drop", "forward"):
                self.problems.append(f"PFC watchdog action {watchdog.action!r}: Junos "
                                     "drops or forwards")
            else:
                body["watchdog-action"] = watchdog.action
        return body


def configuration(device: DeviceState, names: InterfaceNames) -> Tree:
    """The device's configuration in Junos JSON form ({"configuration": {...}})."""
    render = _Render(device, names)
    interfaces, vlans = render.interfaces()
    options, protocols, instances = render.routing()
    policies = render.policies()
    cos = render.cos()
    balancing = render.hashing()
    if render.problems:
        raise JunosRenderError(f"{device.name}: " + "; ".join(render.problems))
    config: Tree = {"interfaces": interfaces}
    if vlans:
        config["vlans"] = {"@": REPLACE, "vlan": [
            {"name": f"v{vlan}", "vlan-id": vlan, "l3-interface": irb}
            for vlan, irb in sorted(vlans.items())]}
    config["policy-options"] = policies
    config["routing-options"] = options
    config["protocols"] = protocols
    if instances is not None:
        config["routing-instances"] = instances
    if cos is not None:
        config["class-of-service"] = cos
    if balancing is not None:  # a hierarchy the switch shares: flatfab owns the hash key
        config["forwarding-options"] = balancing
    return {"configuration": config}


def render(device: DeviceState, names: InterfaceNames) -> str:
    header = (f"# flatfab: {device.name} ({device.role.value}), Junos QFX; "
              "load with `load replace` (statements tagged replace: are owned by flatfab)\n")
    return header + to_text(configuration(device, names)["configuration"])


def as_int(value: Any) -> int | None:
    """A Junos JSON number, printed as a number or a string."""
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None
