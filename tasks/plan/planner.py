"""Intent -> planned FabricState. Pure and deterministic: no I/O, no clocks, no randomness."""

from __future__ import annotations

from dataclasses import dataclass, field
from ipaddress import IPv4Network

from flatfab.gcpause import gc_paused
from flatfab.intent import layout
from flatfab.intent.layout import HostSlot, expand_hosts
from flatfab.intent.loadbalance import LoadBalancingIntent, Tier
from flatfab.intent.models import BgpMode, FabricIntent, Intent, NcclIntent
from flatfab.intent.semantics import tenant_members
from flatfab.model.build import cloner
from flatfab.model.physical import DEFAULT_LANES, LinkExpectation, PhysicalPolicy
from flatfab.model.state import (
    DEFAULT_VRF,
    BgpInstance,
    BgpPeer,
    DeviceState,
    Endpoint,
    FabricState,
    HostRdma,
    IfKind,
    Interface,
    Link,
    LinkKind,
    LoadBalancing,
    PolicyRule,
    Role,
    Source,
    StaticRoute,
    TenantState,
)
from flatfab.plan import allocate
from flatfab.plan.lossless import plan_lossless
from flatfab.platforms.base import InterfaceNames
from flatfab.platforms.registry import get as get_platform

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
_route = cloner(StaticRoute(prefix="prototype", interface="prototype"))
_rule = cloner(PolicyRule(priority=1, source="prototype", table=1))
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
    # super-spines, spines, leaves, each tier in stable-id order: the order devices are
    # written in the YAML changes nothing
    slots = layout.switches(fabric)
    slot_of = {s.name: s for s in slots}
    leaf_ids = {s.name: s.stable_id for s in slots if s.role == layout.LEAF}
    hosts = sorted(expand_hosts(intent), key=lambda h: (leaf_ids[h.leaf], h.port))
    tenancy = _tenancy(intent, hosts)
    tenants = {t.name: t for t in intent.tenants.tenants}
    all_vrfs = sorted(tenancy.vrf_ids, key=tenancy.vrf_ids.__getitem__)

    bgp_options = {"maximum_paths": underlay.maximum_paths,
                   "keepalive": underlay.timers.keepalive, "hold": underlay.timers.hold}
    devices: dict[str, DeviceState] = {}
    for slot in slots:
        if slot.role == layout.LEAF:
            loopback = layout.leaf_loopback(underlay, slot.stable_id)
        else:
            loopback = layout.spine_loopback(underlay, slot.stable_id)
        assert slot.asn is not None  # the rules refuse an intent whose range has no room
        devices[slot.name] = _switch(slot, _pinned(slot.loopback_pin) or loopback,
                                     fabric.platform, bgp_options)
    _load_balancing(fabric.load_balancing, devices)
    cabling = layout.cables(fabric, slots)

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

    # the default VRF, then every tenant VRF a switch carries, as VRF-lite subinterfaces: a
    # leaf carries its hosts' VRFs, a pod spine every VRF of the leaves below it
    vrfs_below: dict[str, set[str]] = {name: set(vrfs)
                                       for name, vrfs in tenancy.leaf_vrfs.items()}
    for cable in cabling:
        vrfs_below.setdefault(cable.upper, set()).update(vrfs_below.get(cable.lower, ()))
    carried_by: dict[str, list[tuple[str, int | None, str | None]]] = {
        name: [(DEFAULT_VRF, None, underlay.p2p_pool)]
        + [(vrf, tenancy.vrf_ids[vrf], tenants[vrf].p2p_pool)
           for vrf in sorted(vrfs_below.get(name, ()), key=tenancy.vrf_ids.__getitem__)]
        for name in devices}
    sub_ids = {name: tuple(v for _, v, _ in carried if v is not None)
               for name, carried in carried_by.items()}

    links: list[Link] = []
    classes = {name: (c.mtu, c.speed_mbps, c.cable_m) for name, c in fabric.link_classes.items()}
    for cable in cabling:
        mtu, speed, length = classes[cable.link_class]
        lower, upper = slot_of[cable.lower], slot_of[cable.upper]
        lower_name, upper_name = lower.name, upper.name
        upper_dev, lower_dev = devices[upper_name], devices[lower_name]
        upper_bgp, lower_bgp = upper_dev.bgp, lower_dev.bgp
        vrf_ids = sub_ids[lower_name]
        upper_ports = ports_of(upper_dev.platform, cable.upper_port, vrf_ids)
        lower_ports = ports_of(lower_dev.platform, cable.lower_port, vrf_ids)
        upper_port, lower_port = upper_ports[0], lower_ports[0]
        parent_id: str | None = None
        for (vrf, vrf_id, pool), u_port, l_port in zip(carried_by[lower_name], upper_ports,
                                                      lower_ports, strict=True):
            u_addr: list[str] = []
            l_addr: list[str] = []
            if numbered and pool is not None:
                u_ip, l_ip = allocate.p2p_pair(pool, underlay.max_spines, lower.stable_id,
                                               upper.stable_id)
                u_addr, l_addr = [u_ip], [l_ip]
            parent_u = None if vrf_id is None else upper_port
            parent_l = None if vrf_id is None else lower_port
            # one immutable Endpoint per end, shared by the link and the far interface
            lower_end = _endpoint(device=lower_name, port=l_port)
            upper_end = _endpoint(device=upper_name, port=u_port)
            upper_dev.interfaces[u_port] = _fabric_port(
                name=u_port, vrf=vrf, mtu=mtu, speed_mbps=speed, addresses=u_addr,
                parent=parent_u, peer=lower_end)
            lower_dev.interfaces[l_port] = _fabric_port(
                name=l_port, vrf=vrf, mtu=mtu, speed_mbps=speed, addresses=l_addr,
                parent=parent_l, peer=upper_end)
            link_id = f"{lower_name}:{l_port}--{upper_name}:{u_port}"
            links.append(_fabric_link(id=link_id, a=lower_end, b=upper_end, vrf=vrf,
                                      parent=parent_id, link_class=cable.link_class,
                                      speed_mbps=speed, cable_m=length, mtu=mtu))
            parent_id = parent_id or link_id
            # each end peers with the other (_peer, inlined: a million calls at scale)
            if vrf not in upper_bgp:
                _vrf_instance(upper_dev, vrf)
            address = l_addr[0].split("/")[0] if l_addr else None
            key = address or u_port
            upper_bgp[vrf].peers[key] = _peer_of(key=key, interface=u_port, address=address,
                                                 remote_asn=lower_dev.asn,
                                                 peer_device=lower_name)
            if vrf not in lower_bgp:
                _vrf_instance(lower_dev, vrf)
            address = u_addr[0].split("/")[0] if u_addr else None
            key = address or l_port
            lower_bgp[vrf].peers[key] = _peer_of(key=key, interface=l_port, address=address,
                                                 remote_asn=upper_dev.asn,
                                                 peer_device=upper_name)
            if vrf_id is not None:
                upper_dev.vrfs[vrf] = vrf_id
                lower_dev.vrfs[vrf] = vrf_id

    host_class_name = intent.hosts.defaults.link_class
    host_class = fabric.link_classes[host_class_name]
    host_mtu, host_speed = host_class.mtu, host_class.speed_mbps
    subnets: dict[str, dict[str, str]] = {vrf: {} for vrf in all_vrfs}
    attached: dict[str, list[_Attachment]] = {}
    # what every NIC of one (leaf, VRF) shares: its subnet, gateway and bridge, worked out
    # once per leaf and VRF, not per NIC
    on_leaf: dict[tuple[str, str], _LeafSubnet] = {}
    host_ports: dict[tuple[str, int], str] = {}
    host_base = fabric.ports.leaf_host_base
    for host in hosts:
        leaf = slot_of[host.leaf]
        leaf_dev = devices[leaf.name]
        vrf = tenancy.host_vrf.get(host.name, DEFAULT_VRF)
        vrf_id = tenancy.vrf_ids.get(vrf)
        shared = on_leaf.get((leaf.name, vrf))
        if shared is None:
            if vrf_id is None:
                prefixes: tuple[str, ...] = (intent.hosts.host_pool or "",)
                length = intent.hosts.subnet_length
            else:
                prefixes, length = tuple(tenants[vrf].prefixes), tenants[vrf].subnet_length
            subnet = allocate.leaf_subnet(prefixes, length, leaf.stable_id)
            gateway = allocate.gateway(subnet)
            shared = on_leaf[(leaf.name, vrf)] = _LeafSubnet(
                subnet, str(subnet), gateway, gateway.split("/")[0],
                names_of(leaf_dev.platform).gateway(vrf_id))
            if vrf in subnets:
                subnets[vrf][leaf.name] = shared.text
        subnet, bridge = shared.subnet, shared.bridge
        leaf_port = host_ports.get((leaf_dev.platform, host.port))
        if leaf_port is None:
            leaf_port = host_ports[(leaf_dev.platform, host.port)] = names_of(
                leaf_dev.platform).physical(host_base + host.port)
        if bridge not in leaf_dev.interfaces:
            leaf_dev.interfaces[bridge] = Interface(
                name=bridge, kind=IfKind.BRIDGE, vrf=vrf, mtu=host_mtu, up=True,
                addresses=[shared.gateway])
            leaf_dev.bgp[vrf].networks.append(shared.text)
        host_end = _endpoint(device=host.name, port=host.nic)
        leaf_end = _endpoint(device=leaf.name, port=leaf_port)
        leaf_dev.interfaces[leaf_port] = _host_port(
            name=leaf_port, vrf=vrf, mtu=host_mtu, bridge=bridge,
            speed_mbps=host_speed, peer=host_end, addresses=[])
        address = shared.host_address(host.port)
        device = devices.get(host.name)
        if device is None:
            device = devices[host.name] = DeviceState(
                name=host.name, role=Role.HOST,
                platform=host.platform or intent.hosts.defaults.platform,
                tenant=vrf if vrf_id is not None else None, su=host.su, pod=leaf.pod,
                server_role=host.role, managed=host.managed)
        device.interfaces[host.nic] = _nic(
            name=host.nic, mtu=host.mtu, addresses=[address],
            speed_mbps=host_speed, peer=leaf_end, rail=host.rail)
        attached.setdefault(host.name, []).append(_Attachment(
            host.nic_index, host.nic, shared.gateway_address, address.split("/")[0],
            shared.text))
        links.append(_host_link(
            id=f"{host.name}:{host.nic}--{leaf.name}:{leaf_port}", a=host_end, b=leaf_end,
            vrf=vrf, link_class=host_class_name, speed_mbps=host_speed,
            cable_m=host_class.cable_m, mtu=host_mtu))
    for name, nics in attached.items():
        _host_routing(devices[name], sorted(nics, key=_Attachment.key),
                      intent.hosts.defaults.routes,
                      intent.hosts.route_table_base)
        _host_nccl(devices[name], intent.hosts.nccl)

    members: dict[str, list[str]] = {vrf: [] for vrf in all_vrfs}
    for name in dict.fromkeys(h.name for h in hosts):
        member = tenancy.host_vrf.get(name)
        if member is not None:
            members[member].append(name)
    state = FabricState(
        fabric=fabric.name, source=Source.PLANNED, roce_mtu=fabric.roce_mtu, devices=devices,
        links=links,
        tenants={vrf: TenantState(name=vrf, vrf_id=tenancy.vrf_ids[vrf], members=members[vrf],
                                  subnets=subnets[vrf])
                 for vrf in all_vrfs})
    plan_lossless(intent.qos, state, frozenset(
        name for name, link_class in fabric.link_classes.items() if link_class.llr))
    state.physical = physical_policy(fabric)
    return state


