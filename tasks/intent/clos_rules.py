"""Rules for a fabric generated from scalable units, pods, super-spines and planes: what
would not cable, would collide, or would loop. Each names its file and key path."""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Iterator

from flatfab.intent import layout
from flatfab.intent.clos import Attach
from flatfab.intent.models import BgpMode, FabricIntent, Intent
from flatfab.intent.names import name_problem
from flatfab.intent.problem import FABRIC, HOSTS, Problem


def clos_problems(intent: Intent) -> Iterator[Problem]:
    fabric = intent.fabric
    yield from _profiles(intent)
    yield from _ports(intent)
    yield from _planes(fabric)
    if fabric.pods is not None:
        yield from _five_stage(fabric)
    yield from _placed(intent)
    slots = layout.switches(fabric)
    yield from _numbers(fabric, slots)
    yield from _names(slots)
    if fabric.non_blocking:
        yield from _oversubscribed(intent, slots)


def _profiles(intent: Intent) -> Iterator[Problem]:
    units = intent.fabric.scalable_units
    assert units is not None
    profile = intent.hosts.profiles.get(units.profile)
    if profile is None:
        known = ", ".join(sorted(intent.hosts.profiles)) or "none"
        yield Problem(FABRIC, ("scalable_units", "profile"),
                      f"unknown server profile {units.profile!r} (hosts.yaml profiles: "
                      f"{known})")
        return
    nics = len(profile.nics.resolved())
    if units.attach is Attach.RAIL and nics != units.rails:
        yield Problem(FABRIC, ("scalable_units", "rails"),
                      f"{units.rails} rails, but profile {units.profile!r} has {nics} NICs: "
                      "rail-optimized, NIC k of every server goes to the SU's rail-k leaf, "
                      "so a server needs one NIC per rail")


def _ports(intent: Intent) -> Iterator[Problem]:
    """An SU must fit its leaves' host ports, below the first uplink."""
    fabric = intent.fabric
    units = fabric.scalable_units
    assert units is not None
    profile = intent.hosts.profiles.get(units.profile)
    if profile is None:
        return
    if units.attach is Attach.RAIL:
        highest = units.servers
        wanted = f"an SU of {units.servers} servers needs host ports 1-{highest} on every " \
                 "rail leaf"
    else:
        per_leaf = math.ceil(units.servers / (units.leaves or 1))
        highest = per_leaf * len(profile.nics.resolved())
        wanted = f"{per_leaf} servers of {len(profile.nics.resolved())} NICs per rack leaf " \
                 f"need host ports 1-{highest}"
    first_uplink = fabric.ports.leaf_uplink_base + 1
    if fabric.ports.leaf_host_base + highest >= first_uplink:
        yield Problem(FABRIC, ("scalable_units", "servers"),
                      f"{wanted}, which reach the uplinks (from port {first_uplink}, "
                      "ports.leaf_uplink_base): the SU is larger than a leaf's host ports")


def _planes(fabric: FabricIntent) -> Iterator[Problem]:
    planes, units = fabric.planes, fabric.scalable_units
    if planes is None or units is None:
        return
    if units.attach is Attach.RACK:
        yield Problem(FABRIC, ("planes",), "a rack leaf carries every NIC of its servers, "
                      "so it cannot sit in one plane; planes need attach: rail")
        return
    for plane in sorted(planes.rails):
        if not 1 <= plane <= planes.count:
            yield Problem(FABRIC, ("planes", "rails", plane),
                          f"plane {plane} is beyond planes.count ({planes.count})")
    owner: dict[int, int] = {}
    for plane, rails in sorted(planes.rails.items()):
        for index, rail in enumerate(rails):
            if rail > (units.rails or 0):
                yield Problem(FABRIC, ("planes", "rails", plane, index),
                              f"rail {rail} does not exist (scalable_units.rails is "
                              f"{units.rails})")
            elif rail in owner:
                yield Problem(FABRIC, ("planes", "rails", plane, index),
                              f"rail {rail} is already in plane {owner[rail]}: a NIC is in "
                              "one plane, and nothing may connect two planes")
            owner.setdefault(rail, plane)
    for plane in range(1, planes.count + 1):
        if not planes.rails.get(plane):
            yield Problem(FABRIC, ("planes", "rails"),
                          f"plane {plane} carries no rail: it would have spines and "
                          "super-spines but no leaf")
    missing = [r for r in range(1, (units.rails or 0) + 1) if r not in owner]
    if missing:
        yield Problem(FABRIC, ("planes", "rails"),
                      f"rail(s) {', '.join(map(str, missing))} are in no plane")
    if planes.count > 1:
        assert fabric.pods is not None and fabric.superspines is not None
        if "{plane}" not in fabric.superspines.name:
            yield Problem(FABRIC, ("superspines", "name"),
                          "with several planes the name must use {plane}: each plane has "
                          "its own super-spines")
        if "{plane}" not in fabric.pods.spine_name:
            yield Problem(FABRIC, ("pods", "spine_name"),
                          "with several planes the name must use {plane}: each plane has "
                          "its own pod spines")
        if "{plane}" not in units.leaf_name and "{leaf}" not in units.leaf_name:
            yield Problem(FABRIC, ("scalable_units", "leaf_name"), "must use {leaf}")


