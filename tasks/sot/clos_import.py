"""Import of AI back-ends: multi-NIC servers, and fabrics generated from scalable units, pods,
super-spines and planes.

A generated fabric.yaml names no switch: it gives counts (SUs, rails or leaves per SU, servers
per SU, SUs and spines per pod, super-spines per plane, which rails each plane carries) and
name patterns. Import infers those counts from the switches the source holds, each placed by
its custom fields (`fabric_plane`, `fabric_pod`, `fabric_su`, `fabric_rail`, written by `sot
sync`) or else by its name read back through the intent's pattern. Everything else (name
patterns, reserved ids, ASN ranges, link classes) stays the intent's.

A server's NICs are read from its cables, one per NIC; the rail of a NIC is the rail of the
leaf it is cabled to. A server whose NIC k is cabled to rail k's leaf of one SU, on the same
port of each, sits in that SU's slot: generated when its name and profile are the SU's own,
else a `servers:` entry with `su` and `port`. Any other server (a NIC on the wrong rail, NICs
on two SUs, a listed fabric) is written NIC by NIC (`cabling:`), in its profile's NIC order.
A server's profile is the existing one with its role (GPU or storage, from the source's role)
and exactly its NIC names, else a new one. Whatever the intent still cannot say (a switch
whose name no pattern gives, a cable the generated cabling does not have) is left for the
import's final comparison, which refuses it naming the device and the cable.
"""

from __future__ import annotations

import json
import math
import re
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from flatfab.errors import InputError, InputProblem
from flatfab.intent.clos import Attach
from flatfab.intent.layout import su_leaf_name
from flatfab.intent.models import Intent
from flatfab.sot.snapshot import SotCable, SotDevice


@dataclass(frozen=True)
class HostNic:
    """One cabled NIC of a host: the leaf and port (the intent's counting) it goes to."""

    host: str
    nic: str
    leaf: str
    port: int
    cable: SotCable
    leaf_port: str = ""  # the port's name on the leaf


