"""Where every device and cable of an intent goes: its switches (listed, or generated from
scalable units, pods, super-spines and planes), the cables between them, and every server
NIC with its leaf port.

One normalized layout serves both forms of fabric.yaml, so the planner and the rules know
one shape. Ids, ASNs and loopbacks are computed from reserved ranges, never from counts, so
adding an SU, a pod or a plane renumbers nothing that exists.
"""

from __future__ import annotations

import ipaddress
import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar, cast

from flatfab.gcpause import gc_paused
from flatfab.intent.clos import Attach, ServerProfile
from flatfab.intent.models import FabricIntent, Intent, Switch, Underlay
from flatfab.yamlio import PathPart

SUPERSPINE, SPINE, LEAF = "superspine", "spine", "leaf"

T = TypeVar("T")
# switches(), cables() and expand_hosts() of the last few intents, by identity: the rules,
# the port names and the planner each ask for them, and a 131,072-GPU fabric has 131,072
# host NICs and 262,144 cables. Intents are frozen and never changed in place; an entry
# holds its key, so the key's id is not reused while the entry lives.
_MEMO: OrderedDict[tuple[str, int], tuple[object, object, object]] = OrderedDict()
_MEMO_SIZE = 6
_MEMO_LOCK = threading.Lock()


def _memo(kind: str, key: object, check: object, compute: Callable[[], T]) -> T:
    """compute(), or what it returned for the same `key` object and an equal `check`."""
    with _MEMO_LOCK:
        entry = _MEMO.get((kind, id(key)))
        if entry is not None and entry[0] is key and entry[1] == check:
            _MEMO.move_to_end((kind, id(key)))
            return cast(T, entry[2])
    with gc_paused(long_lived=True):  # bulk, cycle-free allocation that lives on
        value = compute()
    with _MEMO_LOCK:
        _MEMO[(kind, id(key))] = (key, check, value)
        while len(_MEMO) > _MEMO_SIZE:
            _MEMO.popitem(last=False)
    return value


@lru_cache(maxsize=64)
def _net(prefix: str) -> ipaddress.IPv4Network:
    return ipaddress.IPv4Network(prefix)


def leaf_asn(underlay: Underlay, leaf_id: int) -> int:
    return underlay.leaf_asns.first + leaf_id - 1


def spine_loopback(underlay: Underlay, spine_id: int) -> str:
    return f"{_net(underlay.loopback_pool)[spine_id]}/32"


def leaf_loopback(underlay: Underlay, leaf_id: int) -> str:
    return f"{_net(underlay.loopback_pool)[underlay.max_spines + leaf_id]}/32"


@dataclass(frozen=True)
class SwitchSlot:
    """A switch as the intent places it. `asn` and `loopback` are None when the pool or
    range has no slot for its id (the rules report that)."""

    name: str
    role: str  # superspine | spine | leaf
    stable_id: int
    asn: int | None
    loopback_pin: str | None  # a pinned address (sources of truth), else allocated
    platform: str | None
    path: tuple[PathPart, ...]  # in fabric.yaml
    plane: int | None = None
    pod: int | None = None
    su: int | None = None
    rail: int | None = None


@dataclass(frozen=True)
class Cable:
    """A switch-to-switch cable: `lower` (leaf, or pod spine) to `upper`, with the port
    number at each end."""

    lower: str
    upper: str
    link_class: str
    lower_port: int
    upper_port: int


@dataclass(frozen=True)
class HostSlot:
    """One host NIC as the intent places it: leaf, port and where in the YAML it was
    declared. A multi-NIC server has one slot per NIC, all with the server's name."""

    name: str
    leaf: str
    port: int
    nic: str
    mtu: int
    path: tuple[PathPart, ...]
    mtu_path: tuple[PathPart, ...]  # where the MTU was set: the host's own key or defaults
    nic_index: int = 1  # k of NIC k (its rail, when `rail` is set)
    rail: int | None = None  # the rail this NIC belongs on (SU servers)
    su: int | None = None
    role: str | None = None  # server role (gpu | storage); None for a one-NIC host
    platform: str | None = None  # None: hosts.defaults.platform
    nics: int = 1  # NICs of the server
    file: str = "hosts"  # the intent file `path` is in
    server: str = ""  # which declaration made the server ("" for a one-NIC host)
    managed: bool = True  # false: flatfab never connects to the host (hosts.yaml `managed`)


