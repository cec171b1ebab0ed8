"""A source-of-truth snapshot into intents/<fabric>/*.yaml, and where the two disagree.

The source owns what exists and how it is cabled: which switches are spines and leaves (and
their platforms), which leaf port each host NIC is cabled to, tenant membership, and the
loopbacks and ASNs already given out (written as pins). The intent keeps what the source does
not model (pools, link classes, the lossless profile). Import edits the existing files in
place with a round-trip YAML writer, so comments and key order survive and an import that
changes nothing gives byte-identical files; compact forms (a host count, a full mesh, member
patterns) are kept wherever they still say the same.

Bad data in the source (a device without role or platform, a duplicate name, a cable to a
device or port outside the fabric) is an error naming the source object.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from flatfab.errors import InputError, InputProblem
from flatfab.intent.layout import expand_hosts
from flatfab.intent.models import FabricLink, Intent
from flatfab.intent.names import name_problem
from flatfab.model.state import DeviceState, FabricState, Role
from flatfab.platforms.base import Platform
from flatfab.sot.clos_import import (
    HostNic,
    Place,
    fabric_counts,
    natural,
    place_switches,
    servers_doc,
)
from flatfab.sot.snapshot import INCOMPLETE, Snapshot, SotCable, SotDevice
from flatfab.yamlio import dump_roundtrip, roundtrip

ROLES = ("superspine", "spine", "leaf", "host", "storage")
SWITCHES = ("superspine", "spine", "leaf")
SERVER_ROLES = {"host": "gpu", "storage": "storage"}  # a host's mapped role -> server role
MAX_PORT = 4096  # the highest port number a name is looked up for
DEFAULT_LINK_CLASS = FabricLink.model_fields["link_class"].default


@dataclass(frozen=True)
class SotMapping:
    """How the source's vocabulary maps onto flatfab's (explicit, never guessed)."""

    roles: Mapping[str, str]  # source role -> superspine | spine | leaf | host | storage
    platforms: Mapping[str, str]  # source platform (network driver) -> flatfab platform


def role_key(device: DeviceState) -> str:
    """A planned device's role as the mapping names it: a storage server has its own, so the
    source tells GPU and storage servers apart."""
    if device.role is Role.HOST:
        return "storage" if device.server_role == "storage" else "host"
    return device.role.value


def flatfab_role(mapped: str) -> str:
    """The planned role (DeviceState.role) of a mapped source role."""
    return "host" if mapped in SERVER_ROLES else mapped


@dataclass
class _Fabric:
    """The snapshot sorted into flatfab's roles, every fact with its source object."""

    switches: dict[str, list[SotDevice]] = field(default_factory=dict)  # role -> devices
    hosts: dict[str, SotDevice] = field(default_factory=dict)
    server_role: dict[str, str] = field(default_factory=dict)  # host -> gpu | storage
    platform: dict[str, str] = field(default_factory=dict)  # device -> flatfab platform
    uplinks: dict[tuple[str, str], SotCable] = field(default_factory=dict)  # (leaf, spine)
    tier1: dict[tuple[str, str], SotCable] = field(default_factory=dict)  # (spine, superspine)
    # host -> its leaf cables, one per NIC (a multi-NIC server has several)
    host_cables: dict[str, list[SotCable]] = field(default_factory=dict)


def _problem(source: str, what: str, reason: str) -> InputProblem:
    return InputProblem(file=source, path=what, reason=reason)


