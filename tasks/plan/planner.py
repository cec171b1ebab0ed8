"""Intent -> planned FabricState. Pure and deterministic: no I/O, no clocks, no randomness."""

from __future__ import annotations

from dataclasses import dataclass, field

from tasks.gcpause import gc_paused
from tasks.intent.models import BgpMode, Intent, Switch
from tasks.intent.semantics import HostSlot, expand_hosts, tenant_members
from tasks.model.build import cloner
from tasks.model.state import (
    DEFAULT_VRF,
    BgpInstance,
    BgpPeer,
    DeviceState,
    Endpoint,
    FabricState,
    IfKind,
    Interface,
    Link,
    LinkKind,
    Role,
    Source,
    StaticRoute,
    TenantState,
)
from tasks.plan import allocate
from tasks.plan.lossless import plan_lossless
from tasks.platforms.base import InterfaceNames
from tasks.platforms.registry import get as get_platform

# validated prototypes of the objects the fabric loop makes by the hundred thousand
_ENDPOINT = Endpoint(device="prototype", port="prototype")
_FABRIC_PORT = Interface(name="prototype", kind=IfKind.FABRIC, up=True)
_FABRIC_LINK = Link(id="prototype", kind=LinkKind.FABRIC, a=_ENDPOINT, b=_ENDPOINT,
                    link_class="prototype", speed_mbps=1, cable_m=1, mtu=1500)
_PEER = BgpPeer(key="prototype")
_endpoint = cloner(_ENDPOINT)
_fabric_port = cloner(_FABRIC_PORT)
_fabric_link = cloner(_FABRIC_LINK)
_peer_of = cloner(_PEER)
_host_port = cloner(Interface(name="prototype", kind=IfKind.HOST_PORT, up=True))
_nic = cloner(Interface(name="prototype", kind=IfKind.NIC, up=True))
_host_link = cloner(Link(id="prototype", kind=LinkKind.HOST, a=_ENDPOINT, b=_ENDPOINT,
                         link_class="prototype", speed_mbps=1, cable_m=1, mtu=1500))


def names_of(platform: str) -> InterfaceNames:
    """How a device's platform spells the plan's interface roles (port, sub-port, loopback,
    VRF gateway); the planner itself knows no platform's vocabulary."""
    return get_platform(platform).names


@dataclass
class _Tenancy:
    """Which VRF each host is in and which VRFs each leaf carries."""

    host_vrf: dict[str, str] = field(default_factory=dict)
    vrf_ids: dict[str, int] = field(default_factory=dict)
    leaf_vrfs: dict[str, list[str]] = field(default_factory=dict)  # tenant VRFs, ordered by id


def _tenancy(intent: Intent, hosts: list[HostSlot]) -> _Tenancy:
    members = tenant_members(intent, hosts)
    out = _Tenancy(vrf_ids={t.name: t.vrf_id for t in intent.tenants.tenants})
    for tenant, names in members.items():
        for name in names:
            out.host_vrf[name] = tenant
    for host in hosts:
        vrf = out.host_vrf.get(host.name)
        if vrf is not None and vrf not in out.leaf_vrfs.setdefault(host.leaf, []):
            out.leaf_vrfs[host.leaf].append(vrf)
    for leaf, vrfs in out.leaf_vrfs.items():
        out.leaf_vrfs[leaf] = sorted(vrfs, key=out.vrf_ids.__getitem__)
    return out


def plan(intent: Intent) -> FabricState:
    """Compute the desired state of every device and link of the fabric."""
    with gc_paused(long_lived=True):
        return _plan(intent)