def planes_of(fabric: FabricIntent) -> dict[int, int]:
    """Rail -> plane (every rail in plane 1 when the fabric declares no planes)."""
    if fabric.planes is None:
        return {}
    return {rail: plane for plane, rails in sorted(fabric.planes.rails.items())
            for rail in rails}


def pod_count(fabric: FabricIntent) -> int:
    units, pods = fabric.scalable_units, fabric.pods
    return 0 if units is None or pods is None else math.ceil(units.count / pods.sus)


def superspine_id(fabric: FabricIntent, plane: int, index: int) -> int:
    assert fabric.superspines is not None
    return (plane - 1) * fabric.superspines.max + index


def pod_spine_id(fabric: FabricIntent, plane: int, pod: int, index: int) -> int:
    """After every reserved super-spine id: pod-major, then plane, then spine."""
    assert fabric.superspines is not None and fabric.pods is not None
    planes_max = fabric.planes.max if fabric.planes is not None else 1
    first = planes_max * fabric.superspines.max
    return first + ((pod - 1) * planes_max + plane - 1) * fabric.pods.max_spines + index


def spine_ids_reserved(fabric: FabricIntent) -> int:
    """The highest spine id a 5-stage fabric reserves (every pod up to pods.max)."""
    assert fabric.pods is not None
    planes_max = fabric.planes.max if fabric.planes is not None else 1
    return pod_spine_id(fabric, planes_max, fabric.pods.max, fabric.pods.max_spines)


def leaf_id(fabric: FabricIntent, su: int, index: int) -> int:
    assert fabric.scalable_units is not None
    return (su - 1) * fabric.scalable_units.leaf_ids + index


def switches(fabric: FabricIntent) -> list[SwitchSlot]:
    """Every switch: super-spines, spines (a pod's, in 5 stages), then leaves, each tier in
    stable-id order."""
    return list(_memo("switches", fabric, None, lambda: _listed(fabric)
                      if fabric.scalable_units is None else _generated(fabric)))


def _listed(fabric: FabricIntent) -> list[SwitchSlot]:
    underlay = fabric.underlay
    out: list[SwitchSlot] = []
    for role, key in ((SPINE, "spines"), (LEAF, "leaves")):
        listed: list[Switch] = getattr(fabric, key)
        indexed = sorted(enumerate(listed), key=lambda item: item[1].stable_id)
        for index, switch in indexed:
            asn = switch.asn or (underlay.spine_asn if role == SPINE
                                 else leaf_asn(underlay, switch.stable_id))
            out.append(SwitchSlot(name=switch.name, role=role, stable_id=switch.stable_id,
                                  asn=asn, loopback_pin=switch.loopback,
                                  platform=switch.platform, path=(key, index)))
    return out


def _generated(fabric: FabricIntent) -> list[SwitchSlot]:
    underlay = fabric.underlay
    units = fabric.scalable_units
    assert units is not None
    rail_plane = planes_of(fabric)
    plane_numbers = sorted(fabric.planes.rails) if fabric.planes is not None else [1]
    out: list[SwitchSlot] = []
    if fabric.pods is not None and fabric.superspines is not None:
        tier1, pods = fabric.superspines, fabric.pods
        named_plane = fabric.planes is not None
        for plane in plane_numbers:
            for index in range(1, tier1.count + 1):
                out.append(SwitchSlot(
                    name=tier1.name.format(spine=index, plane=plane), role=SUPERSPINE,
                    stable_id=superspine_id(fabric, plane, index), asn=underlay.spine_asn,
                    loopback_pin=None, platform=None, path=("superspines",),
                    plane=plane if named_plane else None))
        for pod in range(1, pod_count(fabric) + 1):
            asn = pods.asns.first + pod - 1
            for plane in plane_numbers:
                for index in range(1, pods.spines + 1):
                    out.append(SwitchSlot(
                        name=pods.spine_name.format(pod=pod, spine=index, plane=plane),
                        role=SPINE, stable_id=pod_spine_id(fabric, plane, pod, index),
                        asn=asn if asn <= pods.asns.last else None, loopback_pin=None,
                        platform=None, path=("pods",), pod=pod,
                        plane=plane if named_plane else None))
    else:
        out += [s for s in _listed(fabric) if s.role == SPINE]
    for su in range(1, units.count + 1):
        su_pod = math.ceil(su / fabric.pods.sus) if fabric.pods is not None else None
        for index in range(1, units.leaves_per_su + 1):
            rail = index if units.attach is Attach.RAIL else None
            rail_on = rail_plane.get(index) if rail is not None else None
            stable_id = leaf_id(fabric, su, index)
            asn = leaf_asn(underlay, stable_id)
            out.append(SwitchSlot(
                name=units.leaf_name.format(su=su, leaf=index, plane=rail_on or 1),
                role=LEAF, stable_id=stable_id,
                asn=asn if asn <= underlay.leaf_asns.last else None, loopback_pin=None,
                platform=None, path=("scalable_units",), plane=rail_on, pod=su_pod, su=su,
                rail=rail))
    return out