def natural(name: str) -> tuple[Any, ...]:
    """eth2 before eth10."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def name_parser(pattern: str) -> Callable[[str], dict[str, int] | None]:
    """The numbers a name pattern ("su{su}-leaf{leaf}") put into a name, or None."""
    regex, seen = "^", set()
    for literal, field_name, _, _ in string.Formatter().parse(pattern):
        regex += re.escape(literal)
        if field_name is None:
            continue
        regex += f"(?P={field_name})" if field_name in seen else f"(?P<{field_name}>[0-9]+)"
        seen.add(field_name)
    compiled = re.compile(regex + "$")

    def parse(name: str) -> dict[str, int] | None:
        found = compiled.match(name)
        return None if found is None else {k: int(v) for k, v in found.groupdict().items()}

    return parse


@dataclass(frozen=True)
class Place:
    """Where a generated switch sits: plane, pod, SU and its index (the leaf's rail or number
    in its SU, the spine's number in its pod, the super-spine's in its plane)."""

    plane: int | None
    pod: int | None
    su: int | None
    index: int


def _place(device: SotDevice, pattern: str, key: str, index: str,
           by_field: int | None) -> Place | InputProblem:
    parsed = name_parser(pattern)(device.name) or {}
    number = by_field if by_field is not None else parsed.get(index)
    if number is None:
        return InputProblem(file="", path=str(device.ref), reason=(
            f"the intent generates {key} named {pattern!r} (fabric.yaml {key}); "
            f"{device.name!r} is not such a name and has no custom field saying where it "
            "sits: the intent cannot name it"))
    return Place(plane=device.plane if device.plane is not None else parsed.get("plane"),
                 pod=device.pod if device.pod is not None else parsed.get("pod"),
                 su=device.su if device.su is not None else parsed.get("su"), index=number)


@dataclass
class Inferred:
    places: dict[str, Place] = field(default_factory=dict)  # switch -> where it sits
    problems: list[InputProblem] = field(default_factory=list)


def place_switches(intent: Intent, switches: Mapping[str, list[SotDevice]]) -> Inferred:
    fabric = intent.fabric
    units = fabric.scalable_units
    assert units is not None
    out = Inferred()
    rail = units.attach is Attach.RAIL
    todo: list[tuple[SotDevice, str, str, str, Callable[[SotDevice], int | None]]] = [
        (d, units.leaf_name, "scalable_units", "leaf", (lambda d: d.rail) if rail
         else (lambda d: None)) for d in switches["leaf"]]
    if fabric.pods is not None and fabric.superspines is not None:
        todo += [(d, fabric.pods.spine_name, "pods", "spine", lambda d: None)
                 for d in switches["spine"]]
        todo += [(d, fabric.superspines.name, "superspines", "spine", lambda d: None)
                 for d in switches["superspine"]]
    for device, pattern, key, index, by_field in todo:
        placed = _place(device, pattern, key, index, by_field(device))
        if isinstance(placed, InputProblem):
            out.problems.append(placed)
        else:
            out.places[device.name] = placed
    return out


def _set(doc: Any, key: str, value: Any) -> None:
    if doc.get(key) != value:
        doc[key] = value


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value))


def fabric_counts(doc: Any, intent: Intent, switches: Mapping[str, list[SotDevice]],
                  inferred: Inferred) -> None:
    """fabric.yaml's counts from the placed switches (`doc`: fabric.yaml, edited in place)."""
    fabric = intent.fabric
    units = fabric.scalable_units
    assert units is not None
    places = inferred.places
    leaves = [places[d.name] for d in switches["leaf"] if d.name in places]
    units_doc = doc["scalable_units"]
    if leaves and all(p.su is not None for p in leaves):
        _set(units_doc, "count", max(p.su or 0 for p in leaves))
    if leaves:
        _set(units_doc, "rails" if units.attach is Attach.RAIL else "leaves",
             max(p.index for p in leaves))
    if units.attach is Attach.RAIL and (fabric.planes is not None or any(
            (p.plane or 1) > 1 for p in leaves)):
        rails: dict[int, set[int]] = {}
        for p in leaves:
            rails.setdefault(p.plane or 1, set()).add(p.index)
        wanted = {plane: sorted(r) for plane, r in sorted(rails.items())}
        planes_doc = doc.get("planes")
        if planes_doc is None:
            doc["planes"] = planes_doc = CommentedMap()
        old = planes_doc.get("rails") or {}
        if {int(k): list(v) for k, v in old.items()} != wanted:
            rails_doc = CommentedMap({plane: _flow_seq(r) for plane, r in wanted.items()})
            if isinstance(old, CommentedMap) and old.fa.flow_style():
                rails_doc.fa.set_flow_style()  # as it was written
            planes_doc["rails"] = rails_doc
        _set(planes_doc, "count", len(wanted))
    if fabric.pods is not None and "pods" in doc:
        spines = [places[d.name] for d in switches["spine"] if d.name in places]
        if spines:
            _set(doc["pods"], "spines", max(p.index for p in spines))
        pods_of: dict[int, set[int]] = {}
        for p in leaves:
            if p.pod is not None and p.su is not None:
                pods_of.setdefault(p.pod, set()).add(p.su)
        needed = max((len(s) for s in pods_of.values()), default=0)
        consistent = needed > 0 and all(p.pod == math.ceil(p.su / needed) for p in leaves
                                        if p.pod is not None and p.su is not None)
        # one pod says no more than a floor; SUs in pods no count gives are the comparison's
        if consistent and (len(pods_of) > 1 or needed > fabric.pods.sus):
            _set(doc["pods"], "sus", needed)
    if fabric.superspines is not None and "superspines" in doc:
        tops = [places[d.name] for d in switches["superspine"] if d.name in places]
        if tops:
            _set(doc["superspines"], "count", max(p.index for p in tops))


def _flow_seq(items: Iterable[Any]) -> CommentedSeq:
    seq = CommentedSeq(items)
    seq.fa.set_flow_style()
    return seq


def _flow_map(mapping: dict[str, Any]) -> CommentedMap:
    out = CommentedMap(mapping)
    out.fa.set_flow_style()
    return out


@dataclass(frozen=True)
class Slot:
    su: int
    server: int  # the server's number in its SU (its port on every rail leaf)


def _profile_for(profiles: Any, role: str, nics: list[str]) -> str:
    """The existing profile of this role with exactly these NICs, else a new one (added to
    `profiles`, hosts.yaml's mapping, in place)."""
    for name, profile in profiles.items():
        spec = profile.get("nics") or {}
        names = (list(spec["names"]) if spec.get("names") is not None else
                 [str(spec.get("name", "eth{n}")).format(n=n)
                  for n in range(1, int(spec.get("count", 0)) + 1)])
        if str(profile.get("role", "gpu")) == role and sorted(names) == sorted(nics):
            return str(name)
    base = f"{role}-{len(nics)}nic"
    name, n = base, 1
    while name in profiles:
        n += 1
        name = f"{base}-{n}"
    profiles[name] = _flow_map({"role": role, "nics": _flow_map(
        {"names": _flow_seq(sorted(nics, key=natural))})})
    return name


