"""The AI back-end blocks of fabric.yaml and hosts.yaml: scalable units, pods, super-spines,
planes and multi-NIC server profiles.

The building block of NVIDIA's DGX SuperPOD and Spectrum-X reference architectures is the
scalable unit (SU): a fixed number of servers and the leaves they attach to. Rail-optimized,
NIC k of every server of an SU goes to the SU's rail-k leaf, on the port numbered after the
server, so same-rail traffic between any two servers of the SU is one hop. Past one tier of
spines, pods of SUs with their own spines meet at super-spines (a 5-stage Clos, RFC 7938
section 3.1), and several independent planes may each carry some of the rails. Every count
here is one number, and every id is computed from fixed reservations (`max`), so growing a
count renumbers nothing that exists.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field, StrictBool, field_validator, model_validator

from flatfab.intent.asns import AsnRange
from flatfab.intent.base import Strict

Count = Annotated[int, Field(ge=1, le=4096)]
IFNAME_PATTERN = r"^[a-zA-Z][a-zA-Z0-9_-]{0,14}$"
# what `managed:` means wherever hosts.yaml takes it
MANAGED_HELP = ("false: another team runs the host (a network team without SSH to the "
                "servers). flatfab plans and renders it and checks what the switches show "
                "of it, but never logs in to it: rollouts leave it alone, every host-side "
                "check is reported not judged for it, and the inventory need not list it.")


def check_format(value: str, allowed: tuple[str, ...], required: tuple[str, ...]) -> str:
    """A name pattern may use only `allowed` fields and must use every `required` one (else
    two devices would get one name)."""
    sample = dict.fromkeys(allowed, 1)
    try:
        value.format(**sample)
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(f"may only use {', '.join('{' + a + '}' for a in allowed)}: "
                         f"{exc}") from None
    missing = [name for name in required if "{" + name + "}" not in value]
    if missing:
        raise ValueError(f"must use {', '.join('{' + m + '}' for m in missing)}, or two "
                         "devices would get the same name")
    return value


class Attach(StrEnum):
    RAIL = "rail"  # NIC k of server i on the SU's rail-k leaf, port i
    RACK = "rack"  # all NICs of a server on one leaf (Meta's RoCE clusters)


class ServerRole(StrEnum):
    GPU = "gpu"
    STORAGE = "storage"


class ScalableUnits(Strict):
    """`scalable_units:` in fabric.yaml: the leaves and servers of every SU."""

    count: Count
    servers: Annotated[int, Field(ge=1, le=512)]  # servers per SU
    profile: str = "gpu"  # hosts.yaml profiles.<name>
    attach: Attach = Attach.RAIL
    rails: Annotated[int, Field(ge=1, le=64)] | None = None  # attach: rail
    leaves: Annotated[int, Field(ge=1, le=64)] | None = None  # attach: rack (leaves per SU)
    leaf_ids: Annotated[int, Field(ge=1, le=256)] = 8  # leaf ids reserved per SU
    leaf_name: str = "su{su}-leaf{leaf}"
    server_name: str = "su{su}-s{server}"

    @field_validator("leaf_name")
    @classmethod
    def _leaf_name(cls, value: str) -> str:
        return check_format(value, ("su", "leaf", "plane"), ("su", "leaf"))

    @field_validator("server_name")
    @classmethod
    def _server_name(cls, value: str) -> str:
        return check_format(value, ("su", "server"), ("su", "server"))

    @model_validator(mode="after")
    def _scheme(self) -> ScalableUnits:
        if self.attach is Attach.RAIL:
            if self.rails is None:
                raise ValueError("attach 'rail' needs 'rails' (rail leaves per SU)")
            if self.leaves is not None:
                raise ValueError("attach 'rail' has one leaf per rail: give 'rails', not "
                                 "'leaves'")
        else:
            if self.leaves is None:
                raise ValueError("attach 'rack' needs 'leaves' (leaves per SU)")
            if self.rails is not None:
                raise ValueError("attach 'rack' has no rails: give 'leaves', not 'rails'")
        if self.leaves_per_su > self.leaf_ids:
            raise ValueError(f"{self.leaves_per_su} leaves per SU need as many leaf ids; "
                             f"leaf_ids reserves {self.leaf_ids}")
        return self

    @property
    def leaves_per_su(self) -> int:
        count = self.rails if self.attach is Attach.RAIL else self.leaves
        return count or 0


class Pods(Strict):
    """`pods:` in fabric.yaml: SUs grouped into pods, each with its own spines, joined by
    super-spines. RFC 7938 section 5.2.1: a pod's spines share one private ASN."""

    sus: Annotated[int, Field(ge=1, le=256)]  # SUs per pod
    spines: Annotated[int, Field(ge=1, le=256)]  # pod spines per pod (and plane)
    max: Annotated[int, Field(ge=1, le=1024)] = 16  # pod numbers reserved
    max_spines: Annotated[int, Field(ge=1, le=256)] = 16  # spine ids reserved per pod
    spine_name: str = "pod{pod}-spine{spine}"
    link_class: str = "fabric"  # leaf <-> pod spine
    asns: AsnRange  # pod q's spines have asns.first + q - 1

    @field_validator("spine_name")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_format(value, ("pod", "spine", "plane"), ("pod", "spine"))

    @model_validator(mode="after")
    def _room(self) -> Pods:
        if self.spines > self.max_spines:
            raise ValueError(f"{self.spines} spines per pod exceed max_spines "
                             f"({self.max_spines})")
        return self