def cables(fabric: FabricIntent, slots: list[SwitchSlot]) -> list[Cable]:
    """Switch-to-switch cables, lower end major (leaves by id, then pod spines), so the
    order of the YAML changes nothing."""
    return list(_memo("cables", fabric, tuple(slots), lambda: _cables(fabric, list(slots))))


def _cables(fabric: FabricIntent, slots: list[SwitchSlot]) -> list[Cable]:
    ports = fabric.ports
    if fabric.pods is None:
        spines = [s for s in slots if s.role == SPINE]
        leaves = [s for s in slots if s.role == LEAF]
        if fabric.links is not None:
            by_name = {s.name: s for s in spines}
            leaf_by = {s.name: s for s in leaves}
            pairs = sorted(((by_name[link.spine], leaf_by[link.leaf], link.link_class)
                            for link in fabric.links
                            if link.spine in by_name and link.leaf in leaf_by),
                           key=lambda t: (t[1].stable_id, t[0].stable_id))
        else:
            pairs = [(spine, leaf, "fabric") for leaf in leaves for spine in spines]
        return [Cable(lower=leaf.name, upper=spine.name, link_class=link_class,
                      lower_port=ports.leaf_uplink_base + spine.stable_id,
                      upper_port=ports.spine_downlink_base + leaf.stable_id)
                for spine, leaf, link_class in pairs]
    pods, tier1, units = fabric.pods, fabric.superspines, fabric.scalable_units
    assert tier1 is not None and units is not None
    # a pod spine's index in its pod (and plane), a super-spine's in its plane
    pod_spines: dict[tuple[int | None, int | None], list[tuple[str, int]]] = {}
    tier1_of: dict[int | None, list[tuple[str, int]]] = {}
    for slot in slots:
        if slot.role == SPINE:
            assert slot.pod is not None
            index = slot.stable_id - pod_spine_id(fabric, slot.plane or 1, slot.pod, 0)
            pod_spines.setdefault((slot.pod, slot.plane), []).append((slot.name, index))
        elif slot.role == SUPERSPINE:
            index = slot.stable_id - superspine_id(fabric, slot.plane or 1, 0)
            tier1_of.setdefault(slot.plane, []).append((slot.name, index))
    out: list[Cable] = []
    up_base, down_base = ports.leaf_uplink_base, ports.spine_downlink_base
    for leaf in (s for s in slots if s.role == LEAF):
        assert leaf.su is not None and leaf.pod is not None
        su_in_pod = leaf.su - (leaf.pod - 1) * pods.sus
        position = (su_in_pod - 1) * units.leaf_ids + (leaf.stable_id
                                                        - leaf_id(fabric, leaf.su, 0))
        out += [Cable(leaf.name, upper, pods.link_class, up_base + index, down_base + position)
                for upper, index in pod_spines.get((leaf.pod, leaf.plane), [])]
    up_base, down_base = ports.spine_uplink_base, ports.superspine_downlink_base
    for (pod, plane), group in sorted(pod_spines.items(), key=lambda kv: (kv[0][0] or 0,
                                                                          kv[0][1] or 0)):
        assert pod is not None
        tops = tier1_of.get(plane, [])
        for lower, index in group:
            port = down_base + (pod - 1) * pods.max_spines + index
            out += [Cable(lower, top, tier1.link_class, up_base + top_index, port)
                    for top, top_index in tops]
    return out


