"""The vendor-neutral fabric state: the planner writes it, collectors fill it from devices.

Planned and observed state share these models, so one check catalog runs on both and
drift is the structured difference of the two.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from flatfab.model.physical import PhysicalPolicy, PortPhysical

DEFAULT_VRF = "default"


def _empty(value: object) -> bool:
    """Observed-only fields stay out of serialized state while unset (plans stay as they were)."""
    return not value


def _true(value: object) -> bool:
    """A flag that is true by default stays out of serialized state while true."""
    return value is True


# why flatfab reads nothing from an unmanaged host: every host-side check names it
UNMANAGED = "unmanaged: flatfab does not log in to it"


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Source(StrEnum):
    PLANNED = "planned"
    OBSERVED = "observed"


class Role(StrEnum):
    SUPERSPINE = "superspine"  # tier 1 of a 5-stage Clos (RFC 7938)
    SPINE = "spine"  # the spines of a 3-stage fabric, a pod's spines in a 5-stage one
    LEAF = "leaf"
    HOST = "host"


SWITCH_ROLES = (Role.SUPERSPINE, Role.SPINE, Role.LEAF)


class IfKind(StrEnum):
    LOOPBACK = "loopback"
    FABRIC = "fabric"  # switch-to-switch port or VRF subinterface
    HOST_PORT = "host-port"  # switch port facing a host
    BRIDGE = "bridge"  # host-facing L3 gateway of one VRF on a leaf
    NIC = "nic"  # a host's data NIC
    LAG = "lag"  # link aggregation (SONiC PortChannel, EOS Port-Channel): observed only
    OTHER = "other"


class LinkKind(StrEnum):
    FABRIC = "fabric"
    HOST = "host"


class Endpoint(Model):
    device: str
    port: str
    # observed from LLDP, where the OS states them: seconds since the neighbour was last
    # heard, seconds its entry has left before it expires, and its hold time (TTL)
    age_s: int | None = Field(default=None, exclude_if=lambda v: v is None)
    expires_s: int | None = Field(default=None, exclude_if=lambda v: v is None)
    hold_s: int | None = Field(default=None, exclude_if=lambda v: v is None)  # its TTL

    def __str__(self) -> str:
        return f"{self.device}:{self.port}"


class QosMaps(Model):
    """Classification and PFC maps of a port, as lists indexed by DSCP, TC or priority."""

    dscp_to_tc: list[int]  # 64 entries
    tc_to_pg: list[int]  # 8
    tc_to_queue: list[int]  # 8
    pfc_to_pg: list[int]  # 8: which PG's XOFF sends PFC(p)
    pfc_to_queue: list[int]  # 8: which queue stops when PFC(p) arrives


class Watchdog(Model):
    priorities: list[int]
    detect_ms: int
    restore_ms: int
    action: str | None  # None: not read from the device (the reason is in `unknown`)
    poll_ms: int
    # observed only: setting -> why it could not be read ("action", "detect_ms",
    # "restore_ms", "poll_ms"); such a setting's value above is a placeholder, never judged
    unknown: dict[str, str] = Field(default_factory=dict, exclude_if=_empty)


class EcnProfile(Model):
    min_bytes: int
    max_bytes: int
    probability: int  # percent at max_bytes


class QueueQos(Model):
    strict: bool
    weight: int | None = None
    ecn: EcnProfile | None = None
    profile: str  # egress buffer profile


class PortQos(Model):
    """The lossless state of one switch port (all its VRF sub-interfaces share it)."""

    trust: str  # dscp | pcp
    maps: QosMaps
    pfc: list[int]
    watchdog: Watchdog | None = None
    pgs: dict[int, str]  # priority group -> ingress buffer profile
    queues: dict[int, QueueQos]
    speed_mbps: int
    cable_m: float
    mtu: int
    # a trimming switch's port: the DSCP trimmed packets leave it with (hosts and fabric
    # apart, so a receiver tells where congestion was)
    trim_dscp: int | None = Field(default=None, exclude_if=lambda v: v is None)
    llr: bool = Field(default=False, exclude_if=lambda v: v is False)  # link-level retry
    # observed only: what could not be read and why ("trust", "pgs.3", ...), never judged
    unknown: dict[str, str] = Field(default_factory=dict, exclude_if=_empty)


# Buffer roles, named by what they hold; each platform spells them its own way (SONiC and
# the lab's virtual ASIC: ingress_lossless_pool, egress_lossless_profile, pg_..._profile).
POOL_INGRESS_LOSSLESS = "ingress_lossless"
POOL_INGRESS_LOSSY = "ingress_lossy"
POOL_EGRESS_LOSSLESS = "egress_lossless"
POOL_EGRESS_LOSSY = "egress_lossy"
PROFILE_INGRESS_LOSSY = "ingress_lossy"
PROFILE_EGRESS_LOSSLESS = "egress_lossless"
PROFILE_EGRESS_LOSSY = "egress_lossy"
PROFILE_EGRESS_TRIM = "egress_lossy_trim"  # the RoCE queue of a trimming fabric
TRIM = "trim"  # a buffer profile's discard action: cut the packet down instead of dropping it


class BufferPool(Model):
    direction: str  # ingress | egress
    mode: str  # dynamic | static
    size: int
    lossless: bool


class BufferProfile(Model):
    pool: str
    size: int = 0
    xon: int = 0
    xoff: int = 0
    dynamic_th: int | None = None
    static_th: int | None = None
    # what a queue does with a packet it cannot admit: None drops it, TRIM trims it
    discard: str | None = Field(default=None, exclude_if=lambda v: v is None)


class Trimming(Model):
    """Packet trimming (SONiC's SWITCH_TRIMMING, NVUE's packet-trim): a packet a trimming
    queue cannot admit is cut to `size` bytes, re-marked with its egress port's trim DSCP and
    sent in TC `tc` on queue `queue`, so the receiver learns of the loss at once."""

    size: int
    tc: int
    queue: int


class Asic(Model):
    family: str
    cell_bytes: int
    mac_phy_bytes: int
    pipeline_bytes: int
    buffer_bytes: int


class DeviceQos(Model):
    asic: Asic
    pools: dict[str, BufferPool]
    profiles: dict[str, BufferProfile]
    trimming: Trimming | None = Field(default=None, exclude_if=lambda v: v is None)
    virtual: bool = False  # observed from the lab's virtual ASIC state, not from hardware
    # observed only: a setting the device does not state ("pools.<role>.size") -> why
    unknown: dict[str, str] = Field(default_factory=dict, exclude_if=_empty)


class NicQos(Model):
    """A GPU host NIC's lossless settings (ConnectX: mlnx_qos, sysfs ecn, RDMA-CM ToS)."""

    trust: str
    pfc: list[int]
    dscp_to_priority: list[int]  # 64 entries
    roce_tos: int
    cnp_dscp: int
    cnp_priority: int
    ecn_np: list[int]  # priorities with ECN notification point enabled
    ecn_rp: list[int]  # priorities with ECN reaction point enabled
    dcqcn: bool
    strict_tcs: list[int]
    tc_bw: list[int]  # 8 entries, percent
    pfc_prevention_ms: int
    # planned only: the NIC reorders packets of a flow that arrive out of order (what
    # per-packet spraying needs), as the intent says of it
    out_of_order: bool = Field(default=False, exclude_if=lambda v: v is False)
    # planned only: RoCE queue pairs per connection the collective library opens (NCCL's
    # NCCL_IB_QPS_PER_CONNECTION), each its own flow to the fabric's hash
    queue_pairs: int = Field(default=1, exclude_if=lambda v: v == 1)
    virtual: bool = False
    # observed only: setting (a field name above) -> why it could not be read; such a
    # setting's value is a placeholder, never judged
    unknown: dict[str, str] = Field(default_factory=dict, exclude_if=_empty)


