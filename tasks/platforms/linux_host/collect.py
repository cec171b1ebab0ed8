"""Read a GPU host into observed DeviceState through its NAPALM driver (read-only)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from flatfab.model.build import clone
from flatfab.model.physical import PortPhysical
from flatfab.model.state import DeviceState, IfKind, Interface, PolicyRule, Probe, StaticRoute
from flatfab.platforms import lab_phy
from flatfab.platforms.base import DeviceDriver
from flatfab.platforms.linux_host import config as cfg
from flatfab.platforms.linux_host import nic_qos
from flatfab.platforms.linux_host.rdma_state import host_rdma
from flatfab.platforms.readback import read_errors

# (address, ICMP payload bytes, don't fragment[, source address])
ProbeTarget = tuple[str, int, bool] | tuple[str, int, bool, str | None]


@runtime_checkable
class HostReader(Protocol):
    """What the linux_host driver reads and sends (beyond NAPALM's base API)."""

    def read_host_state(self) -> cfg.HostConfig: ...
    def probe(self, targets: Sequence[ProbeTarget], count: int = 2,
              wait: float = 1.0) -> list[dict[str, Any]]: ...
    def send_roce(self, address: str, sport_base: int, flows: int, data_packets: int,
                  size: int = 1024, source: str | None = None) -> int: ...
    def read_nic_counters(self) -> dict[str, dict[str, int]]: ...
    def get_physical(self) -> dict[str, Any]: ...


def reader(driver: DeviceDriver) -> HostReader:
    if not isinstance(driver, HostReader):
        raise TypeError(f"the linux_host platform needs its own driver, not "
                        f"{type(driver).__name__}")
    return driver


def collect(driver: HostReader, planned: DeviceState, probes: list[Probe]) -> DeviceState:
    state = driver.read_host_state()
    device = DeviceState(name=planned.name, role=planned.role, platform=planned.platform,
                         tenant=planned.tenant)
    for name, nic in sorted(state.nics.items()):
        kind = planned.interfaces[name].kind if name in planned.interfaces else IfKind.OTHER
        device.interfaces[name] = Interface(name=name, kind=kind, mtu=nic.mtu, up=nic.up,
                                            addresses=list(nic.addresses),
                                            peer=planned.interfaces[name].peer
                                            if name in planned.interfaces else None)
    # in the plan's order where the plan has them (so a clean host compares equal), then
    # what the plan does not have, sorted
    device.static_routes = _planned_first(
        [StaticRoute(prefix=r.prefix, via=r.via, interface=r.nic, table=r.table,
                     source=r.source) for r in state.routes], planned.static_routes)
    device.rules = _planned_first(
        [PolicyRule(priority=r.priority, source=r.source, table=r.table) for r in state.rules],
        planned.rules)
    # the kernel's values of the keys the plan has and of those flatfab manages (so a key
    # planned but never set shows its real value, and a one-NIC host has none); a key the
    # kernel shows no value for is named, never given a default
    keys = sorted({*planned.sysctls, *state.sysctls})
    device.sysctls = {key: state.sysctl_values[key] for key in keys
                      if key in state.sysctl_values}
    device.errors += [f"sysctl {key}: no value under /proc/sys/net/ipv4/conf (no such NIC?)"
                      for key in keys if key not in state.sysctl_values
                      and f"sysctl {key}" not in state.unread]
    # what the host showed that flatfab could not read: named, and not judged
    device.errors += [f"{what}: {why}" for what, why in sorted(state.unread.items())]
    if getattr(driver, "nic_backend", "lab") == "connectx" and hasattr(driver, "read_connectx"):
        # the hardware's settings, not flatfab's stored qos.conf
        seen, unread = driver.read_connectx()
        device.errors += [f"{what}: {why}" for what, why in sorted(unread.items())]
        for name, nic in seen.items():
            if name in device.interfaces:
                device.interfaces[name].nic = nic
        state = cfg.HostConfig(nics=state.nics, routes=state.routes, qos={},
                               rules=state.rules, sysctls=state.sysctls, unread=state.unread,
                               sysctl_values=state.sysctl_values)
    for name, settings in state.qos.items():
        if f"qos {name}" in state.unread:
            continue  # its marking could not be read: no NIC settings to judge
        if name in device.interfaces:  # virtual NIC state, ToS and CNP DSCP from nftables
            device.interfaces[name].nic = nic_qos.to_model(settings, virtual=True)
    if planned.rdma is not None and hasattr(driver, "read_rdma"):
        # a GPU server whose nccl.conf flatfab manages: the file in use and its RDMA devices
        device.rdma = host_rdma(driver.read_rdma())
    if probes:
        # a probe from a NIC's address (a multi-NIC server) reports the NIC it left through
        targets: list[ProbeTarget] = [
            (p.address, p.size, p.dont_fragment, p.source) if p.source else
            (p.address, p.size, p.dont_fragment) for p in probes]
        results = driver.probe(targets)
        # copies, not model_copy: a copy's own set of fields set is most of a probe's bytes
        device.probes = [clone(p, replied=bool(r["replied"]), detail=str(r["detail"]),
                               left_by=r.get("left_by"))
                         for p, r in zip(probes, results, strict=True)]
    return device


def physical(driver: HostReader, planned: DeviceState) -> dict[str, PortPhysical]:
    """Each cabled NIC's physical layer: ethtool and sysfs on ConnectX, the lab's phy.json
    in the lab."""
    return lab_phy.read_cabled(driver.get_physical, planned, read_errors())


T = TypeVar("T", StaticRoute, PolicyRule)


def _planned_first(seen: list[T], planned: list[T]) -> list[T]:
    order = {item.model_dump_json(): index for index, item in enumerate(planned)}
    return sorted(seen, key=lambda item: (order.get(item.model_dump_json(), len(order)),
                                          item.model_dump_json()))
