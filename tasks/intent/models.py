"""Pydantic models of intents/<fabric>/*.yaml: what the operator declares.

Field-level rules live here; rules that need the whole intent (duplicates, references,
pool overlaps) live in flatfab.intent.semantics so each error can name its own key path.
"""

from __future__ import annotations

import ipaddress
import re
from enum import StrEnum
from functools import lru_cache
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationInfo,
    field_validator,
    model_validator,
)

from flatfab.intent.acceptance import AcceptanceIntent
from flatfab.intent.asns import Asn, AsnRange
from flatfab.intent.base import SPEEDS_MBPS, Kind, Strict
from flatfab.intent.clos import (
    MANAGED_HELP,
    Planes,
    Pods,
    ScalableUnits,
    Server,
    ServerProfile,
    SuperSpines,
)
from flatfab.intent.loadbalance import LoadBalancingIntent
from flatfab.intent.names import check_name, check_tenant
from flatfab.intent.numbers import asn_problem, space_problem, table_problem
from flatfab.intent.optics import Media, cable_problem, media_problem
from flatfab.intent.physical import PhysicalIntent
from flatfab.intent.qos import QosIntent
from flatfab.model.physical import Fec, default_fec, fec_problem
from flatfab.platforms.registry import DEFAULT_HOST, DEFAULT_SWITCH

IFNAME_RE = r"^[a-zA-Z][a-zA-Z0-9_-]{0,14}$"

ROCE_MTUS = (256, 512, 1024, 2048, 4096)
MIN_MTU = 1280
MAX_MTU = 9216


Name = Annotated[str, AfterValidator(check_name), Kind("name")]
TenantName = Annotated[str, AfterValidator(check_tenant), Kind("tenant name")]
Mtu = Annotated[int, Field(ge=MIN_MTU, le=MAX_MTU), Kind("MTU")]


def _network(value: Any) -> ipaddress.IPv4Network:
    try:
        return ipaddress.IPv4Network(str(value), strict=True)
    except ValueError as exc:
        raise ValueError(f"not an IPv4 prefix with host bits clear: {exc}") from None


IPv4Prefix = Annotated[str, Kind("IPv4 prefix")]  # 10.0.0.0/24: host bits clear


def _usable(value: Any) -> str:
    """A prefix hosts and routers can be numbered from (not loopback, link-local,
    multicast or reserved space)."""
    prefix = str(_network(value))
    why = space_problem(prefix)
    if why is not None:
        raise ValueError(why)
    return prefix


class BgpMode(StrEnum):
    UNNUMBERED = "unnumbered"
    NUMBERED = "numbered"


class Role(StrEnum):
    SPINE = "spine"
    LEAF = "leaf"
    HOST = "host"


class BgpTimers(Strict):
    """BGP keepalive and hold times of every fabric session, in seconds."""

    keepalive: Annotated[int, Field(ge=1, le=60)] = Field(
        3, description="Seconds between BGP keepalives. Short, so a dead peer is noticed in "
        "seconds on a fabric where BFD is not configured.")
    hold: Annotated[int, Field(ge=3, le=180)] = Field(
        9, description="Seconds without a keepalive before the session drops and its "
        "routes are withdrawn; at least 3 x keepalive, as BGP expects (RFC 4271).")

    @model_validator(mode="after")
    def _hold_is_three_keepalives(self) -> BgpTimers:
        if self.hold < 3 * self.keepalive:
            raise ValueError(f"hold ({self.hold}) must be at least 3 x keepalive "
                             f"({self.keepalive})")
        return self