def expand_hosts(intent: Intent) -> list[HostSlot]:
    """Every host NIC the intent declares: one-NIC hosts of listed leaves (leaf order, then
    port order), then the servers of every SU, then servers placed by hand."""
    return list(_memo("hosts", intent, None, lambda: _expand_hosts(intent)))


def _expand_hosts(intent: Intent) -> list[HostSlot]:
    slots = _one_nic_hosts(intent)
    fabric = intent.fabric
    placer = _Placer(intent)
    if fabric.scalable_units is not None:
        slots += _su_servers(intent, placer)
    slots += _placed_servers(intent, placer)
    return slots


def _one_nic_hosts(intent: Intent) -> list[HostSlot]:
    hosts = intent.hosts
    defaults = hosts.defaults
    slots: list[HostSlot] = []
    leaves = ([leaf.name for leaf in intent.fabric.leaves]
              if intent.fabric.scalable_units is None else list(hosts.leaves))
    for leaf in leaves:
        spec = hosts.leaves.get(leaf)
        on_leaf = _first(spec.managed if spec is not None else None, defaults.managed)
        if spec is not None and spec.hosts is not None:
            for index, host in enumerate(spec.hosts):
                port = host.port if host.port is not None else index + 1
                slots.append(HostSlot(
                    name=host.name or defaults.name_format.format(leaf=leaf, port=port),
                    leaf=leaf, port=port, nic=host.nic or defaults.nic,
                    mtu=host.mtu or defaults.mtu, path=("leaves", leaf, "hosts", index),
                    mtu_path=(("leaves", leaf, "hosts", index, "mtu") if host.mtu
                              else ("defaults", "mtu")),
                    managed=_first(host.managed, on_leaf)))
            continue
        count = spec.count if spec is not None and spec.count is not None else defaults.count
        if intent.fabric.scalable_units is not None and (spec is None or spec.count is None):
            count = 0  # SU leaves carry SU servers; one-NIC hosts only where listed
        path: tuple[PathPart, ...] = (
            ("leaves", leaf, "count") if spec is not None else ("defaults", "count"))
        for port in range(1, count + 1):
            slots.append(HostSlot(
                name=defaults.name_format.format(leaf=leaf, port=port), leaf=leaf,
                port=port, nic=defaults.nic, mtu=defaults.mtu, path=path,
                mtu_path=("defaults", "mtu"), managed=on_leaf))
    return slots


def _first(value: bool | None, default: bool) -> bool:
    """A `managed:` as written, else what the level above says."""
    return default if value is None else value


def _profile_mtu(intent: Intent, profile: ServerProfile, name: str,
                 ) -> tuple[int, tuple[PathPart, ...]]:
    if profile.mtu is not None:
        return profile.mtu, ("profiles", name, "mtu")
    return intent.hosts.defaults.mtu, ("defaults", "mtu")


def su_leaf_name(intent: Intent, su: int, index: int) -> str:
    units = intent.fabric.scalable_units
    assert units is not None
    plane = planes_of(intent.fabric).get(index, 1) if units.attach is Attach.RAIL else 1
    return units.leaf_name.format(su=su, leaf=index, plane=plane)


@dataclass(frozen=True)
class _Profile:
    """What every NIC of a server of one profile shares."""

    nics: list[str]
    mtu: int
    mtu_path: tuple[PathPart, ...]
    role: str
    platform: str | None
    managed: bool


