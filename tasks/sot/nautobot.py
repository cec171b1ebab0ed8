"""Read a fabric from Nautobot's REST API into a Snapshot (read-only).

One listing per object type, related objects looked up by id from those listings: pynautobot
would otherwise fetch each related object lazily, one request each. Records are taken as
plain data (`serialize()`: related objects become their ids).

Where flatfab's facts live in Nautobot:
- a device's role (`extras.roles`) and platform (`dcim.platforms`, by its network driver);
- cables between interfaces (`dcim.cables`, interface terminations);
- the loopback: the IP address assigned to the device's loopback interface (its name on the
  device's platform: `lo`, `Loopback0`);
- the ASN: the device's custom field `bgp_asn` (an integer custom field, when modelled);
- the tenant of a device (`tenancy.tenants`).

Errors (no answer, a refused token, a reply that is not what the API documents) are one
line naming the URL.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pynautobot
import requests
from pynautobot.core.query import RequestError

from tasks.errors import InputError
from tasks.sot.snapshot import Snapshot, SotCable, SotDevice, SotRef, SotTenant

ASN_FIELD = "bgp_asn"
INTERFACE_TYPE = "dcim.interface"
CHUNK = 100  # ids per filtered read


class SourceError(InputError):
    """The source of truth could not be read (or written)."""


def connect(url: str, token: str) -> Any:
    """A client of the site at `url` (its root: pynautobot adds /api/)."""
    api = pynautobot.api(url.rstrip("/").removesuffix("/api"), token=token)
    api.http_session.headers["Connection"] = "keep-alive"
    return api


def _records(api: Any, url: str, endpoint: str, **filters: Any) -> list[dict[str, Any]]:
    app, name = endpoint.split(".")
    try:
        found = getattr(getattr(api, app), name).filter(**filters) if filters else \
            getattr(getattr(api, app), name).all()
        return [record.serialize() for record in found]
    except RequestError as exc:
        status = getattr(exc.req, "status_code", "?")
        why = "the token is refused" if status in (401, 403) else f"HTTP {status}"
        raise SourceError.single(url, endpoint, why) from None
    except requests.RequestException as exc:
        raise SourceError.single(url, endpoint, f"no answer ({type(exc).__name__})") from None
    except (ValueError, KeyError, AttributeError) as exc:
        raise SourceError.single(url, endpoint, f"unexpected reply ({exc})") from None


def _chunked(api: Any, url: str, endpoint: str, name: str,
             values: list[str]) -> list[dict[str, Any]]:
    """Records whose `name` filter is one of `values`, CHUNK values per request (a query
    string stays short on a 1,000-switch fabric)."""
    found: list[dict[str, Any]] = []
    for start in range(0, len(values), CHUNK):
        found += _records(api, url, endpoint, **{name: values[start:start + CHUNK]})
    return found


def _by_id(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {str(r["id"]): r for r in records}


def related_id(value: Any) -> str | None:
    """A related object's id, whether serialized as an id or as a nested dict."""
    if isinstance(value, dict):
        value = value.get("id")
    return None if value is None else str(value)


def read_snapshot(api: Any, url: str, filters: Mapping[str, Any],
                  loopback_names: Iterable[str]) -> Snapshot:
    """The devices `filters` select (e.g. location, tenant group), their cables, loopbacks,
    ASNs and tenants."""
    roles = _by_id(_records(api, url, "extras.roles"))
    platforms = _by_id(_records(api, url, "dcim.platforms"))
    tenants = _by_id(_records(api, url, "tenancy.tenants"))
    devices = _records(api, url, "dcim.devices", **filters)
    device_ids = sorted(str(d["id"]) for d in devices)
    # only the fabric's own interfaces, cables and assignments: Nautobot spends most of a
    # read serialising interfaces, and it may hold many fabrics
    interfaces = _by_id(_chunked(api, url, "dcim.interfaces", "device_id", device_ids))
    assignments = _chunked(api, url, "ipam.ip_address_to_interface", "interface",
                           sorted(interfaces))
    addresses = _by_id(_chunked(api, url, "ipam.ip_addresses", "id", sorted(
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
    cables = _cables(list(_by_id(_chunked(api, url, "dcim.cables", "device_id",
                                          device_ids)).values()), interfaces,
                     {str(d["id"]): str(d.get("name")) for d in devices})
    return Snapshot(
        source=url, devices=sorted(snapshot_devices, key=lambda d: (d.name, d.ref.id)),
        cables=sorted(cables, key=lambda c: c.ref.label),
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


def _cables(cables: list[dict[str, Any]], interfaces: Mapping[str, dict[str, Any]],
            device_names: Mapping[str, str]) -> list[SotCable]:
    """Interface-to-interface cables with both ends on selected devices, and those with one
    end on a selected device and the other on any other device (cabled to nowhere)."""
    out = []
    for cable in cables:
        ends = []
        for side in ("a", "b"):
            if cable.get(f"termination_{side}_type") != INTERFACE_TYPE:
                break
            iface = interfaces.get(related_id(cable.get(f"termination_{side}_id")) or "")
            device = related_id(iface.get("device")) if iface is not None else None
            ends.append((device_names.get(device or "", "(outside the fabric)"),
                         str(iface.get("name")) if iface is not None else "?"))
        if len(ends) != 2 or all(name == "(outside the fabric)" for name, _ in ends):
            continue
        (a_dev, a_port), (b_dev, b_port) = ends
        out.append(SotCable(ref=SotRef(kind="dcim.cable", id=str(cable["id"]),
                                       label=f"{a_dev}:{a_port} - {b_dev}:{b_port}"),
                            a_device=a_dev, a_port=a_port, b_device=b_dev, b_port=b_port))
    return out
