"""Read a GPU host into observed DeviceState through its NAPALM driver (read-only)."""

from __future__ import annotations

from typing import Any

from tasks.model.state import DeviceState, IfKind, Interface, Probe, StaticRoute
from tasks.platforms.linux_host import nic_qos


def collect(driver: Any, planned: DeviceState, probes: list[Probe]) -> DeviceState:
    state = driver.read_host_state()
    device = DeviceState(name=planned.name, role=planned.role, platform=planned.platform,
                         tenant=planned.tenant)
    for name, nic in sorted(state.nics.items()):
        kind = planned.interfaces[name].kind if name in planned.interfaces else IfKind.OTHER
        device.interfaces[name] = Interface(name=name, kind=kind, mtu=nic.mtu, up=nic.up,
                                            addresses=list(nic.addresses),
                                            peer=planned.interfaces[name].peer
                                            if name in planned.interfaces else None)
    device.static_routes = [StaticRoute(prefix=r.prefix, via=r.via, interface=r.nic)
                            for r in state.routes]
    for name, settings in state.qos.items():
        if name in device.interfaces:  # virtual NIC state, ToS and CNP DSCP from nftables
            device.interfaces[name].nic = nic_qos.to_model(settings, virtual=True)
    if probes:
        results = driver.probe([(p.address, p.size, p.dont_fragment) for p in probes])
        device.probes = [p.model_copy(update={"replied": r["replied"], "detail": r["detail"]})
                         for p, r in zip(probes, results, strict=True)]
    return device
