"""eBGP underlay: sessions, ASNs, router ids, ECMP towards every remote leaf."""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import ip_address, ip_network

from flatfab.checks.base import Check, CheckContext, Finding, Scope, Severity, Stage, check
from flatfab.model.state import (
    DEFAULT_VRF,
    BgpPeer,
    DeviceState,
    FabricState,
    IfKind,
    NextHop,
    Role,
    Route,
)


def _planned_peers(ctx: CheckContext) -> Iterator[tuple[DeviceState, str, BgpPeer,
                                                          BgpPeer | None]]:
    """(observed device, VRF, planned peer, observed peer or None) on every readable switch."""
    for name, planned in ctx.plan.devices.items():
        device = ctx.observed(name)
        if device is None:
            continue
        for vrf, instance in planned.bgp.items():
            seen = device.bgp.get(vrf)
            for key, peer in instance.peers.items():
                yield device, vrf, peer, seen.peers.get(key) if seen else None


@check("bgp.session", "Every planned BGP session is Established, in every VRF",
       scope=Scope.LINK, severity=Severity.CRITICAL, stages=[Stage.LIVE])
def sessions(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, every BGP peer the plan gives each readable switch in every VRF, and the session
    the switch reports for the same key (interface or peer address).
    Expects: the session exists and is Established.
    Fails when: the session is missing (with the device's collect errors as the reason, else "not
    configured") or in any other state. Unreadable devices are `device.reachable`'s.
    Fix: Find the session on the switch. Not configured: the config did not land (`flatfab audit`,
    then `flatfab rollout`). Idle, Active or Connect: the ends cannot talk or do not agree; check
    the link (`interface.up`, `cabling.lldp`), both ends' ASNs (`bgp.remote_asn`) and, on a numbered
    underlay, the /31 addresses.
    """
    for device, vrf, peer, got in _planned_peers(ctx):
        name, key = device.name, peer.key
        want = f"Established with {peer.peer_device} (AS {peer.remote_asn})"
        if got is None:
            why = "; ".join(device.errors) or "not configured"
            yield item.finding(name, f"{name} has no BGP session on {key} (VRF {vrf}) to "
                               f"{peer.peer_device}: {why}", port=peer.interface, vrf=vrf,
                               expected=want, actual="missing")
        elif got.state != "Established":
            yield item.finding(name, f"{name} BGP session on {key} (VRF {vrf}) to "
                               f"{peer.peer_device} is {got.state}", port=peer.interface,
                               vrf=vrf, expected=want, actual=str(got.state))


@check("bgp.local_asn", "Every switch runs BGP as its planned ASN, in every VRF",
       scope=Scope.DEVICE, severity=Severity.CRITICAL, stages=[Stage.LIVE])
def local_asn(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, the ASN of each readable switch's BGP instance in every VRF the plan gives it.
    Expects: the planned ASN (its own, its tier's or its pod's: RFC 7938).
    Fails when: an instance runs as another ASN, naming both. Its sessions then stay down, and
    `bgp.session` names them too; this finding says why. An instance that is missing or states no
    ASN is `bgp.session`'s.
    Fix: The switch's BGP was renumbered by hand: `flatfab audit` shows it and `flatfab rollout`
    restores the planned ASN (on most OSes a new ASN restarts BGP: plan a window). If the new
    ASN is wanted, set it in fabric.yaml (a pinned `asn`, `spine_asn`, `leaf_asns`, `pods.asns`).
    """
    for name, planned in ctx.plan.devices.items():
        device = ctx.observed(name)
        if device is None or planned.role is Role.HOST:
            continue
        for vrf, instance in sorted(planned.bgp.items()):
            seen = device.bgp.get(vrf)
            want = instance.asn if instance.asn is not None else planned.asn
            if seen is None or seen.asn is None or want is None or seen.asn == want:
                continue
            yield item.finding(name, f"{name} runs BGP as AS {seen.asn} (VRF {vrf}), planned "
                               f"AS {want}", vrf=vrf, expected=f"AS {want}",
                               actual=f"AS {seen.asn}")


@check("bgp.remote_asn", "Every BGP peer has the ASN of the device at the other end",
       scope=Scope.LINK, severity=Severity.CRITICAL)
def remote_asn(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: each readable switch's BGP peers in every VRF (planned statically, configured live)
    and the planned ASN of the device at the far end (the peer's planned remote ASN when that device
    is not in the plan).
    Expects: every peer's remote ASN is that ASN.
    Fails when: they differ. A peer that is missing or states no remote ASN is not judged here
    (`bgp.session` names a missing one).
    Fix: From `flatfab check`: correct the ASNs in fabric.yaml (a pinned `asn`, `spine_asn`,
    `leaf_asns`, `pods.asns`) so both ends agree. Live: the switch's BGP config was changed, or its
    neighbour renumbered by hand; `flatfab audit` shows the drift and `flatfab rollout` restores it.
    """
    # _planned_peers() unrolled: this runs on every planned peer (~10^6 on a large fabric)
    planned_devices, readable = ctx.plan.devices, ctx.readable
    for name, planned in planned_devices.items():
        device = readable.get(name)
        if device is None:
            continue
        for vrf, instance in planned.bgp.items():
            seen = device.bgp.get(vrf)
            if seen is None:
                continue
            for key, peer in instance.peers.items():
                got = seen.peers.get(key)
                if got is None or got.remote_asn is None:
                    continue
                other = planned_devices.get(peer.peer_device or "")
                want = other.asn if other is not None else peer.remote_asn
                if got.remote_asn != want:
                    yield _asn_finding(item, device, vrf, peer, got.remote_asn, want)


def _asn_finding(item: Check, device: DeviceState, vrf: str, peer: BgpPeer, got: int,
                 want: int | None) -> Finding:
    return item.finding(device.name, f"{device.name} peer {peer.key} (VRF {vrf}) expects "
                        f"AS {got}, {peer.peer_device} is AS {want}",
                        port=peer.interface, vrf=vrf, expected=str(want), actual=str(got))


@check("bgp.router_id_unique", "No two switches share a BGP router id",
       scope=Scope.FABRIC, severity=Severity.ERROR)
def router_ids(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the router id of every readable switch of the plan (planned statically, observed
    live).
    Expects: no two switches share one.
    Fails when: a switch has the router id of another; each later holder, in plan order, is named
    with the first. A switch without a router id is not judged.
    Fix: From `flatfab check`: a pinned `loopback` in fabric.yaml collides with another switch's;
    pin a free address or drop the pin. Live: a router id was set by hand on a switch; `flatfab
    rollout` puts the planned one back.
    """
    seen: dict[str, str] = {}
    for name in ctx.plan.devices:
        device = ctx.observed(name)
        if device is None or device.role is Role.HOST or not device.router_id:
            continue
        if device.router_id in seen:
            yield item.finding(name, f"{name} and {seen[device.router_id]} share router id "
                               f"{device.router_id}", expected="unique",
                               actual=device.router_id)
        seen.setdefault(device.router_id, name)


def _leaf_prefixes(leaf: DeviceState, vrf: str) -> list[str]:
    bgp = leaf.bgp.get(vrf)
    return list(bgp.networks) if bgp else []


def _pods_reached(plan: FabricState) -> dict[str, set[str]]:
    """Pod spine -> the pod spines a super-spine joins it to (only super-spines in the plan
    count: mid-rollout, those at intent)."""
    reach: dict[str, set[str]] = {}
    for top in plan.of_role(Role.SUPERSPINE):
        below = {i.peer.device for i in top.interfaces.values()
                 if i.kind is IfKind.FABRIC and i.peer is not None
                 and i.peer.device in plan.devices}
        for spine in below:
            reach.setdefault(spine, set()).update(below - {spine})
    return reach


def _expected_ports(mine: dict[str, str], theirs: frozenset[str], reach: dict[str, set[str]],
                    five_stage: bool) -> list[str]:
    """A leaf's ports (its uplinks `mine`: spine -> port) towards a remote leaf whose spines
    are `theirs`: via each spine both reach; in another pod of a 5-stage fabric via every pod
    spine a super-spine joins to one of theirs."""
    expected = sorted(port for spine, port in mine.items() if spine in theirs)
    if five_stage and not expected:
        expected = sorted(port for spine, port in mine.items()
                          if reach.get(spine, set()) & theirs)
    return expected


def underlay_exits(table: dict[str, Route], address: str) -> frozenset[str]:
    """The interfaces the longest-prefix route of `table` to `address` leaves by (its underlay
    next hops only); empty when no route covers it or the address is unreadable."""
    try:
        target = ip_address(address)
    except ValueError:
        return frozenset()
    for length in range(target.max_prefixlen, -1, -1):
        route = table.get(str(ip_network((target, length), strict=False)))
        if route is not None:
            return frozenset(h.interface for h in route.nexthops
                             if h.interface and not h.overlay)
    return frozenset()


def route_exits(device: DeviceState, hops: list[NextHop],
                tunnels: dict[str, frozenset[str]]) -> set[str]:
    """The ports a route's next hops leave by: an underlay next hop's interface; an EVPN/VXLAN
    next hop's are those of the default VRF's route to its VTEP (the tunnel rides the
    underlay; its own interface, a VXLAN or L3VNI one, is no uplink). `tunnels` caches each
    VTEP's ports per device."""
    ports: set[str] = set()
    for hop in hops:
        if hop.vtep is not None:
            found = tunnels.get(hop.vtep)
            if found is None:
                table = (device.routes or {}).get(DEFAULT_VRF, {})
                found = tunnels[hop.vtep] = underlay_exits(table, hop.vtep)
            ports |= found
        elif hop.interface:
            ports.add(hop.interface)
    return ports


@check("ecmp.leaf_paths", "Every leaf has one next hop per spine to every remote leaf prefix",
       scope=Scope.PATH, severity=Severity.ERROR, stages=[Stage.LIVE])
def ecmp(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, each readable leaf's routing table in the default VRF and every tenant VRF; from
    the plan, every leaf's uplinks and the prefixes each other leaf originates there.
    Expects: every remote leaf prefix has a next hop through each uplink to a spine the remote leaf
    also uplinks to (5-stage, towards another pod: through each pod spine that a super-spine in the
    plan joins to one of the remote leaf's spines). A route learned over EVPN/VXLAN leaves by the
    uplinks of the default VRF's route to its VTEP: a VRF uplink counts as taken when its port is.
    Fails when: next hops are missing: one finding per leaf, VRF and set of missing uplinks, naming
    the spines and the prefixes hit. A leaf whose routes were not read is not judged.
    Fix: A missing next hop is a missing path: check the named spines' sessions and links first
    (`bgp.session`, `interface.up`). If they are up, `underlay.maximum_paths` may be below the spine
    count, or a spine does not advertise the prefix (its config: `flatfab audit`). Traffic runs on
    the remaining paths meanwhile, with less bandwidth.
    """
    plan = ctx.plan
    leaves = plan.of_role(Role.LEAF)
    five_stage = bool(plan.of_role(Role.SUPERSPINE))
    reach = _pods_reached(plan)
    # for each (leaf, vrf): spine -> the leaf's port to it. O(links) to build.
    uplinks: dict[tuple[str, str], dict[str, str]] = {}
    for leaf in leaves:
        for iface in leaf.interfaces.values():
            if iface.kind is IfKind.FABRIC and iface.peer is not None:
                uplinks.setdefault((leaf.name, iface.vrf), {})[iface.peer.device] = iface.name
    # per VRF, each leaf originating there: (name, its spines, its prefixes), built once
    remotes: dict[str, list[tuple[str, frozenset[str], list[str]]]] = {}
    for remote in leaves:
        for vrf in remote.bgp:
            remotes.setdefault(vrf, []).append(
                (remote.name, frozenset(uplinks.get((remote.name, vrf), {})),
                 _leaf_prefixes(remote, vrf)))
    for leaf in leaves:
        device = ctx.observed(leaf.name)
        if device is None or device.routes is None:
            continue
        # a VRF uplink's port: an overlay route's tunnel leaves by the port, not the VRF's
        # sub-interface (see route_exits)
        ports = {i.name: i.parent for i in leaf.interfaces.values() if i.parent}
        tunnels: dict[str, frozenset[str]] = {}
        for vrf in sorted({DEFAULT_VRF, *leaf.vrfs}):
            mine = uplinks.get((leaf.name, vrf), {})
            table = device.routes.get(vrf, {})
            gaps: dict[tuple[str, ...], list[str]] = {}
            counts: dict[tuple[str, ...], tuple[int, int]] = {}
            # every remote leaf with the same spines expects the same ports, and routes that
            # share their list of next hops (collect shares them) miss the same ones: each is
            # worked out once, so a thousand-leaf fabric is not leaves^2 x spines
            expecting: dict[frozenset[str], list[str]] = {}
            missed: dict[tuple[int, int], tuple[str, ...]] = {}
            for name, behind, prefixes in remotes.get(vrf, ()):
                if name == leaf.name:
                    continue
                expected = expecting.get(behind)
                if expected is None:
                    expected = expecting[behind] = _expected_ports(mine, behind, reach,
                                                                   five_stage)
                wanted = id(expected)
                for prefix in prefixes:
                    route = table.get(prefix)
                    key = (wanted, id(route.nexthops) if route is not None else 0)
                    missing = missed.get(key)
                    if missing is None:
                        got = (route_exits(device, route.nexthops, tunnels)
                               if route is not None else set())
                        missing = missed[key] = tuple(
                            p for p in expected if p not in got and ports.get(p) not in got)
                    if missing:
                        gaps.setdefault(missing, []).append(f"{prefix} ({name})")
                        counts[missing] = (len(expected) - len(missing), len(expected))
            for missing, prefixes in sorted(gaps.items()):
                spines = sorted(s for s, p in mine.items() if p in missing)
                have, want = counts[missing]
                shown = ", ".join(prefixes[:4]) + (f" and {len(prefixes) - 4} more"
                                                    if len(prefixes) > 4 else "")
                yield item.finding(
                    leaf.name, f"{leaf.name} VRF {vrf}: no path via {', '.join(spines)} "
                    f"({', '.join(missing)}) to {len(prefixes)} remote prefixes: {shown}",
                    port=",".join(missing), vrf=vrf,
                    expected=f"{want} paths per prefix", actual=f"{have} paths")