class SuperSpines(Strict):
    """`superspines:` in fabric.yaml: tier 1 of the 5-stage Clos, per plane. They share the
    underlay's `spine_asn` (RFC 7938: tier 1 is one ASN)."""

    count: Annotated[int, Field(ge=1, le=256)]  # per plane
    max: Annotated[int, Field(ge=1, le=256)] = 16  # ids reserved per plane
    name: str = "ss{spine}"
    link_class: str = "superspine"  # pod spine <-> super-spine: longer optics

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_format(value, ("spine", "plane"), ("spine",))

    @model_validator(mode="after")
    def _room(self) -> SuperSpines:
        if self.count > self.max:
            raise ValueError(f"{self.count} super-spines exceed max ({self.max})")
        return self


class Planes(Strict):
    """`planes:` in fabric.yaml: independent fabrics, each with its own spines and
    super-spines; `rails` says which NICs (rails) each plane carries. Nothing connects two
    planes, so one plane's failure is no other's."""

    count: Annotated[int, Field(ge=1, le=64)]
    max: Annotated[int, Field(ge=1, le=64)] = 8  # plane numbers reserved
    rails: dict[Annotated[int, Field(ge=1)], list[Annotated[int, Field(ge=1)]]]

    @model_validator(mode="after")
    def _room(self) -> Planes:
        if self.count > self.max:
            raise ValueError(f"{self.count} planes exceed max ({self.max})")
        return self


class NicSet(Strict):
    """A server's fabric NICs: `count` NICs named by `name` ({n} = 1..count), or `names`."""

    count: Annotated[int, Field(ge=1, le=32)] | None = None
    name: str = "eth{n}"
    names: list[Annotated[str, Field(pattern=IFNAME_PATTERN)]] | None = None

    @field_validator("name")
    @classmethod
    def _pattern(cls, value: str) -> str:
        return check_format(value, ("n",), ("n",))

    @model_validator(mode="after")
    def _one_of(self) -> NicSet:
        if (self.count is None) == (self.names is None):
            raise ValueError("give either 'count' (with 'name') or 'names'")
        if self.names is not None and len(set(self.names)) != len(self.names):
            raise ValueError("NIC names must be unique")
        return self

    def resolved(self) -> list[str]:
        return list(self.names) if self.names is not None else [
            self.name.format(n=n) for n in range(1, (self.count or 0) + 1)]


class ServerProfile(Strict):
    """`profiles.<name>:` in hosts.yaml: a kind of server and its fabric NICs."""

    role: ServerRole = ServerRole.GPU
    nics: NicSet
    mtu: Annotated[int, Field(ge=1280, le=9216)] | None = None  # default: defaults.mtu
    platform: str | None = None  # default: defaults.platform
    managed: StrictBool | None = Field(
        default=None, description=f"{MANAGED_HELP} For every server of this profile (a "
        "server's own `managed` wins). Default: `defaults.managed`.")


class NicCable(Strict):
    """Explicit cabling of one NIC (irregular sites)."""

    leaf: str
    port: Annotated[int, Field(ge=1, le=512)]


class Server(Strict):
    """`servers:` in hosts.yaml: a server placed by hand. Either in an SU's slot (`su` and
    `port`, cabled by the SU's scheme), or cabled NIC by NIC (`cabling`, in NIC order)."""

    name: str
    profile: str
    su: Annotated[int, Field(ge=1)] | None = None
    port: Annotated[int, Field(ge=1, le=512)] | None = None
    cabling: list[NicCable] | None = None
    managed: StrictBool | None = Field(
        default=None, description=f"{MANAGED_HELP} Default: its profile's `managed`, else "
        "`defaults.managed`.")

    @model_validator(mode="after")
    def _placed(self) -> Server:
        slot = self.su is not None or self.port is not None
        if slot and self.cabling is not None:
            raise ValueError("give either 'su' and 'port', or 'cabling'")
        if slot and (self.su is None or self.port is None):
            raise ValueError("an SU slot needs both 'su' and 'port'")
        if not slot and self.cabling is None:
            raise ValueError("place the server: 'su' and 'port', or 'cabling' per NIC")
        return self
