"""Rules that need the whole intent: names, ids, references, pools and MTUs.

Each rule yields (file, key path, reason) so the loader can point at the exact line.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import re
from collections.abc import Callable, Iterator

from flatfab.intent import layout
from flatfab.intent.clos_rules import clos_problems
from flatfab.intent.layout import (
    HostSlot,
    expand_hosts,
    leaf_asn,
    leaf_loopback,
    spine_loopback,
)
from flatfab.intent.models import (
    BgpMode,
    FabricIntent,
    HostsIntent,
    Intent,
    Switch,
    TenantsIntent,
)
from flatfab.intent.names import name_problem
from flatfab.intent.numbers import is_private_asn
from flatfab.intent.problem import FABRIC, HOSTS, QOS, TENANTS, Problem
from flatfab.model.wire import ROCE_HEADER_BYTES
from flatfab.yamlio import PathPart


def _matcher(pattern: str) -> Callable[[str], bool]:
    """fnmatch.fnmatchcase(name, pattern) as a function of the name, compiled once."""
    match = re.compile(fnmatch.translate(pattern)).match
    return lambda name: match(name) is not None


def tenant_members(intent: Intent, hosts: list[HostSlot]) -> dict[str, list[str]]:
    """Tenant name -> member host names (patterns expanded, in host order)."""
    names = [h.name for h in hosts]
    result: dict[str, list[str]] = {}
    position = {name: index for index, name in enumerate(names)}
    for tenant in intent.tenants.tenants:
        members: set[str] = set()
        for pattern in tenant.members:
            members.update(fnmatch.filter(position, pattern) if any(c in pattern for c in "*?[")
                           else [pattern] if pattern in position else [])
        result[tenant.name] = sorted(members, key=position.__getitem__)
    return result


def check(intent: Intent) -> list[Problem]:
    return list(_all(intent))


def warnings(intent: Intent) -> list[Problem]:
    """What loads but an operator should hear about: each says why. Only for a sound intent
    (after check() found nothing)."""
    return [*_tenant_warnings(intent), *_pfc_warnings(intent), *_class_move_warnings(intent),
            *_public_asn_warnings(intent.fabric)]


def _underlay_asns(fabric: FabricIntent) -> Iterator[tuple[tuple[PathPart, ...], int]]:
    """Every AS number fabric.yaml gives the underlay, by key path (ranges by both ends)."""
    underlay = fabric.underlay
    yield ("underlay", "spine_asn"), underlay.spine_asn
    for end in ("first", "last"):
        yield ("underlay", "leaf_asns", end), getattr(underlay.leaf_asns, end)
        if fabric.pods is not None:
            yield ("pods", "asns", end), getattr(fabric.pods.asns, end)
    for key, switches in (("spines", fabric.spines), ("leaves", fabric.leaves)):
        for index, switch in enumerate(switches):
            if switch.asn is not None:
                yield (key, index, "asn"), switch.asn


def _public_asn_warnings(fabric: FabricIntent) -> Iterator[Problem]:
    """Public ASNs in the underlay: legal, but only the holder's to use (RFC 7938 5.2.1 builds
    a fabric on private ones); a typo of a private ASN reads the same."""
    for path, asn in _underlay_asns(fabric):
        if not is_private_asn(asn):
            yield Problem(FABRIC, path,
                          f"AS {asn} is a public AS number: an underlay runs on private ones "
                          "(64512-65534, 4200000000-4294967294, RFC 6996) unless this one is "
                          "assigned to you")


def _tenant_warnings(intent: Intent) -> Iterator[Problem]:
    members = tenant_members(intent, expand_hosts(intent))
    for index, tenant in enumerate(intent.tenants.tenants):
        if not members.get(tenant.name):
            yield Problem(TENANTS, ("tenants", index),
                          f"tenant {tenant.name!r} has no members: its VRF (table "
                          f"{tenant.vrf_id}) is configured on every leaf with no host in it")


def _pfc_warnings(intent: Intent) -> Iterator[Problem]:
    """A PFC priority no traffic class uses reserves headroom and a watchdog for nothing
    (identity mapping: priority = traffic class)."""
    qos = intent.qos
    others = {qos.default_tc, *qos.dscp_to_tc.values()} - {qos.roce.priority,
                                                             qos.cnp.priority}
    used = {qos.roce.priority, qos.cnp.priority, *others}
    for index, priority in enumerate(qos.pfc.priorities):
        if priority not in used:
            yield Problem(QOS, ("pfc", "priorities", index),
                          f"PFC priority {priority} carries no class (RoCE is on "
                          f"{qos.roce.priority}, CNP on {qos.cnp.priority}, other DSCPs on "
                          f"{', '.join(map(str, sorted(others)))}): its headroom and "
                          "watchdog are reserved for nothing")


def _profile_conflicts(intent: Intent) -> Iterator[Problem]:
    for path, why in intent.qos.profile_conflicts():
        yield Problem(QOS, path, why)


def _all(intent: Intent) -> Iterator[Problem]:
    yield from _profile_conflicts(intent)
    fabric = intent.fabric
    yield from _switches(fabric)
    if fabric.scalable_units is None:
        yield from _links(fabric)
        yield from _asns(fabric)
    else:
        found = list(clos_problems(intent))
        yield from found
        if found:
            return  # the generated devices cannot be judged further
    yield from _maximum_paths(fabric)
    yield from _link_classes(fabric, intent.hosts)
    hosts = expand_hosts(intent)
    bad_names = list(_generated_names(hosts))
    if bad_names:
        yield from bad_names  # hosts cannot be judged further by names that are refused
        return
    yield from _hosts(fabric, intent.hosts, hosts)
    yield from _tenants(fabric, intent.tenants, intent.hosts, hosts, intent)
    yield from _pools(intent)
    yield from _overrides(intent, hosts)
    yield from _class_moves(intent)


def _class_owners(intent: Intent) -> dict[int, tuple[str, str, int]]:
    """DSCP -> (label, qos key, priority) of the RoCE and CNP code points."""
    qos = intent.qos
    own = dict.fromkeys(qos.roce.dscp, ("RoCE", "roce", qos.roce.priority))
    own.update(dict.fromkeys(qos.cnp.dscp, ("CNP", "cnp", qos.cnp.priority)))
    return own


def _class_moves(intent: Intent) -> Iterator[Problem]:
    """The fabric-wide DSCP map cannot move a RoCE or CNP code point: their classes come
    from roce/cnp (tc_of), so such an entry would be silently ignored."""
    own = _class_owners(intent)
    for dscp, tc in intent.qos.dscp_to_tc.items():
        if dscp in own and tc != own[dscp][2]:
            label, key, priority = own[dscp]
            yield Problem(QOS, ("dscp_to_tc", dscp),
                          f"would move {label} DSCP {dscp} to class {tc}, but its class is "
                          f"{key}.priority ({priority}) and this entry would be ignored; "
                          f"drop it, or change {key}.priority")


def _class_move_warnings(intent: Intent) -> Iterator[Problem]:
    """A NIC map or an override that moves RoCE off its lossless class (CNP off its strict
    one) takes effect where it applies: RoCE there is dropped under congestion."""
    qos = intent.qos
    own = _class_owners(intent)
    maps: list[tuple[tuple[PathPart, ...], dict[int, int], str]] = [
        (("hosts", "dscp_to_priority"), qos.hosts.dscp_to_priority, "every host NIC")]
    for index, override in enumerate(qos.overrides):
        devices = ", ".join(override.devices)
        if override.dscp_to_tc is not None:
            maps.append((("overrides", index, "dscp_to_tc"), override.dscp_to_tc, devices))
        if override.nic is not None and override.nic.dscp_to_priority is not None:
            maps.append((("overrides", index, "nic", "dscp_to_priority"),
                         override.nic.dscp_to_priority, devices))
    for path, mapping, where in maps:
        for dscp, tc in mapping.items():
            if dscp in own and tc != own[dscp][2]:
                label, key, priority = own[dscp]
                kind = "lossless" if label == "RoCE" else "strict"
                yield Problem(QOS, (*path, dscp),
                              f"moves {label} DSCP {dscp} to class {tc} on {where}, out of "
                              f"its {kind} class {priority} ({key}.priority): {label} "
                              f"{'loses PFC' if label == 'RoCE' else 'loses priority'} "
                              "there (`flatfab check` names each port)")


def _overrides(intent: Intent, hosts: list[HostSlot]) -> Iterator[Problem]:
    """A qos override whose device pattern matches no device is a typo, never intended."""
    if not intent.qos.overrides:
        return
    names = [s.name for s in layout.switches(intent.fabric)]
    names += dict.fromkeys(h.name for h in hosts)
    for index, override in enumerate(intent.qos.overrides):
        for p_index, pattern in enumerate(override.devices):
            if not any(map(_matcher(pattern), names)):
                yield Problem(QOS, ("overrides", index, "devices", p_index),
                              f"{pattern!r} matches no device")


def _switches(fabric: FabricIntent) -> Iterator[Problem]:
    seen: dict[str, tuple[PathPart, ...]] = {}
    for role in ("spines", "leaves"):
        devices: list[Switch] = getattr(fabric, role)
        ids: dict[int, str] = {}
        for index, switch in enumerate(devices):
            path = (role, index, "name")
            if switch.name in seen:
                first = seen[switch.name]
                yield Problem(FABRIC, path, f"duplicate device name {switch.name!r} "
                              f"(also at {first[0]}[{first[1]}])")
            seen[switch.name] = (role, index)
            sid = switch.stable_id
            if sid == 0:
                yield Problem(FABRIC, (role, index), f"{switch.name!r} needs an 'id' "
                              "(its name does not end in a number)")
                continue
            if sid in ids:
                yield Problem(FABRIC, (role, index), f"{switch.name!r} has id {sid}, "
                              f"already used by {ids[sid]!r}; ids must be unique per role")
            ids[sid] = switch.name
            if role == "spines" and sid > fabric.underlay.max_spines:
                yield Problem(FABRIC, (role, index), f"spine id {sid} exceeds "
                              f"underlay.max_spines ({fabric.underlay.max_spines})")
    yield from _pins(fabric)


def _pins(fabric: FabricIntent) -> Iterator[Problem]:
    """Pinned loopbacks and ASNs (from a source of truth) must fit the allocation scheme:
    loopbacks inside the pool and unique among all switches' loopbacks, spines on the one
    spine ASN the leaves peer with, leaf ASNs unique and not the spines'."""
    underlay = fabric.underlay
    pool = ipaddress.IPv4Network(underlay.loopback_pool)
    loopbacks: dict[str, list[str]] = {}
    for role in ("spines", "leaves"):
        for switch in getattr(fabric, role):
            address = _allocated_loopback(fabric, role, switch) if switch.stable_id else None
            if address is not None:
                loopbacks.setdefault(address, []).append(switch.name)
    leaf_asns: dict[int, list[str]] = {}
    for leaf in fabric.leaves:
        if leaf.stable_id:
            leaf_asns.setdefault(leaf.asn or leaf_asn(underlay, leaf.stable_id),
                                 []).append(leaf.name)
    for role in ("spines", "leaves"):
        for index, switch in enumerate(getattr(fabric, role)):
            if switch.loopback is not None:
                path = (role, index, "loopback")
                others = [n for n in loopbacks.get(switch.loopback, []) if n != switch.name]
                if ipaddress.IPv4Address(switch.loopback) not in pool:
                    yield Problem(FABRIC, path, f"{switch.loopback} is outside "
                                  f"underlay.loopback_pool {pool}")
                elif others:
                    yield Problem(FABRIC, path, f"{switch.loopback} is also {others[0]!r}'s "
                                  "loopback")
            if switch.asn is None:
                continue
            path = (role, index, "asn")
            if role == "spines" and switch.asn != underlay.spine_asn:
                yield Problem(FABRIC, path, f"spines share underlay.spine_asn "
                              f"{underlay.spine_asn}; {switch.name!r} is pinned to {switch.asn}")
            elif role == "leaves" and switch.asn == underlay.spine_asn:
                yield Problem(FABRIC, path, f"{switch.asn} is the spines' ASN")
            elif role == "leaves" and len(leaf_asns[switch.asn]) > 1:
                other = next(n for n in leaf_asns[switch.asn] if n != switch.name)
                yield Problem(FABRIC, path, f"ASN {switch.asn} is also {other!r}'s")


