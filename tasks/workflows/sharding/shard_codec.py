"""A shard's output as compressed JSON and back, losing nothing.

The state models leave some fields out of their JSON while they are empty (`exclude_if`),
which would read a `0` or `""` back as None; here every field of such a model is written,
so a decoded DeviceState equals the one collected and the coordinator judges exactly what
a single run would. Models with no such field anywhere below them go through pydantic's
own serializer (fast).

A device's RIB, most of a leaf's bytes, is written as its distinct next-hop lists plus one
(protocol, list index) per route, and read back with routes sharing their next-hop lists,
as collect builds them (flatfab.platforms.readback.frr_routes): a thousand-leaf fabric's
observed RIBs stay a few lists each on the coordinator too.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from enum import Enum
from functools import cache
from typing import Any, get_args

from pydantic import BaseModel

from flatfab.model.state import DeviceState, NextHop, Route
from flatfab.platforms.readback import Routes
from flatfab.reports.model import DeviceDrift, SectionDrift
from flatfab.workflows.commands.rollout import DeviceOutcome
from flatfab.workflows.sharding.shard_run import ShardOutput

FORMAT = 1
# the RIB is written field by field: a field added to these models must be added here
if tuple(Route.model_fields) != ("protocol", "nexthops") or \
        tuple(NextHop.model_fields) != ("interface", "address", "vtep", "vni"):
    raise RuntimeError("Route or NextHop changed: teach flatfab.workflows.sharding.shard_codec "
                       "its fields")
# (interface, address), or (interface, address, vtep, vni) for an EVPN/VXLAN next hop
Hop = tuple[str | int | None, ...]


def _hop(hop: NextHop) -> Hop:
    if hop.overlay:
        return (hop.interface, hop.address, hop.vtep, hop.vni)
    return (hop.interface, hop.address)


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in get_args(annotation):
        yield from _models_in(arg)


@cache
def _lossy(cls: type[BaseModel]) -> bool:
    """Whether pydantic's JSON of `cls` may leave a set field out (here or below)."""
    return any(info.exclude_if is not None or any(_lossy(m) for m in _models_in(info.annotation))
               for info in cls.model_fields.values())


def plain(value: Any) -> Any:
    """JSON-ready data holding every field of every model in `value`."""
    if isinstance(value, BaseModel):
        cls = type(value)
        if not _lossy(cls):
            return value.model_dump(mode="json")
        return {name: plain(getattr(value, name)) for name in cls.model_fields}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {(k.value if isinstance(k, Enum) else k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _routes(routes: dict[str, dict[str, Route]]) -> dict[str, Any]:
    lists: dict[tuple[Hop, ...], int] = {}
    tables: dict[str, dict[str, list[Any]]] = {}
    for vrf, table in routes.items():
        rows = tables[vrf] = {}
        for key, route in table.items():
            hops = tuple(_hop(h) for h in route.nexthops)
            index = lists.setdefault(hops, len(lists))
            rows[key] = [route.protocol, index]
    return {"hops": [[list(h) for h in hops] for hops in lists], "tables": tables}


def _unroutes(data: dict[str, Any]) -> dict[str, dict[str, Route]]:
    made = Routes()  # shared again, as collect made them
    hops = [tuple(tuple(hop) for hop in listed) for listed in data["hops"]]
    return {vrf: {made.prefix(key): made.route(row[0], hops[row[1]])
                  for key, row in table.items()}
            for vrf, table in data["tables"].items()}


def _device(device: DeviceState) -> dict[str, Any]:
    data = {name: plain(getattr(device, name)) for name in DeviceState.model_fields
            if name != "routes"}
    data["routes"] = None if device.routes is None else _routes(device.routes)
    return data


def _undevice(data: dict[str, Any]) -> DeviceState:
    routes = data.pop("routes")
    device = DeviceState.model_validate(data)
    if routes is not None:
        device.routes = _unroutes(routes)  # validated once per distinct next-hop list
    return device


def _drift(entry: DeviceDrift) -> dict[str, Any]:
    return {"device": entry.device, "error": entry.error,
            "sections": [{"section": s.section, "missing": list(s.missing),
                          "unexpected": list(s.unexpected), "diff": s.diff}
                         for s in entry.sections]}


def _undrift(data: dict[str, Any]) -> DeviceDrift:
    return DeviceDrift(device=data["device"], error=data["error"], sections=tuple(
        SectionDrift(section=s["section"], missing=tuple(s["missing"]),
                     unexpected=tuple(s["unexpected"]), diff=s["diff"])
        for s in data["sections"]))


def as_data(output: ShardOutput) -> dict[str, Any]:
    return {"format": FORMAT, "shard": output.shard,
            "devices": {name: _device(device) for name, device in output.devices.items()},
            "drift": [_drift(d) for d in output.drift],
            "diffs": {name: {"diff": o.diff, "changed": o.changed, "error": o.error,
                             "notes": list(o.notes)} for name, o in output.diffs.items()},
            "seconds": dict(output.seconds)}


def from_data(data: dict[str, Any]) -> ShardOutput:
    if data.get("format") != FORMAT:
        raise ValueError(f"shard result format {data.get('format')!r}, expected {FORMAT}")
    return ShardOutput(
        shard=str(data["shard"]),
        devices={name: _undevice(dict(d)) for name, d in data["devices"].items()},
        drift=[_undrift(d) for d in data["drift"]],
        diffs={name: DeviceOutcome(diff=o["diff"], changed=o["changed"], error=o["error"],
                                   notes=list(o["notes"])) for name, o in data["diffs"].items()},
        seconds={k: float(v) for k, v in data["seconds"].items()})


def pack(data: dict[str, Any]) -> bytes:
    """Compact JSON, zlib-compressed (observed RIBs repeat prefixes and next hops)."""
    return zlib.compress(json.dumps(data, separators=(",", ":")).encode(), 6)


def unpack(blob: bytes) -> dict[str, Any]:
    loaded = json.loads(zlib.decompress(blob))
    if not isinstance(loaded, dict):
        raise ValueError("a shard result is a JSON object")
    return loaded
