"""Read a fabric from Nautobot's REST API into a Snapshot (read-only: only GETs).

One listing per object type, related objects looked up by id from those listings (the API
gives related objects as ids; fetching each one would cost a request per object).

Where flatfab's facts live in Nautobot:
- a device's role (`extras/roles`) and platform (`dcim/platforms`, by its network driver);
- cables between interfaces (`dcim/cables`, interface terminations);
- the loopback: the IP address assigned to the device's loopback interface (its name on the
  device's platform: `lo`, `Loopback0`);
- the ASN: the device's custom field `bgp_asn` (an integer custom field, when modelled);
- the tenant of a device (`tenancy/tenants`).

Errors (no answer, a refused token, a reply that is not what the API documents) are one
line naming the API root and the endpoint (`ApiError`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tasks.sot.client import ApiError, Nautobot
from tasks.sot.snapshot import Snapshot, SotCable, SotDevice, SotRef, SotTenant

ASN_FIELD = "bgp_asn"
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
        asn = (device.get("custom_fields") or {}).get(ASN_FIELD)
        snapshot_devices.append(SotDevice(
            ref=SotRef(kind="dcim.device", id=d_id, label=str(device.get("name"))),
            name=str(device.get("name")), role=role["name"] if role else None,
            platform=(platform.get("network_driver") or platform["name"]) if platform else None,
            primary_ip4=str(primary["address"]).split("/")[0] if primary else None,
            loopback=loopback_of.get(d_id), asn=int(asn) if isinstance(asn, int) else None,
            tenant=tenant["name"] if tenant else None))
    cables = list(_by_id(api.fetch_in("dcim/cables/", "device_id", device_ids)).values())
    names = {str(d["id"]): str(d.get("name")) for d in devices}
    far = _far_ends(api, cables, interfaces)
    interfaces = {**far, **interfaces}
    outside = sorted({i for f in far.values() if (i := related_id(f.get("device")))} - set(names))
    outside_names = {str(d["id"]): str(d.get("name"))
                     for d in api.fetch_in("dcim/devices/", "id", outside)}
    snapshot_cables = _cables(cables, interfaces, names, outside_names)
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


def _far_ends(api: Nautobot, cables: list[dict[str, Any]],
              interfaces: Mapping[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The interfaces at the far end of cables that leave the selected devices (read only
    when there are such cables), so a cable to nowhere names where it goes."""
    ids = sorted({i for c in cables for side in ("a", "b")
                  if c.get(f"termination_{side}_type") == INTERFACE_TYPE
                  and (i := related_id(c.get(f"termination_{side}_id")))
                  and i not in interfaces})
    return _by_id(api.fetch_in("dcim/interfaces/", "id", ids))


def _cables(cables: list[dict[str, Any]], interfaces: Mapping[str, dict[str, Any]],
            names: Mapping[str, str], outside_names: Mapping[str, str]) -> list[SotCable]:
    """Interface-to-interface cables with an end on a selected device, the other end on a
    selected device or on any other (then named in `outside`: cabled to nowhere). Cables on
    management-only ports (to a management switch) are not the fabric's."""
    out = []
    for cable in cables:
        ends: list[tuple[str, str]] = []
        outside: list[str] = []
        for side in ("a", "b"):
            if cable.get(f"termination_{side}_type") != INTERFACE_TYPE:
                break
            iface = interfaces.get(related_id(cable.get(f"termination_{side}_id")) or "")
            if iface is None or iface.get("mgmt_only"):
                break
            device = related_id(iface.get("device")) or ""
            if device not in names:
                outside.append(outside_names.get(device, f"device {device}"))
            ends.append((names.get(device) or outside[-1], str(iface.get("name"))))
        if len(ends) != 2 or len(outside) == 2:
            continue
        (a_dev, a_port), (b_dev, b_port) = ends
        out.append(SotCable(ref=SotRef(kind="dcim.cable", id=str(cable["id"]),
                                       label=f"{a_dev}:{a_port} - {b_dev}:{b_port}"),
                            a_device=a_dev, a_port=a_port, b_device=b_dev, b_port=b_port,
                            outside=outside, length_m=_length_m(cable)))
    return out


def _length_m(cable: Mapping[str, Any]) -> float | None:
    length, unit = cable.get("length"), cable.get("length_unit")
    if isinstance(unit, dict):
        unit = unit.get("value")
    if length is None or unit not in METRES:
        return None
    return round(float(length) * METRES[str(unit)], 3)
