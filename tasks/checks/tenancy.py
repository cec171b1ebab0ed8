"""Tenant VRFs end to end: reachability, jumbo frames with DF, isolation between tenants.

Each host pings one peer per remote leaf of its own VRF and one host of every other VRF
(planned in flatfab.plan.planner), so the cost is O(hosts x leaves), not O(hosts^2).
"""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import ip_network

from flatfab.checks.base import (
    Check,
    CheckContext,
    Finding,
    Scope,
    Severity,
    Stage,
    check,
    every_host,
)
from flatfab.model.state import DEFAULT_VRF, DeviceState, Interface, NextHop, Probe, Role


def _probes(ctx: CheckContext) -> Iterator[tuple[str, str, str, Probe]]:
    for host in ctx.plan.of_role(Role.HOST):
        device = ctx.observed(host.name)
        if device is None:
            continue
        first = next(iter(host.interfaces))
        for probe in device.probes:
            if probe.replied is not None:
                yield host.name, probe.nic or first, host.tenant or DEFAULT_VRF, probe


def _describe(src: str, probe: Probe) -> str:
    df = " DF" if probe.dont_fragment else ""
    origin = f" {probe.nic}" if probe.nic else ""
    return f"{src}{origin} -> {probe.target} ({probe.address}) {probe.size + 28} B{df}"


def same_tenant(ctx: CheckContext, src: str, probe: Probe) -> bool:
    """A probe that must go unanswered inside one tenant tests a plane, not a tenant."""
    target = ctx.plan.devices.get(probe.target)
    return target is not None and target.tenant == ctx.plan.devices[src].tenant


def _failed(ctx: CheckContext, *, expect_reply: bool,
            dont_fragment: bool | None) -> Iterator[tuple[str, str, str, Probe]]:
    """Probes of one kind whose outcome is not the expected one."""
    for src, nic, vrf, probe in _probes(ctx):
        if probe.expect_reply != expect_reply or (
                dont_fragment is not None and probe.dont_fragment != dont_fragment):
            continue
        if bool(probe.replied) != expect_reply:
            yield src, nic, vrf, probe


@check("tenant.reachability", "Hosts reach every leaf of their own tenant",
       scope=Scope.PATH, severity=Severity.CRITICAL, stages=[Stage.LIVE], hosts=every_host)
def reachability(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, the outcome of each host's small probes that must be answered: the next host on
    its own leaf and the first host of each of the next leaves on its tenant's ring (a multi-NIC
    server probes from each NIC, on its plane's ring).
    Expects: every such probe is answered.
    Fails when: a probe gets no reply; the finding names source host, NIC and target with ping's
    detail. A probe that was not run is not judged.
    Fix: Follow the named path: the source host's NIC and routes (`host.routing` on a multi-NIC
    server), its leaf port and gateway (`interface.up`, `interface.present`), BGP in the tenant's
    VRF (`bgp.session`), then the far leaf. The findings of those checks usually name the cause; fix
    it and verify again.
    """
    for src, nic, vrf, probe in _failed(ctx, expect_reply=True, dont_fragment=False):
        yield item.finding(src, f"{_describe(src, probe)}: no reply ({probe.detail})",
                           port=nic, vrf=vrf, expected="reply", actual=probe.detail)


@check("tenant.mtu", "Full-MTU frames with don't-fragment cross the fabric",
       scope=Scope.PATH, severity=Severity.ERROR, stages=[Stage.LIVE], hosts=every_host)
def jumbo(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, the outcome of each host's full-MTU probes with don't-fragment set, to the first
    host of each of the next leaves on its tenant's ring.
    Expects: every such probe is answered.
    Fails when: a probe gets no reply (a hop with a smaller MTU, or no path); the finding names
    source host, NIC and target with ping's detail. A probe that was not run is not judged.
    Fix: A hop on the path has a smaller MTU than the hosts send: look for `interface.mtu` and
    `link.mtu_match` findings on it (the ping detail names a router that needs fragmentation, with
    its next-hop MTU). Restore the MTU with `flatfab rollout`, or, where a device cannot take it,
    lower the hosts' MTU in hosts.yaml.
    """
    for src, nic, vrf, probe in _failed(ctx, expect_reply=True, dont_fragment=True):
        yield item.finding(src, f"{_describe(src, probe)}: no reply ({probe.detail})",
                           port=nic, vrf=vrf, expected="reply", actual=probe.detail)


@check("tenant.isolation", "Hosts cannot reach hosts of another tenant",
       scope=Scope.PATH, severity=Severity.CRITICAL, stages=[Stage.LIVE], hosts=every_host)