def physical_policy(fabric: FabricIntent) -> PhysicalPolicy:
    """What each link class expects of its ports' physical layer, and the thresholds."""
    classes = {name: LinkExpectation(
        speed_mbps=cls.speed_mbps, media=cls.media, fec=cls.planned_fec,
        lanes=cls.lanes or DEFAULT_LANES.get(cls.speed_mbps, 1))
        for name, cls in sorted(fabric.link_classes.items())}
    return PhysicalPolicy(classes=classes, thresholds=fabric.physical.thresholds())


@dataclass(frozen=True)
class _LeafSubnet:
    """A leaf's subnet in one VRF, as every NIC on it needs it."""

    subnet: IPv4Network
    text: str
    gateway: str  # with its prefix length
    gateway_address: str
    bridge: str

    def host_address(self, port: int) -> str:
        """allocate.host_address(), from integers: subnet + 10 + port."""
        index = 10 + port
        if index >= self.subnet.num_addresses:
            return allocate.host_address(self.subnet, port)  # refuses it as it does
        address = int(self.subnet.network_address) + index
        return f"{'.'.join(map(str, address.to_bytes(4, 'big')))}/{self.subnet.prefixlen}"


@dataclass(frozen=True, order=True)
class _Attachment:
    """One NIC of a host as routing needs it."""

    index: int
    nic: str
    gateway: str
    address: str
    subnet: str

    def key(self) -> tuple[int, str, str, str, str]:
        """The order of the fields (the dataclass order), without a call per comparison."""
        return self.index, self.nic, self.gateway, self.address, self.subnet


