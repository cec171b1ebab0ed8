"""MTU (I-17): every hop of the lossless path carries a full RoCE frame and the hosts' MTU."""

from __future__ import annotations

from collections.abc import Iterator

from flatfab.checks.base import Check, CheckContext, Finding, Scope, Severity, check
from flatfab.checks.lossless.common import lossless_host, nics, profile
from flatfab.model.state import Role
from flatfab.model.wire import ROCE_HEADER_BYTES


@check("mtu.roce_chain", "Every lossless hop's MTU fits a RoCE frame and the largest host MTU",
       scope=Scope.DEVICE, severity=Severity.ERROR, hosts=lossless_host)
def roce_chain(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the MTU of every host NIC with lossless settings, of every switch port with lossless
    state and of its VRF sub-interfaces; the profile's RoCE MTU (else the plan's).
    Expects: every NIC's MTU is at least the RoCE MTU plus RoCE headers; every switch port's is at
    least that and the largest host NIC MTU (an unmanaged host's as planned).
    Fails when: an MTU is below that. An MTU not reported is not judged. Findings are never virtual:
    MTUs are the interfaces' own (the kernel's in the lab).
    Fix: Raise the MTU the finding names (a link class's `mtu`, a host's `mtu`) to at least
    `roce_mtu` + 96 B and, on switch ports, the largest host MTU; or lower `roce_mtu`. Live,
    `flatfab rollout` restores an MTU that drifted.
    """
    lossless = profile(ctx)
    roce_mtu = lossless.roce_mtu if lossless is not None and lossless.roce_mtu else \
        ctx.plan.roce_mtu
    need = roce_mtu + ROCE_HEADER_BYTES
    why = f"RoCE MTU {roce_mtu} + {ROCE_HEADER_BYTES} B of headers"
    host_mtu = 0
    for nic in nics(ctx):
        mtu = nic.iface.mtu
        if mtu is None:
            continue
        host_mtu = max(host_mtu, mtu)
        if mtu < need:
            yield item.finding(nic.device.name, f"{nic.name} MTU {mtu} is below {need} ({why})",
                               port=nic.iface.name, expected=f">= {need}", actual=str(mtu))
    if ctx.live:  # an unmanaged host is never read: the switches must carry its planned MTU
        host_mtu = max([host_mtu, *(iface.mtu or 0 for host in ctx.plan.devices.values()
                                    if not host.managed for iface in host.interfaces.values()
                                    if iface.nic is not None)])
    floor, floor_why = (host_mtu, f"the largest host MTU {host_mtu}") if host_mtu > need else (
        need, why)
    for name in ctx.state.devices:
        device = ctx.observed(name)
        if device is None or device.role is Role.HOST:
            continue
        lossless_ports = {n for n, i in device.interfaces.items() if i.qos is not None}
        for iface in device.interfaces.values():
            # lossless ports and their VRF sub-interfaces, which carry the tenants' RoCE
            if iface.qos is None and iface.parent not in lossless_ports:
                continue
            if iface.mtu is not None and iface.mtu < floor:
                yield item.finding(name, f"{name}:{iface.name} MTU {iface.mtu} is below "
                                   f"{floor} ({floor_why})", port=iface.name, vrf=iface.vrf,
                                   expected=f">= {floor}", actual=str(iface.mtu))