def _order(profiles: Any, name: str) -> list[str]:
    spec = profiles[name].get("nics") or {}
    if spec.get("names") is not None:
        return [str(n) for n in spec["names"]]
    return [str(spec.get("name", "eth{n}")).format(n=n)
            for n in range(1, int(spec.get("count", 0)) + 1)]


def _slot(intent: Intent, nics: list[HostNic], order: list[str],
          places: Mapping[str, Place]) -> Slot | None:
    """The SU slot a server's cabling is, if it is one."""
    units = intent.fabric.scalable_units
    by_nic = {n.nic: n for n in nics}
    if units is None or sorted(by_nic) != sorted(order):
        return None
    cabled = [(places.get(by_nic[nic].leaf), by_nic[nic].port) for nic in order]
    sus = {p.su for p, _ in cabled if p is not None}
    if None in (p for p, _ in cabled) or len(sus) != 1:
        return None
    su = sus.pop()
    if su is None:
        return None
    if units.attach is Attach.RAIL:
        ports = {port for _, port in cabled}
        if len(ports) == 1 and all(p is not None and p.index == k
                                   for k, (p, _) in enumerate(cabled, 1)):
            return Slot(su, ports.pop())
        return None
    per_leaf = math.ceil(units.servers / (units.leaves or 1))
    first_leaf, first_port = cabled[0][0], cabled[0][1]
    if first_leaf is None or (first_port - 1) % len(order):
        return None
    number = (first_leaf.index - 1) * per_leaf + (first_port - 1) // len(order) + 1
    if all(p is not None and p.index == first_leaf.index and port == first_port + k
           for k, (p, port) in enumerate(cabled)):
        return Slot(su, number)
    return None


def _servers_per_su(named: Mapping[str, Slot], su_count: int) -> int:
    """Servers per SU: the most that every SU has, in slots 1..n, under the names the SU
    generates (at least one: an SU without its first server is named by the comparison)."""
    numbers: dict[int, set[int]] = {}
    for slot in named.values():
        numbers.setdefault(slot.su, set()).add(slot.server)
    counts = []
    for su in range(1, su_count + 1):
        n = 0
        while n + 1 in numbers.get(su, set()):
            n += 1
        counts.append(n)
    return max(1, min(counts, default=1))


def _generated_problem(source: str, server: str, slot: Slot, nics: list[HostNic],
                       order: list[str], profile: str, intent: Intent,
                       places: Mapping[str, Place]) -> InputProblem:
    """A server the SU generates (by its name) that the source holds otherwise."""
    units = intent.fabric.scalable_units
    assert units is not None
    where = f"{server} is server {slot.server} of SU {slot.su}, which the intent generates"
    if profile != units.profile:
        return InputProblem(file=source, path=f"dcim.device {server}", reason=(
            f"{where} with profile {units.profile!r}; the source gives it the NICs and role "
            f"of profile {profile!r}: the intent cannot say this"))
    by_nic = {n.nic: n for n in nics}
    for k, nic in enumerate(order, 1):
        cabled = by_nic[nic]
        place = places.get(cabled.leaf)
        rail = f" (rail {place.index})" if place is not None and units.attach is Attach.RAIL \
            else ""
        if units.attach is Attach.RAIL and (place is None or place.index != k
                                            or place.su != slot.su
                                            or cabled.port != slot.server):
            return InputProblem(file=source, path=str(cabled.cable.ref), reason=(
                f"{where} with NIC {nic} on rail {k} ({su_leaf_name(intent, slot.su, k)}, "
                f"port {slot.server}); the source cables {nic} to {cabled.leaf}:"
                f"{cabled.leaf_port}{rail}: the intent cannot say this"))
    first = by_nic[order[0]]
    return InputProblem(file=source, path=str(first.cable.ref), reason=(
        f"{where} cabled by the SU's scheme; the source cables it otherwise: the intent "
        "cannot say this"))