def _allocated_loopback(fabric: FabricIntent, role: str, switch: Switch) -> str | None:
    """The loopback a switch ends up with (its pin, else its stable id's slot; None when
    the pool has no such slot, which _pools reports)."""
    if switch.loopback is not None:
        return switch.loopback
    allocate = spine_loopback if role == "spines" else leaf_loopback
    try:
        return allocate(fabric.underlay, switch.stable_id).split("/", maxsplit=1)[0]
    except IndexError:
        return None


def _links(fabric: FabricIntent) -> Iterator[Problem]:
    if fabric.links is None:
        return
    spines = {s.name for s in fabric.spines}
    leaves = {leaf.name for leaf in fabric.leaves}
    seen: set[tuple[str, str]] = set()
    for index, link in enumerate(fabric.links):
        for end, pool, role in (("leaf", leaves, "leaf"), ("spine", spines, "spine")):
            name = getattr(link, end)
            if name not in pool:
                other = spines if role == "leaf" else leaves
                hint = f" ({name!r} is a {'spine' if role == 'leaf' else 'leaf'})" \
                    if name in other else ""
                yield Problem(FABRIC, ("links", index, end),
                              f"link to unknown {role} {name!r}{hint}")
        if link.link_class not in fabric.link_classes:
            yield Problem(FABRIC, ("links", index, "class"),
                          f"unknown link class {link.link_class!r}")
        key = (link.leaf, link.spine)
        if key in seen:
            yield Problem(FABRIC, ("links", index), f"duplicate link {link.leaf} - {link.spine}")
        seen.add(key)
    linked = {leaf for leaf, _ in seen}
    for index, leaf in enumerate(fabric.leaves):
        if leaf.name not in linked:
            yield Problem(FABRIC, ("leaves", index), f"leaf {leaf.name!r} has no link to any spine")