def classify(snapshot: Snapshot, mapping: SotMapping) -> _Fabric:
    """Devices by role and cables by kind; every piece of bad data is one problem."""
    problems: list[InputProblem] = []
    fabric = _Fabric(switches={role: [] for role in SWITCHES})
    seen: dict[str, SotDevice] = {}
    role_of: dict[str, str] = {}
    refused: set[str] = set()  # named once already; their cables say nothing more
    for device in snapshot.devices:
        where = str(device.ref)
        if device.name in seen:
            problems.append(_problem(snapshot.source, where, f"duplicate device name "
                                     f"{device.name!r} (also {seen[device.name].ref})"))
            continue
        seen[device.name] = device
        role = mapping.roles.get(device.role or "")
        if device.role is None:
            problems.append(_problem(snapshot.source, where, "has no role"))
            refused.add(device.name)
            continue
        if role is None:
            continue  # a device of another kind (a console server): not part of the fabric
        why = name_problem(device.name)
        if why is not None:
            problems.append(_problem(snapshot.source, where, f"name {device.name!r}: {why}"))
            refused.add(device.name)
            continue
        platform = mapping.platforms.get(device.platform or "")
        if platform is None:
            known = ", ".join(sorted(mapping.platforms))
            problems.append(_problem(snapshot.source, where, "has no platform" if
                                     device.platform is None else f"platform "
                                     f"{device.platform!r} is not mapped (known: {known})"))
            refused.add(device.name)
            continue
        role_of[device.name] = flatfab_role(role)
        fabric.platform[device.name] = platform
        if role in SERVER_ROLES:
            fabric.hosts[device.name] = device
            fabric.server_role[device.name] = SERVER_ROLES[role]
        else:
            fabric.switches[role].append(device)
    for cable in snapshot.cables:
        if refused & {cable.a_device, cable.b_device}:
            continue
        ends = [(cable.a_device, cable.a_port), (cable.b_device, cable.b_port)]
        end_roles = [None if device in cable.outside else role_of.get(device)
                     for device, _ in ends]
        roles = set(end_roles)
        if None in roles:
            if roles != {None}:  # one end in the fabric, one not: cabled to nowhere
                far = end_roles.index(None)
                problems.append(_problem(snapshot.source, str(cable.ref), _nowhere(
                    ends[1 - far], ends[far], cable, seen, mapping)))
            continue
        if roles == {"leaf", "spine"}:
            leaf, spine = _ordered(cable, role_of, "leaf")
            fabric.uplinks[(leaf, spine)] = cable
        elif roles == {"spine", "superspine"}:
            spine, top = _ordered(cable, role_of, "spine")
            fabric.tier1[(spine, top)] = cable
        elif roles == {"leaf", "host"}:
            host, _ = _ordered(cable, role_of, "host")
            fabric.host_cables.setdefault(host, []).append(cable)
        else:
            joins = " and ".join(f"{d}:{p} ({role_of[d]})" for d, p in ends)
            problems.append(_problem(snapshot.source, str(cable.ref), f"joins {joins}; "
                                     "flatfab cables super-spine to spine, spine to leaf and "
                                     "leaf to host (a NIC) only"))
    if problems:
        raise InputError(problems)
    return fabric


def _nowhere(near: tuple[str, str], far: tuple[str, str], cable: SotCable,
             selected: Mapping[str, SotDevice], mapping: SotMapping) -> str:
    """Why a cable from a fabric port (near) leads nowhere the fabric knows (far)."""
    device = far[0]
    if device == INCOMPLETE:
        return (f"the cable path from {near[0]}:{near[1]} ends at a {far[1]}, not at an "
                "interface (a patch panel or circuit with nothing connected beyond)")
    why = (f"{device} is not among the devices the source's filters select"
           if device in cable.outside or device not in selected else
           f"{device} has role {selected[device].role!r}, which is not mapped to a flatfab "
           f"role (mapped: {', '.join(sorted(mapping.roles))})")
    return f"cables {near[0]}:{near[1]} to {far[0]}:{far[1]}, but {why}"


def _ordered(cable: SotCable, role_of: Mapping[str, str], first: str) -> tuple[str, str]:
    """(device of role `first`, the other device)."""
    if role_of[cable.a_device] == first:
        return cable.a_device, cable.b_device
    return cable.b_device, cable.a_device


def _port_of(cable: SotCable, device: str) -> str:
    return cable.a_port if cable.a_device == device else cable.b_port


@cache
def _numbers(platform: Platform) -> dict[str, int]:
    """Port name -> port number on one platform (the inverse of its naming)."""
    return {platform.names.physical(n): n for n in range(MAX_PORT, 0, -1)}


def port_number(platform: Platform, name: str) -> int | None:
    return _numbers(platform).get(name)


# -- the YAML edits --------------------------------------------------------------------------


def _load(path: Path) -> Any:
    if not path.exists():
        return CommentedMap()
    doc = roundtrip().load(path.read_text(encoding="utf-8"))
    return CommentedMap() if doc is None else doc


def _dump(doc: Any) -> str:
    return dump_roundtrip(doc)


def _flow(mapping: dict[str, Any]) -> CommentedMap:
    out = CommentedMap(mapping)
    out.fa.set_flow_style()
    return out