# Per NIC of a multi-NIC server (written for the kernel of every NIC, never `all`, which
# would reach the management NIC; the kernel takes the larger of `all` and the NIC's value):
# - arp_ignore=1: answer ARP only for an address of the NIC it arrived on, so NIC 1 never
#   answers for NIC 2's address (ARP flux: the leaf would send NIC 2's traffic to NIC 1);
# - arp_announce=2: source ARP requests from the outgoing NIC's own address, so a leaf never
#   learns another NIC's address on this port;
# - rp_filter=2 (loose, RFC 3704): strict reverse-path filtering drops traffic to NIC k
#   whose source the main table reaches through another NIC.
MULTI_NIC_SYSCTLS = (("arp_ignore", "1"), ("arp_announce", "2"), ("rp_filter", "2"))


def _host_routing(device: DeviceState, nics: list[_Attachment], routes: list[str],
                  table_base: int) -> None:
    """One-NIC host: its routes via its gateway. Multi-NIC server: the same in the main table
    via its first NIC (for what binds to no NIC), and per NIC k a table `table_base + k`
    with the NIC's subnet and routes, chosen by a rule on the NIC's source address, so RDMA
    traffic bound to NIC k's address (its GID) leaves through NIC k."""
    first = nics[0]
    # built here and set once: each assignment to a model's field costs a __setattr__
    static = [_route(prefix=p, via=first.gateway, interface=first.nic) for p in routes]
    if len(nics) > 1:
        sysctls = device.sysctls
        for nic in nics:
            table = table_base + nic.index
            static.append(_route(prefix=nic.subnet, interface=nic.nic, table=table,
                                 source=nic.address))
            static += [_route(prefix=p, via=nic.gateway, interface=nic.nic, table=table,
                              source=nic.address) for p in routes]
            device.rules.append(_rule(priority=table, source=nic.address, table=table))
            for key, value in MULTI_NIC_SYSCTLS:
                sysctls[f"net.ipv4.conf.{nic.nic}.{key}"] = value
    device.static_routes = static