def _ecmp_width(fabric: FabricIntent) -> int:
    """The most equal-cost paths a switch has towards a prefix: a leaf's spines (3 stages,
    by the links where listed), a pod spine's super-spines and a super-spine's pod spines."""
    if fabric.pods is not None and fabric.superspines is not None:
        return max(fabric.pods.spines, fabric.superspines.count)
    if fabric.links is None:
        return len(fabric.spines)
    per_leaf: dict[str, int] = {}
    for link in fabric.links:
        per_leaf[link.leaf] = per_leaf.get(link.leaf, 0) + 1
    return max(per_leaf.values(), default=0)


def _maximum_paths(fabric: FabricIntent) -> Iterator[Problem]:
    width, paths = _ecmp_width(fabric), fabric.underlay.maximum_paths
    if paths < width:
        yield Problem(FABRIC, ("underlay", "maximum_paths"),
                      f"{paths} is below the {width} equal-cost uplinks a switch has: BGP "
                      f"would install {paths} of them and leave the rest idle (raise it to "
                      f"{width} or more)")


def _asns(fabric: FabricIntent) -> Iterator[Problem]:
    underlay = fabric.underlay
    rng = underlay.leaf_asns
    if rng.first <= underlay.spine_asn <= rng.last:
        yield Problem(FABRIC, ("underlay", "spine_asn"),
                      f"spine ASN {underlay.spine_asn} lies inside leaf_asns "
                      f"{rng.first}-{rng.last}")
    for index, leaf in enumerate(fabric.leaves):
        if leaf.stable_id > rng.size:
            yield Problem(FABRIC, ("leaves", index),
                          f"leaf {leaf.name!r} (id {leaf.stable_id}) needs ASN "
                          f"{rng.first + leaf.stable_id - 1}, beyond leaf_asns "
                          f"{rng.first}-{rng.last} (ASN range too small)")


