"""Write a fabric's plan into a running Nautobot (`flatfab sot sync --create`, and
`python -m labs.nautobot.seed` for the local service).

What flatfab's planner decides becomes the source of truth's inventory: a location named
after the fabric, manufacturers, device types, platforms (spelt by each platform's data file),
device roles, tenants, devices (ASN in the `bgp_asn` custom field; for an AI back-end each
switch's plane, pod, SU and rail in `fabric_*` custom fields), their physical ports (every NIC
of a multi-NIC server), loopback and management interface, the cabling of every physical link
(a cable per NIC), the loopback addresses and the management addresses as each device's
primary IPv4.

Idempotent: every kind is read once, what is missing is created in one bulk POST and what
differs is corrected in one bulk PATCH, so a second run changes nothing and sends only reads.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flatfab.lab.topology import check_mgmt_subnet, mgmt_addresses
from flatfab.model.state import DeviceState, FabricState, IfKind, Link, Role
from flatfab.platforms.registry import PLATFORMS
from flatfab.sot.client import JSON, ApiError, Nautobot
from flatfab.sot.errors import SotError
from flatfab.sot.mapping import (
    LOOPBACK_TYPE,
    MGMT_INTERFACE,
    MGMT_TYPE,
    ROLE_COLORS,
    port_type,
    role_name,
)
from flatfab.sot.nautobot import ASN_FIELD, POSITION_FIELDS, POSITION_LABELS
from flatfab.workflows.project.layout import Project
from flatfab.workflows.runs.journal import Journal

LOCATION_TYPE = "Fabric"
NAMESPACE = "Global"  # Nautobot's default IPAM namespace
ACTIVE, CONNECTED = "Active", "Connected"
# the content types each status must cover for what the seed writes
STATUS_TYPES = {
    ACTIVE: ["dcim.device", "dcim.interface", "dcim.location", "ipam.ipaddress", "ipam.prefix"],
    CONNECTED: ["dcim.cable"],
}
STATUS_COLORS = {ACTIVE: "4caf50", CONNECTED: "4caf50"}


@dataclass
class SeedReport:
    created: Counter[str] = field(default_factory=Counter)
    updated: Counter[str] = field(default_factory=Counter)
    requests: int = 0
    seconds: float = 0.0

    def line(self) -> str:
        def kinds(counts: Counter[str]) -> str:
            return ", ".join(f"{k} {n}" for k, n in counts.items() if n) or "nothing"
        return (f"created {sum(self.created.values())} ({kinds(self.created)}); updated "
                f"{sum(self.updated.values())} ({kinds(self.updated)}); {self.requests} "
                f"requests, {self.seconds:.1f} s")


def _plain(value: Any) -> Any:
    """An API value as the seed writes it: related objects as ids, choices as values."""
    if isinstance(value, dict):
        if "id" in value and ("url" in value or "object_type" in value):
            return value["id"]
        if "value" in value and "label" in value:
            return value["value"]
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _differs(want: Any, have: Any) -> bool:
    if isinstance(want, dict):
        have = have if isinstance(have, dict) else {}
        return any(_differs(v, have.get(k)) for k, v in want.items())
    have = _plain(have)
    if isinstance(want, float) or isinstance(have, float):
        return have is None or want is None or abs(float(want) - float(have)) > 1e-9
    return bool(want != have)


@dataclass(frozen=True)
class Change:
    kind: str
    action: str  # "create" or "update"
    what: str  # the object's key, and for an update the fields that change

    def __str__(self) -> str:
        return f"{self.action} {self.kind}: {self.what}"


class Seeder:
    """`dry_run`: work out every change without sending one (new objects then have no id,
    so what depends on them is worked out against placeholders). With a `journal`, every
    write is recorded before it is sent, an update with the values it replaces."""

    def __init__(self, api: Nautobot, *, dry_run: bool = False,
                 journal: Journal | None = None) -> None:
        self.api = api
        self.report = SeedReport()
        self.dry_run = dry_run
        self.journal = journal
        self.changes: list[Change] = []
        self.sent = 0  # bulk writes sent

    def _record(self, event: str, **fields: Any) -> None:
        if self.journal is not None:
            self.journal.event(event, **fields)

    def ensure(self, kind: str, path: str, desired: list[JSON], existing: Iterable[JSON],
               key: Callable[[JSON], Hashable], create_only: frozenset[str] = frozenset(),
               label: Callable[[JSON], str] | None = None) -> dict[Hashable, JSON]:
        """Create what is missing and correct what differs; every object by its key.

        `content_types` only ever grow (another tool may use the same status or role);
        `create_only` fields identify an object and are never patched. `label` names an
        object in the list of changes (default: its key), for keys made of ids.
        """
        shown = label or (lambda obj: _shown(key(obj)))
        have = {key(_plain_keys(obj)): obj for obj in existing}
        create, patch = [], []
        for want in desired:
            current = have.get(key(want))
            if current is None:
                create.append(want)
                continue
            change: JSON = {}
            for name, value in want.items():
                if name in create_only:
                    continue
                if name == "content_types":
                    present = set(_plain(current.get(name) or []))
                    if not set(value) <= present:
                        change[name] = sorted(present | set(value))
                elif _differs(value, current.get(name)):
                    change[name] = value
            if change:
                patch.append({"id": current["id"], **change})
        by_id = {obj["id"]: obj for obj in have.values()}
        self.changes += [Change(kind, "create", shown(want)) for want in create]
        self.changes += [Change(kind, "update", f"{shown(_plain_keys(by_id[c['id']]))} "
                                f"({', '.join(sorted(set(c) - {'id'}))})") for c in patch]
        if self.dry_run:
            for want in create:  # a placeholder, so dependent objects can be worked out
                have[key(want)] = {**want, "id": f"(new {kind} {_shown(key(want))})"}
        else:
            if create:
                self._record("nautobot.create", kind=kind, path=path, objects=create)
                self.sent += 1
            for obj in self.api.create(path, create):
                have[key(_plain_keys(obj))] = obj
                self._record("nautobot.created", kind=kind, id=obj["id"],
                             object=shown(_plain_keys(obj)))
            if patch:
                self._record("nautobot.update", kind=kind, path=path, changes=patch,
                             before=[{"id": c["id"], **{f: _plain(by_id[c["id"]].get(f))
                                                        for f in c if f != "id"}}
                                     for c in patch])
                self.sent += 1
            for obj in self.api.update(path, patch):
                have[key(_plain_keys(obj))] = obj
        self.report.created[kind] += len(create)
        self.report.updated[kind] += len(patch)
        return have


def _shown(key: Hashable) -> str:
    if isinstance(key, tuple | frozenset):
        return " ".join(sorted(map(str, key)) if isinstance(key, frozenset) else map(str, key))
    return str(key)


def _plain_keys(obj: JSON) -> JSON:
    return {k: _plain(v) for k, v in obj.items()}


def _by_name(obj: JSON) -> Hashable:
    return str(obj["name"])


@dataclass(frozen=True)
class FabricInput:
    state: FabricState
    loopback_pool: str
    mgmt_subnet: str
    mgmt: dict[str, str]  # device -> management address (no length)


def fabric_input(root: Path, fabric: str, mgmt_subnet: str) -> FabricInput:
    project = Project(root=root, fabric=fabric)
    subnet = check_mgmt_subnet(mgmt_subnet)
    return FabricInput(project.plan, str(project.intent.fabric.underlay.loopback_pool),
                       str(subnet), mgmt_addresses(project.plan, subnet))


def _physical(device: DeviceState) -> list[Any]:
    return [i for i in device.interfaces.values()
            if i.parent is None and i.kind in (IfKind.FABRIC, IfKind.HOST_PORT, IfKind.NIC)]


def positioned(plan: FabricState) -> bool:
    """An AI back-end: some switch has a plane, pod, SU or rail to record."""
    return any(getattr(d, key) is not None for d in plan.devices.values()
               if d.role is not Role.HOST for key in POSITION_FIELDS)


def ensure_statuses(s: Seeder, api: Nautobot) -> dict[str, str]:
    """Statuses exist in a migrated Nautobot; make sure they cover what flatfab writes."""
    found = s.ensure("statuses", "extras/statuses/", [
        {"name": name, "color": STATUS_COLORS[name], "content_types": types}
        for name, types in STATUS_TYPES.items()],
        api.fetch("extras/statuses/", name=list(STATUS_TYPES)), _by_name)
    return {name: str(found[name]["id"]) for name in STATUS_TYPES}


def custom_field_docs(plan: FabricState) -> list[JSON]:
    """`bgp_asn`, and for an AI back-end where each switch sits (flatfab.sot.nautobot)."""
    docs: list[JSON] = [{
        "key": ASN_FIELD, "label": "BGP ASN", "type": "integer",
        "description": "eBGP autonomous system number planned by flatfab",
        "content_types": ["dcim.device"]}]
    if positioned(plan):
        docs += [{"key": field, "label": POSITION_LABELS[key], "type": "integer",
                  "description": f"the switch's {POSITION_LABELS[key].lower()} in the fabric "
                                 "flatfab plans", "content_types": ["dcim.device"]}
                 for key, field in POSITION_FIELDS.items()]
    return docs


def ensure_custom_fields(s: Seeder, api: Nautobot, plan: FabricState) -> None:
    s.ensure("custom fields", "extras/custom-fields/", custom_field_docs(plan),
             api.fetch("extras/custom-fields/"), lambda o: str(o["key"]), frozenset({"type"}))


def device_fields(d: DeviceState, plan: FabricState) -> JSON:
    """A device's custom fields: its ASN, and where a switch sits in an AI back-end."""
    fields: JSON = {ASN_FIELD: d.asn}
    if positioned(plan):
        fields.update({field: getattr(d, key) if d.role is not Role.HOST else None
                       for key, field in POSITION_FIELDS.items()})
    return fields


