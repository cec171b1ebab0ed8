"""The shape of an AI back-end: rails, planes, and each NIC of a server routed on its own.

Rail-optimized designs (NVIDIA DGX SuperPOD / Spectrum-X reference architectures) put NIC k
of every server of a scalable unit on the SU's rail-k leaf, at the port numbered after the
server, so that the collective libraries' same-rail traffic is one hop. Multi-plane designs
keep planes apart: nothing may connect two planes, or a failure in one reaches the other.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from flatfab.checks.base import Check, CheckContext, Finding, Scope, Severity, Stage, check
from flatfab.checks.tenancy import same_tenant
from flatfab.checks.underlay import route_exits
from flatfab.model.state import DeviceState, FabricState, IfKind, Interface, LinkKind, Role


def multi_nic(_plan: FabricState, host: DeviceState) -> bool:
    """A server whose NICs are routed each on its own (what host.routing judges)."""
    return len(host.interfaces) > 1


def in_a_plane(plan: FabricState, host: DeviceState) -> bool:
    """A host cabled into a plane (whose probes into other planes are judged)."""
    for nic in host.interfaces.values():
        leaf = plan.devices.get(nic.peer.device) if nic.peer is not None else None
        if leaf is not None and leaf.plane is not None:
            return True
    return False


def _railed_nics(ctx: CheckContext) -> Iterator[tuple[DeviceState, Interface]]:
    for server in ctx.plan.devices.values():
        if server.role is Role.HOST:
            for nic in server.interfaces.values():
                if nic.rail is not None and nic.peer is not None:
                    yield server, nic


@check("rail.alignment", "NIC k of each SU server sits on the SU's rail-k leaf, at its port",
       scope=Scope.LINK, severity=Severity.ERROR)
def rail_alignment(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the plan's rail and leaf port of every railed server NIC and the rail and SU of that
    leaf; live, also the LLDP neighbour the leaf sees on that port.
    Expects: NIC k of a server is on the rail-k leaf of the server's SU, and LLDP there sees that
    NIC.
    Fails when: the plan cables the NIC to a leaf of another rail or SU (explicit cabling), or the
    leaf sees another NIC or server on the port: two NICs swapped between rails are both named. A
    port with no LLDP neighbour is not judged.
    Fix: Recable as the finding says: NIC k of a server belongs on its SU's rail-k leaf, at the
    server's port. If the plan itself puts the NIC elsewhere (explicit `cabling` in hosts.yaml),
    correct that entry. A NIC on the wrong rail turns one-hop same-rail traffic into spine traffic.
    """
    plan = ctx.plan
    for server, nic in _railed_nics(ctx):
        assert nic.peer is not None
        leaf = plan.devices.get(nic.peer.device)
        if leaf is None:
            continue
        if leaf.rail != nic.rail or leaf.su != server.su:
            yield item.finding(
                server.name, f"{server.name} {nic.name} (rail {nic.rail}, SU {server.su}) is "
                f"planned on {leaf.name}:{nic.peer.port} (rail {leaf.rail}, SU {leaf.su})",
                port=nic.name, expected=f"rail {nic.rail} leaf of SU {server.su}",
                actual=f"{leaf.name} (rail {leaf.rail})")
        if not ctx.live:
            continue
        seen_leaf = ctx.observed(leaf.name)
        port = seen_leaf.interfaces.get(nic.peer.port) if seen_leaf else None
        if port is None or port.peer is None:
            continue  # no LLDP neighbour: nothing contradicts the plan
        if (port.peer.device, port.peer.port) == (server.name, nic.name):
            continue
        far = plan.devices.get(port.peer.device)
        far_nic = far.interfaces.get(port.peer.port) if far is not None else None
        far_rail = f" (rail {far_nic.rail})" if far_nic is not None and far_nic.rail else ""
        yield item.finding(
            leaf.name, f"{server.name} {nic.name} (rail {nic.rail}) belongs on {leaf.name}:"
            f"{nic.peer.port} (rail {leaf.rail}), where LLDP sees {port.peer}{far_rail}",
            port=nic.peer.port, link=f"{server.name}:{nic.name}--{leaf.name}:{nic.peer.port}",
            expected=f"{server.name}:{nic.name}", actual=str(port.peer))


def _planes(ctx: CheckContext) -> dict[str, int]:
    return {n: d.plane for n, d in ctx.plan.devices.items() if d.plane is not None}


def _plane_prefixes(ctx: CheckContext, planes: dict[str, int],
                    ) -> dict[str, tuple[int, str]]:
    """Prefix -> (plane, device) of what only one plane's switches originate."""
    out: dict[str, tuple[int, str]] = {}
    for name, plane in planes.items():
        device = ctx.plan.devices[name]
        for bgp in device.bgp.values():
            for prefix in bgp.networks:
                out[str(ipaddress.ip_network(prefix, strict=False))] = (plane, name)
    return out