def _link_classes(fabric: FabricIntent, hosts: HostsIntent) -> Iterator[Problem]:
    if fabric.links is None and "fabric" not in fabric.link_classes:
        yield Problem(FABRIC, ("link_classes",),
                      "link class 'fabric' is needed for the default full-mesh cabling")
    if hosts.defaults.link_class not in fabric.link_classes:
        yield Problem(HOSTS, ("defaults", "link_class"),
                      f"unknown link class {hosts.defaults.link_class!r}")
    elif fabric.link_classes[hosts.defaults.link_class].llr:
        yield Problem(FABRIC, ("link_classes", hosts.defaults.link_class, "llr"),
                      "link-level retry on the host links: flatfab models no host NIC "
                      "setting for it, so one end would run it alone; switch links only")


NAME_FORMAT: tuple[PathPart, ...] = ("defaults", "name_format")


def _generated_names(hosts: list[HostSlot]) -> Iterator[Problem]:
    """Names from name_format obey the same rule as written ones (explicit names were
    checked field by field); the first bad one is reported, against the format."""
    checked: set[str] = set()  # a server's NICs share its name: judge it once
    for host in hosts:
        if host.name in checked:
            continue
        checked.add(host.name)
        why = name_problem(host.name)
        if why is not None:
            yield Problem(HOSTS, NAME_FORMAT, f"generates host name {host.name!r} "
                          f"(leaf {host.leaf}, port {host.port}): {why}")
            return