class LosslessProfile(Model):
    """What the fabric-wide lossless plane promises; checks measure every hop against it."""

    # the congestion profile (qos.yaml `profile`): lossless, lossless-no-dcqcn or lossy
    congestion: str = Field(default="lossless", exclude_if=lambda v: v == "lossless")
    roce_dscp: list[int]
    lossless: list[int]  # PFC priorities (L)
    roce_priority: int
    cnp_dscp: list[int]
    cnp_priority: int
    roce_tos: int
    roce_mtu: int
    # a trimming fabric's trim DSCPs (towards hosts, towards the fabric) and their TC
    trim_dscp: list[int] = Field(default_factory=list, exclude_if=_empty)
    trim_tc: int | None = Field(default=None, exclude_if=lambda v: v is None)

    @property
    def lossy(self) -> bool:
        return self.congestion in ("lossy", "lossy-trimming")

    @property
    def marked(self) -> list[int]:
        """The priorities whose queues mark ECN: the lossless ones, or in a lossy fabric the
        RoCE priority."""
        return sorted({*self.lossless, *([self.roce_priority] if self.lossy else [])})

    @property
    def dcqcn(self) -> bool:
        """Whether the NICs run DCQCN's notification and reaction points."""
        return self.congestion != "lossless-no-dcqcn"