def _switch_entries(existing: Iterable[Any], devices: list[SotDevice], fabric_platform: str,
                    platform_of: Mapping[str, str],
                    pins: Mapping[str, dict[str, Any]]) -> CommentedSeq:
    """The spines or leaves list: existing entries (and their order, ids, comments) kept for
    devices the source still has, new devices appended by name."""
    by_name = {d.name: d for d in devices}
    out = CommentedSeq()
    kept: set[str] = set()
    for entry in existing:
        name = entry.get("name") if isinstance(entry, Mapping) else None
        if name in by_name:
            out.append(_switch_entry(entry, fabric_platform, platform_of[name],
                                     pins.get(name, {})))
            kept.add(name)
    for device in sorted(devices, key=lambda d: d.name):
        if device.name not in kept:
            out.append(_switch_entry(CommentedMap({"name": device.name}), fabric_platform,
                                     platform_of[device.name], pins.get(device.name, {})))
    return out


def _switch_entry(entry: Any, fabric_platform: str, platform: str,
                  pins: Mapping[str, Any]) -> Any:
    wanted = {"platform": None if platform == fabric_platform else platform,
              "loopback": pins.get("loopback"), "asn": pins.get("asn")}
    for key, value in wanted.items():
        if value is None:
            entry.pop(key, None)
        elif entry.get(key) != value:
            entry[key] = value
    return entry


def _links(fabric: _Fabric, existing: Iterable[Any]) -> CommentedSeq | None:
    """The explicit leaf-spine links, or None for a full mesh of default links (the intent's
    default). Entries for links the source still cables are kept as written (their link
    class, which the source does not model, and comments); new links get the default."""
    leaves = [d.name for d in fabric.switches["leaf"]]
    spines = [d.name for d in fabric.switches["spine"]]
    out = CommentedSeq()
    kept: set[tuple[str, str]] = set()
    for entry in existing:
        pair = (entry.get("leaf"), entry.get("spine")) if isinstance(entry, Mapping) else None
        if pair in fabric.uplinks and pair not in kept:
            out.append(entry)
            kept.add(pair)
    for leaf, spine in sorted(set(fabric.uplinks) - kept):
        out.append(_flow({"leaf": leaf, "spine": spine}))
    full_mesh = set(fabric.uplinks) == {(leaf, spine) for leaf in leaves for spine in spines}
    if full_mesh and all(entry.get("class", DEFAULT_LINK_CLASS) == DEFAULT_LINK_CLASS
                         for entry in out):
        return None
    return out


@dataclass(frozen=True)
class _HostSlot:
    name: str
    port: int
    nic: str


def host_nics(fabric: _Fabric, leaf_platform: Mapping[str, Platform],
              host_base: int) -> dict[str, list[HostNic]]:
    """Host -> its cabled NICs (ports in the intent's counting), in NIC name order; a cable
    on a leaf port that is not a host port is refused, naming it."""
    problems = []
    out: dict[str, list[HostNic]] = {}
    for host, cables in sorted(fabric.host_cables.items()):
        for cable in cables:
            leaf = cable.b_device if cable.a_device == host else cable.a_device
            leaf_port = _port_of(cable, leaf)
            number = port_number(leaf_platform[leaf], leaf_port)
            if number is None or number <= host_base:
                problems.append(InputProblem(file="", path=str(cable.ref), reason=(
                    f"{leaf}:{leaf_port} is not a host port of a {leaf_platform[leaf].name} "
                    "leaf (host ports count from "
                    f"{leaf_platform[leaf].names.physical(host_base + 1)})")))
                continue
            out.setdefault(host, []).append(HostNic(host, _port_of(cable, host), leaf,
                                                    number - host_base, cable, leaf_port))
    if problems:
        raise InputError(problems)
    return {host: sorted(nics, key=lambda n: natural(n.nic)) for host, nics in out.items()}


def _host_slots(one_nic: Mapping[str, HostNic]) -> dict[str, list[_HostSlot]]:
    """Leaf -> its one-NIC hosts, sorted by port."""
    slots: dict[str, list[_HostSlot]] = {}
    for host, nic in sorted(one_nic.items()):
        slots.setdefault(nic.leaf, []).append(_HostSlot(host, nic.port, nic.nic))
    return {leaf: sorted(hosts, key=lambda s: s.port) for leaf, hosts in slots.items()}


