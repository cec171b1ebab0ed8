"""DeviceState -> NX-OS CLI (Nexus 9000), written line by line in a fixed order.

Syntax follows Cisco's Nexus 9000 NX-OS guides: Unicast Routing (BGP, interface peering
over IPv6 link-local), Interfaces (routed ports, subinterfaces, SVIs), QoS (MQC `type qos`
classification to qos-groups, `type network-qos` no-drop classes with `pause pfc-cos`,
`type queuing` egress scheduling with WRED ECN, `system qos`) and its PFC chapter
(`priority-flow-control mode on`, the PFC watchdog). No offline oracle exists for NX-OS:
the output is checked against golden files derived from those guides.

NX-OS keeps the lossless plane switch-wide where the hardware does: the no-drop classes
(network-qos) and the PFC watchdog timers are system settings, the classification and
queuing policies attach per port. The qos-group of a class is its queue and its PFC CoS
(Cisco: keep qos-group = CoS for no-drop traffic).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass

from flatfab.errors import FlatfabError
from flatfab.model.state import (
    DEFAULT_VRF,
    BgpInstance,
    DeviceState,
    IfKind,
    Interface,
    PortQos,
    QueueQos,
    Watchdog,
)
from flatfab.platforms.base import InterfaceNames
from flatfab.platforms.names import natural_key, sort_interfaces
from flatfab.platforms.nxos import hashing, lbmode
from flatfab.platforms.nxos.sections import FEATURES, PREFIX

JUMBO_MTU = 9216  # NX-OS `system jumbomtu` default: the only L2 port MTU besides 1500
MAX_PATHS = 64  # `maximum-paths` range on Nexus 9000
IN_POLICY = f"{PREFIX}IN"
NQ_POLICY = f"{PREFIX}NQ"
OUT_POLICY = f"{PREFIX}OUT"
QUEUES = 8  # the 8q templates: qos-group n -> c-8q-nq<n> / c-out-8q-q<n>
# watchdog: interval 100..1000 ms; shutdown (detect) and auto-restore are multiples of it
WATCHDOG_INTERVAL = (100, 1000)
SHUTDOWN_MULTIPLIER = (1, 10)
RESTORE_MULTIPLIER = (0, 100)


class NxosRenderError(FlatfabError):
    """The device's plan cannot be written as NX-OS config (names the device and why)."""


def out_class(queue: int) -> str:
    return "c-out-8q-q-default" if queue == 0 else f"c-out-8q-q{queue}"


def nq_class(queue: int) -> str:
    return "c-8q-nq-default" if queue == 0 else f"c-8q-nq{queue}"


@dataclass(frozen=True)
class WatchdogTimers:
    interval: int
    shutdown: int
    restore: int