class PortCounters(Model):
    """A switch port's lossless counters, observed only (cumulative since last cleared)."""

    pfc_rx_frames: int | None = None  # PFC pause frames received, all priorities
    pfc_tx_frames: int | None = None  # PFC pause frames sent, all priorities
    ecn_marked: dict[int, int] = Field(default_factory=dict)  # queue -> packets ECN-marked


class Interface(Model):
    name: str
    kind: IfKind
    vrf: str = DEFAULT_VRF
    mtu: int | None = None
    up: bool | None = None
    addresses: list[str] = Field(default_factory=list)
    bridge: str | None = None  # the bridge this port is enslaved to
    parent: str | None = None  # physical port of a VRF subinterface
    speed_mbps: int | None = None
    peer: Endpoint | None = None  # cabling: planned from intent, observed from LLDP
    # observed: every LLDP neighbour the port has an entry for, freshest first, when it has
    # more than one (a recabled port keeps the old one until its hold time runs out); `peer`
    # is the first
    lldp_neighbours: list[Endpoint] = Field(default_factory=list, exclude_if=_empty)
    qos: PortQos | None = None  # switch ports
    nic: NicQos | None = None  # host data NICs
    counters: PortCounters | None = None  # observed switch ports, where the OS reports them
    # observed physical ports and NICs: module, diagnostics, FEC, flaps (model/physical.py)
    phy: PortPhysical | None = Field(default=None, exclude_if=lambda v: v is None)
    members: list[str] = Field(default_factory=list, exclude_if=_empty)  # a LAG's ports
    lag: str | None = Field(default=None, exclude_if=_empty)  # a member port's LAG
    rail: int | None = Field(default=None, exclude_if=_empty)  # a server NIC's index (rail)


class BgpPeer(Model):
    key: str  # interface name (unnumbered) or peer address (numbered)
    interface: str | None = None
    address: str | None = None
    remote_asn: int | None = None
    peer_device: str | None = None
    state: str | None = None  # observed only: Established, Active, Idle, ...
    prefixes_received: int | None = None


class BgpInstance(Model):
    vrf: str
    asn: int | None = None
    router_id: str
    peers: dict[str, BgpPeer] = Field(default_factory=dict)
    networks: list[str] = Field(default_factory=list)
    maximum_paths: int | None = None
    keepalive: int | None = None
    hold: int | None = None


class NextHop(Model):
    """One next hop of a route: out of `interface` to the neighbour at `address` (either may be
    all the OS states), or, for an overlay route learned over EVPN/VXLAN, through a tunnel to
    the remote VTEP `vtep` carrying VNI `vni` (`interface` is then the local tunnel or L3VNI
    interface, where the OS names one, never an uplink). The underlay route to the VTEP is what
    leaves by the uplinks."""

    interface: str | None = None
    address: str | None = None
    # observed only, unset on an underlay next hop (so plans and goldens keep their shape)
    vtep: str | None = Field(default=None, exclude_if=lambda v: v is None)
    vni: int | None = Field(default=None, exclude_if=lambda v: v is None)

    @property
    def overlay(self) -> bool:
        """An EVPN/VXLAN next hop: the packet is tunnelled to a VTEP, not sent to a neighbour."""
        return self.vtep is not None


class Route(Model):
    """How a device reaches one or more prefixes (a route's prefix is its key in the table).

    Collect builds one Route per distinct protocol and next hops and every prefix that has
    them refers to it (tasks/platforms/readback.py `Routes`): a thousand-leaf fabric's RIBs
    are then a few thousand Routes, not millions. Replace a route's fields, never change
    them in place."""

    protocol: str
    nexthops: list[NextHop] = Field(default_factory=list)


class StaticRoute(Model):
    prefix: str
    via: str | None = None  # None: a connected route (the NIC's own subnet in its table)
    interface: str
    table: int | None = Field(default=None, exclude_if=_empty)  # None: the main table
    source: str | None = Field(default=None, exclude_if=_empty)  # preferred source address


class PolicyRule(Model):
    """`ip rule`: traffic from `source` is routed by `table` (one per NIC of a multi-NIC
    server, so each NIC's traffic leaves through that NIC)."""

    priority: int
    source: str
    table: int


class Probe(Model):
    """One ping from a host: planned as an expectation, observed with its outcome."""

    target: str  # host name
    address: str
    size: int  # ICMP payload bytes
    dont_fragment: bool
    expect_reply: bool
    replied: bool | None = None
    detail: str = ""
    # a multi-NIC server probes from each NIC: its address, and the NIC the kernel must send
    # it through (planned); observed: the NIC it did leave through
    source: str | None = Field(default=None, exclude_if=_empty)
    nic: str | None = Field(default=None, exclude_if=_empty)
    left_by: str | None = Field(default=None, exclude_if=_empty)


