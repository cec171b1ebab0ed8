"""`flatfab sot sync`: write what the planner allocated back into Nautobot.

Onto the devices Nautobot already holds (matched by name among those the source's filters
select), flatfab writes: each switch's ASN (custom field `bgp_asn`), the tenant VRFs, the
loopback interface and address, VRF sub-interfaces (parent port and VRF), and the
point-to-point addresses of a numbered fabric, with the prefixes those addresses need.
Everything it creates carries the tag `flatfab`.

It never creates devices, ports or cables (those are the operator's, and `sot check` says
where they disagree), and it never deletes anything. A dry run lists every change; a second
run after a write changes nothing. Devices or parent ports missing from Nautobot are named
and skipped, not created.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Hashable
from dataclasses import dataclass, field

from tasks.intent.models import Intent
from tasks.model.state import FabricState, IfKind, Role
from tasks.sot.client import JSON, ApiError, Nautobot
from tasks.sot.mapping import LOOPBACK_TYPE
from tasks.sot.nautobot import ASN_FIELD, related_id
from tasks.sot.seed import ACTIVE, NAMESPACE, Change, Seeder

TAG = "flatfab"
TAGGED = ["dcim.interface", "ipam.ipaddress", "ipam.prefix", "ipam.vrf"]


@dataclass
class SyncReport:
    changes: list[Change]
    skipped: list[str] = field(default_factory=list)  # planned, but not in Nautobot
    written: bool = False


def _key_name(obj: JSON) -> Hashable:
    return str(obj["name"])


def _key_iface(obj: JSON) -> Hashable:
    return (str(obj["device"]), str(obj["name"]))


def sync(api: Nautobot, plan: FabricState, intent: Intent, filters: dict[str, object], *,
         write: bool) -> SyncReport:
    s = Seeder(api, dry_run=not write)
    skipped: list[str] = []
    found = api.fetch("extras/statuses/", name=ACTIVE)
    if not found:
        raise ApiError(api.api_url, "extras/statuses/", f"no status {ACTIVE!r}")
    active = found[0]["id"]
    namespaces = api.fetch("ipam/namespaces/", name=NAMESPACE)
    if not namespaces:
        raise ApiError(api.api_url, "ipam/namespaces/", f"no namespace {NAMESPACE!r}")
    namespace = namespaces[0]["id"]
    tag = s.ensure("tags", "extras/tags/", [{"name": TAG, "color": "607d8b",
                                             "content_types": TAGGED}],
                   api.fetch("extras/tags/", name=TAG), _key_name)[TAG]["id"]
    s.ensure("custom fields", "extras/custom-fields/", [{
        "key": ASN_FIELD, "label": "BGP ASN", "type": "integer",
        "content_types": ["dcim.device"]}], api.fetch("extras/custom-fields/"),
        lambda o: str(o["key"]), frozenset({"type"}))

    switches = [d for d in plan.devices.values() if d.role is not Role.HOST]
    existing = {str(d["name"]): d for d in api.fetch("dcim/devices/", **filters)}
    present = [d for d in switches if d.name in existing]
    skipped += [f"device {d.name}: not in Nautobot" for d in switches if d.name not in existing]
    s.ensure("devices", "dcim/devices/", [
        {"name": d.name, "custom_fields": {ASN_FIELD: d.asn}} for d in present],
        [existing[d.name] for d in present], _key_name)

    vrfs = s.ensure("VRFs", "ipam/vrfs/", [
        {"name": t.name, "namespace": namespace, "tags": [tag],
         "description": f"flatfab tenant, table {t.vrf_id}"} for t in plan.tenants.values()],
        api.fetch("ipam/vrfs/", namespace=namespace), _key_name,
        frozenset({"namespace", "tags"}))

    device_id = {d.name: str(existing[d.name]["id"]) for d in present}
    device_name = {dev: name for name, dev in device_id.items()}
    vrf_name = {str(v["id"]): name for name, v in vrfs.items()}
    # Nautobot lets an interface into a VRF only once the VRF is assigned to its device
    uses = sorted({(vrfs[i.vrf]["id"], device_id[d.name]) for d in present
                   for i in d.interfaces.values() if i.parent is not None and i.vrf in vrfs})
    s.ensure("VRF assignments", "ipam/vrf-device-assignments/", [
        {"vrf": vrf, "device": dev} for vrf, dev in uses],
        api.fetch_in("ipam/vrf-device-assignments/", "device", sorted(device_name)),
        lambda o: (str(o["vrf"]), str(o["device"])),
        label=lambda o: f"{vrf_name.get(str(o['vrf']), o['vrf'])} on "
                        f"{device_name.get(str(o['device']), o['device'])}")
    current = api.fetch_in("dcim/interfaces/", "device_id", sorted(device_name))
    ports = {(str(related_id(i["device"])), str(i["name"])): i for i in current}
    wanted: list[JSON] = []
    for d in present:
        dev = device_id[d.name]
        for iface in sorted(d.interfaces.values(), key=lambda i: i.name):
            if iface.kind is IfKind.LOOPBACK:
                wanted.append({"device": dev, "name": iface.name, "type": LOOPBACK_TYPE,
                               "status": active, "tags": [tag]})
            elif iface.parent is not None and iface.kind is IfKind.FABRIC:
                parent = ports.get((dev, iface.parent))
                if parent is None:
                    skipped.append(f"{d.name}:{iface.name}: parent port {iface.parent} is not "
                                   "in Nautobot")
                    continue
                wanted.append({"device": dev, "name": iface.name, "type": "virtual",
                               "status": active, "parent_interface": parent["id"],
                               "vrf": vrfs[iface.vrf]["id"] if iface.vrf in vrfs else None,
                               "mtu": iface.mtu, "tags": [tag]})

    def port_label(obj: JSON) -> str:
        device = related_id(obj["device"]) or ""
        return f"{device_name.get(device, device)}:{obj['name']}"

    ifaces = s.ensure("interfaces", "dcim/interfaces/", wanted, current, _key_iface,
                      frozenset({"tags"}), label=port_label)

    # a numbered fabric's link addresses need their pools as parent prefixes too
    numbered = any(i.addresses for d in present for i in d.interfaces.values()
                   if i.kind is IfKind.FABRIC)
    pools = [str(intent.fabric.underlay.loopback_pool)]
    if numbered:
        pools += [str(p) for p in (intent.fabric.underlay.p2p_pool,
                                   *(t.p2p_pool for t in intent.tenants.tenants)) if p]
    s.ensure("prefixes", "ipam/prefixes/", [
        {"prefix": p, "namespace": namespace, "status": active, "type": "pool",
         "tags": [tag]} for p in pools],
        api.fetch("ipam/prefixes/", prefix=pools, namespace=namespace),
        lambda o: str(o["prefix"]), frozenset({"namespace", "type", "tags"}))

    assigned: list[tuple[str, tuple[str, str]]] = []  # (address, interface key)
    for d in present:
        for iface in d.interfaces.values():
            key = (device_id[d.name], iface.name)
            if key not in ifaces:
                continue
            if iface.kind is IfKind.LOOPBACK or (iface.kind is IfKind.FABRIC and
                                                 iface.addresses):
                assigned += [(a, key) for a in iface.addresses
                             if ipaddress.ip_interface(a).version == 4]
    addresses = sorted({a for a, _ in assigned})
    ips = s.ensure("IP addresses", "ipam/ip-addresses/", [
        {"address": a, "namespace": namespace, "status": active, "type": "host",
         "tags": [tag]} for a in addresses],
        api.fetch_in("ipam/ip-addresses/", "address", addresses, namespace=namespace),
        lambda o: str(o["address"]),
        frozenset({"namespace", "type", "tags"}))
    address_of = {str(ips[a]["id"]): a for a in addresses}
    port_of = {str(ifaces[key]["id"]): port_label(ifaces[key]) for _, key in assigned}
    s.ensure("IP assignments", "ipam/ip-address-to-interface/", [
        {"ip_address": ips[a]["id"], "interface": ifaces[key]["id"]} for a, key in assigned],
        api.fetch_in("ipam/ip-address-to-interface/", "ip_address",
                     [i for i in address_of if not i.startswith("(new")]),
        lambda o: (str(o["ip_address"]), str(o["interface"])),
        label=lambda o: f"{address_of.get(str(o['ip_address']), o['ip_address'])} on "
                        f"{port_of.get(str(o['interface']), o['interface'])}")
    return SyncReport(changes=s.changes, skipped=skipped, written=write and bool(s.changes))
