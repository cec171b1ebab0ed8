"""DeviceState of a host -> linux_host config text."""

from __future__ import annotations

from tasks.model.state import DeviceState, IfKind
from tasks.platforms.linux_host.config import HostConfig, HostRoute, Nic, format_config
from tasks.platforms.linux_host.nic_qos import from_model


def host_config(device: DeviceState) -> HostConfig:
    nics = {i.name: Nic(name=i.name, mtu=i.mtu or 1500, up=bool(i.up),
                        addresses=tuple(i.addresses))
            for i in device.interfaces.values() if i.kind is IfKind.NIC}
    routes = tuple(HostRoute(prefix=r.prefix, via=r.via or "", nic=r.interface)
                   for r in device.static_routes)
    qos = {i.name: from_model(i.nic) for i in device.interfaces.values()
           if i.kind is IfKind.NIC and i.nic is not None}
    return HostConfig(nics=nics, routes=routes, qos=qos)


def render(device: DeviceState) -> str:
    return format_config(host_config(device))