def watchdog_timers(device: str, dog: Watchdog) -> WatchdogTimers:
    """NX-OS timers from flatfab's: poll = interval, detect and restore its multiples."""
    interval = dog.poll_ms
    low, high = WATCHDOG_INTERVAL
    if not low <= interval <= high:
        raise NxosRenderError(f"{device}: PFC watchdog poll {interval} ms is outside NX-OS's "
                              f"watch-dog interval range {low}-{high} ms")
    out = []
    for what, value, (least, most) in (("detect", dog.detect_ms, SHUTDOWN_MULTIPLIER),
                                       ("restore", dog.restore_ms, RESTORE_MULTIPLIER)):
        if value % interval or not least <= value // interval <= most:
            raise NxosRenderError(f"{device}: PFC watchdog {what} {value} ms is not "
                                  f"{least}-{most} times the {interval} ms interval (NX-OS "
                                  "sets it as a multiplier)")
        out.append(value // interval)
    # the action: drop, the one the NX-OS watchdog has (the load refuses the others, as the
    # data file's capabilities say)
    return WatchdogTimers(interval, out[0], out[1])


# ---- checks -----------------------------------------------------------------------------

def _qos_ports(device: DeviceState) -> list[Interface]:
    return [i for i in device.interfaces.values() if i.qos is not None and i.parent is None]


def capability_problems(device: DeviceState) -> list[str]:
    """What of the plan the NX-OS policies cannot write, one sentence each (empty when
    fine): plan shapes the data file does not describe. What it does describe (the ASIC
    families NX-OS runs on, the watchdog actions it lacks, buffers) the load refuses, and
    the render relies on that."""
    problems: list[str] = []
    for iface in _qos_ports(device):
        qos = iface.qos
        assert qos is not None
        if qos.trust != "dscp":
            problems.append(f"{iface.name} trusts {qos.trust!r}; flatfab classifies NX-OS "
                            "ports by DSCP only (a `type qos` input policy)")
        if qos.maps.tc_to_queue != list(range(QUEUES)) or \
                qos.maps.pfc_to_queue != list(range(QUEUES)):
            problems.append(f"{iface.name} maps traffic classes or PFC priorities to other "
                            "queues; on NX-OS qos-group n is queue n and PFC CoS n")
    maps = {tuple(i.qos.maps.dscp_to_tc) for i in _qos_ports(device) if i.qos}
    if len(maps) > 1:
        problems.append("ports plan different DSCP maps; flatfab writes one NX-OS "
                        "classification policy per switch")
    pfcs = {tuple(sorted(i.qos.pfc)) for i in _qos_ports(device) if i.qos and i.qos.pfc}
    if len(pfcs) > 1:
        problems.append("ports plan different PFC priorities; NX-OS no-drop classes are "
                        "switch-wide (network-qos)")
    dogs = {(w.detect_ms, w.restore_ms, w.poll_ms, w.action) for i in _qos_ports(device)
            if i.qos and (w := i.qos.watchdog) is not None}
    if len(dogs) > 1:
        problems.append("ports plan different PFC watchdog timers; NX-OS has one set per "
                        "switch")
    for iface in device.interfaces.values():
        if iface.kind is IfKind.HOST_PORT and iface.bridge is not None \
                and (iface.mtu or 0) > JUMBO_MTU:
            problems.append(f"{iface.name}: MTU {iface.mtu} is above the switch's jumbo MTU "
                            f"{JUMBO_MTU}")
    for instance in device.bgp.values():
        if (instance.maximum_paths or 0) > MAX_PATHS:
            problems.append(f"BGP VRF {instance.vrf}: maximum-paths {instance.maximum_paths} "
                            f"is above NX-OS's {MAX_PATHS}")
        for peer in instance.peers.values():
            if peer.remote_asn is None:
                problems.append(f"BGP VRF {instance.vrf}: peer {peer.key} has no AS number")
    return [f"{device.name}: {p}" for p in problems]


# ---- lossless plane ---------------------------------------------------------------------

def _dscp_classes(qos: PortQos) -> dict[int, list[int]]:
    """qos-group -> the DSCP values classified to it (qos-group 0 is class-default)."""
    groups: dict[int, list[int]] = {}
    for dscp, tc in enumerate(qos.maps.dscp_to_tc):
        if tc:
            groups.setdefault(tc, []).append(dscp)
    return groups


def dscp_list(values: list[int]) -> str:
    """`24-31,48`: runs of consecutive code points as ranges, NX-OS's `match dscp` form."""
    parts: list[str] = []
    start = previous = values[0]
    for value in [*values[1:], -2]:
        if value != previous + 1:
            parts.append(str(start) if start == previous else f"{start}-{previous}")
            start = value
        previous = value
    return ",".join(parts)


def _queuing_body(qos: PortQos) -> list[str]:
    lines: list[str] = []
    for queue in sorted(range(QUEUES), reverse=True):  # q7 .. q-default, as NX-OS prints it
        plan = qos.queues.get(queue, QueueQos(strict=False, profile=""))
        lines.append(f"  class type queuing {out_class(queue)}")
        if plan.strict:
            lines.append("    priority level 1")
        else:
            lines.append(f"    bandwidth remaining percent {plan.weight or 0}")
        if plan.ecn is not None:
            lines.append(f"    random-detect minimum-threshold {plan.ecn.min_bytes} bytes "
                         f"maximum-threshold {plan.ecn.max_bytes} bytes drop-probability "
                         f"{plan.ecn.probability} weight 0 ecn")
    return lines


def _queuing(ports: list[Interface]) -> tuple[list[str], str | None, dict[str, str]]:
    """Queuing policies: one per distinct body, named by its content; the one most ports
    use goes to `system qos`, a port with another body takes its own. Returns (lines,
    system policy, port -> own policy)."""
    bodies: dict[str, list[str]] = {}
    by_port: dict[str, str] = {}
    for iface in ports:
        assert iface.qos is not None
        body = _queuing_body(iface.qos)
        digest = hashlib.sha256("\n".join(body).encode()).hexdigest()[:8].upper()
        name = f"{OUT_POLICY}-{digest}"
        bodies[name] = body
        by_port[iface.name] = name
    if not bodies:
        return [], None, {}
    counts = Counter(by_port.values())
    system = min(counts, key=lambda n: (-counts[n], n))
    lines: list[str] = []
    for name in sorted(bodies):
        lines += [f"policy-map type queuing {name}", *bodies[name]]
    own = {port: name for port, name in by_port.items() if name != system}
    return lines, system, own


def _qos_section(device: DeviceState, ports: list[Interface]) -> tuple[list[str], dict[str, str]]:
    if not ports:
        return [], {}
    first = ports[0].qos
    assert first is not None
    lines: list[str] = []
    groups = _dscp_classes(first)
    for group in sorted(groups):
        lines += [f"class-map type qos match-any {PREFIX}TC{group}",
                  f"  match dscp {dscp_list(groups[group])}"]
    lines.append(f"policy-map type qos {IN_POLICY}")
    for group in sorted(groups):
        lines += [f"  class {PREFIX}TC{group}", f"    set qos-group {group}"]
    pfc = sorted({p for i in ports if i.qos for p in i.qos.pfc})
    mtu = max([i.qos.mtu for i in ports if i.qos] + [JUMBO_MTU])
    # the no-drop classes pause their CoS; every class takes the jumbo frame size
    lines.append(f"policy-map type network-qos {NQ_POLICY}")
    for queue in sorted(set(pfc) | set(range(1, QUEUES)), reverse=True):
        lines.append(f"  class type network-qos {nq_class(queue)}")
        if queue in pfc:
            lines.append(f"    pause pfc-cos {queue}")
        lines.append(f"    mtu {mtu}")
    lines += [f"  class type network-qos {nq_class(0)}", f"    mtu {mtu}"]
    queuing, system, own = _queuing(ports)
    lines += queuing
    lines += ["system qos", f"  service-policy type network-qos {NQ_POLICY}"]
    if system is not None:
        lines.append(f"  service-policy type queuing output {system}")
    return lines, own


def _pfc_section(device: DeviceState, ports: list[Interface]) -> list[str]:
    dog = next((i.qos.watchdog for i in ports if i.qos and i.qos.watchdog), None)
    if dog is None:
        return []
    timers = watchdog_timers(device.name, dog)
    return ["priority-flow-control watch-dog-interval on",
            f"priority-flow-control watch-dog interval {timers.interval}",
            f"priority-flow-control watch-dog shutdown-multiplier {timers.shutdown}",
            f"priority-flow-control auto-restore multiplier {timers.restore}"]


def _port_qos(qos: PortQos | None, own_queuing: str | None) -> list[str]:
    if qos is None:
        return []
    lines = [f"  service-policy type qos input {IN_POLICY}"]
    if own_queuing is not None:
        lines.append(f"  service-policy type queuing output {own_queuing}")
    # forced, never DCBX-negotiated (`auto`), and explicitly off where nothing is lossless
    lines.append(f"  priority-flow-control mode {'on' if qos.pfc else 'off'}")
    if qos.pfc:
        state = "on" if qos.watchdog is not None else "off"
        lines.append(f"  priority-flow-control watch-dog-interval {state}")
    return lines


# ---- interfaces -------------------------------------------------------------------------

def _unnumbered(device: DeviceState) -> set[str]:
    return {p.interface for b in device.bgp.values() for p in b.peers.values()
            if p.interface is not None and p.address is None}


def _addressing(iface: Interface, unnumbered: set[str]) -> list[str]:
    lines = []
    v4 = [a for a in iface.addresses if ":" not in a]
    v6 = [a for a in iface.addresses if ":" in a]
    for index, address in enumerate(v4):
        lines.append(f"  ip address {address}{' secondary' if index else ''}")
    for address in v6:
        lines.append(f"  ipv6 address {address}")
    if iface.name in unnumbered and not v6:
        # an IPv6 link-local address only: the BGP session runs on it (RFC 5549)
        lines.append("  ipv6 address use-link-local-only")
    return lines


def _vlan_of(device: DeviceState, gateway: str) -> int:
    digits = gateway.removeprefix("Vlan")
    if not digits.isdigit() or not 2 <= int(digits) < 3968:
        raise NxosRenderError(f"{device.name}: host gateway {gateway!r} is not a Vlan<N> SVI "
                              "with N in 2-3967 (NX-OS reserves 3968-4094)")
    return int(digits)


def _port(device: DeviceState, iface: Interface, unnumbered: set[str],
          own: dict[str, str]) -> list[str]:
    lines = [f"interface {iface.name}"]
    if iface.peer is not None:
        lines.append(f"  description {iface.peer.device}:{iface.peer.port}")
    if iface.kind is IfKind.HOST_PORT and iface.bridge is not None:
        # an L2 port takes 1500 or the system jumbo MTU only; its L3 MTU is the SVI's
        lines += ["  switchport", "  switchport mode access",
                  f"  switchport access vlan {_vlan_of(device, iface.bridge)}"]
        if iface.mtu is not None and iface.mtu > 1500:
            lines.append(f"  mtu {JUMBO_MTU}")
    elif iface.parent is not None:
        lines.append(f"  encapsulation dot1q {iface.name.rsplit('.', 1)[1]}")
        if iface.mtu is not None:
            lines.append(f"  mtu {iface.mtu}")
    else:
        lines.append("  no switchport")
        if iface.mtu is not None:
            lines.append(f"  mtu {iface.mtu}")
    if iface.vrf != DEFAULT_VRF and iface.kind is not IfKind.HOST_PORT:
        lines.append(f"  vrf member {iface.vrf}")  # before the addresses: it clears them
    if iface.kind is not IfKind.HOST_PORT:
        lines += _addressing(iface, unnumbered)
    lines += _port_qos(iface.qos if iface.parent is None else None, own.get(iface.name))
    lines.append("  shutdown" if iface.up is False else "  no shutdown")
    return lines


def _interfaces(device: DeviceState, names: InterfaceNames,
                own: dict[str, str]) -> tuple[list[str], list[str]]:
    """(vlans section, interfaces section)."""
    unnumbered = _unnumbered(device)
    kinds = (IfKind.FABRIC, IfKind.HOST_PORT, IfKind.OTHER)
    ports = {i.name: i for i in device.interfaces.values() if i.kind in kinds}
    lines: list[str] = []
    for name in sort_interfaces(list(ports)):
        if not names.is_port(name.split(".", 1)[0]):
            raise NxosRenderError(f"{device.name}: {name!r} is not an NX-OS port name")
        lines += _port(device, ports[name], unnumbered, own)
    for iface in sorted((i for i in device.interfaces.values() if i.kind is IfKind.LOOPBACK),
                        key=lambda i: natural_key(i.name)):
        lines += [f"interface {iface.name}", *_addressing(iface, set())]
    vlans: list[str] = []
    gateways = {i.name: i for i in device.interfaces.values() if i.kind is IfKind.BRIDGE}
    for name in sort_interfaces(list(gateways)):
        iface = gateways[name]
        vlan = _vlan_of(device, name)
        vlans += [f"vlan {vlan}", f"  name {iface.vrf}"]
        lines.append(f"interface {name}")
        if iface.mtu is not None:
            lines.append(f"  mtu {iface.mtu}")
        if iface.vrf != DEFAULT_VRF:
            lines.append(f"  vrf member {iface.vrf}")
        lines += [*_addressing(iface, unnumbered), "  no shutdown"]
    return vlans, lines


# ---- routing ----------------------------------------------------------------------------

def _af_lines(instance: BgpInstance, indent: str) -> list[str]:
    lines = [f"{indent}address-family ipv4 unicast"]
    for prefix in sorted(instance.networks, key=natural_key):
        lines.append(f"{indent}  network {prefix}")
    if instance.maximum_paths:
        lines.append(f"{indent}  maximum-paths {instance.maximum_paths}")
    return lines


def _neighbors(instance: BgpInstance, indent: str) -> list[str]:
    lines: list[str] = []
    for key in sorted(instance.peers, key=natural_key):
        peer = instance.peers[key]
        # a peer without an address is an interface peering over IPv6 link-local
        lines.append(f"{indent}neighbor {peer.address or peer.interface}")
        lines.append(f"{indent}  remote-as {peer.remote_asn}")
        if peer.peer_device:
            lines.append(f"{indent}  description {peer.peer_device}")
        lines.append(f"{indent}  address-family ipv4 unicast")
    return lines


def _instance(instance: BgpInstance, indent: str) -> list[str]:
    lines = [f"{indent}router-id {instance.router_id}"]
    if instance.keepalive is not None and instance.hold is not None:
        lines.append(f"{indent}timers bgp {instance.keepalive} {instance.hold}")
    lines.append(f"{indent}bestpath as-path multipath-relax")
    return lines + _af_lines(instance, indent) + _neighbors(instance, indent)


def _bgp(device: DeviceState) -> list[str]:
    default = device.bgp.get(DEFAULT_VRF)
    if default is None:
        return []
    if default.asn is None:
        raise NxosRenderError(f"{device.name}: the default BGP instance has no AS number")
    lines = [f"router bgp {default.asn}", *_instance(default, "  ")]
    for name in sorted(v for v in device.bgp if v != DEFAULT_VRF):
        lines += [f"  vrf {name}", *_instance(device.bgp[name], "    ")]
    return lines


# ---- the whole device -------------------------------------------------------------------

def render(device: DeviceState, names: InterfaceNames) -> str:
    """The NX-OS config of one switch, deterministic for the same state."""
    problems = capability_problems(device)
    if problems:
        raise NxosRenderError("; ".join(problems))
    ports = sorted(_qos_ports(device), key=lambda i: natural_key(i.name))
    qos, own = _qos_section(device, ports)
    vlans, interfaces = _interfaces(device, names, own)
    svis = any(i.kind is IfKind.BRIDGE for i in device.interfaces.values())
    features = [f for f in FEATURES if svis or f != "feature interface-vlan"]
    lines = [f"hostname {device.name}", *features, *vlans]
    for vrf in sorted(device.vrfs):
        lines.append(f"vrf context {vrf}")
    if device.lb is not None:  # None: the switch's own hashing, left alone
        try:
            lines += [hashing.render(device.lb), *lbmode.render(device.lb)]
        except hashing.HashingError as exc:
            raise NxosRenderError(f"{device.name}: {exc}") from None
    lines += [*qos, *_pfc_section(device, ports), *interfaces, *_bgp(device)]
    return "\n".join(lines) + "\n"
