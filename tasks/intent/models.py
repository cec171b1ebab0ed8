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

from flatfab.intent.asns import Asn, AsnRange
from flatfab.intent.base import SPEEDS_MBPS, Strict
from flatfab.intent.clos import (
    MANAGED_HELP,
    Planes,
    Pods,
    ScalableUnits,
    Server,
    ServerProfile,
    SuperSpines,
)
from flatfab.intent.names import check_name, check_tenant
from flatfab.intent.numbers import asn_problem, space_problem, table_problem
from flatfab.intent.optics import Media, cable_problem, media_problem
from flatfab.intent.qos import QosIntent

IFNAME_RE = r"^[a-zA-Z][a-zA-Z0-9_-]{0,14}$"

ROCE_MTUS = (256, 512, 1024, 2048, 4096)
# GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4 (kernel iboe_get_mtu).
ROCE_HEADER_BYTES = 96
MIN_MTU = 1280
MAX_MTU = 9216


Name = Annotated[str, AfterValidator(check_name)]
TenantName = Annotated[str, AfterValidator(check_tenant)]
Mtu = Annotated[int, Field(ge=MIN_MTU, le=MAX_MTU)]


def _network(value: Any) -> ipaddress.IPv4Network:
    try:
        return ipaddress.IPv4Network(str(value), strict=True)
    except ValueError as exc:
        raise ValueError(f"not an IPv4 prefix with host bits clear: {exc}") from None


IPv4Prefix = Annotated[str, Field(description="IPv4 prefix, e.g. 10.0.0.0/24")]


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
    keepalive: Annotated[int, Field(ge=1, le=60)] = 3
    hold: Annotated[int, Field(ge=3, le=180)] = 9

    @model_validator(mode="after")
    def _hold_is_three_keepalives(self) -> BgpTimers:
        if self.hold < 3 * self.keepalive:
            raise ValueError(f"hold ({self.hold}) must be at least 3 x keepalive "
                             f"({self.keepalive})")
        return self


class Underlay(Strict):
    mode: BgpMode = BgpMode.UNNUMBERED
    spine_asn: Asn
    leaf_asns: AsnRange
    loopback_pool: IPv4Prefix
    p2p_pool: IPv4Prefix | None = None
    # spine ids before the leaves' in the loopback pool; 5 stages reserve many (pods x planes)
    max_spines: Annotated[int, Field(ge=1, le=16_384)] = 16
    timers: BgpTimers = BgpTimers()
    maximum_paths: Annotated[int, Field(ge=1, le=256)] = 64

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

    speed: str
    # before cable_m: validators see the fields declared above them
    media: Media | None = None
    cable_m: Annotated[float, Field(gt=0)]
    mtu: Mtu = 9216

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

    @property
    def speed_mbps(self) -> int:
        return SPEEDS_MBPS[self.speed]


class Switch(Strict):
    """A spine or leaf. `loopback` and `asn` pin what a source of truth already holds; without
    them both are allocated from the stable id."""

    name: Name
    id: Annotated[int, Field(ge=1)] | None = None
    platform: str | None = None
    loopback: str | None = None  # an address, "/32" optional
    asn: Asn | None = None

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
    leaf: Name
    spine: Name
    link_class: str = Field(default="fabric", alias="class")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class PortScheme(Strict):
    """Port numbering keyed by stable ids: adding a device never renames another's ports.

    A port number becomes a name on each device's own platform (swp3, Ethernet3,
    Ethernet16 on a SONiC switch with 8 lanes a port)."""

    spine_downlink_base: Annotated[int, Field(ge=0)] = 0
    leaf_uplink_base: Annotated[int, Field(ge=0)] = 50
    leaf_host_base: Annotated[int, Field(ge=0)] = 0
    # 5 stages: a pod spine's uplinks to super-spine N, a super-spine's port to a pod spine
    spine_uplink_base: Annotated[int, Field(ge=0)] = 64
    superspine_downlink_base: Annotated[int, Field(ge=0)] = 0


class FabricIntent(Strict):
    name: Name
    platform: str = "frr"
    roce_mtu: int = 4096
    underlay: Underlay
    link_classes: dict[str, LinkClass]
    ports: PortScheme = PortScheme()
    spines: list[Switch] = Field(default_factory=list)
    leaves: list[Switch] = Field(default_factory=list)
    links: list[FabricLink] | None = None
    # an AI back-end, generated from counts (flatfab.intent.clos) instead of listed devices
    scalable_units: ScalableUnits | None = None
    pods: Pods | None = None
    superspines: SuperSpines | None = None
    planes: Planes | None = None
    # refuse a tier whose uplinks carry less than its downlinks (a rail-optimized training
    # fabric is built 1:1; NVIDIA's and Arista's AI reference designs are non-blocking)
    non_blocking: bool = False

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

    @property
    def five_stage(self) -> bool:
        return self.pods is not None


class HostSpec(Strict):
    name: Name | None = None
    port: Annotated[int, Field(ge=1, le=512)] | None = None
    nic: Annotated[str, Field(pattern=IFNAME_RE)] | None = None
    mtu: Mtu | None = None
    managed: StrictBool | None = Field(
        default=None, description=f"{MANAGED_HELP} Default: the leaf's `managed`, else "
        "`defaults.managed`.")


class LeafHosts(Strict):
    count: Annotated[int, Field(ge=0, le=512)] | None = None
    hosts: list[HostSpec] | None = None
    managed: StrictBool | None = Field(
        default=None, description=f"{MANAGED_HELP} For every host of this leaf (a host's "
        "own `managed` wins). Default: `defaults.managed`.")

    @model_validator(mode="after")
    def _one_of(self) -> LeafHosts:
        if self.count is not None and self.hosts is not None:
            raise ValueError("give either 'count' or 'hosts', not both")
        return self


class HostDefaults(Strict):
    count: Annotated[int, Field(ge=0, le=512)] = 0
    nic: Annotated[str, Field(pattern=IFNAME_RE)] = "eth1"
    mtu: Mtu = 9000
    link_class: str = "host"
    platform: str = "linux_host"
    routes: list[IPv4Prefix] = Field(default_factory=lambda: ["0.0.0.0/0"])
    name_format: str = "{leaf}-h{port}"
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


class HostsIntent(Strict):
    defaults: HostDefaults = HostDefaults()
    profiles: dict[str, ServerProfile] = Field(default_factory=dict)  # multi-NIC servers
    servers: list[Server] = Field(default_factory=list)  # placed by hand
    route_table_base: Annotated[int, Field(ge=1, le=250)] = 100  # NIC k routes in base + k
    host_pool: IPv4Prefix | None = None
    subnet_length: Annotated[int, Field(ge=8, le=29)] = 24
    leaves: dict[str, LeafHosts] = Field(default_factory=dict)

    @field_validator("host_pool")
    @classmethod
    def _prefix(cls, value: str | None) -> str | None:
        return None if value is None else _usable(value)


class Tenant(Strict):
    name: TenantName
    vrf_id: Annotated[int, Field(ge=1, le=4094)]
    prefixes: list[IPv4Prefix]
    subnet_length: Annotated[int, Field(ge=8, le=29)] = 24
    p2p_pool: IPv4Prefix | None = None
    members: list[str] = Field(default_factory=list)

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
    tenants: list[Tenant] = Field(default_factory=list)


class Intent(BaseModel):
    """The whole declared fabric, after field and cross-file validation."""

    model_config = ConfigDict(frozen=True)

    fabric: FabricIntent
    hosts: HostsIntent
    tenants: TenantsIntent
    qos: QosIntent = QosIntent()