def _plan(intent: Intent) -> FabricState:
    fabric = intent.fabric
    underlay = fabric.underlay
    numbered = underlay.mode is BgpMode.NUMBERED
    spines = sorted(fabric.spines, key=lambda s: s.stable_id)
    leaves = sorted(fabric.leaves, key=lambda s: s.stable_id)
    spine_by_name = {s.name: s for s in spines}
    # in stable-id order, so the order devices are written in the YAML changes nothing
    leaf_ids = {leaf.name: leaf.stable_id for leaf in leaves}
    hosts = sorted(expand_hosts(intent), key=lambda h: (leaf_ids[h.leaf], h.port))
    tenancy = _tenancy(intent, hosts)
    tenants = {t.name: t for t in intent.tenants.tenants}
    all_vrfs = sorted(tenancy.vrf_ids, key=tenancy.vrf_ids.__getitem__)

    bgp_options = {"maximum_paths": underlay.maximum_paths,
                   "keepalive": underlay.timers.keepalive, "hold": underlay.timers.hold}
    devices: dict[str, DeviceState] = {}
    for spine in spines:
        devices[spine.name] = _switch(spine, Role.SPINE, underlay.spine_asn,
                                      _pinned(spine.loopback)
                                      or allocate.spine_loopback(underlay, spine.stable_id),
                                      fabric.platform, bgp_options)
    for leaf in leaves:
        devices[leaf.name] = _switch(leaf, Role.LEAF,
                                     leaf.asn or allocate.leaf_asn(underlay, leaf.stable_id),
                                     _pinned(leaf.loopback)
                                     or allocate.leaf_loopback(underlay, leaf.stable_id),
                                     fabric.platform, bgp_options)

    # cabling: explicit links, else full mesh with link class "fabric"
    if fabric.links is not None:
        cabling = sorted(((spine_by_name[link.spine], leaf, link.link_class)
                          for link in fabric.links for leaf in leaves if leaf.name == link.leaf),
                         key=lambda t: (t[1].stable_id, t[0].stable_id))
    else:
        cabling = [(spine, leaf, "fabric") for leaf in leaves for spine in spines]

    # every spine names its port to leaf N alike, and every leaf its uplink to spine M: the
    # names of a port and its VRF sub-ports are made once per (platform, port number)
    port_names: dict[tuple[str, int, tuple[int, ...]], tuple[str, ...]] = {}

    def ports_of(platform: str, number: int, vrf_ids: tuple[int, ...]) -> tuple[str, ...]:
        key = (platform, number, vrf_ids)
        found = port_names.get(key)
        if found is None:
            names = names_of(platform)
            port = names.physical(number)
            found = port_names[key] = (port, *(names.subinterface(port, v) for v in vrf_ids))
        return found

    # the default VRF, then every tenant VRF the leaf carries, as VRF-lite subinterfaces
    carried_by: dict[str, list[tuple[str, int | None, str | None]]] = {
        leaf.name: [(DEFAULT_VRF, None, underlay.p2p_pool)]
        + [(vrf, tenancy.vrf_ids[vrf], tenants[vrf].p2p_pool)
           for vrf in tenancy.leaf_vrfs.get(leaf.name, [])]
        for leaf in leaves}
    sub_ids = {name: tuple(v for _, v, _ in carried if v is not None)
               for name, carried in carried_by.items()}

    links: list[Link] = []
    for spine, leaf, class_name in cabling:
        link_class = fabric.link_classes[class_name]
        mtu, speed, cable = link_class.mtu, link_class.speed_mbps, link_class.cable_m
        spine_dev, leaf_dev = devices[spine.name], devices[leaf.name]
        vrf_ids = sub_ids[leaf.name]
        spine_ports = ports_of(spine_dev.platform,
                               fabric.ports.spine_downlink_base + leaf.stable_id, vrf_ids)
        leaf_ports = ports_of(leaf_dev.platform, fabric.ports.leaf_uplink_base + spine.stable_id,
                              vrf_ids)
        spine_port, leaf_port = spine_ports[0], leaf_ports[0]
        parent_id: str | None = None
        for (vrf, vrf_id, pool), s_port, l_port in zip(carried_by[leaf.name], spine_ports,
                                                      leaf_ports, strict=True):
            s_addr: list[str] = []
            l_addr: list[str] = []
            if numbered and pool is not None:
                s_ip, l_ip = allocate.p2p_pair(pool, underlay.max_spines, leaf.stable_id,
                                               spine.stable_id)
                s_addr, l_addr = [s_ip], [l_ip]
            parent_s = None if vrf_id is None else spine_port
            parent_l = None if vrf_id is None else leaf_port
            # one immutable Endpoint per end, shared by the link and the far interface
            leaf_end = _endpoint(device=leaf.name, port=l_port)
            spine_end = _endpoint(device=spine.name, port=s_port)
            spine_dev.interfaces[s_port] = _fabric_port(
                name=s_port, vrf=vrf, mtu=mtu, speed_mbps=speed, addresses=s_addr,
                parent=parent_s, peer=leaf_end)
            leaf_dev.interfaces[l_port] = _fabric_port(
                name=l_port, vrf=vrf, mtu=mtu, speed_mbps=speed, addresses=l_addr,
                parent=parent_l, peer=spine_end)
            link = _fabric_link(id=f"{leaf.name}:{l_port}--{spine.name}:{s_port}",
                                a=leaf_end, b=spine_end, vrf=vrf, parent=parent_id,
                                link_class=class_name, speed_mbps=speed, cable_m=cable, mtu=mtu)
            links.append(link)
            parent_id = parent_id or link.id
            _peer(spine_dev, leaf_dev, vrf, s_port, l_addr, leaf_dev.asn)
            _peer(leaf_dev, spine_dev, vrf, l_port, s_addr, spine_dev.asn)
            if vrf_id is not None:
                spine_dev.vrfs[vrf] = vrf_id
                leaf_dev.vrfs[vrf] = vrf_id

    host_class_name = intent.hosts.defaults.link_class
    host_class = fabric.link_classes[host_class_name]
    leaf_by_name = {leaf.name: leaf for leaf in leaves}
    subnets: dict[str, dict[str, str]] = {vrf: {} for vrf in all_vrfs}
    for host in sorted(hosts, key=lambda h: (leaf_by_name[h.leaf].stable_id, h.port)):
        leaf = leaf_by_name[host.leaf]
        leaf_dev = devices[leaf.name]
        vrf = tenancy.host_vrf.get(host.name, DEFAULT_VRF)
        vrf_id = tenancy.vrf_ids.get(vrf)
        if vrf_id is None:
            prefixes: tuple[str, ...] = (intent.hosts.host_pool or "",)
            length = intent.hosts.subnet_length
        else:
            prefixes, length = tuple(tenants[vrf].prefixes), tenants[vrf].subnet_length
        subnet = allocate.leaf_subnet(prefixes, length, leaf.stable_id)
        if vrf in subnets:
            subnets[vrf][leaf.name] = str(subnet)
        leaf_names = names_of(leaf_dev.platform)
        bridge = leaf_names.gateway(vrf_id)
        leaf_port = leaf_names.physical(fabric.ports.leaf_host_base + host.port)
        if bridge not in leaf_dev.interfaces:
            leaf_dev.interfaces[bridge] = Interface(
                name=bridge, kind=IfKind.BRIDGE, vrf=vrf, mtu=host_class.mtu, up=True,
                addresses=[allocate.gateway(subnet)])
            leaf_dev.bgp[vrf].networks.append(str(subnet))
        host_end = _endpoint(device=host.name, port=host.nic)
        leaf_end = _endpoint(device=leaf.name, port=leaf_port)
        leaf_dev.interfaces[leaf_port] = _host_port(
            name=leaf_port, vrf=vrf, mtu=host_class.mtu, bridge=bridge,
            speed_mbps=host_class.speed_mbps, peer=host_end, addresses=[])
        gw = allocate.gateway(subnet).split("/")[0]
        devices[host.name] = DeviceState(
            name=host.name, role=Role.HOST, platform=intent.hosts.defaults.platform,
            tenant=vrf if vrf_id is not None else None,
            interfaces={host.nic: _nic(
                name=host.nic, mtu=host.mtu, addresses=[allocate.host_address(subnet, host.port)],
                speed_mbps=host_class.speed_mbps, peer=leaf_end)},
            static_routes=[StaticRoute(prefix=p, via=gw, interface=host.nic)
                           for p in intent.hosts.defaults.routes])
        links.append(_host_link(
            id=f"{host.name}:{host.nic}--{leaf.name}:{leaf_port}", a=host_end, b=leaf_end,
            vrf=vrf, link_class=host_class_name, speed_mbps=host_class.speed_mbps,
            cable_m=host_class.cable_m, mtu=host_class.mtu))

    state = FabricState(
        fabric=fabric.name, source=Source.PLANNED, roce_mtu=fabric.roce_mtu, devices=devices,
        links=links,
        tenants={vrf: TenantState(name=vrf, vrf_id=tenancy.vrf_ids[vrf],
                                  members=[h.name for h in hosts if tenancy.host_vrf.get(h.name)
                                           == vrf],
                                  subnets=subnets[vrf])
                 for vrf in all_vrfs})
    plan_lossless(intent.qos, state)
    return state


