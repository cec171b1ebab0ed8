"""How switches pick a path per packet beyond the hash (fabric.yaml `load_balancing.mode`):
the same way on every switch of a tier, per-packet spraying only towards NICs that put
packets back in order, adaptive routing only on plain routed ports."""

from __future__ import annotations

from collections.abc import Iterator

from flatfab.checks.base import Check, CheckContext, Finding, Scope, Severity, check
from flatfab.model.state import (
    SWITCH_ROLES,
    DeviceState,
    IfKind,
    LbMode,
    LinkKind,
    LoadBalancing,
    Role,
)


def _way(lb: LoadBalancing | None) -> str:
    if lb is None:
        return "unknown"
    timer = f" ({lb.flowlet_us} us)" if lb.flowlet_us is not None else ""
    return f"{lb.mode.value}{timer}"


@check("lb.mode", "Every switch of a tier balances load the same way",
       scope=Scope.FABRIC, severity=Severity.ERROR)
def mode(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: each switch's way of picking a path per packet (`hash`, `resilient`, `flowlet` with
    its inactivity time, `adaptive`, `spray`): the intent's `load_balancing.mode` statically,
    what each switch states live.
    Expects: one way on every switch of a tier (leaf, spine, super-spine; per plane where there
    are planes): a switch that moves flows while its peers pin them, or the other way round,
    reorders and unbalances the flows that cross it, and no routing check sees it.
    Fails when: a switch of a tier differs from the way most of its tier balances (ties: from
    the plan's), named at the switch. A switch whose way is not read is not judged.
    Fix: Live: `flatfab rollout` puts the switch back. From `flatfab check`: set one `mode` in
    fabric.yaml's `load_balancing`.
    """
    tiers: dict[tuple[Role, int | None], list[tuple[str, DeviceState]]] = {}
    for name, device in ctx.readable.items():
        if device.role in SWITCH_ROLES and device.lb is not None:
            tiers.setdefault((device.role, device.plane), []).append((name, device))
    for (role, _plane), members in sorted(tiers.items(), key=lambda t: (t[0][0].value,
                                                                          t[0][1] or 0)):
        counts: dict[str, int] = {}
        for _, device in members:
            counts[_way(device.lb)] = counts.get(_way(device.lb), 0) + 1
        planned = {_way(d.lb) for d in ctx.plan.devices.values() if d.role is role
                   and d.plane == _plane and d.lb is not None}
        usual = max(sorted(counts), key=lambda w: (counts[w], w in planned))
        for name, device in sorted(members):
            way = _way(device.lb)
            if way != usual:
                yield item.finding(name, f"{name} balances by {way}, the other {role.value}s "
                                   f"of its tier by {usual}", expected=usual, actual=way)


@check("lb.spray_hosts", "Every host NIC of a spraying fabric puts packets back in order",
       scope=Scope.DEVICE, severity=Severity.ERROR)
def spray_hosts(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the plan's `load_balancing.mode` and, for every host NIC, whether the intent says
    it reorders packets of a flow that arrive out of order (qos.yaml `hosts.out_of_order`, or
    an override's `nic`).
    Expects: in a fabric that sprays packets over every path, every NIC reorders them: a NIC
    that does not takes each packet that overtook another for a loss, and RoCE's go-back-N
    retransmits the rest of the window.
    Fails when: the fabric sprays and a NIC does not accept packets out of order, named at the
    host and NIC. What a NIC accepts is the intent's statement about it, never read.
    Fix: Spray only where every NIC accepts it (set `hosts.out_of_order: true` for NICs that do,
    for instance ConnectX-8 with out-of-order delivery enabled), or balance by `adaptive` or
    `flowlet` instead.
    """
    plan = ctx.plan
    # a plane's switches spray towards its NICs only (None: a fabric without planes)
    spraying = {d.plane for d in plan.devices.values()
                if d.lb is not None and d.lb.mode is LbMode.SPRAY}
    if not spraying:
        return
    leaf_of = {(link.b.device, link.b.port): link.a.device for link in plan.links
               if link.kind is LinkKind.HOST}
    leaf_of.update({(link.a.device, link.a.port): link.b.device for link in plan.links
                    if link.kind is LinkKind.HOST})
    for name, host in sorted(plan.devices.items()):
        if host.role is not Role.HOST:
            continue
        for port, iface in sorted(host.interfaces.items()):
            leaf = plan.devices.get(leaf_of.get((name, port), ""))
            if leaf is None or leaf.plane not in spraying:
                continue
            if iface.nic is not None and not iface.nic.out_of_order:
                yield item.finding(name, f"{name}:{port} receives sprayed RoCE packets but "
                                   "does not put them back in order", port=port,
                                   expected="out-of-order delivery accepted",
                                   actual="in order only")


@check("lb.adaptive_ports", "Every port of an adaptive-routing switch is a plain routed port",
       scope=Scope.DEVICE, severity=Severity.ERROR)
def adaptive_ports(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: each switch's way of balancing and its fabric ports: VRF sub-interfaces on them,
    link aggregation (the plan statically; what the switch states live).
    Expects: adaptive routing only where every fabric port is a plain routed port: NVIDIA
    documents adaptive routing on physical ports only, not on sub-interfaces, SVIs, bonds or
    bond members; a port it cannot steer keeps static hashing and the tier balances unevenly
    (NVUE still holds the switch-wide state when no port can take it).
    Fails when: a switch routes adaptively and a fabric port carries VRF sub-interfaces or is a
    bond (member), named at the port.
    Fix: Carry tenants without VRF sub-interfaces on the fabric links (routed ports only), or
    balance by `flowlet` or `hash` instead.
    """
    for name, device in sorted(ctx.readable.items()):
        if device.role not in SWITCH_ROLES or device.lb is None \
                or device.lb.mode is not LbMode.ADAPTIVE:
            continue
        parents = {i.parent for i in device.interfaces.values() if i.parent is not None}
        for port, iface in sorted(device.interfaces.items()):
            if iface.kind is not IfKind.FABRIC or iface.parent is not None:
                continue
            why = ("is a bond member" if iface.lag else "carries VRF sub-interfaces"
                   if port in parents else None)
            if why is not None:
                yield item.finding(name, f"{name}:{port} {why}: adaptive routing does not "
                                   "steer it", port=port, expected="a plain routed port",
                                   actual=why)
