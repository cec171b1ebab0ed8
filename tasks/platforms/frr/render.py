"""DeviceState -> frr switch config: the links section and frr.conf."""

from __future__ import annotations

from tasks.model.state import DEFAULT_VRF, DeviceState, IfKind, Interface
from tasks.platforms import configdb
from tasks.platforms.frr.kernel_qos import KERNEL_TABLE, kernel_rows
from tasks.platforms.frr.links import LinkSpec, format_links, join_sections
from tasks.platforms.names import sort_interfaces
from tasks.platforms.templating import environment

LINK_KINDS = (IfKind.FABRIC, IfKind.HOST_PORT, IfKind.BRIDGE)


def link_specs(device: DeviceState) -> dict[str, LinkSpec]:
    return {
        i.name: LinkSpec(name=i.name, vrf=i.vrf, bridge=i.kind is IfKind.BRIDGE, master=i.bridge,
                         mtu=i.mtu or 1500, up=bool(i.up))
        for i in device.interfaces.values() if i.kind in LINK_KINDS
    }


def _frr_order(interfaces: list[Interface]) -> list[Interface]:
    """FRR lists interfaces per VRF, VRFs by name ('default' among them), then by name."""
    vrfs = sorted({i.vrf for i in interfaces})
    ordered: list[Interface] = []
    for vrf in vrfs:
        by_name = {i.name: i for i in interfaces if i.vrf == vrf}
        ordered += [by_name[n] for n in sort_interfaces(list(by_name))]
    return ordered


def render_frr(device: DeviceState) -> str:
    interfaces = _frr_order([i for i in device.interfaces.values() if i.addresses])
    bgp = sorted(device.bgp.values(), key=lambda b: (b.vrf != DEFAULT_VRF, b.vrf))
    template = environment("frr").get_template("frr.conf.j2")
    return template.render(device=device, vrfs=sorted(device.vrfs), interfaces=interfaces,
                           bgp_instances=[{**b.model_dump(), "peers": list(b.peers.values())}
                                          for b in bgp])


def render_qos(device: DeviceState) -> str | None:
    """The virtual ASIC (CONFIG_DB tables) plus the kernel queue rows, as canonical JSON."""
    if device.qos is None:
        return None
    db = configdb.to_config_db(device)
    db[KERNEL_TABLE] = kernel_rows(device, *configdb.queue_limits(device.qos))
    return configdb.dump(db)


def render(device: DeviceState) -> str:
    return join_sections(format_links(link_specs(device)), render_frr(device), render_qos(device))
