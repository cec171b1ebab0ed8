"""A plan as golden files a reviewer reads (tests/golden/<fabric>/, `make golden`).

- `plan-digest.yaml`: the plan in brief (counts, ASNs, address pools, per-role summaries,
  links, tenants, the lossless profile) and the sha256 of the whole plan as one JSON
  document (`whole`: what `FabricState.model_dump_json(indent=1)` prints, the old plan.json).
- `plan/fabric.json`: the fabric-wide fields, the devices' order, tenants, lossless profile.
- `plan/links.json`: one link a line.
- `plan/devices/<device>.json`: one device's planned state, fields at their default left
  out, and a port whose QoS (or NIC settings) repeats an earlier port's saying `same as
  <port>`: a change to one device diffs that device's file, a change to a shared QoS
  profile one hunk per device.

`plan_of` reads the files back into the plan: the files lose nothing (the golden tests
compare its sha256 with the digest's).
"""

from __future__ import annotations

import copy
import ipaddress
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from flatfab.model.state import DEFAULT_VRF, DeviceState, FabricState, Link
from tests.support.golden import pretty_json, sha256

DIGEST = "plan-digest.yaml"
FABRIC = "plan/fabric.json"
LINKS = "plan/links.json"
SAME = "same as "  # a port's qos/nic equal to an earlier port's of the same device
SHARED_FIELDS = ("qos", "nic")


def device_file(name: str) -> str:
    return f"plan/devices/{name}.json"


def whole(state: FabricState) -> str:
    """The plan as one JSON document (what the digest's sha256 is of)."""
    return state.model_dump_json(indent=1) + "\n"


# ---- the plan split and read back --------------------------------------------------------


def device_doc(device: DeviceState) -> dict[str, Any]:
    doc = device.model_dump(mode="json", exclude_defaults=True)
    first: dict[tuple[str, str], str] = {}
    for port, interface in doc.get("interfaces", {}).items():
        for field in SHARED_FIELDS:
            if field in interface:
                seen = first.setdefault((field, json.dumps(interface[field], sort_keys=True)),
                                        port)
                if seen != port:
                    interface[field] = SAME + seen
    return doc


def device_of(doc: Mapping[str, Any]) -> DeviceState:
    doc = copy.deepcopy(dict(doc))
    interfaces = doc.get("interfaces", {})
    for interface in interfaces.values():
        for field in SHARED_FIELDS:
            value = interface.get(field)
            if isinstance(value, str) and value.startswith(SAME):
                interface[field] = interfaces[value.removeprefix(SAME)][field]
    return DeviceState.model_validate(doc)


def json_lines(items: Iterable[Any]) -> str:
    """A JSON list, one item a line."""
    lines = [" " + json.dumps(i, ensure_ascii=False, separators=(", ", ": ")) for i in items]
    return "[\n" + ",\n".join(lines) + "\n]\n" if lines else "[]\n"


def plan_files(state: FabricState) -> dict[str, str]:
    """The plan's golden files (relative path -> text); plan-digest.yaml apart (`digest`)."""
    doc = state.model_dump(mode="json", exclude={"devices", "links"}, exclude_defaults=True)
    head = {k: doc.pop(k) for k in ("fabric", "source", "roce_mtu") if k in doc}
    files = {FABRIC: pretty_json({**head, "devices": list(state.devices), **doc}),
             LINKS: json_lines(link.model_dump(mode="json", exclude_defaults=True)
                               for link in state.links)}
    for name, device in state.devices.items():
        files[device_file(name)] = pretty_json(device_doc(device))
    return files


def plan_of(files: Mapping[str, str]) -> FabricState:
    """The plan the files of `plan_files` hold."""
    doc = json.loads(files[FABRIC])
    names = doc.pop("devices")
    devices = {n: device_of(json.loads(files[device_file(n)])) for n in names}
    links = [Link.model_validate(link) for link in json.loads(files[LINKS])]
    return FabricState.model_validate({**doc, "devices": devices, "links": links})


# ---- the digest ----------------------------------------------------------------------------


def digest(state: FabricState, kept: list[str] | None) -> str:
    """plan-digest.yaml: what a reviewer reads first; `kept` the devices whose files are kept
    (None: all of them)."""
    roles: dict[str, Any] = {}
    for role in dict.fromkeys(d.role.value for d in state.devices.values()):
        roles[role] = _role([d for d in state.devices.values() if d.role.value == role])
    links: dict[str, Any] = {}
    for kind, link_class in dict.fromkeys((k.kind.value, k.link_class) for k in state.links):
        group = [k for k in state.links if (k.kind.value, k.link_class) == (kind, link_class)]
        physical = [k for k in group if k.parent is None]
        links[f"{kind} ({link_class})"] = {
            "links": len(physical), "sub-links": len(group) - len(physical),
            "speed_mbps": _values(k.speed_mbps for k in group),
            "mtu": _values(k.mtu for k in group),
            "cable_m": _values(k.cable_m for k in group)}
    doc: dict[str, Any] = {
        "fabric": state.fabric,
        "sha256": sha256(whole(state)),
        "devices": len(state.devices),
        "golden files": ("every device's" if kept is None else {
            "kept": kept, "not kept": f"{len(state.devices) - len(kept)} devices: their "
                                      "sha256 in not-kept.sha256"}),
        "roles": roles,
        "links": links,
        "tenants": {t.name: {"vrf_id": t.vrf_id, "members": len(t.members),
                             "subnets": _pool(t.subnets.values())}
                    for t in state.tenants.values()},
        "roce_mtu": state.roce_mtu,
        "lossless": (state.lossless.model_dump(mode="json") if state.lossless else None),
    }
    head = (f"# The plan of fabric {state.fabric} in brief, written by `make golden`\n"
            "# (tests/golden_files/test_golden.py). The plan itself is in plan/: fabric.json,\n"
            "# links.json (a link a line), devices/<device>.json (one device each).\n"
            "# sha256: of the whole plan as one JSON document, FabricState.model_dump_json("
            "indent=1).\n")
    return head + _yaml(doc, 0)