def isolation(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, the outcome of each host's probes that must go unanswered: to one host of every
    other tenant on its own leaf and one behind another leaf (in its plane).
    Expects: no reply.
    Fails when: such a probe is answered. An answered probe inside one tenant (into another plane)
    is `plane.independence`'s.
    Fix: Tenants reach each other: treat it as a security incident. Look for `tenant.leak` findings
    (a link or route joining two VRFs) and anything configured by hand, and `flatfab rollout` to
    remove it; check that each host is in the tenant tenants.yaml says (`members`).
    """
    for src, nic, vrf, probe in _failed(ctx, expect_reply=False, dont_fragment=None):
        if same_tenant(ctx, src, probe):
            continue  # a probe into another plane: plane.independence judges it
        yield item.finding(src, f"{_describe(src, probe)}: answered across tenants",
                           port=nic, vrf=vrf, expected="no reply", actual="reply")


def _link_leaks(ctx: CheckContext) -> Iterator[tuple[str, str, str]]:
    """(device, port, message) for every link end in a VRF other than its link's."""
    for link in ctx.plan.links:
        for end in (link.a, link.b):
            device = ctx.observed(end.device)
            iface = device.interfaces.get(end.port) if device is not None else None
            if device is None or device.role is Role.HOST or iface is None:
                continue
            if iface.vrf != link.vrf:
                yield (end.device, end.port, f"{end.device}:{end.port} is in VRF {iface.vrf}, "
                       f"but its link {link.id} belongs to {link.vrf}: the two routing "
                       "tables are joined")


class _SubnetOwners:
    """Which tenant a prefix belongs to: its own subnet, or one it lies inside (a host route
    or a more specific prefix leaked from another tenant is as much a leak as the subnet)."""

    def __init__(self, ctx: CheckContext) -> None:
        self.subnets = {ip_network(subnet): (name, subnet) for name, tenant
                        in ctx.plan.tenants.items() for subnet in tenant.subnets.values()}
        # a handful of lengths: a lookup walks only those, not every subnet
        self.lengths = sorted({net.prefixlen for net in self.subnets}, reverse=True)
        # every leaf holds the same remote prefixes: each is parsed once per run
        self._known: dict[str, tuple[str, str] | None] = {}

    def of(self, prefix: str) -> tuple[str, str] | None:
        """(tenant, subnet) for a prefix inside a tenant subnet; None for anything else,
        a supernet such as a default route included (it is judged by where it leads)."""
        if prefix not in self._known:
            self._known[prefix] = self._lookup(prefix)
        return self._known[prefix]

    def _lookup(self, prefix: str) -> tuple[str, str] | None:
        try:
            net = ip_network(prefix, strict=False)
        except ValueError:
            return None
        for length in self.lengths:
            if length <= net.prefixlen:
                hit = self.subnets.get(net.supernet(new_prefix=length))
                if hit is not None:
                    return hit
        return None


def _route_leaks(ctx: CheckContext) -> Iterator[tuple[str, str, str]]:
    """(device, vrf, message) for routes that reach another tenant's subnets or leave
    through an interface of another VRF."""
    owner = _SubnetOwners(ctx)
    for name in ctx.state.devices:
        device = ctx.observed(name)
        if device is None or device.role is Role.HOST or not device.routes:
            continue
        for vrf, table in device.routes.items():
            # routes that share a list of next hops (collect shares them) leave the same way:
            # each list is judged once per VRF
            exits: dict[int, Interface | None] = {}
            for prefix, route in table.items():
                hit = owner.of(prefix)
                if hit is not None and hit[0] != vrf:
                    inside = "" if hit[1] == prefix else f", inside {hit[1]}"
                    yield (name, vrf, f"{name} VRF {vrf} has a {route.protocol or 'route'} "
                           f"route to {prefix}{inside} of tenant {hit[0]}")
                    continue
                key = id(route.nexthops)
                if key not in exits:
                    exits[key] = _foreign_exit(device, vrf, route.nexthops)
                out = exits[key]
                if out is not None:
                    yield (name, vrf, f"{name} VRF {vrf} routes {prefix} out of "
                           f"{out.name}, which is in VRF {out.vrf}")


def _foreign_exit(device: DeviceState, vrf: str, hops: list[NextHop]) -> Interface | None:
    """The first next hop's interface that is in another VRF than `vrf`, if any. An EVPN/VXLAN
    next hop is not judged by its interface: one VXLAN interface carries every VRF, each by its
    own VNI, so the tunnel joins no two tables."""
    for hop in hops:
        if hop.overlay:
            continue
        out = device.interfaces.get(hop.interface or "")
        if out is not None and out.vrf != vrf:
            return out
    return None


@check("tenant.leak", "No switch joins two tenants' routing tables (a link, a route)",
       scope=Scope.DEVICE, severity=Severity.CRITICAL)
def leak(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: on each readable switch (planned statically, observed live), the VRF of both ends of
    every planned link, and every route of every VRF with its next hops.
    Expects: every link end is in its link's VRF; no VRF has a route to another tenant's subnet (or
    a prefix inside it) or a route that leaves by an interface of another VRF.
    Fails when: a link end sits in another VRF (two routing tables joined), a VRF routes into
    another tenant's subnet, or a route leaves by another VRF's interface. A supernet such as a
    default route is judged only by the interface it leaves by; an EVPN/VXLAN next hop not by
    its VXLAN interface, which carries every VRF by its own VNI.
    Fix: Remove the join: a link end in the wrong VRF, or a route into another tenant's subnet, is
    config drift (`flatfab audit` names the section) that `flatfab rollout` undoes. From `flatfab
    check`, the intent itself joins them: correct tenants.yaml and hosts.yaml until the check is
    clean.
    """
    for device, port, message in _link_leaks(ctx):
        yield item.finding(device, message, port=port, expected="one VRF per link",
                           actual="two VRFs")
    for device, vrf, message in _route_leaks(ctx):
        yield item.finding(device, message, vrf=vrf, expected="no route into another VRF",
                           actual="leaked")