class _Placer:
    """Cables servers into SU slots by the SU's scheme; a profile's NICs and an SU's leaf
    names are worked out once, not per server and NIC."""

    def __init__(self, intent: Intent) -> None:
        self.intent = intent
        self.units = intent.fabric.scalable_units
        self.plane = (planes_of(intent.fabric) if self.units is not None
                      and self.units.attach is Attach.RAIL else {})
        self.profiles: dict[str, _Profile | None] = {}
        self.leaf_names: dict[tuple[int, int], str] = {}

    def profile(self, name: str) -> _Profile | None:
        if name not in self.profiles:
            profile = self.intent.hosts.profiles.get(name)
            if profile is None:
                self.profiles[name] = None
            else:
                mtu, mtu_path = _profile_mtu(self.intent, profile, name)
                self.profiles[name] = _Profile(
                    profile.nics.resolved(), mtu, mtu_path, profile.role.value,
                    profile.platform,
                    _first(profile.managed, self.intent.hosts.defaults.managed))
        return self.profiles[name]

    def leaf(self, su: int, index: int) -> str:
        """su_leaf_name(), remembered."""
        key = (su, index)
        name = self.leaf_names.get(key)
        if name is None:
            assert self.units is not None
            name = self.leaf_names[key] = self.units.leaf_name.format(
                su=su, leaf=index, plane=self.plane.get(index, 1))
        return name

    def in_su(self, name: str, profile_name: str, su: int, server: int,
              path: tuple[PathPart, ...], file: str, label: str,
              managed: bool | None = None) -> list[HostSlot]:
        """The NICs of server number `server` of SU `su`, cabled by the SU's scheme;
        `label`: the declaration that made the server; `managed`: the server's own, else
        its profile's."""
        units = self.units
        profile = self.profile(profile_name)
        if units is None or profile is None:
            return []  # the rules report the missing SU or profile
        nics, count = profile.nics, len(profile.nics)
        managed = _first(managed, profile.managed)
        if units.attach is Attach.RAIL:
            leaf = self.leaf
            return [HostSlot(name=name, leaf=leaf(su, k), port=server, nic=nic,
                             mtu=profile.mtu, path=path, mtu_path=profile.mtu_path,
                             nic_index=k, rail=k, su=su, role=profile.role,
                             platform=profile.platform, nics=count, file=file, server=label,
                             managed=managed)
                    for k, nic in enumerate(nics, 1)]
        per_leaf = math.ceil(units.servers / (units.leaves or 1))
        leaf_name = self.leaf(su, (server - 1) // per_leaf + 1)
        first = ((server - 1) % per_leaf) * count
        return [HostSlot(name=name, leaf=leaf_name, port=first + k, nic=nic, mtu=profile.mtu,
                         path=path, mtu_path=profile.mtu_path, nic_index=k, su=su,
                         role=profile.role, platform=profile.platform, nics=count, file=file,
                         server=label, managed=managed)
                for k, nic in enumerate(nics, 1)]


def _su_servers(intent: Intent, placer: _Placer) -> list[HostSlot]:
    units = intent.fabric.scalable_units
    assert units is not None
    out: list[HostSlot] = []
    path: tuple[PathPart, ...] = ("scalable_units",)
    for su in range(1, units.count + 1):
        for server in range(1, units.servers + 1):
            out += placer.in_su(units.server_name.format(su=su, server=server),
                                units.profile, su, server, path, "fabric",
                                f"su{su}/{server}")
    return out


def _placed_servers(intent: Intent, placer: _Placer) -> list[HostSlot]:
    out: list[HostSlot] = []
    for index, server in enumerate(intent.hosts.servers):
        path: tuple[PathPart, ...] = ("servers", index)
        if server.cabling is None:
            assert server.su is not None and server.port is not None
            out += placer.in_su(server.name, server.profile, server.su, server.port, path,
                                "hosts", f"servers[{index}]", server.managed)
            continue
        profile = intent.hosts.profiles.get(server.profile)
        if profile is None:
            continue
        nics = profile.nics.resolved()
        mtu, mtu_path = _profile_mtu(intent, profile, server.profile)
        managed = _first(server.managed, _first(profile.managed,
                                                intent.hosts.defaults.managed))
        for k, (nic, cable) in enumerate(zip(nics, server.cabling, strict=False), 1):
            out.append(HostSlot(name=server.name, leaf=cable.leaf, port=cable.port, nic=nic,
                                mtu=mtu, path=(*path, "cabling", k - 1), mtu_path=mtu_path,
                                nic_index=k, role=profile.role.value,
                                platform=profile.platform, nics=len(nics),
                                server=f"servers[{index}]", managed=managed))
    return out