def _hosts_doc(doc: Any, slots: dict[str, list[_HostSlot]], leaves: list[str]) -> Any:
    """hosts.yaml's per-leaf section, as compact as it can be while saying the same."""
    defaults = doc.get("defaults") or {}
    count = int(defaults.get("count", 0))
    nic = str(defaults.get("nic", "eth1"))
    name_format = str(defaults.get("name_format", "{leaf}-h{port}"))

    def regular(leaf: str, hosts: list[_HostSlot]) -> bool:
        """Ports 1..n, default names and NIC: `count: n` says it all."""
        return all(h.port == i and h.nic == nic and h.name == name_format.format(leaf=leaf,
                                                                                  port=i)
                   for i, h in enumerate(hosts, start=1))

    section = CommentedMap()
    for leaf in leaves:
        hosts = slots.get(leaf, [])
        if regular(leaf, hosts):
            if len(hosts) != count:
                section[leaf] = _flow({"count": len(hosts)})
            continue
        entries = CommentedSeq()
        for slot in hosts:
            entry: dict[str, Any] = {"port": slot.port}
            if slot.name != name_format.format(leaf=leaf, port=slot.port):
                entry = {"name": slot.name, **entry}
            if slot.nic != nic:
                entry["nic"] = slot.nic
            entries.append(_flow(entry))
        section[leaf] = CommentedMap({"hosts": entries})
    old = doc.get("leaves")
    if section:
        if old != section:
            doc["leaves"] = section
    else:
        doc.pop("leaves", None)
    return doc


def _tenants_doc(doc: Any, snapshot: Snapshot, hosts: Iterable[str]) -> list[str]:
    """Tenant members from the hosts' tenants; the existing patterns are kept while they
    still select exactly those hosts. Returns tenants the source has that the intent lacks
    (a tenant needs a VRF id and prefixes, which only the intent gives)."""
    members: dict[str, list[str]] = {}
    for device in snapshot.devices:
        if device.name in hosts and device.tenant is not None:
            members.setdefault(device.tenant, []).append(device.name)
    names = sorted(hosts)
    missing = sorted(set(members) - {t.get("name") for t in doc.get("tenants") or []})
    for tenant in doc.get("tenants") or []:
        wanted = sorted(members.get(tenant.get("name"), []))
        patterns = list(tenant.get("members") or [])
        selected = sorted({n for p in patterns for n in fnmatch.filter(names, p)})
        if selected != wanted:
            seq = CommentedSeq(wanted)
            seq.fa.set_flow_style()
            tenant["members"] = seq
    return missing


@dataclass(frozen=True)
class ImportResult:
    files: dict[str, str]  # file name -> new text
    notes: list[str]  # what the source holds that the intent cannot take (said, not lost)


INTENT_STEMS = ("fabric", "hosts", "tenants")
Planner = Callable[[dict[str, str]], FabricState]  # intent file texts -> their plan


def import_fabric(snapshot: Snapshot, intent_dir: Path, intent: Intent, mapping: SotMapping,
                  platforms: Mapping[str, Platform], plan_of: Planner) -> ImportResult:
    """The intent files as the source of truth says (not written: the caller does that).

    Loopbacks and ASNs the source holds become pins only where they differ from what the
    allocation scheme gives anyway, so an import shows real pins in its diff, not noise.
    """
    fabric = classify(snapshot, mapping)
    files = _files(fabric, snapshot, intent_dir, intent, platforms, pins={})
    planned = plan_of(files.files)
    pins: dict[str, dict[str, Any]] = {}
    listed = (("spine", "leaf") if intent.fabric.scalable_units is None else
              () if intent.fabric.five_stage else ("spine",))  # generated switches have none
    for role in listed:
        for device in fabric.switches[role]:
            state = planned.devices[device.name]
            loopback = (state.loopback or "").split("/", maxsplit=1)[0]
            if device.loopback is not None and device.loopback != loopback:
                pins.setdefault(device.name, {})["loopback"] = device.loopback
            if device.asn is not None and device.asn != state.asn:
                pins.setdefault(device.name, {})["asn"] = device.asn
    return _files(fabric, snapshot, intent_dir, intent, platforms, pins) if pins else files