def ensure_tenants(s: Seeder, api: Nautobot, plan: FabricState) -> dict[str, str]:
    found = s.ensure("tenants", "tenancy/tenants/", [
        {"name": t.name, "description": f"flatfab tenant, VRF id {t.vrf_id}"}
        for t in plan.tenants.values()],
        api.fetch("tenancy/tenants/", name=sorted(plan.tenants)) if plan.tenants else [],
        _by_name)
    return {name: str(found[name]["id"]) for name in plan.tenants}


@dataclass(frozen=True)
class Models:
    """The ids a device refers to: its type and platform (by flatfab platform), its role
    (by Nautobot role name)."""

    device_type: dict[str, str]
    platform: dict[str, str]
    role: dict[str, str]


def check_platforms(plan: FabricState) -> list[str]:
    """The plan's platforms; refused before any write when one is unknown."""
    platforms = sorted({d.platform for d in plan.devices.values()})
    unknown = [p for p in platforms if p not in PLATFORMS]
    if unknown:
        raise SotError(f"unknown platform(s) {', '.join(unknown)}")
    return platforms


def ensure_models(s: Seeder, api: Nautobot, plan: FabricState) -> Models:
    """Manufacturers, device types, platforms (each platform's source_of_truth) and roles."""
    spelt = {p: PLATFORMS[p].facts.source_of_truth for p in check_platforms(plan)}
    platforms = sorted(spelt)
    makers = sorted({spelt[p].manufacturer for p in platforms})
    found = s.ensure("manufacturers", "dcim/manufacturers/", [{"name": m} for m in makers],
                     api.fetch("dcim/manufacturers/", name=makers), _by_name)
    maker = {m: found[m]["id"] for m in makers}
    models = sorted({spelt[p].device_type for p in platforms})
    found = s.ensure("device types", "dcim/device-types/", [
        {"model": spelt[p].device_type, "manufacturer": maker[spelt[p].manufacturer]}
        for p in platforms], api.fetch("dcim/device-types/", model=models),
        lambda o: (str(o["manufacturer"]), str(o["model"])), label=lambda o: str(o["model"]))
    device_type = {p: str(found[(maker[spelt[p].manufacturer], spelt[p].device_type)]["id"])
                   for p in platforms}
    found = s.ensure("platforms", "dcim/platforms/", [
        {"name": p, "network_driver": spelt[p].network_driver,
         "napalm_driver": spelt[p].napalm_driver,
         "manufacturer": maker[spelt[p].manufacturer]} for p in platforms],
        api.fetch("dcim/platforms/", name=platforms), _by_name)
    platform = {p: str(found[p]["id"]) for p in platforms}
    roles = sorted({role_name(d) for d in plan.devices.values()})
    found = s.ensure("roles", "extras/roles/", [
        {"name": r, "color": ROLE_COLORS.get(r, "9e9e9e"), "content_types": ["dcim.device"]}
        for r in roles], api.fetch("extras/roles/", name=roles), _by_name)
    return Models(device_type, platform, {r: str(found[r]["id"]) for r in roles})


