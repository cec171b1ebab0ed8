"""DeviceState of a host -> linux_host config text."""

from __future__ import annotations

from flatfab.model.state import DeviceState, IfKind
from flatfab.platforms.linux_host.config import HostConfig, HostRoute, HostRule, Nic, format_config
from flatfab.platforms.linux_host.nic_qos import from_model


def host_config(device: DeviceState) -> HostConfig:
    nics = {i.name: Nic(name=i.name, mtu=i.mtu or 1500, up=bool(i.up),
                        addresses=tuple(i.addresses))
            for i in device.interfaces.values() if i.kind is IfKind.NIC}
    # a multi-NIC server's per-NIC tables (connected route and default route, each with the
    # NIC's address as source) and the rules that choose them (ip-route(8), ip-rule(8))
    routes = tuple(HostRoute(prefix=r.prefix, via=r.via, nic=r.interface, table=r.table,
                             source=r.source)
                   for r in device.static_routes)
    rules = tuple(HostRule(priority=r.priority, source=r.source, table=r.table)
                  for r in device.rules)
    qos = {i.name: from_model(i.nic) for i in device.interfaces.values()
           if i.kind is IfKind.NIC and i.nic is not None}
    return HostConfig(nics=nics, routes=routes, qos=qos, rules=rules,
                      sysctls=dict(device.sysctls))


def render(device: DeviceState) -> str:
    return format_config(host_config(device))