def _pinned(loopback: str | None) -> str | None:
    return None if loopback is None else f"{loopback}/32"


def _switch(switch: Switch, role: Role, asn: int, loopback: str, platform: str,
            bgp_options: dict[str, int]) -> DeviceState:
    router_id = loopback.split("/", maxsplit=1)[0]
    platform = switch.platform or platform
    lo = names_of(platform).loopback
    device = DeviceState(
        name=switch.name, role=role, platform=platform, asn=asn,
        router_id=router_id, loopback=loopback,
        interfaces={lo: Interface(name=lo, kind=IfKind.LOOPBACK, addresses=[loopback],
                                  up=True)})
    device.bgp[DEFAULT_VRF] = BgpInstance(vrf=DEFAULT_VRF, asn=asn, router_id=router_id,
                                          networks=[loopback], **bgp_options)
    return device


def _peer(local: DeviceState, remote: DeviceState, vrf: str, port: str,
          remote_addr: list[str], remote_asn: int | None) -> None:
    if vrf not in local.bgp:
        assert local.asn is not None and local.router_id is not None
        default = local.bgp[DEFAULT_VRF]
        local.bgp[vrf] = BgpInstance(vrf=vrf, asn=local.asn, router_id=local.router_id,
                                     maximum_paths=default.maximum_paths,
                                     keepalive=default.keepalive, hold=default.hold)
    address = remote_addr[0].split("/")[0] if remote_addr else None
    key = address or port
    local.bgp[vrf].peers[key] = _peer_of(key=key, interface=port, address=address,
                                         remote_asn=remote_asn, peer_device=remote.name)