class HashField(StrEnum):
    """A packet field an ECMP hash may read (the kernel's fib_multipath_hash_fields names
    them alike: Documentation/networking/ip-sysctl.rst)."""

    SRC_IP = "src_ip"
    DST_IP = "dst_ip"
    PROTOCOL = "protocol"
    FLOW_LABEL = "flow_label"  # IPv6
    SRC_PORT = "src_port"  # RoCEv2's entropy: the NIC varies it per queue pair
    DST_PORT = "dst_port"  # 4791 for all RoCEv2: hashed, it spreads nothing


# what every OS hashes on by default
FIVE_TUPLE: tuple[HashField, ...] = (HashField.SRC_IP, HashField.DST_IP, HashField.PROTOCOL,
                                     HashField.SRC_PORT, HashField.DST_PORT)


class LbMode(StrEnum):
    """How a switch picks among equal-cost paths for each packet of a flow."""

    HASH = "hash"  # static ECMP: the hash of the flow's fields picks a path for its life
    RESILIENT = "resilient"  # hashed, and a path that leaves moves only its own flows
    FLOWLET = "flowlet"  # dynamic (DLB): a flow idle for the inactivity time may move
    ADAPTIVE = "adaptive"  # per packet, to the least loaded path (NVIDIA's adaptive routing)
    SPRAY = "spray"  # per packet over every path: receivers must accept packets out of order


class LoadBalancing(Model):
    """How a switch spreads routed traffic over equal-cost paths."""

    hash_fields: list[HashField]  # in HashField's order
    seed: int | None = None  # None: the switch's own (Linux: a random one per boot)
    mode: LbMode = Field(default=LbMode.HASH, exclude_if=lambda v: v is LbMode.HASH)
    flowlet_us: int | None = Field(default=None, exclude_if=lambda v: v is None)
    # observed: a VRF that hashes otherwise than the switch (the lab: a VRF namespace)
    vrfs: dict[str, LoadBalancing] = Field(default_factory=dict, exclude_if=_empty)


class RdmaGid(Model):
    """One populated entry of an RDMA port's GID table (sysfs `gids/<index>` with
    `gid_attrs/types` and `gid_attrs/ndevs`); all-zero (unused) entries are left out."""

    index: int
    gid: str  # as sysfs prints it: eight groups of four hex digits
    type: str | None = None  # "RoCE v2" or "IB/RoCE v1"; None: not read (the port's unread)
    netdev: str | None = None  # None: not read (the port's unread says why)


class RdmaPortState(Model):
    """One RDMA device port as a host states it: `rdma link` (state, physical state,
    netdev), `ibv_devinfo` (port state, active MTU, link layer) and sysfs (its GID table).
    A field is None where its source did not state it."""

    device: str  # mlx5_0
    port: int
    netdev: str | None = None
    state: str | None = None  # rdma link: ACTIVE, DOWN, ...
    physical_state: str | None = None  # rdma link: LINK_UP, DISABLED, ...
    ibv_state: str | None = None  # ibv_devinfo: PORT_ACTIVE, ...; None: not in its output
    active_mtu: int | None = None  # ibv_devinfo; None with ibv_state: printed no number
    link_layer: str | None = None  # ibv_devinfo: Ethernet (RoCE) or InfiniBand
    gids: list[RdmaGid] | None = None  # None: no GID table read
    unread: dict[str, str] = Field(default_factory=dict, exclude_if=_empty)  # path -> why


class HostRdma(Model):
    """A GPU server's NCCL and RDMA settings. Planned (hosts.yaml `nccl.manage`): flatfab
    writes its nccl.conf, with `bootstrap` as NCCL_SOCKET_IFNAME (None: not planned); the
    traffic class, queue pairs and HCAs follow from its data NICs. Observed: the nccl.conf
    read and each RDMA device port, or why the host has none (`none_why`)."""

    bootstrap: str | None = Field(default=None, exclude_if=_empty)
    # observed: the file read, and its text (None: there is no such file)
    nccl_path: str | None = Field(default=None, exclude_if=_empty)
    nccl_conf: str | None = Field(default=None, exclude_if=lambda v: v is None)
    ports: list[RdmaPortState] = Field(default_factory=list, exclude_if=_empty)
    none_why: str | None = Field(default=None, exclude_if=_empty)  # no RDMA devices: why
    unread: dict[str, str] = Field(default_factory=dict, exclude_if=_empty)  # what -> why


