"""Read a fabric from Nautobot's REST API into a Snapshot (read-only: only GETs).

One listing per object type, related objects looked up by id from those listings (the API
gives related objects as ids; fetching each one would cost a request per object).

Where flatfab's facts live in Nautobot:
- a device's role (`extras/roles`) and platform (`dcim/platforms`, by its network driver);
- links: each port's `connected_endpoint`, the far interface of its cable path, which
  Nautobot traces through patch panels (a direct cable also gives its length);
- the loopback: the IP address assigned to the device's loopback interface (its name on the
  device's platform: `lo`, `Loopback0`);
- the ASN: the device's custom field `bgp_asn` (an integer custom field, when modelled);
- the tenant of a device (`tenancy/tenants`);
- where a switch sits in an AI back-end: integer custom fields `fabric_plane`, `fabric_pod`,
  `fabric_su` and `fabric_rail` (POSITION_FIELDS). Pods, planes, scalable units and rails are
  logical places in the Clos, not physical ones (an SU's rail leaves sit in a network rack
  away from its servers, a plane spans every hall), so they do not take over the operator's
  locations or racks, and the fabric's location filter still selects all of it. A server
  NIC's rail is not stored: it is the rail of the leaf the NIC is cabled to.

Errors (no answer, a refused token, a reply that is not what the API documents) are one
line naming the API root and the endpoint (`ApiError`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from flatfab.sot.client import ApiError, Nautobot
from flatfab.sot.snapshot import INCOMPLETE, Snapshot, SotCable, SotDevice, SotRef, SotTenant

ASN_FIELD = "bgp_asn"
# DeviceState attribute -> the device custom field that holds it
POSITION_FIELDS = {"plane": "fabric_plane", "pod": "fabric_pod", "su": "fabric_su",
                   "rail": "fabric_rail"}
POSITION_LABELS = {"plane": "Fabric plane", "pod": "Pod", "su": "Scalable unit",
                   "rail": "Rail"}
INTERFACE_TYPE = "dcim.interface"
# Nautobot's cable length units, in metres
METRES = {"km": 1000.0, "m": 1.0, "cm": 0.01, "mi": 1609.344, "ft": 0.3048, "in": 0.0254}


def _by_id(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {str(r["id"]): r for r in records}


def related_id(value: Any) -> str | None:
    """A related object's id, whether serialized as an id or as a nested dict."""
    if isinstance(value, dict):
        value = value.get("id")
    return None if value is None else str(value)


def read_snapshot(api: Nautobot, filters: Mapping[str, Any],
                  loopback_names: Iterable[str]) -> Snapshot:
    """The devices `filters` select (e.g. location, tenant group), their cables, loopbacks,
    ASNs and tenants."""
    try:
        return _read(api, filters, loopback_names)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ApiError(api.api_url, "fabric read", f"unexpected reply ({type(exc).__name__}: {exc})"
                       ) from None


def _read(api: Nautobot, filters: Mapping[str, Any],
          loopback_names: Iterable[str]) -> Snapshot:
    roles = _by_id(api.fetch("extras/roles/"))
    platforms = _by_id(api.fetch("dcim/platforms/"))
    tenants = _by_id(api.fetch("tenancy/tenants/"))
    devices = api.fetch("dcim/devices/", **filters)
    device_ids = sorted(str(d["id"]) for d in devices)
    # only the fabric's own interfaces, cables and assignments: Nautobot spends most of a
    # read serialising interfaces, and it may hold many fabrics
    interfaces = _by_id(api.fetch_in("dcim/interfaces/", "device_id", device_ids))
    assignments = api.fetch_in("ipam/ip-address-to-interface/", "interface",
                               sorted(interfaces))
    addresses = _by_id(api.fetch_in("ipam/ip-addresses/", "id", sorted(
        {i for a in assignments if (i := related_id(a.get("ip_address")))}
        | {i for d in devices if (i := related_id(d.get("primary_ip4")))})))
    loopback_of = _loopbacks(assignments, interfaces, addresses, set(loopback_names))
    snapshot_devices = []
    for device in devices:
        d_id = str(device["id"])
        role = roles.get(related_id(device.get("role")) or "")
        platform = platforms.get(related_id(device.get("platform")) or "")
        tenant = tenants.get(related_id(device.get("tenant")) or "")
        primary = addresses.get(related_id(device.get("primary_ip4")) or "")
        fields = device.get("custom_fields") or {}
        asn = fields.get(ASN_FIELD)
        position = {key: int(value) for key, field in POSITION_FIELDS.items()
                    if isinstance(value := fields.get(field), int)}
        snapshot_devices.append(SotDevice(
            ref=SotRef(kind="dcim.device", id=d_id, label=str(device.get("name"))),
            name=str(device.get("name")), role=role["name"] if role else None,
            platform=(platform.get("network_driver") or platform["name"]) if platform else None,
            primary_ip4=str(primary["address"]).split("/")[0] if primary else None,
            loopback=loopback_of.get(d_id), asn=int(asn) if isinstance(asn, int) else None,
            tenant=tenant["name"] if tenant else None, **position))
    names = {str(d["id"]): str(d.get("name")) for d in devices}
    # the far ends of the fabric's cable paths (through patch panels) that are not the
    # fabric's own ports, and the devices they are on
    paths = {i_id: _far_end(i) for i_id, i in interfaces.items()
             if i.get("cable") is not None and not i.get("mgmt_only")}
    far = _by_id(api.fetch_in("dcim/interfaces/", "id", sorted(
        {f for f in paths.values() if f and f not in interfaces})))
    outside = sorted({d for f in far.values() if (d := related_id(f.get("device")))}
                     - set(names))
    outside_names = {str(d["id"]): str(d.get("name"))
                     for d in api.fetch_in("dcim/devices/", "id", outside)}
    # direct cables give the order of their ends and their length
    cables = _by_id(api.fetch_in("dcim/cables/", "id", sorted(
        {c for i_id, f in paths.items() if f is not None
         and interfaces[i_id].get("cable_peer_type") == INTERFACE_TYPE
         and (c := related_id(interfaces[i_id].get("cable")))})))
    snapshot_cables = _links(paths, {**far, **interfaces}, _Names(names, outside_names),
                             cables)
    return Snapshot(
        source=api.api_url, devices=sorted(snapshot_devices, key=lambda d: (d.name, d.ref.id)),
        cables=sorted(snapshot_cables, key=lambda c: c.ref.label),
        tenants=sorted((SotTenant(ref=SotRef(kind="tenancy.tenant", id=t_id,
                                             label=str(t["name"])), name=str(t["name"]))
                        for t_id, t in tenants.items()), key=lambda t: t.name))


