"""Where the source of truth and the plan disagree, each named by the source object.

The same comparison serves `sot check` (the intent as it is) and import (the intent as it
would be written: whatever still disagrees then is something the intent cannot express,
such as a cable on a port the port scheme does not give that link).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from flatfab.model.state import FabricState, Link, LinkKind, Role
from flatfab.sot.importer import SotMapping, flatfab_role, role_key
from flatfab.sot.snapshot import Snapshot, SotCable, SotDevice


@dataclass(frozen=True, order=True)
class Disagreement:
    device: str
    subject: str  # the source object ("dcim.cable leaf1:swp51 - spine1:swp1 (id)") or "intent"
    message: str
    # False for what an import cannot bring into the intent (a link class is the operator's
    # choice): import notes it, check reports it
    importable: bool = True

    def __str__(self) -> str:
        return f"{self.device}: {self.subject}: {self.message}"


POSITIONS = {"plane": "plane", "pod": "pod", "su": "SU", "rail": "rail"}


def _ends(cable: SotCable) -> frozenset[tuple[str, str]]:
    return frozenset({(cable.a_device, cable.a_port), (cable.b_device, cable.b_port)})


def compare(snapshot: Snapshot, plan: FabricState, mapping: SotMapping) -> list[Disagreement]:
    return sorted(set(_compare(snapshot, plan, mapping)))


def _compare(snapshot: Snapshot, plan: FabricState,
             mapping: SotMapping) -> Iterator[Disagreement]:
    sot = {d.name: d for d in snapshot.devices if mapping.roles.get(d.role or "") is not None}
    yield from _devices(sot, plan, mapping)
    yield from _cables(snapshot, plan)


def _devices(sot: Mapping[str, SotDevice], plan: FabricState,
             mapping: SotMapping) -> Iterator[Disagreement]:
    for name, device in sot.items():
        planned = plan.devices.get(name)
        if planned is None:
            yield Disagreement(name, str(device.ref), "not in the intent")
            continue
        role = mapping.roles[device.role or ""]
        if role != role_key(planned):
            what = (planned.role.value if planned.server_role is None or flatfab_role(role)
                    != planned.role.value else f"{planned.server_role} server")
            yield Disagreement(name, str(device.ref), f"role {device.role!r} ({role}); the "
                               f"intent has a {what}")
        platform = mapping.platforms.get(device.platform or "")
        if platform is not None and platform != planned.platform:
            yield Disagreement(name, str(device.ref), f"platform {device.platform!r} "
                               f"({platform}); the intent has {planned.platform}")
        loopback = (planned.loopback or "").split("/", maxsplit=1)[0] or None
        if device.loopback is not None and device.loopback != loopback:
            yield Disagreement(name, str(device.ref), f"loopback {device.loopback}; the plan "
                               f"gives {loopback}")
        if device.asn is not None and device.asn != planned.asn:
            yield Disagreement(name, str(device.ref), f"ASN {device.asn}; the plan gives "
                               f"{planned.asn}")
        for key, label in POSITIONS.items():
            held, wanted = getattr(device, key), getattr(planned, key)
            if held is not None and held != wanted:
                yield Disagreement(name, str(device.ref), f"{label} {held}; the plan puts it "
                                   f"in {f'{label} {wanted}' if wanted is not None else 'none'}")
        if planned.role is Role.HOST and device.tenant != planned.tenant:
            yield Disagreement(name, str(device.ref), f"tenant {device.tenant or 'none'}; the "
                               f"intent puts it in {planned.tenant or 'none'}")
    for name in plan.devices:
        if name not in sot:
            yield Disagreement(name, "intent", "planned, but the source of truth has no "
                               "such device (with a fabric role)")


def _cables(snapshot: Snapshot, plan: FabricState) -> Iterator[Disagreement]:
    sot = {_ends(c): c for c in snapshot.cables
           if c.a_device in plan.devices and c.b_device in plan.devices}
    planned = {frozenset({(link.a.device, link.a.port), (link.b.device, link.b.port)}): link
               for link in plan.links
               if link.parent is None
               and link.kind in (LinkKind.FABRIC, LinkKind.HOST)}
    peer = {end: other for ends in planned for end in ends for other in ends if other != end}
    for ends, cable in sot.items():
        if ends in planned:
            yield from _length(cable, planned[ends])
            continue
        nic = _server_nic(plan, ends)
        if nic is not None:
            yield _nic_disagreement(plan, cable, nic, peer)
            continue
        a, b = sorted(ends)
        wanted = [f"{d}:{p} to {peer[(d, p)][0]}:{peer[(d, p)][1]}" for d, p in (a, b)
                  if (d, p) in peer]
        hint = f"; the plan cables {' and '.join(wanted)}" if wanted else ""
        yield Disagreement(a[0], str(cable.ref), f"cables {a[0]}:{a[1]} to {b[0]}:{b[1]}, "
                           f"which the plan does not{hint}")
    for ends, link in planned.items():
        if ends not in sot:
            yield Disagreement(link.a.device, "intent", f"plans {link.id}; the source of "
                               "truth has no such cable")


def _server_nic(plan: FabricState, ends: frozenset[tuple[str, str]]
                ) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """((server, NIC), (leaf, port)) when the cable is a NIC of a multi-NIC or rail server."""
    for (host, nic), other in ((e, o) for e in ends for o in ends if o != e):
        device = plan.devices[host]
        if device.role is Role.HOST and (device.server_role is not None or device.su is not None):
            return (host, nic), other
    return None


def _rail(plan: FabricState, device: str, port: str | None = None) -> str:
    """" (rail k)" for a rail leaf or a NIC planned on rail k, else nothing."""
    state = plan.devices.get(device)
    if state is None:
        return ""
    rail = state.rail if port is None else (
        state.interfaces[port].rail if port in state.interfaces else None)
    return "" if rail is None else f" (rail {rail})"


def _nic_disagreement(plan: FabricState, cable: SotCable,
                      nic: tuple[tuple[str, str], tuple[str, str]],
                      peer: Mapping[tuple[str, str], tuple[str, str]]) -> Disagreement:
    """A server NIC cabled where the plan does not put it, named by server, NIC, leaf and
    port, and by rail where the fabric has rails."""
    (server, name), (leaf, port) = nic
    where = f"server {server} NIC {name} is cabled to {leaf}:{port}{_rail(plan, leaf)}"
    planned = peer.get((server, name))
    if planned is None:
        wanted = "; the plan has no such NIC"
    else:
        rail = plan.devices[server].interfaces[name].rail
        wanted = (f"; the plan puts it on {f'rail {rail}, ' if rail is not None else ''}"
                  f"{planned[0]}:{planned[1]}")
    other = peer.get((leaf, port))
    if other is not None:
        wanted += f" and plans {leaf}:{port} for {other[0]} NIC {other[1]}"
    return Disagreement(server, str(cable.ref), where + wanted)


def _length(cable: SotCable, link: Link) -> Iterator[Disagreement]:
    """A cable longer than its link class says: PFC headroom is sized to the class's length,
    so the pause frame would arrive after the buffer reserved for it is full. (A shorter
    cable only costs buffer; the length is recorded in whole units, hence the ceiling.)"""
    if cable.length_m is not None and cable.length_m > math.ceil(link.cable_m):
        yield Disagreement(link.a.device, str(cable.ref), (
            f"cable length {cable.length_m:g} m; the plan sizes headroom for {link.cable_m:g} m "
            f"(link class {link.link_class})"), importable=False)