def _five_stage(fabric: FabricIntent) -> Iterator[Problem]:
    pods, tier1, underlay = fabric.pods, fabric.superspines, fabric.underlay
    units = fabric.scalable_units
    assert pods is not None and tier1 is not None and units is not None
    if underlay.mode is BgpMode.NUMBERED:
        yield Problem(FABRIC, ("underlay", "mode"),
                      "a 5-stage fabric (pods) is planned with BGP unnumbered only: its "
                      "/31 link numbering is not defined; use mode: unnumbered")
    for key, name in (("pods", pods.link_class), ("superspines", tier1.link_class)):
        if name not in fabric.link_classes:
            yield Problem(FABRIC, (key, "link_class"), f"unknown link class {name!r}")
    count = layout.pod_count(fabric)
    if count > pods.max:
        yield Problem(FABRIC, ("scalable_units", "count"),
                      f"{units.count} SUs of {pods.sus} per pod need {count} pods, beyond "
                      f"pods.max ({pods.max})")
    reserved = layout.spine_ids_reserved(fabric)
    if reserved > underlay.max_spines:
        yield Problem(FABRIC, ("underlay", "max_spines"),
                      f"{underlay.max_spines} is below the {reserved} spine ids this fabric "
                      "reserves (planes.max x superspines.max, then pods.max x planes.max x "
                      f"pods.max_spines): set max_spines to at least {reserved}")
    # RFC 7938 section 5.2: tier 1 shares one ASN, each pod's spines another, leaves their
    # own; a pod ASN seen twice would make eBGP drop the other pod's routes as a loop
    asns = pods.asns
    if asns.size < count:
        yield Problem(FABRIC, ("pods", "asns"),
                      f"{count} pods need {count} ASNs (one per pod's spines, RFC 7938), but "
                      f"pods.asns {asns.first}-{asns.last} has {asns.size}")
    if asns.first <= underlay.spine_asn <= asns.last:
        yield Problem(FABRIC, ("pods", "asns"),
                      f"pods.asns {asns.first}-{asns.last} holds spine_asn "
                      f"{underlay.spine_asn}, the super-spines' ASN: that pod would drop "
                      "every route through the super-spines as an AS-path loop")
    leaf_asns = underlay.leaf_asns
    if asns.first <= leaf_asns.last and leaf_asns.first <= asns.last:
        yield Problem(FABRIC, ("pods", "asns"),
                      f"pods.asns {asns.first}-{asns.last} overlaps leaf_asns "
                      f"{leaf_asns.first}-{leaf_asns.last}: a leaf sharing its pod spines' "
                      "ASN drops their routes as an AS-path loop")
    downlinks = fabric.ports.spine_downlink_base + pods.sus * units.leaf_ids
    first_uplink = fabric.ports.spine_uplink_base + 1
    if downlinks >= first_uplink:
        yield Problem(FABRIC, ("ports", "spine_uplink_base"),
                      f"a pod spine's leaf ports reach {downlinks} (pods.sus x "
                      f"scalable_units.leaf_ids), past its first uplink {first_uplink}")