@check("plane.independence", "No link, BGP session or route joins two planes",
       scope=Scope.FABRIC, severity=Severity.CRITICAL, hosts=in_a_plane)
def plane_independence(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: each switch's plane from the plan and the planned fabric links; live, also every
    switch port's LLDP neighbour, every BGP session's peer, every routing table, and the hosts'
    probes into another plane.
    Expects: links, sessions and routes stay within one plane, and no host reaches another plane.
    Fails when: a link is planned or cabled across planes, a switch has a session with a switch of
    another plane, a VRF routes prefixes that the plan has another plane's switches originate, or a
    probe into another plane is answered. A fabric without planes is not judged.
    Fix: Remove what joins the planes: a cable between them (recable), a session or route configured
    by hand (`flatfab audit`, then `flatfab rollout`), or an intent that links them (`planes.rails`,
    a server's explicit `cabling`). A fault in one plane must stay in it.
    """
    planes = _planes(ctx)
    if not planes:
        return
    for link in ctx.plan.links:
        if link.kind is LinkKind.FABRIC and link.parent is None:
            a, b = planes.get(link.a.device), planes.get(link.b.device)
            if a is not None and b is not None and a != b:
                yield item.finding(link.a.device, f"{link.id} joins plane {a} and plane {b}",
                                   port=link.a.port, link=link.id, expected=f"plane {a}",
                                   actual=f"plane {b}")
    if not ctx.live:
        return
    for server in ctx.plan.of_role(Role.HOST):
        device = ctx.observed(server.name)
        for probe in device.probes if device is not None else []:
            if probe.expect_reply or not probe.replied or not same_tenant(ctx, server.name,
                                                                          probe):
                continue
            nic = server.interfaces.get(probe.nic or "")
            leaf = ctx.plan.devices.get(nic.peer.device) if nic and nic.peer else None
            here = leaf.plane if leaf is not None else None
            yield item.finding(server.name, f"{server.name} {probe.nic or ''} (plane {here}) "
                               f"reached {probe.target} ({probe.address}) in another plane",
                               port=probe.nic, expected="no reply", actual="reply")
    prefixes = _plane_prefixes(ctx, planes)
    for name, plane in sorted(planes.items()):
        device = ctx.observed(name)
        if device is None:
            continue
        for iface in device.interfaces.values():
            peer = iface.peer
            if iface.kind is not IfKind.FABRIC or iface.parent is not None or peer is None:
                continue
            other = planes.get(peer.device)
            if other is not None and other != plane:
                yield item.finding(name, f"{name}:{iface.name} (plane {plane}) is cabled to "
                                   f"{peer} (plane {other})", port=iface.name,
                                   expected=f"a plane {plane} switch", actual=f"{peer}")
        for vrf, bgp in device.bgp.items():
            for peer_state in bgp.peers.values():
                other = planes.get(peer_state.peer_device or "")
                if other is not None and other != plane:
                    yield item.finding(name, f"{name} VRF {vrf} has a BGP session with "
                                       f"{peer_state.peer_device} (plane {other}) on "
                                       f"{peer_state.key}", port=peer_state.interface, vrf=vrf,
                                       expected="no session across planes",
                                       actual=f"{peer_state.state or 'configured'}")
        for vrf, table in (device.routes or {}).items():
            leaked = [(p, prefixes[p]) for p in table if p in prefixes
                      and prefixes[p][0] != plane]
            if leaked:
                shown = ", ".join(f"{p} ({origin})" for p, (_, origin) in leaked[:4])
                # the port the leak leaves through: the first leaked route's next hop's
                ports = sorted({hop.interface for p, _ in leaked for hop in table[p].nexthops
                                if hop.interface is not None})
                via = f" via {', '.join(ports[:4])}" if ports else ""
                yield item.finding(name, f"{name} (plane {plane}) VRF {vrf} routes "
                                   f"{len(leaked)} prefixes of another plane{via}: {shown}",
                                   port=ports[0] if ports else None, vrf=vrf,
                                   expected="no route into another plane",
                                   actual=f"{len(leaked)} routes")


def _ranks(ctx: CheckContext) -> dict[str, int]:
    rank = {Role.LEAF: 0, Role.SPINE: 1, Role.SUPERSPINE: 2}
    return {n: rank[d.role] for n, d in ctx.plan.devices.items() if d.role in rank}


@check("ecmp.pod_paths", "Pod spines reach other pods' leaves through every super-spine",
       scope=Scope.PATH, severity=Severity.ERROR, stages=[Stage.LIVE])
def pod_paths(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, each pod spine's routing table in every VRF of its super-spine uplinks; from the
    plan, those uplinks and the prefixes every leaf of another pod in its plane originates.
    Expects: every such prefix has a next hop through each super-spine uplink whose super-spine
    reaches that leaf's pod.
    Fails when: next hops are missing: one finding per spine, VRF and set of missing uplinks, naming
    the super-spines and the prefixes hit (a pod spine that lost its super-spine sessions is named
    here). A spine whose routes were not read is not judged.
    Fix: Check the named super-spines' sessions and links to this pod spine (`bgp.session`,
    `interface.up`); if they are up, look at the super-spines' routes towards the target pod and at
    `underlay.maximum_paths`. Traffic between pods runs on the remaining super-spines meanwhile.
    """
    plan = ctx.plan
    up: dict[str, dict[str, dict[str, str]]] = {}  # spine -> vrf -> super-spine -> port
    reaches: dict[str, set[int]] = {}  # super-spine -> pods below it
    for spine in plan.of_role(Role.SPINE):
        if spine.pod is None:
            continue
        for iface in spine.interfaces.values():
            if iface.kind is IfKind.FABRIC and iface.peer is not None:
                top = plan.devices.get(iface.peer.device)
                if top is not None and top.role is Role.SUPERSPINE:
                    up.setdefault(spine.name, {}).setdefault(iface.vrf, {})[top.name] = \
                        iface.name
                    reaches.setdefault(top.name, set()).add(spine.pod)
    leaves = [leaf for leaf in plan.of_role(Role.LEAF) if leaf.pod is not None]
    for spine_name, by_vrf in sorted(up.items()):
        spine = plan.devices[spine_name]
        device = ctx.observed(spine_name)
        if device is None or device.routes is None:
            continue
        # an EVPN/VXLAN next hop leaves by its VTEP's underlay ports (underlay.route_exits)
        ports = {i.name: i.parent for i in spine.interfaces.values() if i.parent}
        tunnels: dict[str, frozenset[str]] = {}
        for vrf, tops in sorted(by_vrf.items()):
            table = device.routes.get(vrf, {})
            gaps: dict[tuple[str, ...], list[str]] = {}
            for leaf in leaves:
                if leaf.pod == spine.pod or leaf.plane != spine.plane or vrf not in leaf.bgp:
                    continue
                expected = sorted(p for top, p in tops.items()
                                  if leaf.pod in reaches.get(top, set()))
                for prefix in leaf.bgp[vrf].networks:
                    route = table.get(prefix)
                    got = route_exits(device, route.nexthops, tunnels) if route else set()
                    missing = tuple(p for p in expected
                                    if p not in got and ports.get(p) not in got)
                    if missing:
                        gaps.setdefault(missing, []).append(f"{prefix} ({leaf.name})")
            for missing, hit in sorted(gaps.items()):
                names = sorted(t for t, p in tops.items() if p in missing)
                shown = ", ".join(hit[:4]) + (f" and {len(hit) - 4} more" if len(hit) > 4
                                              else "")
                yield item.finding(spine_name, f"{spine_name} VRF {vrf}: no path via "
                                   f"{', '.join(names)} ({', '.join(missing)}) to {len(hit)} "
                                   f"prefixes of other pods: {shown}", port=",".join(missing),
                                   vrf=vrf, expected=f"{len(tops)} paths per prefix",
                                   actual=f"{len(tops) - len(missing)} paths")


@check("host.routing", "Traffic from each NIC of a multi-NIC server leaves through that NIC",
       scope=Scope.DEVICE, severity=Severity.ERROR, hosts=multi_nic)
def host_routing(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: each multi-NIC server's policy rules, routing tables and per-NIC `arp_ignore`,
    `arp_announce` and `rp_filter` (planned statically, collected live); live, also the NIC each
    probe left by.
    Expects: per NIC, a rule from the NIC's address to a table whose default route leaves by that
    NIC, probes from the NIC leaving by it, and the planned ARP and reverse-path settings.
    Fails when: a NIC has no rule, its table's default route is missing or leaves by another NIC, a
    probe from it left by another NIC, or a setting differs from the plan (one the server does not
    report is not judged). The finding names server and NIC.
    Fix: `flatfab rollout` puts the host's rules, tables and ARP and reverse-path settings back
    (`flatfab audit` shows which drifted). A probe that left by another NIC while the config is in
    place points at another NIC answering ARP for the address, or at a NIC cabled to the wrong leaf
    (`rail.alignment`).
    """
    for name, planned in ctx.plan.devices.items():
        if planned.role is not Role.HOST or len(planned.interfaces) < 2:
            continue  # a switch, or a one-NIC host: nothing to route apart
        nics = [i for i in planned.interfaces.values() if i.kind is IfKind.NIC]
        if len(nics) < 2:
            continue
        device = ctx.observed(name)
        if device is None:
            continue
        rules = {r.source: r.table for r in device.rules}
        for nic in nics:
            address = nic.addresses[0].split("/")[0] if nic.addresses else None
            if address is None:
                continue
            table = rules.get(address)
            if table is None:
                yield item.finding(name, f"{name} {nic.name}: no rule routes traffic from "
                                   f"{address} by a table of its own; it leaves by the main "
                                   "table", port=nic.name, expected=f"from {address} lookup "
                                   "<table>", actual="no rule")
                continue
            defaults = [r for r in device.static_routes
                        if r.table == table and r.prefix == "0.0.0.0/0"]
            wrong = [r for r in defaults if r.interface != nic.name]
            if not defaults or wrong:
                via = ", ".join(f"dev {r.interface}" for r in defaults) or "no default route"
                yield item.finding(name, f"{name} {nic.name}: traffic from {address} (table "
                                   f"{table}) leaves by {via}", port=nic.name,
                                   expected=f"dev {nic.name}", actual=via)
            for probe in device.probes:
                if probe.nic == nic.name and probe.left_by and probe.left_by != nic.name:
                    yield item.finding(name, f"{name} {nic.name}: a probe from {address} to "
                                       f"{probe.target} ({probe.address}) left by "
                                       f"{probe.left_by}", port=nic.name,
                                       expected=f"dev {nic.name}", actual=f"dev {probe.left_by}")
                    break
            for key in ("arp_ignore", "arp_announce", "rp_filter"):
                sysctl = f"net.ipv4.conf.{nic.name}.{key}"
                want = planned.sysctls.get(sysctl)
                got = device.sysctls.get(sysctl)
                if want is not None and got is not None and got != want:
                    yield item.finding(name, f"{name} {nic.name}: {key} is {got}, planned "
                                       f"{want}", port=nic.name, expected=want, actual=got)


@check("ecmp.width", "Every switch of a tier has as many uplinks as the others of its plane",
       scope=Scope.FABRIC, severity=Severity.WARNING)
def ecmp_width(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: each leaf's and (5-stage) pod spine's physical uplinks to the tier above, as the plan
    cables them, counting those present and not down (planned statically, observed live).
    Expects: every switch of a tier and plane has as many uplinks as the widest of them: collective
    traffic spreads evenly over ECMP only when every path of a tier is as wide.
    Fails when: a switch has fewer, naming its count and the tier's. A pod spine with no uplink
    counted is left out.
    Fix: Bring the missing uplinks up (`interface.up` and `cabling.lldp` name them), or, where a
    switch has fewer by design, give every switch of the tier the same number: collective traffic
    runs at the narrowest switch's pace.
    """
    plan = ctx.plan
    rank = {Role.LEAF: 0, Role.SPINE: 1, Role.SUPERSPINE: 2}
    widths: dict[tuple[Role, int | None], dict[str, int]] = {}
    missing: dict[str, list[str]] = {}  # planned uplinks down or absent, by switch
    # a 3-stage spine is the top tier: only leaves (and pod spines under super-spines) have
    # uplinks to count
    tiers = (Role.LEAF, Role.SPINE) if plan.of_role(Role.SUPERSPINE) else (Role.LEAF,)
    for name, planned in plan.devices.items():
        if planned.role not in tiers:
            continue
        device = ctx.observed(name)
        if device is None:
            continue
        count, lost = 0, []
        for iface in planned.interfaces.values():
            if iface.parent is not None or iface.kind is not IfKind.FABRIC or not iface.peer:
                continue
            far = plan.devices.get(iface.peer.device)
            if far is None or rank.get(far.role, -1) <= rank[planned.role]:
                continue
            seen = device.interfaces.get(iface.name)
            if seen is not None and seen.up is not False:
                count += 1
            else:
                lost.append(iface.name)
        if count or planned.role is Role.LEAF:
            widths.setdefault((planned.role, planned.plane), {})[name] = count
            missing[name] = lost
    for (role, plane), counts in sorted(widths.items(), key=lambda kv: (kv[0][0].value,
                                                                         kv[0][1] or 0)):
        widest = max(counts.values(), default=0)
        tier = f"{role.value}s" + (f" of plane {plane}" if plane is not None else "")
        for name, count in sorted(counts.items()):
            if count < widest:
                lost = missing.get(name, [])
                which = f" ({', '.join(lost)} down or missing)" if lost else ""
                yield item.finding(name, f"{name} has {count} uplinks{which}, the other {tier} "
                                   f"have {widest}: its ECMP is narrower",
                                   port=lost[0] if lost else None, expected=str(widest),
                                   actual=str(count))
