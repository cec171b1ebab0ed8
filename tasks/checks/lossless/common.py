"""What the lossless checks share: where lossless state lives and how a finding names it.

Checks run on `ctx.state` (the plan statically, observed state live) and measure it against
the fabric-wide profile of the plan (`LosslessProfile`). Switch ports carry `PortQos`, host
NICs `NicQos`. The plan shares one PortQos between identical ports, so per-port work that
depends only on shared objects is done once per object (`PerObject`), keeping every check
O(devices + ports + links).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Generic, NamedTuple, ParamSpec, TypeVar

from flatfab.checks.base import Check, CheckContext, Finding
from flatfab.model.state import (
    DeviceQos,
    DeviceState,
    Endpoint,
    FabricState,
    Interface,
    Link,
    LosslessProfile,
    NicQos,
    PortQos,
    Role,
)

P = ParamSpec("P")
T = TypeVar("T")


def profile(ctx: CheckContext) -> LosslessProfile | None:
    """The fabric-wide lossless promise (collected state carries none: it is the plan's)."""
    return ctx.plan.lossless or ctx.state.lossless


def fmt_set(values: Iterable[int]) -> str:
    """A priority or TC set as text: "3", "3,4", "none"."""
    return ",".join(str(v) for v in sorted(set(values))) or "none"


def egress_lossless(dev: DeviceQos | None, profile_name: str) -> bool:
    """A queue's egress profile draws on an egress pool that is lossless (judged by what
    the profile and pool are, not by what they are called)."""
    item = dev.profiles.get(profile_name) if dev is not None else None
    pool = dev.pools.get(item.pool) if dev is not None and item is not None else None
    return pool is not None and pool.direction == "egress" and pool.lossless


def at(values: list[int], index: int) -> int | None:
    """values[index], None when the table is too short (a partly read map)."""
    return values[index] if 0 <= index < len(values) else None


def device_virtual(device: DeviceState) -> bool:
    """Whether the device's QoS state is the lab's virtual ASIC, not hardware."""
    return device.qos is not None and device.qos.virtual


class Port(NamedTuple):
    """A switch port that carries lossless state (a tuple: there are ~10^5 of them)."""

    device: DeviceState
    iface: Interface
    qos: PortQos

    @property
    def name(self) -> str:
        return f"{self.device.name}:{self.iface.name}"

    @property
    def virtual(self) -> bool:
        return device_virtual(self.device)


class Nic(NamedTuple):
    """A host data NIC with lossless settings."""

    device: DeviceState
    iface: Interface
    nic: NicQos

    @property
    def name(self) -> str:
        return f"{self.device.name}:{self.iface.name}"


@dataclass(frozen=True)
class Issue:
    """One thing wrong with a port, before it is attached to the port(s) that show it."""

    text: str
    expected: str
    actual: str
    kernel: bool = False  # enforced by the kernel in the lab (the DSCP map): never virtual


def switch_ports(ctx: CheckContext, *, subinterfaces: bool = False) -> Iterator[Port]:
    """Every readable switch port with lossless state; VRF sub-interfaces only when asked
    (collected state gives them their own copy of the port's state, with their own DSCP map)."""
    readable = ctx.readable
    for name in ctx.state.devices:
        device = readable.get(name)
        if device is None or device.role is Role.HOST:
            continue
        for iface in device.interfaces.values():
            if iface.qos is not None and (subinterfaces or iface.parent is None):
                yield Port(device, iface, iface.qos)


class PortGroup(NamedTuple):
    """Ports of one device that share one PortQos object (all of a kind, in the plan)."""

    device: DeviceState
    qos: PortQos
    ports: list[Port]


def port_groups(ctx: CheckContext, *, subinterfaces: bool = False) -> list[PortGroup]:
    """switch_ports() grouped by device and shared state, built once per context.

    A check that depends only on the shared state judges each group once: a 1,000-switch
    plan has ~10^5 ports but a few groups per switch.
    """
    both: tuple[list[PortGroup], list[PortGroup]] | None = ctx.memo.get("port_groups")
    if both is None:
        both = ctx.memo["port_groups"] = _port_groups(ctx)
    return both[subinterfaces]


def _port_groups(ctx: CheckContext) -> tuple[list[PortGroup], list[PortGroup]]:
    """(physical ports only, with VRF sub-interfaces), in one pass over the ports."""
    physical: dict[tuple[int, int], PortGroup] = {}
    every: dict[tuple[int, int], PortGroup] = {}
    for port in switch_ports(ctx, subinterfaces=True):
        key = (id(port.device), id(port.qos))
        group = every.get(key)
        if group is None:
            group = every[key] = PortGroup(port.device, port.qos, [])
        group.ports.append(port)
        if port.iface.parent is None:
            group = physical.get(key)
            if group is None:
                group = physical[key] = PortGroup(port.device, port.qos, [])
            group.ports.append(port)
    return list(physical.values()), list(every.values())


def grouped_findings(item: Check, ctx: CheckContext,
                     issues_of: Callable[[PortGroup], list[Issue]]) -> Iterator[Finding]:
    """Findings for every port whose shared state has issues, judged once per group."""
    for group in port_groups(ctx):
        issues = issues_of(group)
        if issues:
            for port in group.ports:
                yield from port_findings(item, port, issues)


def planned_port_findings(item: Check, ctx: CheckContext,
                          issues_of: Callable[[PortQos, PortQos], list[Issue]]
                          ) -> Iterator[Finding]:
    """Findings for every physical switch port judged against its planned port:
    issues_of(seen, planned) once per distinct pair of shared PortQos objects. A port whose
    device or interface the plan does not have, or plans without QoS, is not judged."""
    cached = PerObject(issues_of)
    plan_devices = ctx.plan.devices
    for group in port_groups(ctx):
        planned_device = plan_devices.get(group.device.name)
        if planned_device is None:
            continue
        for port in group.ports:
            planned_iface = planned_device.interfaces.get(port.iface.name)
            if planned_iface is None or planned_iface.qos is None:
                continue
            yield from port_findings(item, port, cached(group.qos, planned_iface.qos))


def lossless_host(_plan: FabricState, host: DeviceState) -> bool:
    """A host with a NIC the plan gives lossless settings (what the NIC checks judge)."""
    return any(iface.nic is not None for iface in host.interfaces.values())


def nics(ctx: CheckContext) -> list[Nic]:
    """Every readable host NIC with lossless settings (listed once per context)."""
    found: list[Nic] | None = ctx.memo.get("nics")
    if found is None:
        readable = ctx.readable
        found = ctx.memo["nics"] = [
            Nic(device, iface, iface.nic) for name in ctx.state.devices
            if (device := readable.get(name)) is not None and device.role is Role.HOST
            for iface in device.interfaces.values() if iface.nic is not None]
    return found


def physical_links(ctx: CheckContext) -> list[Link]:
    """The subject's links that are not VRF sub-links (listed once per context)."""
    found: list[Link] | None = ctx.memo.get("physical_links")
    if found is None:
        found = ctx.memo["physical_links"] = [link for link in ctx.state.links
                                              if link.parent is None]
    return found


def interface(ctx: CheckContext, end: Endpoint) -> tuple[DeviceState, Interface] | None:
    """The subject's device and interface at one end of a link (None: unreadable/missing)."""
    device = ctx.readable.get(end.device)
    iface = device.interfaces.get(end.port) if device is not None else None
    return None if device is None or iface is None else (device, iface)


def planned(ctx: CheckContext, end: Endpoint) -> Interface | None:
    device = ctx.plan.devices.get(end.device)
    return device.interfaces.get(end.port) if device is not None else None


def port_findings(item: Check, port: Port, issues: Iterable[Issue],
                  link: str | None = None) -> Iterator[Finding]:
    for issue in issues:
        yield item.finding(port.device.name, f"{port.name} {issue.text}", port=port.iface.name,
                           link=link, vrf=port.iface.vrf, expected=issue.expected,
                           actual=issue.actual, virtual=port.virtual and not issue.kernel)


def nic_findings(item: Check, nic: Nic, issues: Iterable[Issue],
                 link: str | None = None) -> Iterator[Finding]:
    for issue in issues:
        yield item.finding(nic.device.name, f"{nic.name} {issue.text}", port=nic.iface.name,
                           link=link, expected=issue.expected, actual=issue.actual,
                           virtual=nic.nic.virtual and not issue.kernel)


class PerObject(Generic[P, T]):
    """A function memoised on the identity of its arguments, for one check run.

    The plan shares PortQos, QosMaps and DeviceQos objects between many ports, so a result
    that depends only on them is computed once per distinct object, not once per port. The
    arguments are kept alive with the result, so an id is never reused while cached.
    """

    def __init__(self, func: Callable[P, T]) -> None:
        self._func = func
        self._seen: dict[tuple[int, ...], tuple[tuple[object, ...], T]] = {}

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> T:
        objects = (*args, *kwargs.values()) if kwargs else args
        key = tuple(map(id, objects))
        hit = self._seen.get(key)
        if hit is None:
            hit = self._seen[key] = (objects, self._func(*args, **kwargs))
        return hit[1]