def _placed(intent: Intent) -> Iterator[Problem]:
    units = intent.fabric.scalable_units
    for index, server in enumerate(intent.hosts.servers):
        path = ("servers", index)
        profile = intent.hosts.profiles.get(server.profile)
        if profile is None:
            yield Problem(HOSTS, (*path, "profile"),
                          f"unknown server profile {server.profile!r}")
            continue
        if server.su is not None and (units is None or server.su > units.count):
            count = units.count if units is not None else 0
            yield Problem(HOSTS, (*path, "su"),
                          f"SU {server.su} does not exist ({count} SUs)")
        if (server.su is not None and server.port is not None and units is not None
                and units.attach is Attach.RACK):
            per_leaf = math.ceil(units.servers / (units.leaves or 1))
            if (server.port - 1) // per_leaf + 1 > (units.leaves or 0):
                yield Problem(HOSTS, (*path, "port"),
                              f"slot {server.port} is beyond the {units.leaves} rack leaf(s) "
                              f"of SU {server.su} ({per_leaf} servers per leaf)")
        if server.cabling is not None and len(server.cabling) != len(profile.nics.resolved()):
            yield Problem(HOSTS, (*path, "cabling"),
                          f"{len(server.cabling)} cables for the {len(profile.nics.resolved())}"
                          f" NICs of profile {server.profile!r}: one cable per NIC, in NIC "
                          "order")


def _numbers(fabric: FabricIntent, slots: list[layout.SwitchSlot]) -> Iterator[Problem]:
    underlay = fabric.underlay
    leaves = [s for s in slots if s.role == layout.LEAF]
    short = next((s for s in leaves if s.asn is None), None)
    if short is not None:
        rng = underlay.leaf_asns
        yield Problem(FABRIC, ("underlay", "leaf_asns"),
                      f"leaf {short.name!r} (id {short.stable_id}) needs ASN "
                      f"{rng.first + short.stable_id - 1}, beyond leaf_asns "
                      f"{rng.first}-{rng.last} (ASN range too small)")
    rng = underlay.leaf_asns
    if rng.first <= underlay.spine_asn <= rng.last:
        yield Problem(FABRIC, ("underlay", "spine_asn"),
                      f"spine ASN {underlay.spine_asn} lies inside leaf_asns "
                      f"{rng.first}-{rng.last}")
    size = ipaddress.IPv4Network(underlay.loopback_pool).num_addresses
    highest = max((s.stable_id for s in leaves), default=0)
    if underlay.max_spines + highest >= size - 1:
        yield Problem(FABRIC, ("underlay", "loopback_pool"),
                      f"{underlay.loopback_pool} exhausted: leaf id {highest} needs address "
                      f"#{underlay.max_spines + highest} (max_spines + leaf id)")


def _names(slots: list[layout.SwitchSlot]) -> Iterator[Problem]:
    seen: dict[str, layout.SwitchSlot] = {}
    for slot in slots:
        why = name_problem(slot.name)
        if why is not None:
            yield Problem(FABRIC, (*slot.path, "name") if slot.path[0] in (
                "scalable_units", "pods", "superspines") else slot.path,
                f"generates switch name {slot.name!r}: {why}")
            return
        if slot.name in seen:
            yield Problem(FABRIC, slot.path, f"generates {slot.name!r} twice "
                          f"(also a {seen[slot.name].role}); use every field of the name "
                          "pattern")
            return
        seen[slot.name] = slot


def _oversubscribed(intent: Intent, slots: list[layout.SwitchSlot]) -> Iterator[Problem]:
    """A non-blocking fabric: at every tier, uplink capacity at least the downlink's."""
    fabric = intent.fabric
    classes = fabric.link_classes
    speeds = {name: link_class.speed_mbps for name, link_class in classes.items()}
    down: dict[str, int] = {}
    up: dict[str, int] = {}
    for cable in layout.cables(fabric, slots):
        speed = speeds.get(cable.link_class, 0)
        up[cable.lower] = up.get(cable.lower, 0) + speed
        down[cable.upper] = down.get(cable.upper, 0) + speed
    host_class = classes.get(intent.hosts.defaults.link_class)
    host_speed = host_class.speed_mbps if host_class else 0
    for host in layout.expand_hosts(intent):
        down[host.leaf] = down.get(host.leaf, 0) + host_speed
    tiers = ((layout.LEAF, ("scalable_units", "servers"), "leaf"),
             (layout.SPINE, ("pods", "spines") if fabric.pods else ("spines",), "spine"),)
    for role, path, label in tiers:
        worst = max((s for s in slots if s.role == role and s.name in up),
                    key=lambda s: down.get(s.name, 0) / up[s.name], default=None)
        if worst is None:
            continue
        d, u = down.get(worst.name, 0), up[worst.name]
        if d > u:
            yield Problem(FABRIC, path,
                          f"non_blocking: {label} {worst.name} has {d // 1000} Gb/s down and "
                          f"{u // 1000} Gb/s up ({d / u:.2f}:1 oversubscribed)")
