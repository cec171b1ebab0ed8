"""DeviceState of a host -> linux_host config text."""

from __future__ import annotations

from flatfab.cluster.nccl import QPS, SOCKET_IFNAME, TC, data_nics
from flatfab.model.state import DeviceState, IfKind
from flatfab.platforms.linux_host.config import HostConfig, HostRoute, HostRule, Nic, format_config
from flatfab.platforms.linux_host.nccl_conf import NcclConfig
from flatfab.platforms.linux_host.nic_qos import from_model


def nccl_config(device: DeviceState) -> NcclConfig | None:
    """A GPU server's nccl.conf, where the plan has flatfab manage it: NCCL_IB_TC the NICs'
    RoCE ToS, NCCL_IB_QPS_PER_CONNECTION their queue pairs (NCCL's default 1 is not
    written), NCCL_SOCKET_IFNAME the bootstrap interface (`=`: that name exactly), and the
    data NICs in rail order for NCCL_IB_HCA. NCCL takes one traffic class and one queue
    pair count for every HCA: the rail-1 NIC's are written, and the static host.nccl check
    names NICs that disagree."""
    if device.rdma is None:
        return None
    nics = [n for n in data_nics(device) if n.nic is not None]
    if not nics:
        return None
    first = nics[0].nic
    assert first is not None  # filtered above
    variables = {TC: str(first.roce_tos)}
    if first.queue_pairs > 1:
        variables[QPS] = str(first.queue_pairs)
    if device.rdma.bootstrap is not None:
        variables[SOCKET_IFNAME] = "=" + device.rdma.bootstrap
    return NcclConfig(hca=tuple(n.name for n in nics),
                      variables=tuple(sorted(variables.items())))


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
                      sysctls=dict(device.sysctls), nccl=nccl_config(device))


def render(device: DeviceState) -> str:
    return format_config(host_config(device))