def _hosts(fabric: FabricIntent, intent_hosts: HostsIntent,
           hosts: list[HostSlot]) -> Iterator[Problem]:
    slots = layout.switches(fabric)
    leaves = {s.name: s for s in slots if s.role == layout.LEAF}
    for leaf_name in intent_hosts.leaves:
        if leaf_name not in leaves:
            yield Problem(HOSTS, ("leaves", leaf_name), f"unknown leaf {leaf_name!r}")
    switch_names = {s.name for s in slots}
    ports = fabric.ports
    if fabric.scalable_units is None:
        every_uplink = {ports.leaf_uplink_base + s.stable_id for s in fabric.spines}
        uplinks: dict[str, set[int]] = dict.fromkeys(leaves, every_uplink)
    else:
        uplinks = {name: set() for name in leaves}
        for cable in layout.cables(fabric, slots):
            if cable.lower in uplinks:
                uplinks[cable.lower].add(cable.lower_port)
    declared: dict[str, str] = {}  # server name -> the declaration that made it
    seen_ports: set[tuple[str, int]] = set()
    roce_min = fabric.roce_mtu + ROCE_HEADER_BYTES
    host_class = fabric.link_classes.get(intent_hosts.defaults.link_class)
    reported: set[tuple[str, tuple[PathPart, ...]]] = set()
    for host in hosts:
        decl = host.server or f"{host.path}/{host.port}"
        if host.name in switch_names or declared.setdefault(host.name, decl) != decl:
            yield Problem(host.file, host.path, f"duplicate device name {host.name!r}")
        if host.leaf not in leaves:
            yield Problem(host.file, host.path, f"{host.name} {host.nic} is cabled to "
                          f"unknown leaf {host.leaf!r}")
            continue
        if (host.leaf, host.port) in seen_ports:
            yield Problem(host.file, host.path,
                          f"port {host.port} of {host.leaf} is used twice")
        seen_ports.add((host.leaf, host.port))
        if ports.leaf_host_base + host.port in uplinks[host.leaf]:
            yield Problem(host.file, host.path,
                          f"host port number {ports.leaf_host_base + host.port} on "
                          f"{host.leaf} collides with a spine uplink (ports.leaf_uplink_base)")
        # one error per place the MTU is set, not one per host that inherits it
        if host.mtu < roce_min and ("roce", host.mtu_path) not in reported:
            reported.add(("roce", host.mtu_path))
            yield Problem(HOSTS, host.mtu_path,
                          f"MTU {host.mtu} (of {host.name} and hosts sharing this setting) is "
                          f"too small for RoCE MTU {fabric.roce_mtu}: needs at least "
                          f"{roce_min} ({fabric.roce_mtu} + {ROCE_HEADER_BYTES} B of RoCEv2 "
                          "headers)")
        if host_class is not None and host_class.mtu < host.mtu \
                and ("class", host.mtu_path) not in reported:
            reported.add(("class", host.mtu_path))
            yield Problem(HOSTS, host.mtu_path,
                          f"host MTU {host.mtu} (of {host.name} and hosts sharing this "
                          f"setting) exceeds the MTU {host_class.mtu} of its link class "
                          f"{intent_hosts.defaults.link_class!r}")
        # host address = subnet base + 10 + port; it must fit below broadcast
        size = 2 ** (32 - intent_hosts.subnet_length)
        if 10 + host.port >= size - 1:
            yield Problem(HOSTS, host.path,
                          f"port {host.port} does not fit a /{intent_hosts.subnet_length} "
                          "host subnet (host address = subnet + 10 + port)")