class Underlay(Strict):
    """The eBGP underlay: ASN scheme, loopbacks and how fabric links are numbered
    (RFC 7938: every leaf its own ASN, the spines one)."""

    mode: BgpMode = Field(
        BgpMode.UNNUMBERED, description="`unnumbered`: sessions over each link's IPv6 "
        "link-local address carrying IPv4 routes (RFC 8950), no link addresses to plan; "
        "`numbered`: a /31 from `p2p_pool` per link (3-stage fabrics only).")
    spine_asn: Asn = Field(description="The ASN every spine shares (in a 5-stage fabric, "
                           "every super-spine), so no path runs leaf-spine-leaf-spine.")
    leaf_asns: AsnRange = Field(description="The ASNs of the leaves: leaf id n gets "
                                "`first + n - 1`; too small a range for the leaf ids is refused.")
    loopback_pool: IPv4Prefix = Field(
        description="Where loopbacks (router ids) come from: spine id n gets the pool's "
        "address n, leaf id n the address `max_spines + n`.")
    p2p_pool: IPv4Prefix | None = Field(
        None, description="The /31s of numbered fabric links (default VRF); required when "
        "`mode` is `numbered`, unused otherwise.")
    # spine ids before the leaves' in the loopback pool; 5 stages reserve many (pods x planes)
    max_spines: Annotated[int, Field(ge=1, le=16_384)] = Field(
        16, description="Loopback addresses reserved for spine ids before the leaves' begin, "
        "so adding a spine renumbers no leaf; a 5-stage fabric's super-spine and pod spine "
        "ids (pods x planes) must fit.")
    timers: BgpTimers = Field(BgpTimers(), description="BGP keepalive and hold times.")
    maximum_paths: Annotated[int, Field(ge=1, le=256)] = Field(
        64, description="Equal-cost paths BGP installs per prefix: refused below the "
        "uplinks a switch has (a leaf's spines, a pod spine's super-spines), which would "
        "leave the rest idle.")

    @field_validator("loopback_pool", "p2p_pool")
    @classmethod
    def _prefix(cls, value: str | None) -> str | None:
        return None if value is None else _usable(value)

    @field_validator("spine_asn")
    @classmethod
    def _asn(cls, value: int) -> int:
        why = asn_problem(value)
        if why is not None:
            raise ValueError(why)
        return value

    @model_validator(mode="after")
    def _numbered_needs_pool(self) -> Underlay:
        if self.mode is BgpMode.NUMBERED and self.p2p_pool is None:
            raise ValueError("mode 'numbered' needs a p2p_pool for the /31 link addresses")
        return self