def _one_nic_hosts(fabric: _Fabric, intent: Intent,
                   nics: Mapping[str, list[HostNic]]) -> dict[str, HostNic]:
    """The hosts that stay one-NIC hosts (hosts.yaml `leaves:`), the others being servers
    (profiles and `servers:`). A generated fabric's hosts are servers unless the intent
    already lists them as one-NIC hosts; a listed fabric's hosts are one-NIC hosts unless
    they have several NICs, a storage role, or the intent places them as servers."""
    declared = expand_hosts(intent)
    servers = {slot.name for slot in declared if slot.server}
    one_nic = {slot.name for slot in declared if not slot.server}
    generated = intent.fabric.scalable_units is not None
    return {host: cabled[0] for host, cabled in nics.items()
            if len(cabled) == 1 and fabric.server_role.get(host) == "gpu"
            and (host in one_nic if generated else host not in servers)}


def _generated_hosts_doc(doc: Any, intent: Intent, one_nic: Mapping[str, HostNic]) -> None:
    """A generated fabric's one-NIC hosts (only where hosts.yaml lists them): left as
    written while they say the same, else listed leaf by leaf."""
    have = {(s.name, s.leaf, s.port, s.nic) for s in expand_hosts(intent) if not s.server}
    want = {(h, n.leaf, n.port, n.nic) for h, n in one_nic.items()}
    if have == want:
        return
    defaults = intent.hosts.defaults
    section = CommentedMap()
    for leaf, hosts in sorted(_host_slots(one_nic).items()):
        entries = CommentedSeq()
        for h in hosts:
            entry: dict[str, Any] = {"port": h.port}
            if h.name != defaults.name_format.format(leaf=leaf, port=h.port):
                entry = {"name": h.name, **entry}
            if h.nic != defaults.nic:
                entry["nic"] = h.nic
            entries.append(_flow(entry))
        section[leaf] = CommentedMap({"hosts": entries})
    if section:
        doc["leaves"] = section
    else:
        doc.pop("leaves", None)


def _files(fabric: _Fabric, snapshot: Snapshot, intent_dir: Path, intent: Intent,
           platforms: Mapping[str, Platform], pins: Mapping[str, dict[str, Any]]
           ) -> ImportResult:
    docs = {stem: _load(intent_dir / f"{stem}.yaml") for stem in INTENT_STEMS}
    doc = docs["fabric"]
    fabric_platform = intent.fabric.platform
    leaf_platform = {d.name: platforms[fabric.platform[d.name]]
                     for d in fabric.switches["leaf"]}
    nics = host_nics(fabric, leaf_platform, intent.fabric.ports.leaf_host_base)
    one_nic = _one_nic_hosts(fabric, intent, nics)
    servers = {host: cabled for host, cabled in nics.items() if host not in one_nic}
    places: dict[str, Place] = {}
    if intent.fabric.scalable_units is not None:
        placed = place_switches(intent, fabric.switches)
        if placed.problems:
            raise InputError([InputProblem(file=snapshot.source, path=p.path, reason=p.reason)
                              for p in placed.problems])
        places = placed.places
        fabric_counts(doc, intent, fabric.switches, placed)
        if not intent.fabric.five_stage:  # 3 stages: listed spines over generated leaves
            doc["spines"] = _switch_entries(doc.get("spines") or [], fabric.switches["spine"],
                                            fabric_platform, fabric.platform, pins)
        _generated_hosts_doc(docs["hosts"], intent, one_nic)
    else:
        for role, key in (("spine", "spines"), ("leaf", "leaves")):
            doc[key] = _switch_entries(doc.get(key) or [], fabric.switches[role],
                                       fabric_platform, fabric.platform, pins)
        links = _links(fabric, doc.get("links") or [])
        if links is None:
            doc.pop("links", None)
        elif doc.get("links") != links:
            doc["links"] = links
        leaves = [entry["name"] for entry in doc["leaves"]]
        _hosts_doc(docs["hosts"], _host_slots(one_nic), leaves)
    servers_doc(doc, docs["hosts"], intent, servers, fabric.server_role, places,
                snapshot.source)
    missing = _tenants_doc(docs["tenants"], snapshot, fabric.hosts)
    notes = [f"tenant {name!r} is in the source but not in tenants.yaml (it needs a vrf_id and "
             "prefixes there)" for name in missing]
    files = {f"{stem}.yaml": _dump(d) for stem, d in docs.items()
             if (intent_dir / f"{stem}.yaml").exists() or d}
    return ImportResult(files=files, notes=notes)