def _tenants(fabric: FabricIntent, tenants: TenantsIntent, intent_hosts: HostsIntent,
             hosts: list[HostSlot], intent: Intent) -> Iterator[Problem]:
    names: dict[str, int] = {}
    vrf_ids: dict[int, str] = {}
    host_names = [h.name for h in hosts]
    unique_names = list(dict.fromkeys(host_names))
    owner: dict[str, str] = {}
    for index, tenant in enumerate(tenants.tenants):
        if tenant.name in names:
            yield Problem(TENANTS, ("tenants", index, "name"),
                          f"duplicate tenant {tenant.name!r}")
        names[tenant.name] = index
        if tenant.vrf_id in vrf_ids:
            yield Problem(TENANTS, ("tenants", index, "vrf_id"),
                          f"VRF id {tenant.vrf_id} already used by tenant "
                          f"{vrf_ids[tenant.vrf_id]!r}")
        vrf_ids[tenant.vrf_id] = tenant.name
        if fabric.underlay.mode is BgpMode.NUMBERED and tenant.p2p_pool is None:
            yield Problem(TENANTS, ("tenants", index),
                          "numbered underlay: tenant needs a p2p_pool for its VRF /31 links")
        for m_index, pattern in enumerate(tenant.members):
            # every NIC of a server is a slot: match each name once, keep one per slot
            hits = set(filter(_matcher(pattern), unique_names))
            matched = [n for n in host_names if n in hits]
            if not matched:
                yield Problem(TENANTS, ("tenants", index, "members", m_index),
                              f"{pattern!r} matches no host")
            for name in matched:
                if owner.get(name, tenant.name) != tenant.name:
                    yield Problem(TENANTS, ("tenants", index, "members", m_index),
                                  f"host {name!r} is already in tenant {owner[name]!r}; "
                                  "a host belongs to one tenant")
                owner.setdefault(name, tenant.name)
    slots = {h.name: h for h in hosts}
    for index, tenant in enumerate(tenants.tenants):
        # tenant host address = leaf subnet + 10 + port: the subnet must hold its hosts
        size = 2 ** (32 - tenant.subnet_length)
        members = [slots[n] for n, t in owner.items() if t == tenant.name]
        widest = max(members, key=lambda h: h.port, default=None)
        if widest is not None and 10 + widest.port >= size - 1:
            yield Problem(TENANTS, ("tenants", index, "subnet_length"),
                          f"a /{tenant.subnet_length} per leaf cannot hold host "
                          f"{widest.name!r} (port {widest.port}: address = subnet + 10 + port)")
    orphans = [h for h in hosts if h.name not in owner]
    if orphans and intent_hosts.host_pool is None:
        yield Problem(HOSTS, ("host_pool",),
                      f"{len(orphans)} host(s) are in no tenant (first: {orphans[0].name!r}) "
                      "and no host_pool is set for the default VRF")


AddressSpace = tuple[str, tuple[PathPart, ...], ipaddress.IPv4Network]


def address_spaces(intent: Intent) -> list[AddressSpace]:
    """Every pool and prefix the fabric allocates from, as (file, key path, network)."""
    underlay = intent.fabric.underlay
    pools: list[AddressSpace] = [
        (FABRIC, ("underlay", "loopback_pool"), ipaddress.IPv4Network(underlay.loopback_pool)),
    ]
    if underlay.p2p_pool and underlay.mode is BgpMode.NUMBERED:
        pools.append((FABRIC, ("underlay", "p2p_pool"), ipaddress.IPv4Network(underlay.p2p_pool)))
    if intent.hosts.host_pool:
        pools.append((HOSTS, ("host_pool",), ipaddress.IPv4Network(intent.hosts.host_pool)))
    for t_index, tenant in enumerate(intent.tenants.tenants):
        for p_index, prefix in enumerate(tenant.prefixes):
            pools.append((TENANTS, ("tenants", t_index, "prefixes", p_index),
                          ipaddress.IPv4Network(prefix)))
        if tenant.p2p_pool and underlay.mode is BgpMode.NUMBERED:
            pools.append((TENANTS, ("tenants", t_index, "p2p_pool"),
                          ipaddress.IPv4Network(tenant.p2p_pool)))
    return pools


