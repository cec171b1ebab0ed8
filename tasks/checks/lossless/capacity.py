"""Capacity: a leaf's uplinks carry what its hosts can send (no oversubscribed lossless leaf)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from tasks.checks.base import Check, CheckContext, Finding, Scope, Severity, check
from tasks.model.state import IfKind, Interface, Role


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


@check("fabric.nonblocking", "Every leaf has at least as much uplink as host-facing capacity",
       scope=Scope.FABRIC, severity=Severity.WARNING)
def nonblocking(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    for name in ctx.state.devices:
        device = ctx.observed(name)
        if device is None or device.role is not Role.LEAF:
            continue
        ports = device.interfaces.values()
        up, up_qos = _capacity(i for i in ports if i.kind is IfKind.FABRIC and i.parent is None)
        down, down_qos = _capacity(i for i in ports if i.kind is IfKind.HOST_PORT)
        if down > up:
            virtual = (up_qos or down_qos) and device.qos is not None and device.qos.virtual
            yield item.finding(name, f"{name} is oversubscribed: {down} Mb/s towards hosts, "
                               f"{up} Mb/s of uplinks ({down / max(up, 1):.2f}:1)",
                               expected=f">= {down} Mb/s", actual=f"{up} Mb/s",
                               virtual=bool(virtual))