def device_doc(d: DeviceState, plan: FabricState, models: Models, location: str,
               active: str, tenant: dict[str, str]) -> JSON:
    return {"name": d.name, "location": location, "status": active,
            "device_type": models.device_type[d.platform],
            "platform": models.platform[d.platform], "role": models.role[role_name(d)],
            "tenant": tenant.get(d.tenant or ""), "custom_fields": device_fields(d, plan)}


def port_docs(d: DeviceState, device_id: str, active: str) -> list[JSON]:
    """A device's physical ports: switch ports and every NIC of a server."""
    return [{"device": device_id, "name": port.name, "type": port_type(port.speed_mbps),
             "status": active, "mtu": port.mtu,
             "description": f"to {port.peer}" if port.peer else ""}
            for port in _physical(d)]


def cable_doc(link: Link, iface: Callable[[str, str], str], connected: str) -> JSON:
    """A planned physical link as a Nautobot cable (`iface`: device, port -> interface id);
    the length is the link class's, in whole metres."""
    return {"termination_a_type": "dcim.interface",
            "termination_a_id": iface(link.a.device, link.a.port),
            "termination_b_type": "dcim.interface",
            "termination_b_id": iface(link.b.device, link.b.port),
            "status": connected, "label": link.id,
            "length": math.ceil(link.cable_m), "length_unit": "m"}