def _pools(intent: Intent) -> Iterator[Problem]:
    fabric = intent.fabric
    underlay = fabric.underlay
    pools = address_spaces(intent)
    for i, (file_a, path_a, net_a) in enumerate(pools):
        for file_b, path_b, net_b in pools[i + 1:]:
            if net_a.overlaps(net_b):
                yield Problem(file_b, path_b,
                              f"{net_b} overlaps {net_a} ({file_a}: "
                              f"{'.'.join(str(p) for p in path_a)})")

    # listed leaves, or those a fabric generates from scalable units
    max_leaf = max((s.stable_id for s in layout.switches(fabric) if s.role == layout.LEAF),
                   default=0)
    loopbacks = ipaddress.IPv4Network(underlay.loopback_pool).num_addresses
    for index, leaf in enumerate(fabric.leaves):
        if underlay.max_spines + leaf.stable_id >= loopbacks - 1:
            yield Problem(FABRIC, ("leaves", index),
                          f"loopback_pool {underlay.loopback_pool} exhausted: leaf "
                          f"{leaf.name!r} needs address #{underlay.max_spines + leaf.stable_id}")
            break
    if underlay.mode is BgpMode.NUMBERED and underlay.p2p_pool:
        slots = ipaddress.IPv4Network(underlay.p2p_pool).num_addresses // 2
        needed = max_leaf * underlay.max_spines
        if needed > slots:
            yield Problem(FABRIC, ("underlay", "p2p_pool"),
                          f"p2p_pool {underlay.p2p_pool} exhausted: {slots} /31 links, but leaf "
                          f"id {max_leaf} x max_spines {underlay.max_spines} needs {needed}")
        for t_index, tenant in enumerate(intent.tenants.tenants):
            if tenant.p2p_pool:
                t_slots = ipaddress.IPv4Network(tenant.p2p_pool).num_addresses // 2
                if needed > t_slots:
                    yield Problem(TENANTS, ("tenants", t_index, "p2p_pool"),
                                  f"p2p_pool {tenant.p2p_pool} exhausted: {t_slots} /31 links, "
                                  f"needs {needed}")
    if intent.hosts.host_pool:
        yield from _subnet_capacity(HOSTS, ("host_pool",), intent.hosts.host_pool,
                                    intent.hosts.subnet_length, max_leaf)
    for t_index, tenant in enumerate(intent.tenants.tenants):
        capacity = 0
        for prefix in tenant.prefixes:
            net = ipaddress.IPv4Network(prefix)
            if net.prefixlen > tenant.subnet_length:
                yield Problem(TENANTS, ("tenants", t_index, "prefixes"),
                              f"{prefix} is smaller than one /{tenant.subnet_length} leaf subnet")
                break
            capacity += 2 ** (tenant.subnet_length - net.prefixlen)
        else:
            if max_leaf >= capacity:
                yield Problem(TENANTS, ("tenants", t_index, "prefixes"),
                              f"prefixes exhausted: {capacity} /{tenant.subnet_length} subnets, "
                              f"leaf id {max_leaf} needs subnet #{max_leaf}")


def _subnet_capacity(file: str, path: tuple[PathPart, ...], prefix: str, length: int,
                     max_leaf: int) -> Iterator[Problem]:
    net = ipaddress.IPv4Network(prefix)
    if net.prefixlen > length:
        yield Problem(file, path, f"{prefix} is smaller than one /{length} leaf subnet")
        return
    capacity = 2 ** (length - net.prefixlen)
    if max_leaf >= capacity:
        yield Problem(file, path, f"{prefix} exhausted: {capacity} /{length} subnets, "
                      f"leaf id {max_leaf} needs subnet #{max_leaf}")
