"""A fabric between two congestion profiles: which profile each device is in, and the plan
each part of the fabric is judged against.

During a transition (qos.yaml `transition_from`) a device is in the profile the fabric moves
to, in the one it leaves, or in neither (half changed). A device is in a profile when the
settings that tell the profiles apart (each port's and NIC's PFC priorities, a NIC's DCQCN)
are that profile's, as the plan of each profile has them.
"""

from __future__ import annotations

from enum import StrEnum

from flatfab.model.state import (
    DeviceState,
    FabricState,
    Interface,
    LosslessProfile,
    NicQos,
    PortQos,
    Role,
    SourceQos,
    Transition,
)

# lower tiers first: a path between two hosts climbs and descends these
TIER = {Role.HOST: 0, Role.LEAF: 1, Role.SPINE: 2, Role.SUPERSPINE: 3}


class Side(StrEnum):
    TARGET = "target"  # the profile qos.yaml sets
    SOURCE = "source"  # the profile it moves from
    NEITHER = "neither"  # half changed: some settings of each, or of none


Signature = dict[str, tuple[object, ...]]


def _port_sign(qos: PortQos) -> tuple[object, ...] | None:
    return None if "pfc" in qos.unknown else (tuple(sorted(qos.pfc)),)


def _nic_sign(nic: NicQos) -> tuple[object, ...] | None:
    if {"pfc", "dcqcn"} & nic.unknown.keys():
        return None
    return tuple(sorted(nic.pfc)), nic.dcqcn


def _signature(ports: dict[str, PortQos], nics: dict[str, NicQos],
               only: set[str] | None = None) -> Signature:
    out: Signature = {}
    for name, qos in ports.items():
        sign = _port_sign(qos)
        if sign is not None and (only is None or name in only):
            out[name] = sign
    for name, nic in nics.items():
        sign = _nic_sign(nic)
        if sign is not None and (only is None or name in only):
            out[name] = sign
    return out


def _observed(device: DeviceState) -> tuple[dict[str, PortQos], dict[str, NicQos]]:
    ports = {n: i.qos for n, i in device.interfaces.items() if i.qos is not None}
    nics = {n: i.nic for n, i in device.interfaces.items() if i.nic is not None}
    return ports, nics


def _seen(observed: DeviceState, planned: DeviceState) -> Signature:
    """The signature of a read device's planned ports and NICs (not its VRF sub-interfaces,
    which carry no PFC of their own)."""
    ports, nics = _observed(observed)
    wanted = {n for n, i in planned.interfaces.items() if i.qos is not None or i.nic is not None}
    return _signature(ports, nics, only=wanted)


def side_of(observed: DeviceState, planned: DeviceState, source: SourceQos) -> Side:
    """Which profile a read device is in (settings it did not state do not count)."""
    seen = _seen(observed, planned)
    read = set(seen)
    target = _signature(*_observed(planned), only=read)
    if seen == target:
        return Side.TARGET
    if seen == _signature(source.ports, source.nics, only=read):
        return Side.SOURCE
    return Side.NEITHER


def differing(observed: DeviceState, planned: DeviceState, source: SourceQos) -> list[str]:
    """The ports and NICs of a half-changed device that are not yet in the profile the fabric
    moves to (names, sorted)."""
    seen = _seen(observed, planned)
    target = _signature(*_observed(planned))
    return sorted(name for name, sign in seen.items() if sign != target.get(name))


def sides(state: FabricState, plan: FabricState) -> dict[str, Side]:
    """The side of every read device the plan's transition covers."""
    transition = plan.transition
    if transition is None:
        return {}
    out: dict[str, Side] = {}
    for name, device in state.devices.items():
        planned = plan.devices.get(name)
        source = transition.devices.get(name)
        if device.reachable and planned is not None and source is not None:
            out[name] = side_of(device, planned, source)
    return out


def _with_source(device: DeviceState, source: SourceQos) -> DeviceState:
    interfaces: dict[str, Interface] = {}
    for name, iface in device.interfaces.items():
        update = ({"qos": source.ports[name]} if name in source.ports
                  else {"nic": source.nics[name]} if name in source.nics else None)
        interfaces[name] = iface.model_copy(update=update) if update else iface
    return device.model_copy(update={"interfaces": interfaces, "qos": source.qos})


def part(state: FabricState, names: set[str]) -> FabricState:
    """The state (or plan) of these devices only, and the links between them."""
    return state.model_copy(update={
        "devices": {n: d for n, d in state.devices.items() if n in names},
        "links": [k for k in state.links if k.a.device in names and k.b.device in names],
        "transition": None})


def source_plan(plan: FabricState, transition: Transition, names: set[str]) -> FabricState:
    """The plan of these devices in the profile the fabric leaves."""
    devices = {n: _with_source(d, transition.devices[n]) if n in transition.devices else d
               for n, d in plan.devices.items() if n in names}
    source: LosslessProfile = transition.profile
    return part(plan, names).model_copy(update={"devices": devices, "lossless": source})