def _loopbacks(assignments: list[dict[str, Any]], interfaces: Mapping[str, dict[str, Any]],
               addresses: Mapping[str, dict[str, Any]], names: set[str]) -> dict[str, str]:
    """Device id -> the address on its loopback interface."""
    out: dict[str, str] = {}
    for assignment in assignments:
        iface = interfaces.get(related_id(assignment.get("interface")) or "")
        address = addresses.get(related_id(assignment.get("ip_address")) or "")
        if iface is None or address is None or iface.get("name") not in names:
            continue
        device = related_id(iface.get("device"))
        if device is not None:
            out[device] = str(address["address"]).split("/")[0]
    return out


def _far_end(iface: Mapping[str, Any]) -> str | None:
    """The interface at the far end of a cabled port's path (Nautobot traces it through
    patch panels); None for a path that stops short of one."""
    if iface.get("connected_endpoint_type") == INTERFACE_TYPE:
        return related_id(iface.get("connected_endpoint"))
    if iface.get("cable_peer_type") == INTERFACE_TYPE:
        return related_id(iface.get("cable_peer"))
    return None


@dataclass(frozen=True)
class _Names:
    fabric: Mapping[str, str]  # device id -> name, the selected devices
    outside: Mapping[str, str]  # the same, for devices at the far end of a cable path

    def end(self, iface: Mapping[str, Any]) -> tuple[str, str, bool]:
        """(device name, port name, whether the device is outside the selection)."""
        device = related_id(iface.get("device")) or ""
        if device in self.fabric:
            return self.fabric[device], str(iface.get("name")), False
        return self.outside.get(device, f"device {device}"), str(iface.get("name")), True


def _links(paths: Mapping[str, str | None], every: Mapping[str, dict[str, Any]],
           names: _Names, cables: Mapping[str, dict[str, Any]]) -> list[SotCable]:
    """One SotCable per cable path from a selected device's cabled port (`paths`: port ->
    far interface): to another selected device, to any other device (named in `outside`:
    cabled to nowhere), or stopping short of an interface (INCOMPLETE). A path through
    patch panels is named by the cable at its first end; only a direct cable has a length
    (a path's length is its cables' sum)."""
    seen: set[frozenset[str]] = set()
    out = []
    for i_id, f_id in sorted(paths.items()):
        iface = every[i_id]
        cable_id = related_id(iface.get("cable")) or ""
        if f_id is None:
            device, port, _ = names.end(iface)
            peer = str(iface.get("cable_peer_type") or "nothing")
            out.append(SotCable(ref=SotRef(kind="dcim.cable", id=cable_id,
                                           label=f"{device}:{port} - {peer}"),
                                a_device=device, a_port=port, b_device=INCOMPLETE,
                                b_port=peer, outside=[INCOMPLETE]))
            continue
        if frozenset({i_id, f_id}) in seen or f_id not in every:
            continue
        seen.add(frozenset({i_id, f_id}))
        cable = cables.get(cable_id) if iface.get("cable_peer_type") == INTERFACE_TYPE \
            else None
        if cable is not None:  # a direct cable: its own a and b ends
            first = related_id(cable.get("termination_a_id")) or i_id
            a_id, b_id = (i_id, f_id) if first == i_id else (f_id, i_id)
        else:
            a_id, b_id = sorted((i_id, f_id), key=lambda i: names.end(every[i])[:2])
        (a_dev, a_port, a_out), (b_dev, b_port, b_out) = (names.end(every[a_id]),
                                                          names.end(every[b_id]))
        path_cable = related_id(every[a_id].get("cable")) or cable_id
        label = f"{a_dev}:{a_port} - {b_dev}:{b_port}" + ("" if cable else " (patched)")
        out.append(SotCable(ref=SotRef(kind="dcim.cable", id=path_cable, label=label),
                            a_device=a_dev, a_port=a_port, b_device=b_dev, b_port=b_port,
                            outside=[d for d, o in ((a_dev, a_out), (b_dev, b_out)) if o],
                            length_m=_length_m(cable) if cable else None))
    return out


def _length_m(cable: Mapping[str, Any]) -> float | None:
    length, unit = cable.get("length"), cable.get("length_unit")
    if isinstance(unit, dict):
        unit = unit.get("value")
    if length is None or unit not in METRES:
        return None
    return round(float(length) * METRES[str(unit)], 3)