def seed(api: Nautobot, data: FabricInput) -> SeedReport:
    began = time.monotonic()
    first = api.requests
    s = Seeder(api)
    plan = data.state
    check_platforms(plan)

    status = ensure_statuses(s, api)
    active = status[ACTIVE]
    ensure_custom_fields(s, api, plan)

    found = s.ensure("location types", "dcim/location-types/", [{
        "name": LOCATION_TYPE, "content_types": ["dcim.device"]}],
        api.fetch("dcim/location-types/", name=LOCATION_TYPE), _by_name)
    found = s.ensure("locations", "dcim/locations/", [{
        "name": plan.fabric, "location_type": found[LOCATION_TYPE]["id"], "status": active,
        "description": f"flatfab fabric {plan.fabric}"}],
        api.fetch("dcim/locations/", name=plan.fabric), _by_name)
    location = found[plan.fabric]["id"]
    tenant = ensure_tenants(s, api, plan)
    models = ensure_models(s, api, plan)
    devices = s.ensure("devices", "dcim/devices/",
                       [device_doc(d, plan, models, location, active, tenant)
                        for d in plan.devices.values()],
                       api.fetch("dcim/devices/", location=location), _by_name)

    iface_docs = []
    for d in plan.devices.values():
        dev = devices[d.name]["id"]
        iface_docs.append({"device": dev, "name": MGMT_INTERFACE, "type": MGMT_TYPE,
                           "status": active, "mgmt_only": True,
                           "description": "management"})
        if d.loopback:
            lo = next(i for i in d.interfaces.values() if i.kind is IfKind.LOOPBACK)
            iface_docs.append({"device": dev, "name": lo.name, "type": LOOPBACK_TYPE,
                               "status": active, "description": "router id, BGP"})
        iface_docs += port_docs(d, dev, active)
    ifaces = s.ensure("interfaces", "dcim/interfaces/", iface_docs,
                      api.fetch("dcim/interfaces/", location=location),
                      lambda o: (str(o["device"]), str(o["name"])))

    def iface(device: str, name: str) -> str:
        return str(ifaces[(devices[device]["id"], name)]["id"])

    namespaces = api.fetch("ipam/namespaces/", name=NAMESPACE)
    if not namespaces:
        raise ApiError(api.api_url, "ipam/namespaces/", f"no namespace {NAMESPACE!r}")
    namespace = namespaces[0]["id"]
    prefixes = sorted({data.mgmt_subnet, data.loopback_pool})
    s.ensure("prefixes", "ipam/prefixes/", [
        {"prefix": p, "namespace": namespace, "status": active, "type": "network",
         "description": "management" if p == data.mgmt_subnet else "loopbacks"}
        for p in prefixes], api.fetch("ipam/prefixes/", prefix=prefixes, namespace=namespace),
        lambda o: str(o["prefix"]), frozenset({"namespace"}))

    mgmt_len = ipaddress.ip_network(data.mgmt_subnet).prefixlen
    addresses: list[tuple[str, str, str]] = []  # (address, device, interface)
    for d in plan.devices.values():
        addresses.append((f"{data.mgmt[d.name]}/{mgmt_len}", d.name, MGMT_INTERFACE))
        if d.loopback:
            lo = next(i for i in d.interfaces.values() if i.kind is IfKind.LOOPBACK)
            addresses.append((d.loopback, d.name, lo.name))
    ips = s.ensure("IP addresses", "ipam/ip-addresses/", [
        {"address": a, "namespace": namespace, "status": active, "type": "host",
         "description": f"{dev} {name}"} for a, dev, name in addresses],
        api.fetch("ipam/ip-addresses/", prefix=prefixes, namespace=namespace),
        lambda o: str(o["address"]), frozenset({"namespace"}))
    ip_ids = [str(ips[a]["id"]) for a, _, _ in addresses]
    s.ensure("IP assignments", "ipam/ip-address-to-interface/", [
        {"ip_address": ips[a]["id"], "interface": iface(dev, name)}
        for a, dev, name in addresses],
        api.fetch_in("ipam/ip-address-to-interface/", "ip_address", ip_ids),
        lambda o: (str(o["ip_address"]), str(o["interface"])))
    # a primary IP must sit on one of the device's interfaces: after the assignments
    s.ensure("devices", "dcim/devices/", [
        {"name": d.name, "primary_ip4": ips[f"{data.mgmt[d.name]}/{mgmt_len}"]["id"]}
        for d in plan.devices.values()], devices.values(), _by_name)

    cables = [cable_doc(link, iface, status[CONNECTED]) for link in plan.links
              if link.parent is None]  # a VRF sub-link rides on its physical link's cable
    ends = ("termination_a_type", "termination_a_id", "termination_b_type", "termination_b_id")
    s.ensure("cables", "dcim/cables/", cables, api.fetch("dcim/cables/", location_id=location),
             lambda o: frozenset({str(o["termination_a_id"]), str(o["termination_b_id"])}),
             frozenset(ends))
    s.report.requests = api.requests - first
    s.report.seconds = time.monotonic() - began
    return s.report