class DeviceState(Model):
    name: str
    role: Role
    platform: str
    asn: int | None = None
    router_id: str | None = None
    loopback: str | None = None
    tenant: str | None = None  # hosts only
    # where the device sits in an AI back-end (planned; absent in a classic leaf-spine)
    plane: int | None = Field(default=None, exclude_if=_empty)
    pod: int | None = Field(default=None, exclude_if=_empty)
    su: int | None = Field(default=None, exclude_if=_empty)  # scalable unit
    rail: int | None = Field(default=None, exclude_if=_empty)  # a rail leaf's rail
    server_role: str | None = Field(default=None, exclude_if=_empty)  # gpu | storage
    interfaces: dict[str, Interface] = Field(default_factory=dict)
    vrfs: dict[str, int] = Field(default_factory=dict)  # tenant VRF name -> id
    bgp: dict[str, BgpInstance] = Field(default_factory=dict)  # by VRF
    static_routes: list[StaticRoute] = Field(default_factory=list)
    rules: list[PolicyRule] = Field(default_factory=list, exclude_if=_empty)
    sysctls: dict[str, str] = Field(default_factory=dict, exclude_if=_empty)  # hosts
    routes: dict[str, dict[str, Route]] | None = None  # observed RIB: VRF -> prefix -> route
    probes: list[Probe] = Field(default_factory=list)
    qos: DeviceQos | None = None
    # planned: from the intent's load_balancing (None: flatfab leaves the switch's own);
    # observed: what the switch hashes on, where its platform reads it
    lb: LoadBalancing | None = Field(default=None, exclude_if=_empty)
    # a GPU server's NCCL and RDMA settings (see HostRdma); None: flatfab manages none
    rdma: HostRdma | None = Field(default=None, exclude_if=lambda v: v is None)
    reachable: bool = True
    errors: list[str] = Field(default_factory=list)
    # observed: what the device has that flatfab does not model (a port outside its
    # platform's naming, an OS-internal table), by name, with why: named, never dropped
    # and never read as something else
    not_modelled: dict[str, str] = Field(default_factory=dict, exclude_if=_empty)
    # observed: lossless settings this device's OS never states (its platform's data file
    # declares them), by the pattern declared, with why: listed once, never as unread
    limitations: dict[str, str] = Field(default_factory=dict, exclude_if=_empty)
    # planned: false for a host another team runs (hosts.yaml `managed: false`): planned and
    # rendered, checked from the switches' side, never connected to
    managed: bool = Field(default=True, exclude_if=_true)


class Link(Model):
    id: str
    kind: LinkKind
    a: Endpoint  # leaf side of a fabric link, host side of a host link
    b: Endpoint
    vrf: str = DEFAULT_VRF
    parent: str | None = None  # id of the physical link a VRF sub-link rides on
    link_class: str
    speed_mbps: int
    cable_m: float
    mtu: int


class TenantState(Model):
    name: str
    vrf_id: int
    members: list[str]
    subnets: dict[str, str]  # leaf -> subnet


class SourceQos(Model):
    """One device's QoS in the profile a transition moves away from (planned only)."""

    qos: DeviceQos | None = None
    ports: dict[str, PortQos] = Field(default_factory=dict)  # switch ports
    nics: dict[str, NicQos] = Field(default_factory=dict)  # host data NICs


class Transition(Model):
    """A fabric moving between congestion profiles (qos.yaml `transition_from`): the profile
    it leaves and every device's QoS there, so a device still in it is judged against it."""

    profile: LosslessProfile
    devices: dict[str, SourceQos]


class FabricState(Model):
    fabric: str
    source: Source
    roce_mtu: int
    devices: dict[str, DeviceState]
    links: list[Link]
    tenants: dict[str, TenantState] = Field(default_factory=dict)
    lossless: LosslessProfile | None = None
    # planned: what each link class expects of its ports' physical layer
    physical: PhysicalPolicy | None = Field(default=None, exclude_if=lambda v: v is None)
    transition: Transition | None = Field(default=None, exclude_if=lambda v: v is None)

    def of_role(self, role: Role) -> list[DeviceState]:
        return [d for d in self.devices.values() if d.role is role]

    def managed(self) -> dict[str, DeviceState]:
        """The devices flatfab connects to, in plan order: every switch and every managed
        host. An unmanaged host is planned and rendered, but never read or changed."""
        return {n: d for n, d in self.devices.items() if d.managed}

    def unmanaged(self) -> list[str]:
        """The hosts flatfab plans but never connects to, in plan order."""
        return [n for n, d in self.devices.items() if not d.managed]
