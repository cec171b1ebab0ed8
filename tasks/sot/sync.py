"""`flatfab sot sync`: write what the planner allocated back into Nautobot.

Onto the devices Nautobot already holds (matched by name among those the source's filters
select), flatfab writes: each switch's ASN (custom field `bgp_asn`), the tenant VRFs, the
loopback interface and address, VRF sub-interfaces (parent port and VRF), and the
point-to-point addresses of a numbered fabric, with the prefixes those addresses need.
Everything it creates carries the tag `flatfab`.

For an AI back-end it also records where each switch sits: its plane, pod, scalable unit and
rail (the `fabric_*` custom fields of flatfab.sot.nautobot).

By default it never creates devices, ports or cables (those are the operator's, and `sot
check` says where they disagree): devices or parent ports missing from Nautobot are named and
skipped. With `create` (`sot sync --create`: a generated fabric, whose plan is the cabling
plan of thousands of NICs nobody types in) it also creates, in the location the source's
`location` filter names, the planned devices Nautobot lacks (role, platform, device type,
tenant), their physical ports (every NIC of a server) and every planned cable whose two ports
are both free; a port that already has another cable is named and left alone. It never
deletes anything. A dry run lists every change; a second run after a write changes nothing.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

from flatfab.errors import FlatfabError
from flatfab.intent.models import BgpMode, Intent
from flatfab.model.state import DeviceState, FabricState, IfKind, Role
from flatfab.sot.client import JSON, ApiError, Nautobot
from flatfab.sot.mapping import LOOPBACK_TYPE
from flatfab.sot.nautobot import related_id
from flatfab.sot.seed import (
    ACTIVE,
    CONNECTED,
    NAMESPACE,
    Change,
    Seeder,
    cable_doc,
    custom_field_docs,
    device_doc,
    device_fields,
    ensure_models,
    ensure_statuses,
    ensure_tenants,
    port_docs,
)
from flatfab.workflows.runs.journal import Journal

TAG = "flatfab"
TAGGED = ["dcim.interface", "ipam.ipaddress", "ipam.prefix", "ipam.vrf"]


@dataclass
class SyncReport:
    changes: list[Change]
    skipped: list[str] = field(default_factory=list)  # planned, but not in Nautobot
    written: bool = False


def _real(ids: Iterable[str]) -> list[str]:
    """Ids of objects that exist (a dry run names objects still to create by placeholders,
    which no filter takes)."""
    return sorted(i for i in ids if not i.startswith("(new"))


def _key_name(obj: JSON) -> Hashable:
    return str(obj["name"])


def _key_iface(obj: JSON) -> Hashable:
    return (str(obj["device"]), str(obj["name"]))


def sync(api: Nautobot, plan: FabricState, intent: Intent, filters: dict[str, object], *,
         write: bool, journal: Journal | None = None, create: bool = False) -> SyncReport:
    """`journal` records every write before it is sent (and what an update replaces); a
    failure after a write says where that journal is. `create`: also the devices, ports and
    cables Nautobot lacks."""
    run = _Sync(api, Seeder(api, dry_run=not write, journal=journal), plan, create)
    try:
        existing = run.find_devices(filters)  # refuses bad data before the first write
        location = run.location(filters) if create else ""
        run.prerequisites()
        if create:
            existing = run.create_devices(existing, location)
        run.devices(existing)
        run.vrfs(plan)
        run.interfaces()
        if create:
            run.cables()
        run.addresses(intent)
    except FlatfabError as exc:
        if journal is None:
            raise
        journal.event("error", reason=str(exc))
        if not run.seeder.sent:
            raise
        raise FlatfabError(f"{exc}; what was written before is journalled in "
                           f"{journal.directory}") from None
    return SyncReport(changes=run.seeder.changes, skipped=run.skipped,
                      written=write and bool(run.seeder.changes))


class _Sync:
    """One sync, step by step; each step reads what it needs and ensures one kind or two."""

    def __init__(self, api: Nautobot, seeder: Seeder, plan: FabricState,
                 create: bool) -> None:
        self.api, self.seeder, self.plan, self.create = api, seeder, plan, create
        self.skipped: list[str] = []
        self.present: list[DeviceState] = []  # planned switches that Nautobot holds
        self.hosts: list[DeviceState] = []  # planned hosts Nautobot holds (with `create`)
        self.device_id: dict[str, str] = {}  # name -> Nautobot id
        self.device_name: dict[str, str] = {}  # Nautobot id -> name
        self.vrf: dict[Hashable, JSON] = {}
        self.iface: dict[Hashable, JSON] = {}  # (device id, name) -> interface
        self.active = self.namespace = self.tag = ""

    def _one(self, path: str, name: str) -> str:
        found = self.api.fetch(path, name=name)
        if not found:
            raise ApiError(self.api.api_url, path, f"no {name!r}")
        return str(found[0]["id"])

    def prerequisites(self) -> None:
        self.active = self._one("extras/statuses/", ACTIVE)
        self.namespace = self._one("ipam/namespaces/", NAMESPACE)
        self.tag = str(self.seeder.ensure(
            "tags", "extras/tags/", [{"name": TAG, "color": "607d8b", "content_types": TAGGED}],
            self.api.fetch("extras/tags/", name=TAG), _key_name)[TAG]["id"])
        self.seeder.ensure("custom fields", "extras/custom-fields/", [
            {k: v for k, v in doc.items() if k != "description"}
            for doc in custom_field_docs(self.plan)], self.api.fetch("extras/custom-fields/"),
            lambda o: str(o["key"]), frozenset({"type"}))

    def location(self, filters: dict[str, object]) -> str:
        """The one location new devices go to: the source's `location` filter."""
        name = filters.get("location")
        if not isinstance(name, str):
            raise ApiError(self.api.api_url, "dcim/locations/", "sync --create puts new "
                           "devices in the location the source's filters name; source.yaml "
                           "has no single `location` filter: nothing written")
        found = self.api.fetch("dcim/locations/", name=name)
        if len(found) != 1:
            raise ApiError(self.api.api_url, "dcim/locations/", f"sync --create needs the "
                           f"location {name!r} (source.yaml filters); Nautobot has "
                           f"{len(found) or 'no'} such location: nothing written")
        return str(found[0]["id"])

    def find_devices(self, filters: dict[str, object]) -> dict[str, JSON]:
        """The planned switches Nautobot holds, by name (others are named and skipped); a
        duplicate name is refused: writing to either device could be wrong."""
        existing: dict[str, JSON] = {}
        for found in self.api.fetch("dcim/devices/", **filters):
            name = str(found["name"])
            if name in existing:
                ids = sorted([str(existing[name]["id"]), str(found["id"])])
                raise ApiError(self.api.api_url, "dcim/devices/", f"duplicate device name "
                               f"{name!r} ({', '.join(ids)}): nothing written")
            existing[name] = found
        self._present(existing)
        return existing

    def _present(self, existing: dict[str, JSON]) -> None:
        switches = [d for d in self.plan.devices.values() if d.role is not Role.HOST]
        self.present = [d for d in switches if d.name in existing]
        self.hosts = [d for d in self.plan.devices.values()
                      if d.role is Role.HOST and d.name in existing and self.create]
        self.skipped = [f"device {d.name}: not in Nautobot" for d in switches
                        if d.name not in existing]
        self.device_id = {d.name: str(existing[d.name]["id"])
                          for d in [*self.present, *self.hosts]}
        self.device_name = {dev: name for name, dev in self.device_id.items()}

    def create_devices(self, existing: dict[str, JSON], location: str) -> dict[str, JSON]:
        """The planned devices Nautobot lacks, with what they refer to; hosts join the
        devices whose ports and cables are written."""
        missing = [d for d in self.plan.devices.values() if d.name not in existing]
        if not missing:
            self._present(existing)
            return existing
        statuses = ensure_statuses(self.seeder, self.api)
        tenant = ensure_tenants(self.seeder, self.api, self.plan)
        models = ensure_models(self.seeder, self.api, self.plan)
        made = self.seeder.ensure("devices", "dcim/devices/", [
            device_doc(d, self.plan, models, location, statuses[ACTIVE], tenant)
            for d in missing], [], _key_name)
        existing = {**existing, **{name: made[name] for name in (d.name for d in missing)}}
        self._present(existing)
        return existing

    def devices(self, existing: dict[str, JSON]) -> None:
        """Each switch's ASN (and for an AI back-end its plane, pod, SU and rail)."""
        self.seeder.ensure("devices", "dcim/devices/", [
            {"name": d.name, "custom_fields": device_fields(d, self.plan)}
            for d in self.present], [existing[d.name] for d in self.present], _key_name)

    def vrfs(self, plan: FabricState) -> None:
        """Tenant VRFs, and their assignment to each device that has a sub-interface in one
        (Nautobot lets an interface into a VRF only once the VRF is on its device)."""
        self.vrf = self.seeder.ensure("VRFs", "ipam/vrfs/", [
            {"name": t.name, "namespace": self.namespace, "tags": [self.tag],
             "description": f"flatfab tenant, table {t.vrf_id}"} for t in plan.tenants.values()],
            self.api.fetch("ipam/vrfs/", namespace=self.namespace), _key_name,
            frozenset({"namespace", "tags"}))
        vrf_name = {str(v["id"]): name for name, v in self.vrf.items()}
        uses = sorted({(self.vrf[i.vrf]["id"], self.device_id[d.name]) for d in self.present
                       for i in d.interfaces.values()
                       if i.parent is not None and i.vrf in self.vrf})
        self.seeder.ensure("VRF assignments", "ipam/vrf-device-assignments/", [
            {"vrf": vrf, "device": dev} for vrf, dev in uses],
            self.api.fetch_in("ipam/vrf-device-assignments/", "device",
                              _real(self.device_name)),
            lambda o: (str(o["vrf"]), str(o["device"])),
            label=lambda o: f"{vrf_name.get(str(o['vrf']), o['vrf'])} on "
                            f"{self.device_name.get(str(o['device']), o['device'])}")

    def port_label(self, obj: JSON) -> str:
        device = related_id(obj["device"]) or ""
        return f"{self.device_name.get(device, device)}:{obj['name']}"

    def interfaces(self) -> None:
        """Loopbacks, and VRF sub-interfaces on the parent ports Nautobot holds; with
        `create` first the physical ports (and server NICs) Nautobot lacks."""
        current = self.api.fetch_in("dcim/interfaces/", "device_id", _real(self.device_name))
        ports = {(str(related_id(i["device"])), str(i["name"])): i for i in current}
        wanted: list[JSON] = []
        if self.create:
            active = self.active
            wanted += [doc for d in [*self.present, *self.hosts]
                       for doc in port_docs(d, self.device_id[d.name], active)
                       if (self.device_id[d.name], doc["name"]) not in ports]
            made = self.seeder.ensure("interfaces", "dcim/interfaces/", wanted, current,
                                      _key_iface, frozenset({"tags"}), label=self.port_label)
            current = list(made.values())
            ports = {(str(related_id(i["device"])), str(i["name"])): i for i in current}
            wanted = []
        for d in self.present:
            dev = self.device_id[d.name]
            for iface in sorted(d.interfaces.values(), key=lambda i: i.name):
                if iface.kind is IfKind.LOOPBACK:
                    wanted.append({"device": dev, "name": iface.name, "type": LOOPBACK_TYPE,
                                   "status": self.active, "tags": [self.tag]})
                elif iface.parent is not None and iface.kind is IfKind.FABRIC:
                    parent = ports.get((dev, iface.parent))
                    if parent is None:
                        self.skipped.append(f"{d.name}:{iface.name}: parent port "
                                            f"{iface.parent} is not in Nautobot")
                        continue
                    wanted.append({
                        "device": dev, "name": iface.name, "type": "virtual",
                        "status": self.active, "parent_interface": parent["id"],
                        "vrf": self.vrf[iface.vrf]["id"] if iface.vrf in self.vrf else None,
                        "mtu": iface.mtu, "tags": [self.tag]})
        self.iface = self.seeder.ensure("interfaces", "dcim/interfaces/", wanted, current,
                                        _key_iface, frozenset({"tags"}), label=self.port_label)

    def cables(self) -> None:
        """Every planned physical link whose two ports have no cable yet; a port cabled
        elsewhere is named and left as it is (`sot check` says where it leads)."""
        connected = self.api.fetch("extras/statuses/", name=CONNECTED)
        status = str(connected[0]["id"]) if connected else f"(new statuses {CONNECTED})"

        def port(device: str, name: str) -> JSON | None:
            dev = self.device_id.get(device)
            return None if dev is None else self.iface.get((dev, name))

        def port_id(device: str, name: str) -> str:
            return str((port(device, name) or {})["id"])

        wanted: list[JSON] = []
        for link in self.plan.links:
            if link.parent is not None:
                continue  # a VRF sub-link rides on its physical link's cable
            a, b = port(link.a.device, link.a.port), port(link.b.device, link.b.port)
            if a is None or b is None:
                continue  # its device is not in Nautobot: named already
            cabled = [p for p in (a, b) if p.get("cable")]
            if not cabled:
                wanted.append(cable_doc(link, port_id, status))
            elif related_id(a.get("cable")) != related_id(b.get("cable")):
                ends = " and ".join(self.port_label(p) for p in cabled)
                self.skipped.append(f"cable {link.id}: {ends} already cabled elsewhere "
                                    "(see sot check); not changed")
        self.seeder.ensure("cables", "dcim/cables/", wanted, [],
                           lambda o: frozenset({str(o["termination_a_id"]),
                                                str(o["termination_b_id"])}),
                           label=lambda o: str(o["label"]))

    def addresses(self, intent: Intent) -> None:
        """Loopback and numbered link addresses, their pools as parent prefixes, and their
        assignment to the interfaces."""
        numbered = intent.fabric.underlay.mode is BgpMode.NUMBERED
        pools = [str(intent.fabric.underlay.loopback_pool)]
        if numbered:
            pools += [str(p) for p in (intent.fabric.underlay.p2p_pool,
                                       *(t.p2p_pool for t in intent.tenants.tenants)) if p]
        self.seeder.ensure("prefixes", "ipam/prefixes/", [
            {"prefix": p, "namespace": self.namespace, "status": self.active, "type": "pool",
             "tags": [self.tag]} for p in pools],
            self.api.fetch("ipam/prefixes/", prefix=pools, namespace=self.namespace),
            lambda o: str(o["prefix"]), frozenset({"namespace", "type", "tags"}))
        assigned: list[tuple[str, Hashable]] = []  # (address, interface key)
        for d in self.present:
            for iface in d.interfaces.values():
                key = (self.device_id[d.name], iface.name)
                if key in self.iface and (iface.kind is IfKind.LOOPBACK or (
                        numbered and iface.kind is IfKind.FABRIC)):
                    assigned += [(a, key) for a in iface.addresses
                                 if ipaddress.ip_interface(a).version == 4]
        addresses = sorted({a for a, _ in assigned})
        ips = self.seeder.ensure("IP addresses", "ipam/ip-addresses/", [
            {"address": a, "namespace": self.namespace, "status": self.active, "type": "host",
             "tags": [self.tag]} for a in addresses],
            self.api.fetch_in("ipam/ip-addresses/", "address", addresses,
                              namespace=self.namespace),
            lambda o: str(o["address"]), frozenset({"namespace", "type", "tags"}))
        address_of = {str(ips[a]["id"]): a for a in addresses}
        port_of = {str(self.iface[key]["id"]): self.port_label(self.iface[key])
                   for _, key in assigned}
        self.seeder.ensure("IP assignments", "ipam/ip-address-to-interface/", [
            {"ip_address": ips[a]["id"], "interface": self.iface[key]["id"]}
            for a, key in assigned],
            self.api.fetch_in("ipam/ip-address-to-interface/", "ip_address",
                              _real(address_of)),
            lambda o: (str(o["ip_address"]), str(o["interface"])),
            label=lambda o: f"{address_of.get(str(o['ip_address']), o['ip_address'])} on "
                            f"{port_of.get(str(o['interface']), o['interface'])}")