def _host_nccl(device: DeviceState, nccl: NcclIntent) -> None:
    """A GPU server's NCCL settings, where hosts.yaml has flatfab manage them (a storage
    server runs no NCCL)."""
    if nccl.manage and device.server_role != "storage":
        device.rdma = HostRdma(bootstrap=nccl.socket_ifname)


def _pinned(loopback: str | None) -> str | None:
    return None if loopback is None else f"{loopback}/32"


def _load_balancing(intent: LoadBalancingIntent | None, switches: dict[str, DeviceState]
                    ) -> None:
    """Each switch's hashing: the fabric's, over it its tier's and plane's (one object per
    scope, shared by its switches)."""
    if intent is None:
        return
    tiers: dict[Role, Tier] = {Role.LEAF: "leaf", Role.SPINE: "spine",
                               Role.SUPERSPINE: "superspine"}
    ways: dict[tuple[Tier, int | None], LoadBalancing] = {}
    for device in switches.values():
        scope = (tiers[device.role], device.plane)
        if scope not in ways:
            ways[scope] = intent.of(*scope)
        device.lb = ways[scope]


def _switch(slot: layout.SwitchSlot, loopback: str, platform: str,
            bgp_options: dict[str, int]) -> DeviceState:
    router_id = loopback.split("/", maxsplit=1)[0]
    platform = slot.platform or platform
    lo = names_of(platform).loopback
    asn = slot.asn
    device = DeviceState(
        name=slot.name, role=Role(slot.role), platform=platform, asn=asn,
        router_id=router_id, loopback=loopback, plane=slot.plane, pod=slot.pod, su=slot.su,
        rail=slot.rail,
        interfaces={lo: Interface(name=lo, kind=IfKind.LOOPBACK, addresses=[loopback],
                                  up=True)})
    device.bgp[DEFAULT_VRF] = BgpInstance(vrf=DEFAULT_VRF, asn=asn, router_id=router_id,
                                          networks=[loopback], **bgp_options)
    return device


def _vrf_instance(local: DeviceState, vrf: str) -> None:
    """The BGP instance of a tenant VRF, with the default instance's options."""
    assert local.asn is not None and local.router_id is not None
    default = local.bgp[DEFAULT_VRF]
    local.bgp[vrf] = BgpInstance(vrf=vrf, asn=local.asn, router_id=local.router_id,
                                 maximum_paths=default.maximum_paths,
                                 keepalive=default.keepalive, hold=default.hold)