class LinkClass(Strict):
    """Speed, cable and MTU of a kind of link; `media` (optional) is the cable or optic, whose
    reach at that speed bounds the cable (flatfab.intent.optics)."""

    speed: str = Field(description="Ethernet speed of the link (10G to 800G); with "
                       "`cable_m` it sizes PFC headroom and picks `qos.ecn.per_speed`.")
    # before cable_m: validators see the fields declared above them
    media: Media | None = Field(
        None, description="The cable or optic (`dac`, `aoc`, `sr`, `dr`, `fr`, `lr`, "
        "`er`); a cable longer than it reaches at this speed is refused. Without it, only a "
        "cable longer than any optic reaches is.")
    cable_m: Annotated[float, Field(gt=0)] = Field(
        description="Cable length in metres: the bytes in flight during a pause, so the "
        "PFC headroom each lossless port reserves.")
    mtu: Mtu = Field(9216, description="MTU of both ends of the link; must carry RoCE "
                     "frames (`roce_mtu` + 96 B) and the hosts' MTU.")
    lanes: Annotated[int, Field(ge=1, le=8)] | None = Field(
        None, description="Electrical lanes the port trains (1, 2, 4 or 8). Default: the usual "
        "form at its speed (100G: 4 x 25G; 400G and 800G: 8).")
    fec: Fec | None = Field(
        None, description="FEC mode both ends run (`rs544`, `rs528`, `fc`, `none`). Default: "
        "IEEE 802.3's for the lane rate: RS(544,514) on PAM4 lanes (50G a lane and up), "
        "RS(528,514) on 25G lanes, none on 10G lanes.")
    llr: bool = Field(
        False, description="Link-level retry on both ends of every link of this class (the "
        "Ultra Ethernet Consortium's LLR): a frame lost on the wire is resent by the link, "
        "not by RoCE end to end. Switch links only (no host NIC setting is modelled); "
        "refused at load where a platform has none (`llr.link` names a one-sided link).")

    @field_validator("speed")
    @classmethod
    def _known_speed(cls, value: str) -> str:
        speed = value.upper()
        if speed not in SPEEDS_MBPS:
            raise ValueError(f"unknown speed {value!r}; expected one of {', '.join(SPEEDS_MBPS)}")
        return speed

    @field_validator("media", mode="before")
    @classmethod
    def _known_media(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        media = value.strip().lower()
        if media not in set(Media):
            raise ValueError(f"unknown media {value!r}; expected one of "
                             f"{', '.join(m.value for m in Media)}")
        return media

    @field_validator("media")
    @classmethod
    def _offered(cls, value: Media | None, info: ValidationInfo) -> Media | None:
        speed = info.data.get("speed")
        why = None if value is None or speed is None else media_problem(value, speed)
        if why is not None:
            raise ValueError(why)
        return value

    @field_validator("cable_m")
    @classmethod
    def _within_reach(cls, value: float, info: ValidationInfo) -> float:
        if "media" not in info.data:
            return value  # the media is refused: its reach is unknown
        why = cable_problem(value, info.data.get("speed"), info.data["media"])
        if why is not None:
            raise ValueError(why)
        return value

    @field_validator("lanes")
    @classmethod
    def _lane_count(cls, value: int | None, info: ValidationInfo) -> int | None:
        speed = info.data.get("speed")
        if value is None or speed is None:
            return value
        if value not in (1, 2, 4, 8) or SPEEDS_MBPS[speed] // value < 10_000:
            raise ValueError(f"{speed} does not run over {value} lane(s)")
        return value

    @field_validator("fec", mode="before")
    @classmethod
    def _known_fec(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() not in set(Fec):
            raise ValueError(f"unknown FEC {value!r}; expected one of "
                             f"{', '.join(f.value for f in Fec)}")
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("fec")
    @classmethod
    def _fec_fits(cls, value: Fec | None, info: ValidationInfo) -> Fec | None:
        speed = info.data.get("speed")
        if value is None or speed is None or "lanes" not in info.data:
            return value
        why = fec_problem(value, SPEEDS_MBPS[speed], info.data["lanes"])
        if why is not None:
            raise ValueError(why)
        return value

    @property
    def speed_mbps(self) -> int:
        return SPEEDS_MBPS[self.speed]

    @property
    def planned_fec(self) -> Fec:
        return self.fec if self.fec is not None else default_fec(self.speed_mbps, self.lanes)


class Switch(Strict):
    """A spine or leaf. `loopback` and `asn` pin what a source of truth already holds; without
    them both are allocated from the stable id."""

    name: Name = Field(description="The switch's name (host name, inventory key, file "
                       "names); its trailing number is its id unless `id` says otherwise.")
    id: Annotated[int, Field(ge=1)] | None = Field(
        None, description="Stable id: picks the ASN, loopback and port numbers. Default: "
        "the number the name ends with (leaf12 -> 12).")
    platform: str | None = Field(
        None, description="The switch's OS (a platform name: the platforms page). Default: "
        "the fabric's `platform`.")
    loopback: str | None = Field(
        None, description="Pinned loopback address (\"/32\" optional), e.g. what a source of "
        "truth holds. Default: allocated from `underlay.loopback_pool` by id.")
    asn: Asn | None = Field(None, description="Pinned ASN. Default: allocated by role and "
                            "id (`spine_asn`, `leaf_asns`).")

    @field_validator("loopback")
    @classmethod
    def _loopback(cls, value: str | None) -> str | None:
        if value is None:
            return None
        address, _, length = value.partition("/")
        if length not in ("", "32"):
            raise ValueError(f"a loopback is one address (/32), not {value!r}")
        try:
            return str(ipaddress.IPv4Address(address))
        except ValueError:
            raise ValueError(f"{value!r} is not an IPv4 address") from None

    @field_validator("asn")
    @classmethod
    def _asn(cls, value: int | None) -> int | None:
        why = None if value is None else asn_problem(value)
        if why is not None:
            raise ValueError(why)
        return value

    @property
    def stable_id(self) -> int:
        """Explicit id, else the number the name ends with (leaf12 -> 12)."""
        return self.id if self.id is not None else _trailing_number(self.name)


@lru_cache(maxsize=1 << 16)
def _trailing_number(name: str) -> int:
    """The number a name ends with (0 when none); cached: planning asks for it per link."""
    match = re.search(r"(\d+)$", name)
    return int(match.group(1)) if match else 0


class FabricLink(Strict):
    """One leaf-spine link, when not every leaf links to every spine."""

    leaf: Name = Field(description="The leaf end (a name under `leaves`).")
    spine: Name = Field(description="The spine end (a name under `spines`).")
    link_class: str = Field(default="fabric", alias="class",
                            description="Its link class (a key of `link_classes`).")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class PortScheme(Strict):
    """Port numbering keyed by stable ids: adding a device never renames another's ports.

    A port number becomes a name on each device's own platform (swp3, Ethernet3,
    Ethernet16 on a SONiC switch with 8 lanes a port)."""

    spine_downlink_base: Annotated[int, Field(ge=0)] = Field(
        0, description="A spine's port to leaf id n is port `spine_downlink_base + n` (in a "
        "5-stage fabric, a pod spine's port to its pod's leaf at position n).")
    leaf_uplink_base: Annotated[int, Field(ge=0)] = Field(
        50, description="A leaf's port to spine id n (its pod's spine n) is port "
        "`leaf_uplink_base + n`; above the host ports.")
    leaf_host_base: Annotated[int, Field(ge=0)] = Field(
        0, description="A leaf's port to the host (or server NIC) in slot p is port "
        "`leaf_host_base + p`.")
    # 5 stages: a pod spine's uplinks to super-spine N, a super-spine's port to a pod spine
    spine_uplink_base: Annotated[int, Field(ge=0)] = Field(
        64, description="5 stages: a pod spine's port to super-spine n of its plane is "
        "`spine_uplink_base + n`.")
    superspine_downlink_base: Annotated[int, Field(ge=0)] = Field(
        0, description="5 stages: a super-spine's port to spine n of pod q is "
        "`superspine_downlink_base + (q - 1) x pods.max_spines + n`.")


class FabricIntent(Strict):
    """fabric.yaml: the switches, how they are numbered and cabled, and the link classes.
    Either listed `spines` and `leaves`, or `scalable_units` (with listed spines, or `pods`
    and `superspines` for 5 stages)."""

    name: Name = Field(description="The fabric's name, as in reports and the lab's files "
                       "(the folder under intents/ is what `--fabric` names).")
    platform: str = Field(DEFAULT_SWITCH, description="The OS of every switch that names no "
                          "`platform` of its own (a platform name: the platforms page).")
    roce_mtu: int = Field(4096, description="RoCE path MTU (256, 512, 1024, 2048 or 4096): "
                          "every lossless hop's MTU must carry it plus 96 B of RoCEv2 headers.")
    underlay: Underlay = Field(description="ASNs, loopbacks and link numbering of the eBGP "
                               "underlay.")
    link_classes: dict[str, LinkClass] = Field(
        description="Kinds of link by name: `fabric` (leaf-spine) and `host` are used by "
        "default; 5 stages also use `superspine`. Each sets speed, cable and MTU.")
    ports: PortScheme = Field(PortScheme(), description="How port numbers follow from "
                              "stable ids, so adding a device renames no port.")
    spines: list[Switch] = Field(
        default_factory=list, description="The spines, listed (3 stages). In a 5-stage "
        "fabric the pods' spines are generated: list none.")
    leaves: list[Switch] = Field(
        default_factory=list, description="The leaves, listed; generated from "
        "`scalable_units` when that is set (list none then).")
    links: list[FabricLink] | None = Field(
        None, description="Leaf-spine links, when not every leaf links to every spine. "
        "Default: a full mesh of `fabric` links.")
    # an AI back-end, generated from counts (flatfab.intent.clos) instead of listed devices
    scalable_units: ScalableUnits | None = Field(
        None, description="An AI back-end's leaves and servers, generated from counts "
        "(the rail lab's form).")
    pods: Pods | None = Field(None, description="5 stages: SUs grouped into pods with spines "
                              "of their own; needs `superspines`.")
    superspines: SuperSpines | None = Field(None, description="5 stages: the tier above the "
                                            "pods' spines; needs `pods`.")
    planes: Planes | None = Field(None, description="Independent fabrics, each carrying some "
                                  "of the rails; needs `pods` and `superspines`.")
    # refuse a tier whose uplinks carry less than its downlinks (a rail-optimized training
    # fabric is built 1:1; NVIDIA's and Arista's AI reference designs are non-blocking)
    non_blocking: bool = Field(
        False, description="Refuse a tier whose uplinks carry less than its downlinks: "
        "training fabrics are built 1:1. Without it, `fabric.nonblocking` only warns.")
    physical: PhysicalIntent = Field(
        PhysicalIntent(), description="Thresholds of the physical-layer checks (`verify "
        "--physical`): pre-FEC BER margin, uncorrectable codewords, optical power and "
        "temperature margins, flaps.")
    load_balancing: LoadBalancingIntent | None = Field(
        None, description="How every switch hashes RoCE flows over its equal-cost paths "
        "(fields, a seed per tier). Without it, each switch keeps its own hashing.")

    @field_validator("roce_mtu")
    @classmethod
    def _ib_mtu(cls, value: int) -> int:
        if value not in ROCE_MTUS:
            raise ValueError(f"RoCE MTU must be one of {ROCE_MTUS}, got {value}")
        return value

    @model_validator(mode="after")
    def _one_form(self) -> FabricIntent:
        """Either listed spines and leaves, or scalable units (leaves and servers generated)
        under listed spines (3 stages) or pods and super-spines (5 stages)."""
        if self.scalable_units is None:
            if not self.spines or not self.leaves:
                missing = "spines" if not self.spines else "leaves"
                raise ValueError(f"'{missing}': at least one device is needed (or declare "
                                 "scalable_units)")
            for key in ("pods", "superspines", "planes"):
                if getattr(self, key) is not None:
                    raise ValueError(f"'{key}' needs scalable_units")
            return self
        if self.leaves:
            raise ValueError("'leaves' are generated from scalable_units; list none")
        if self.links is not None:
            raise ValueError("'links' are generated from scalable_units; list none")
        if (self.pods is None) != (self.superspines is None):
            raise ValueError("a 5-stage fabric needs both 'pods' and 'superspines'")
        if self.pods is not None and self.spines:
            raise ValueError("a 5-stage fabric's spines are its pods' spines; list none")
        if self.pods is None and not self.spines:
            raise ValueError("'spines': at least one device is needed (or declare pods "
                             "and superspines)")
        if self.planes is not None and self.pods is None:
            raise ValueError("planes need pods and superspines (each plane has its own)")
        return self

    @model_validator(mode="after")
    def _balanced_planes(self) -> FabricIntent:
        """`load_balancing.planes` names planes the fabric has."""
        asked = sorted(self.load_balancing.planes) if self.load_balancing is not None else []
        have = sorted(self.planes.rails) if self.planes is not None else []
        unknown = [plane for plane in asked if plane not in have]
        if unknown:
            there = f"its planes are {', '.join(map(str, have))}" if have else "it has none"
            raise ValueError(f"load_balancing.planes: plane {unknown[0]} is not one of the "
                             f"fabric's planes ({there})")
        return self

    @property
    def five_stage(self) -> bool:
        return self.pods is not None


class HostSpec(Strict):
    """One host listed under a leaf."""

    name: Name | None = Field(None, description="The host's name. Default: "
                              "`defaults.name_format` with its leaf and port.")
    port: Annotated[int, Field(ge=1, le=512)] | None = Field(
        None, description="The host's slot on the leaf (leaf port `ports.leaf_host_base + "
        "port`; its address is the leaf subnet's + 10 + port). Default: its place in the "
        "list, from 1.")
    nic: Annotated[str, Field(pattern=IFNAME_RE)] | None = Field(
        None, description="Its data NIC. Default: `defaults.nic`.")
    mtu: Mtu | None = Field(None, description="Its NIC's MTU. Default: `defaults.mtu`.")
    managed: StrictBool | None = Field(
        default=None, description=f"{MANAGED_HELP} Default: the leaf's `managed`, else "
        "`defaults.managed`.")


class LeafHosts(Strict):
    """The one-NIC hosts of one leaf: a count, or a list."""

    count: Annotated[int, Field(ge=0, le=512)] | None = Field(
        None, description="Hosts on ports 1..count, named by `defaults.name_format`.")
    hosts: list[HostSpec] | None = Field(None, description="The hosts, one by one.")
    managed: StrictBool | None = Field(
        default=None, description=f"{MANAGED_HELP} For every host of this leaf (a host's "
        "own `managed` wins). Default: `defaults.managed`.")

    @model_validator(mode="after")
    def _one_of(self) -> LeafHosts:
        if self.count is not None and self.hosts is not None:
            raise ValueError("give either 'count' or 'hosts', not both")
        return self


class HostDefaults(Strict):
    """What every one-NIC host has unless its own entry says otherwise."""

    count: Annotated[int, Field(ge=0, le=512)] = Field(
        0, description="Hosts on each listed leaf with no entry under `leaves` (scalable "
        "units' leaves get none: their servers come from the SUs).")
    nic: Annotated[str, Field(pattern=IFNAME_RE)] = Field(
        "eth1", description="The data NIC's name (eth0 is usually management).")
    mtu: Mtu = Field(9000, description="The data NIC's MTU: large enough for RoCE frames "
                     "(`roce_mtu` + 96 B) and no larger than the switch port's.")
    link_class: str = Field("host", description="The link class of host links (speed, "
                            "cable and the leaf port's MTU).")
    platform: str = Field(DEFAULT_HOST, description="The hosts' platform.")
    routes: list[IPv4Prefix] = Field(
        default_factory=lambda: ["0.0.0.0/0"],
        description="Prefixes each host routes through its leaf's gateway on the data NIC.")
    name_format: str = Field(
        "{leaf}-h{port}", description="How hosts without a name are named, from `{leaf}` "
        "and `{port}`; a generated name must be a valid name too.")
    managed: StrictBool = Field(
        default=True, description=f"{MANAGED_HELP} For every host and server a leaf, a "
        "profile or the host itself does not say otherwise of.")

    @field_validator("routes")
    @classmethod
    def _prefixes(cls, value: list[str]) -> list[str]:
        return [str(_network(v)) for v in value]

    @field_validator("name_format")
    @classmethod
    def _format(cls, value: str) -> str:
        try:
            value.format(leaf="leaf1", port=1)
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"may only use {{leaf}} and {{port}}: {exc}") from None
        return value


class NcclIntent(Strict):
    """hosts.yaml `nccl:`: whether flatfab writes each GPU server's nccl.conf, and the
    interface NCCL bootstraps over."""

    manage: StrictBool = Field(
        False, description="Write each managed GPU server's nccl.conf (the linux_host "
        "inventory's `nccl_conf`, default /etc/nccl.conf) from the plan: NCCL_IB_TC (the "
        "NICs' RoCE ToS), NCCL_IB_QPS_PER_CONNECTION (`queue_pairs` of qos.yaml), "
        "NCCL_IB_HCA (the RDMA devices of the fabric NICs, rail order, from the inventory's "
        "`rdma_devices`) and NCCL_SOCKET_IFNAME; `verify` judges it and the RDMA devices "
        "(host.nccl, host.rdma_gid, host.rdma_port). Storage servers get none.")
    socket_ifname: Annotated[str, Field(pattern=IFNAME_RE)] | None = Field(
        None, description="NCCL_SOCKET_IFNAME: the management or front-end interface NCCL "
        "bootstraps over (every rank must reach rank 0's address there); never a fabric "
        "data NIC. Unset: not written, and only judged not to select a fabric "
        "NIC.")

    @model_validator(mode="after")
    def _managed(self) -> NcclIntent:
        if self.socket_ifname is not None and not self.manage:
            raise ValueError("socket_ifname is written only with manage: true")
        return self


class HostsIntent(Strict):
    """hosts.yaml: the GPU hosts and servers, where they attach and how they are numbered."""

    defaults: HostDefaults = Field(HostDefaults(), description="What every one-NIC host has "
                                   "unless its entry says otherwise.")
    profiles: dict[str, ServerProfile] = Field(
        default_factory=dict, description="Kinds of multi-NIC server by name (GPU, storage) "
        "that scalable units and `servers` refer to.")
    servers: list[Server] = Field(default_factory=list, description="Servers placed by "
                                  "hand: in an SU's slot, or cabled NIC by NIC.")
    route_table_base: Annotated[int, Field(ge=1, le=250)] = Field(
        100, description="NIC k of a multi-NIC server routes in table `route_table_base + "
        "k`, chosen by a rule from its own address, so its traffic leaves by NIC k.")
    host_pool: IPv4Prefix | None = Field(
        None, description="Where the leaf subnets of hosts in no tenant (the default VRF) "
        "come from; required when such hosts exist.")
    subnet_length: Annotated[int, Field(ge=8, le=29)] = Field(
        24, description="Prefix length of each leaf's subnet from `host_pool`; a host's "
        "address is the subnet's + 10 + its port, so it must hold the highest port.")
    leaves: dict[str, LeafHosts] = Field(default_factory=dict, description="Per leaf (by "
                                         "name), its one-NIC hosts.")
    nccl: NcclIntent = Field(NcclIntent(), description="Each GPU server's NCCL settings: "
                             "whether flatfab writes its nccl.conf, and NCCL's bootstrap "
                             "interface.")

    @field_validator("host_pool")
    @classmethod
    def _prefix(cls, value: str | None) -> str | None:
        return None if value is None else _usable(value)

    @model_validator(mode="after")
    def _bootstrap_not_fabric(self) -> HostsIntent:
        """NCCL's bootstrap interface is never a fabric data NIC: a rail's NIC reaches only
        its own rail (and in a tenant only its VRF), and NCCL's socket fallback would carry
        collectives as TCP outside the lossless class."""
        wanted = self.nccl.socket_ifname
        if wanted is None:
            return self
        fabric = {self.defaults.nic: "defaults.nic"}
        for name, profile in self.profiles.items():
            fabric.update(dict.fromkeys(profile.nics.resolved(), f"profiles.{name}.nics"))
        for leaf, hosts in self.leaves.items():
            fabric.update({h.nic: f"leaves.{leaf}.hosts" for h in hosts.hosts or ()
                           if h.nic is not None})
        if wanted in fabric:
            raise ValueError(f"nccl.socket_ifname: {wanted} is a fabric data NIC "
                             f"({fabric[wanted]}); give the management or front-end "
                             "interface")
        return self


class Tenant(Strict):
    """A tenant: a VRF on every leaf, with its own subnets, isolated from the others."""

    name: TenantName = Field(description="The tenant's name; also the VRF's (up to 15 "
                             "characters: Linux names a VRF device after it). `default`, "
                             "`global` and `mgmt` are reserved.")
    vrf_id: Annotated[int, Field(ge=1, le=4094)] = Field(
        description="The VRF's id: its Linux routing table and its VLAN on fabric links; "
        "unique, and not a table Linux reserves (253-255).")
    prefixes: list[IPv4Prefix] = Field(description="Where the tenant's leaf subnets come "
                                       "from (at least one).")
    subnet_length: Annotated[int, Field(ge=8, le=29)] = Field(
        24, description="Prefix length of the tenant's subnet on each leaf; it must hold "
        "the highest host port + 10.")
    p2p_pool: IPv4Prefix | None = Field(
        None, description="The /31s of the VRF's fabric links; required on a numbered "
        "underlay.")
    members: list[str] = Field(
        default_factory=list, description="Host names or shell patterns (`gpu-*`) of the "
        "tenant's hosts; a host belongs to one tenant. With none, a warning: the VRF routes "
        "for nobody.")

    @field_validator("name")
    @classmethod
    def _reserved(cls, value: str) -> str:
        if value in {"default", "global", "mgmt"}:
            raise ValueError(f"{value!r} is reserved")
        return value

    @field_validator("prefixes")
    @classmethod
    def _prefixes(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("a tenant needs at least one prefix")
        return [_usable(v) for v in value]

    @field_validator("p2p_pool")
    @classmethod
    def _pool(cls, value: str | None) -> str | None:
        return None if value is None else _usable(value)

    @field_validator("vrf_id")
    @classmethod
    def _table(cls, value: int) -> int:
        why = table_problem(value)
        if why is not None:
            raise ValueError(f"{why}; a VRF needs a table of its own")
        return value


class TenantsIntent(Strict):
    """tenants.yaml: the tenant VRFs."""

    tenants: list[Tenant] = Field(default_factory=list, description="The tenants. Hosts in "
                                  "none are in the default VRF (numbered from `host_pool`).")


class Intent(BaseModel):
    """The whole declared fabric, after field and cross-file validation."""

    model_config = ConfigDict(frozen=True)

    fabric: FabricIntent = Field(description="fabric.yaml.")
    hosts: HostsIntent = Field(description="hosts.yaml (absent: no hosts).")
    tenants: TenantsIntent = Field(description="tenants.yaml (absent: no tenants).")
    qos: QosIntent = Field(QosIntent(), description="qos.yaml (absent: the canonical "
                           "lossless profile).")
    acceptance: AcceptanceIntent = Field(AcceptanceIntent(), description="acceptance.yaml "
                                         "(absent: every engine's default reference).")