def _su_profile(profiles: Any, intent: Intent, servers: Mapping[str, list[HostNic]],
                server_role: Mapping[str, str]) -> None:
    """The SU profile's NICs as the SUs' own servers have them, when all of them agree
    (servers grown from 4 to 6 NICs with two new rails): `count` where the profile's name
    pattern still gives them, else `names`."""
    units = intent.fabric.scalable_units
    profile = profiles.get(units.profile) if units is not None else None
    if units is None or profile is None:
        return
    parse = name_parser(units.server_name)
    own = [sorted((n.nic for n in nics), key=natural) for server, nics in servers.items()
           if parse(server) is not None]
    role = str(profile.get("role", "gpu"))
    if not own or any(nics != own[0] for nics in own) or any(
            server_role.get(s, "gpu") != role for s in servers if parse(s) is not None):
        return
    names = own[0]
    if sorted(_order(profiles, units.profile)) == sorted(names):
        return
    spec = profile.get("nics")
    pattern = str(spec.get("name", "eth{n}")) if spec is not None else "eth{n}"
    if spec is not None and spec.get("count") is not None and names == [
            pattern.format(n=n) for n in range(1, len(names) + 1)]:
        spec["count"] = len(names)
    elif spec is not None:
        spec.pop("count", None)
        spec.pop("name", None)
        spec["names"] = _flow_seq(names)


def servers_doc(fabric_doc: Any, hosts_doc: Any, intent: Intent,
                servers: Mapping[str, list[HostNic]], server_role: Mapping[str, str],
                places: Mapping[str, Place], source: str) -> None:
    """hosts.yaml's profiles and servers, and fabric.yaml's servers per SU, for the servers
    the source holds (each with its cabled NICs). A server named as an SU generates it must
    be that SU's server, cabled by its scheme: anything else is refused, naming the server
    and its first cable the scheme does not give."""
    profiles = hosts_doc.get("profiles")
    if profiles is None:
        profiles = CommentedMap()
    _su_profile(profiles, intent, servers, server_role)
    profile_of: dict[str, str] = {}
    slots: dict[str, Slot] = {}
    for server, nics in sorted(servers.items()):
        names = [n.nic for n in nics]
        profile_of[server] = _profile_for(profiles, server_role.get(server, "gpu"), names)
        slot = _slot(intent, nics, _order(profiles, profile_of[server]), places)
        if slot is not None:
            slots[server] = slot
    if profiles and hosts_doc.get("profiles") is None:
        hosts_doc["profiles"] = profiles
    units = intent.fabric.scalable_units
    generated: set[str] = set()
    problems: list[InputProblem] = []
    if units is not None:
        units_doc = fabric_doc["scalable_units"]
        count = int(units_doc.get("count", units.count))
        parse = name_parser(units.server_name)
        named = {server: Slot(n["su"], n["server"]) for server in servers
                 if (n := parse(server)) is not None and 1 <= n["su"] <= count}
        per_su = _servers_per_su(named, count)
        _set(units_doc, "servers", per_su)
        for server, slot in sorted(named.items()):
            if slot.server > per_su:
                continue
            if slots.get(server) == slot and profile_of[server] == units.profile:
                generated.add(server)
                continue
            problems.append(_generated_problem(
                source, server, slot, servers[server],
                _order(profiles, profile_of[server]), profile_of[server], intent, places))
    if problems:
        raise InputError(problems)
    wanted: dict[str, dict[str, Any]] = {}
    for server, nics in sorted(servers.items()):
        if server in generated:
            continue
        slot = slots.get(server)
        profile = profile_of[server]
        if slot is not None:
            wanted[server] = {"name": server, "profile": profile, "su": slot.su,
                              "port": slot.server}
            continue
        by_nic = {n.nic: n for n in nics}
        wanted[server] = {"name": server, "profile": profile, "cabling": [
            {"leaf": by_nic[nic].leaf, "port": by_nic[nic].port}
            for nic in _order(profiles, profile)]}
    _servers_list(hosts_doc, wanted)


def _servers_list(hosts_doc: Any, wanted: dict[str, dict[str, Any]]) -> None:
    """`servers:` as wanted, existing entries (and their comments) kept where they still say
    the same, changed ones in their place, new ones appended by name."""
    existing = list(hosts_doc.get("servers") or [])
    out = CommentedSeq()
    done: set[str] = set()
    for entry in existing:
        name = entry.get("name") if isinstance(entry, Mapping) else None
        if name not in wanted or name in done:
            continue
        done.add(name)
        out.append(entry if _plain(entry) == wanted[name] else _entry(wanted[name]))
    for name in sorted(set(wanted) - done):
        out.append(_entry(wanted[name]))
    if _plain(out) == _plain(existing):
        return
    if out:
        hosts_doc["servers"] = out
    else:
        hosts_doc.pop("servers", None)


def _entry(wanted: dict[str, Any]) -> CommentedMap:
    if "cabling" not in wanted:
        return _flow_map(wanted)
    entry = CommentedMap({k: v for k, v in wanted.items() if k != "cabling"})
    entry["cabling"] = CommentedSeq(_flow_map(c) for c in wanted["cabling"])
    return entry
