"""What each device's platform can do, checked against what the intent asks of it.

A platform's data file lists what it (or a hardware family of it) cannot express; an intent
that asks for such a thing is refused at load with file/key/line, never rendered wrong. The
platform's naming rules apply too: a tenant whose VRF name the platform cannot spell, a port
number it has no name for.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from fnmatch import fnmatchcase

from flatfab.intent.loadbalance import LoadBalancingIntent, PlaneBalancing, Tier
from flatfab.intent.models import BgpMode, Intent
from flatfab.intent.problem import FABRIC, HOSTS, TENANTS, Problem
from flatfab.intent.qos import AsicIntent
from flatfab.model.state import HashField, LbMode
from flatfab.platforms.base import HashFieldSets, Platform
from flatfab.yamlio import PathPart

QOS = "qos"


def _watchdog_actions(intent: Intent, switches: Collection[str] | None
                      ) -> dict[str, tuple[str, tuple[PathPart, ...]]]:
    """`pfc_watchdog_<action>` -> where it is asked, for the given switches (None: all):
    an override that sets a whole device's watchdog replaces the fabric's action there, so
    a fabric can run one action on one OS and another on the next."""
    qos = intent.qos
    found: dict[str, tuple[str, tuple[PathPart, ...]]] = {}
    matching = [(index, o) for index, o in enumerate(qos.overrides)
                if o.watchdog is not None and (switches is None or any(
                    fnmatchcase(name, pattern) for name in switches for pattern in o.devices))]
    whole = [o for _, o in matching if o.ports == ["*"]]
    covered = switches is not None and all(
        any(fnmatchcase(name, pattern) for o in whole for pattern in o.devices)
        for name in switches)
    # a fabric that pauses no priority (a lossy profile) runs no fabric-wide watchdog
    if qos.pfc.priorities and qos.pfc.watchdog.enabled and not covered:
        found[f"pfc_watchdog_{qos.pfc.watchdog.action}"] = (QOS, ("pfc", "watchdog", "action"))
    for index, override in matching:
        assert override.watchdog is not None
        if override.watchdog.enabled:
            found.setdefault(f"pfc_watchdog_{override.watchdog.action}",
                             (QOS, ("overrides", index, "watchdog", "action")))
    return found


def _tiers_of(intent: Intent, switches: Collection[str] | None
              ) -> list[tuple[Tier, int | None]]:
    """The (tier, plane) scopes of the given switches (None: every scope of the intent)."""
    balancing = intent.fabric.load_balancing
    assert balancing is not None
    if switches is None:
        return list(balancing.scopes())
    fabric = intent.fabric
    tiers: list[tuple[Tier, int | None]] = []
    if any(s.name in switches for s in fabric.spines):
        tiers.append(("spine", None))
    if any(s.name in switches for s in fabric.leaves):
        tiers.append(("leaf", None))
    return tiers


def _balancing_features(intent: Intent, switches: Collection[str] | None
                        ) -> dict[str, tuple[str, tuple[PathPart, ...]]]:
    """The load-balancing features the given switches are asked for, each at the key path of
    the first scope that asks (a tier or plane may balance otherwise than the fabric)."""
    balancing = intent.fabric.load_balancing
    if balancing is None:
        return {}
    used: dict[str, tuple[str, tuple[PathPart, ...]]] = {}

    def at(tier: Tier, plane: int | None, key: str) -> tuple[str, tuple[PathPart, ...]]:
        return FABRIC, ("load_balancing", *balancing.where(tier, plane, key))

    for tier, plane in _tiers_of(intent, switches):
        way = balancing.of(tier, plane)
        used.setdefault("ecmp_hash", at(tier, plane, "hash_fields"))
        if way.mode is not LbMode.HASH:  # each way of balancing is a feature
            used.setdefault(f"lb_{way.mode.value}", at(tier, plane, "mode"))
        if HashField.FLOW_LABEL in way.hash_fields:  # not every OS hashes on it
            used.setdefault("ecmp_hash_flow_label", at(tier, plane, "hash_fields"))
        if way.seed is not None:
            seeds = _seed_path(balancing, tier, plane)
            used.setdefault("ecmp_hash_seed", (FABRIC, seeds[:-1]))  # every seed there
            if way.seed > 0xFFFF:  # some OSes take a 16-bit seed only (SR Linux's uint16)
                used.setdefault("ecmp_hash_seed_32bit", (FABRIC, seeds))
    return used


def _hash_field_problems(intent: Intent, name: str, allowed: HashFieldSets) -> list[Problem]:
    """A hash field list the platform `name` cannot render, at the key of each scope of its
    switches that asks for one (an OS with a fixed set of hashing modes)."""
    balancing = intent.fabric.load_balancing
    if balancing is None:
        return []
    found: dict[tuple[PathPart, ...], Problem] = {}
    can = " or ".join("[" + ", ".join(f.value for f in HashField if f in fields) + "]"
                      for fields in allowed.sets)
    for tier, plane in _tiers_of(intent, _switches_of(intent, name)):
        fields = balancing.of(tier, plane).hash_fields
        if frozenset(fields) in allowed.sets:
            continue
        where = ("load_balancing", *balancing.where(tier, plane, "hash_fields"))
        found.setdefault(where, Problem(FABRIC, where, f"platform {name} hashes on {can} "
                                        f"only, not [{', '.join(f.value for f in fields)}]: "
                                        f"{allowed.why}"))
    return list(found.values())


def _seed_path(balancing: LoadBalancingIntent, tier: Tier, plane: int | None
               ) -> tuple[PathPart, ...]:
    if plane is not None and tier in balancing.planes.get(plane, PlaneBalancing()).seeds:
        return ("load_balancing", "planes", plane, "seeds", tier)
    return ("load_balancing", "seeds", tier)


def used_features(intent: Intent, switches: Collection[str] | None = None
                  ) -> dict[str, tuple[str, tuple[PathPart, ...]]]:
    """Feature -> (file, key path) of the first place the intent asks for it (of the given
    switches, where that differs per switch: None means every switch)."""
    used: dict[str, tuple[str, tuple[PathPart, ...]]] = {}
    fabric, qos = intent.fabric, intent.qos
    if fabric.underlay.mode is BgpMode.UNNUMBERED:
        used["unnumbered"] = (FABRIC, ("underlay", "mode"))
    used.update(_balancing_features(intent, switches))
    for name, link_class in sorted(fabric.link_classes.items()):
        if link_class.llr:
            used.setdefault("llr", (FABRIC, ("link_classes", name, "llr")))
    if intent.tenants.tenants:
        used["vrf"] = (TENANTS, ("tenants",))
    used["ecn"] = (QOS, ("ecn",))
    if qos.trims:
        used["packet_trimming"] = (QOS, ("profile",))
        if qos.trimming.size % 4:  # some OSes trim in steps of 4 bytes (NVUE)
            used["packet_trimming_size_unaligned"] = (QOS, ("trimming", "size"))
    if qos.pfc.priorities:
        used["pfc"] = (QOS, ("pfc", "priorities"))
    if qos.pfc.priorities and qos.pfc.watchdog.enabled:
        used["pfc_watchdog"] = (QOS, ("pfc", "watchdog"))
    # each action is a feature: some OSes only drop, others only forward
    used.update(_watchdog_actions(intent, switches))
    if "buffers" in qos.model_fields_set:
        used["buffers"] = (QOS, ("buffers",))
    for index, override in enumerate(qos.overrides):
        if override.xoff_bytes is not None:
            used.setdefault("buffers", (QOS, ("overrides", index, "xoff_bytes")))
    return used


def _switches_of(intent: Intent, platform: str) -> list[str] | None:
    """The listed switches that run `platform` (None: a generated fabric's, all of them)."""
    fabric = intent.fabric
    if fabric.scalable_units is not None:
        return None
    return [s.name for s in (*fabric.spines, *fabric.leaves)
            if (s.platform or fabric.platform) == platform]


def _switch_platforms(intent: Intent) -> Iterator[tuple[str, str, tuple[PathPart, ...]]]:
    """(platform, file, key path) for every place a switch platform is chosen."""
    fabric = intent.fabric
    seen: set[str] = set()
    if fabric.scalable_units is not None or any(
            s.platform is None for s in (*fabric.spines, *fabric.leaves)):
        seen.add(fabric.platform)
        yield fabric.platform, FABRIC, ("platform",)
    for role in ("spines", "leaves"):
        for index, switch in enumerate(getattr(fabric, role)):
            if switch.platform is not None and switch.platform not in seen:
                seen.add(switch.platform)
                yield switch.platform, FABRIC, (role, index, "platform")


def problems(intent: Intent, platforms: Mapping[str, Platform]) -> list[Problem]:
    found: list[Problem] = []
    for name, file, path in _switch_platforms(intent):
        used = used_features(intent, _switches_of(intent, name))
        platform = platforms.get(name)
        if platform is None:
            found.append(Problem(file, path, f"unknown platform {name!r} "
                                             f"({', '.join(sorted(platforms))})"))
            continue
        if platform.facts.role != "switch":
            found.append(Problem(file, path, f"platform {name!r} is for hosts, not switches"))
            continue
        caps = platform.facts.capabilities
        family = intent.qos.asics.get(name, AsicIntent()).family
        if not caps.runs_on(family):
            given = name in intent.qos.asics
            found.append(Problem(QOS, ("asics", name, "family") if given else ("asics",),
                                 f"platform {name} does not run on ASIC family {family!r}"
                                 f"{'' if given else f' (the default: asics names no {name})'}"
                                 f"; it runs on {', '.join(caps.asic_families)}"))
        for feature, reason in sorted(caps.unsupported.items()):
            if feature in used:
                where_file, where = used[feature]
                found.append(Problem(where_file, where, f"platform {name} cannot do this "
                                     f"({feature}): {reason}"))
        if caps.hash_fields is not None and "ecmp_hash" not in caps.unsupported:
            found.extend(_hash_field_problems(intent, name, caps.hash_fields))
        for feature, reason in sorted(caps.family_limits(family).items()):
            if feature in used:
                where_file, where = used[feature]
                found.append(Problem(where_file, where, f"platform {name} on {family} "
                                     f"hardware cannot do this ({feature}): {reason}"))
        names = platform.names
        for index, tenant in enumerate(intent.tenants.tenants):
            why = names.vrf_problem(tenant.name)
            if why is not None:
                found.append(Problem(TENANTS, ("tenants", index, "name"),
                                     f"platform {name}: {why}"))
    for name in intent.qos.asics:
        known = platforms.get(name)
        if known is None:
            found.append(Problem(QOS, ("asics", name), f"unknown platform {name!r} "
                                 f"({', '.join(sorted(platforms))}): its ASIC would never "
                                 "be used"))
        elif known.facts.role != "switch":
            found.append(Problem(QOS, ("asics", name), f"platform {name!r} is for hosts; "
                                 "ASIC families are for switch platforms"))
    chosen: list[tuple[str, tuple[PathPart, ...]]] = [
        (intent.hosts.defaults.platform, ("defaults", "platform"))]
    chosen += [(profile.platform, ("profiles", name, "platform"))
               for name, profile in intent.hosts.profiles.items()
               if profile.platform is not None]
    # the fabric's own platforms only: the others are never imported for it
    running = {name for name, _, _ in _switch_platforms(intent)} | {n for n, _ in chosen}
    found.extend(_nic_problems(intent, {n: platforms[n] for n in sorted(running)
                                        if n in platforms}))
    for host_platform, where in chosen:
        host = platforms.get(host_platform)
        if host is None:
            found.append(Problem(HOSTS, where, f"unknown platform "
                                 f"{host_platform!r} ({', '.join(sorted(platforms))})"))
        elif host.facts.role != "host":
            found.append(Problem(HOSTS, where,
                                 f"platform {host_platform!r} is for switches, not hosts"))
    return found


def warnings(intent: Intent, platforms: Mapping[str, Platform]) -> list[Problem]:
    """An ASIC given for a switch platform no switch of the fabric runs is never used."""
    running = {name for name, _, _ in _switch_platforms(intent)}
    return [Problem(QOS, ("asics", name), f"no switch of this fabric runs {name}: this ASIC "
                    f"is never used (the fabric runs {', '.join(sorted(running))})")
            for name in intent.qos.asics if name in platforms and name not in running
            and platforms[name].facts.role == "switch"]


def _nic_problems(intent: Intent, platforms: Mapping[str, Platform]) -> Iterator[Problem]:
    """A GPU host's fabric NIC is neither a loopback (as the fabric's platforms name it) nor
    the management interface: configuring the fabric there cuts the host off, or does
    nothing."""
    loopbacks: dict[str, list[str]] = {}
    for name, p in sorted(platforms.items()):
        if p.facts.role == "switch":
            loopbacks.setdefault(p.names.loopback, []).append(name)
    # a host platform's management interface (its data file); the inventory may name
    # others, which the driver then refuses to configure at commit
    management = {m: name for name, p in sorted(platforms.items()) if p.facts.role == "host"
                  for m in p.facts.management_interfaces}
    written: list[tuple[str, tuple[PathPart, ...]]] = [
        (intent.hosts.defaults.nic, ("defaults", "nic"))]
    for leaf, spec in intent.hosts.leaves.items():
        written += [(host.nic, ("leaves", leaf, "hosts", index, "nic"))
                    for index, host in enumerate(spec.hosts or []) if host.nic is not None]
    for name, profile in intent.hosts.profiles.items():
        nics = profile.nics
        if nics.names is not None:
            written += [(nic, ("profiles", name, "nics", "names", index))
                        for index, nic in enumerate(nics.names)]
        else:
            written += [(nic, ("profiles", name, "nics", "name")) for nic in nics.resolved()]
    for nic, path in written:
        if nic in loopbacks:
            namers = loopbacks[nic]
            yield Problem(HOSTS, path, f"{nic!r} is the loopback interface (as "
                          f"{', '.join(namers)} name{'s' if len(namers) == 1 else ''} it), "
                          "not a NIC; the fabric NIC must be a data port")
        elif nic in management:
            yield Problem(HOSTS, path, f"{nic!r} is the hosts' management interface (as "
                          f"{management[nic]} names it: the host driver and the lab keep it "
                          "for management and refuse to configure it); the fabric NIC must "
                          "be another port")
