"""Capacity: a leaf's uplinks carry what its hosts can send (no oversubscribed lossless leaf)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from flatfab.checks.base import Check, CheckContext, Finding, Scope, Severity, check
from flatfab.model.state import DeviceState, IfKind, Interface, Role


def _capacity(ports: Iterable[Interface]) -> tuple[int, bool]:
    """(Mb/s, whether any speed came from the port's lossless state rather than the port):
    the lab's veths report no speed, its virtual ASIC holds the configured one."""
    total, from_qos = 0, False
    for iface in ports:
        if iface.speed_mbps:
            total += iface.speed_mbps
        elif iface.qos is not None:
            total, from_qos = total + iface.qos.speed_mbps, True
    return total, from_qos


RANK = {Role.LEAF: 0, Role.SPINE: 1, Role.SUPERSPINE: 2}


def _peer_rank(ctx: CheckContext, planned: DeviceState, iface: Interface) -> int:
    """The tier of the switch the plan cables this port to (-1: none)."""
    far = planned.interfaces.get(iface.name)
    peer = ctx.plan.devices.get(far.peer.device) if far is not None and far.peer else None
    return RANK.get(peer.role, -1) if peer is not None else -1


@check("fabric.nonblocking", "Every leaf and pod spine has as much uplink as downlink capacity",
       scope=Scope.FABRIC, severity=Severity.WARNING)
def nonblocking(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the speed of every physical port of each leaf and (5-stage) pod spine, from the port
    or, where it states none, its lossless state (planned statically, observed live). A leaf's
    uplinks are its fabric ports; a pod spine's, those the plan cables to super-spines.
    Expects: a leaf's uplinks carry at least its host ports' capacity; a pod spine's super-spine
    uplinks at least its leaf ports'.
    Fails when: downlink capacity exceeds uplink capacity, naming the switch, both capacities and
    the oversubscription ratio. Virtual when a speed came from the lab's virtual ASIC.
    Fix: Add uplink capacity (spines, super-spines, faster or more uplinks) until it covers the
    downlinks, or accept the ratio knowingly; `non_blocking: true` in fabric.yaml makes an
    oversubscribed tier a refusal at load.
    """
    plan = ctx.plan.devices
    for name in ctx.state.devices:
        device = ctx.observed(name)
        planned = plan.get(name)
        if device is None or planned is None or device.role not in (Role.LEAF, Role.SPINE):
            continue
        if device.role is Role.SPINE and planned.pod is None:
            continue  # a 3-stage spine is the top tier: nothing above it
        ports = device.interfaces.values()
        fabric = [i for i in ports if i.kind is IfKind.FABRIC and i.parent is None]
        if device.role is Role.LEAF:
            up_ports, down_ports = fabric, [i for i in ports if i.kind is IfKind.HOST_PORT]
        else:
            ranks = {i.name: _peer_rank(ctx, planned, i) for i in fabric}
            up_ports = [i for i in fabric if ranks[i.name] > RANK[Role.SPINE]]
            down_ports = [i for i in fabric if 0 <= ranks[i.name] < RANK[Role.SPINE]]
        up, up_qos = _capacity(up_ports)
        down, down_qos = _capacity(down_ports)
        if down > up:
            virtual = (up_qos or down_qos) and device.qos is not None and device.qos.virtual
            below = "hosts" if device.role is Role.LEAF else "leaves"
            yield item.finding(name, f"{name} is oversubscribed: {down} Mb/s towards {below}, "
                               f"{up} Mb/s of uplinks ({down / max(up, 1):.2f}:1)",
                               expected=f">= {down} Mb/s", actual=f"{up} Mb/s",
                               virtual=bool(virtual))