def _role(devices: list[DeviceState]) -> dict[str, Any]:
    names = [d.name for d in devices]
    summary: dict[str, Any] = {
        "devices": (names if len(names) <= 4 else
                    f"{len(names)}: {names[0]}, {names[1]}, ..., {names[-1]}"),
        "platforms": dict(Counter(d.platform for d in devices)),
    }
    for field in ("plane", "pod", "su", "rail", "server_role", "tenant"):
        values = [getattr(d, field) for d in devices if getattr(d, field) is not None]
        if values:
            summary[f"{field}s"] = dict(sorted(Counter(values).items()))
    if any(d.asn is not None for d in devices):
        summary["asn"] = _values(d.asn for d in devices if d.asn is not None)
    loopbacks = [d.loopback for d in devices if d.loopback]
    if loopbacks:
        summary["loopbacks"] = _pool(loopbacks)
    kinds = dict.fromkeys(i.kind.value for d in devices for i in d.interfaces.values())
    summary["interfaces per device"] = {
        k: _values(sum(i.kind.value == k for i in d.interfaces.values()) for d in devices)
        for k in kinds}
    addresses: dict[str, list[str]] = {}  # by VRF (a host's: its tenant's)
    for d in devices:
        for i in d.interfaces.values():
            if i.kind.value != "loopback" and i.addresses:
                vrf = i.vrf if i.vrf != DEFAULT_VRF else d.tenant or DEFAULT_VRF
                addresses.setdefault(vrf, []).extend(i.addresses)
    if addresses:
        summary["addresses"] = {v: _pool(a) for v, a in addresses.items()}
    vrfs = dict.fromkeys(v for d in devices for v in d.bgp)
    if vrfs:
        summary["bgp"] = {"vrfs": list(vrfs), "peers per device": _values(
            sum(len(b.peers) for b in d.bgp.values()) for d in devices)}
    for field in ("static_routes", "rules", "probes", "errors"):
        counts = [len(getattr(d, field)) for d in devices]
        if any(counts):
            summary[f"{field} per device"] = _values(counts)
    asics = [d.qos.asic.family for d in devices if d.qos is not None]
    if asics:
        summary["asic"] = _values(asics)
    unmanaged = [d.name for d in devices if not d.managed]
    if unmanaged:
        summary["unmanaged"] = unmanaged
    return summary


def _values(values: Iterable[Any]) -> Any:
    """One value, a few, or the range of many."""
    distinct = sorted(set(values))
    if len(distinct) == 1:
        return distinct[0]
    if len(distinct) <= 4:
        return distinct
    return f"{distinct[0]}..{distinct[-1]} ({len(distinct)} values)"


def _pool(addresses: Iterable[str]) -> Any:
    """The prefixes of `addresses` (host or network): a few listed, many as their count, the
    first and last, and the smallest prefix that holds them all."""
    networks = sorted({ipaddress.ip_interface(a).network for a in addresses},
                      key=lambda n: (n.version, n))
    if len(networks) <= 2:
        return [str(n) for n in networks]
    first, last = networks[0], networks[-1]
    if first.version != last.version:
        return f"{len(networks)} prefixes, {first} .. {last}"
    pool = first
    while not (int(pool.network_address) <= int(last.network_address)
               <= int(pool.broadcast_address)):
        pool = pool.supernet()
    return f"{len(networks)} in {pool}: {first} .. {last}"


_PLAIN = re.compile(r"[A-Za-z_][\w .()-]*[\w)]")


def _yaml(doc: Mapping[str, Any], indent: int) -> str:
    """A block mapping whose values fit one line as JSON (which YAML reads as flow)."""
    lines = []
    for key, value in doc.items():
        name = key if _PLAIN.fullmatch(key) else json.dumps(key)
        flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        if isinstance(value, dict) and value and indent + len(name) + len(flat) + 2 > 100:
            lines.append(f"{' ' * indent}{name}:\n{_yaml(value, indent + 2)}")
        else:
            lines.append(f"{' ' * indent}{name}: {flat}\n")
    return "".join(lines)
