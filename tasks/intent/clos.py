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

    count: Count = Field(description="How many SUs; growing it adds SUs and renumbers "
                         "nothing that exists.")
    servers: Annotated[int, Field(ge=1, le=512)] = Field(
        description="Servers per SU: server i sits on port i of its leaves.")
    profile: str = Field("gpu", description="The servers' profile (a key of hosts.yaml "
                         "`profiles`).")
    attach: Attach = Field(
        Attach.RAIL, description="`rail`: NIC k of every server on the SU's rail-k leaf, so "
        "same-rail traffic is one hop; `rack`: all of a server's NICs on one leaf.")
    rails: Annotated[int, Field(ge=1, le=64)] | None = Field(
        None, description="`attach: rail`: rail leaves per SU, one per NIC of the profile.")
    leaves: Annotated[int, Field(ge=1, le=64)] | None = Field(
        None, description="`attach: rack`: leaves per SU.")
    leaf_ids: Annotated[int, Field(ge=1, le=256)] = Field(
        8, description="Leaf ids reserved per SU (leaf l of SU s has id `(s - 1) x "
        "leaf_ids + l`): room to grow an SU without renumbering the next.")
    leaf_name: str = Field("su{su}-leaf{leaf}", description="How leaves are named, from "
                           "`{su}`, `{leaf}` (both required) and `{plane}`.")
    server_name: str = Field("su{su}-s{server}", description="How servers are named, from "
                             "`{su}` and `{server}` (both required).")

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

    sus: Annotated[int, Field(ge=1, le=256)] = Field(description="SUs per pod; the pod "
                                                    "count follows from `scalable_units.count`.")
    spines: Annotated[int, Field(ge=1, le=256)] = Field(
        description="Spines per pod (and plane); every leaf of the pod links to each.")
    max: Annotated[int, Field(ge=1, le=1024)] = Field(
        16, description="Pod numbers reserved: spine ids are laid out for this many pods, "
        "so adding a pod renumbers nothing.")
    max_spines: Annotated[int, Field(ge=1, le=256)] = Field(
        16, description="Spine ids (and super-spine ports) reserved per pod, at least "
        "`spines`.")
    spine_name: str = Field("pod{pod}-spine{spine}", description="How pod spines are "
                            "named, from `{pod}`, `{spine}` (both required) and `{plane}`.")
    link_class: str = Field("fabric", description="The link class of leaf to pod spine "
                            "links.")
    asns: AsnRange = Field(description="Pod q's spines share ASN `first + q - 1` (RFC 7938 "
                           "5.2.1); it may not overlap the leaves' ASNs or hold `spine_asn`.")

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

    count: Annotated[int, Field(ge=1, le=256)] = Field(
        description="Super-spines per plane; every pod spine of the plane links to each.")
    max: Annotated[int, Field(ge=1, le=256)] = Field(
        16, description="Super-spine ids reserved per plane, so adding one renumbers "
        "nothing.")
    name: str = Field("ss{spine}", description="How super-spines are named, from "
                      "`{spine}` (required) and `{plane}`.")
    link_class: str = Field("superspine", description="The link class of pod spine to "
                            "super-spine links: usually longer optics, so more headroom.")

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

    count: Annotated[int, Field(ge=1, le=64)] = Field(description="How many planes.")
    max: Annotated[int, Field(ge=1, le=64)] = Field(
        8, description="Plane numbers reserved: ids are laid out for this many, so adding "
        "a plane renumbers nothing.")
    rails: dict[Annotated[int, Field(ge=1)], list[Annotated[int, Field(ge=1)]]] = Field(
        description="Plane number -> the rails (NIC numbers) it carries; every rail in "
        "exactly one plane.")

    @model_validator(mode="after")
    def _room(self) -> Planes:
        if self.count > self.max:
            raise ValueError(f"{self.count} planes exceed max ({self.max})")
        return self


class NicSet(Strict):
    """A server's fabric NICs: `count` NICs named by `name` ({n} = 1..count), or `names`."""

    count: Annotated[int, Field(ge=1, le=32)] | None = Field(
        None, description="How many fabric NICs, named by `name`.")
    name: str = Field("eth{n}", description="How NICs are named with `count`, from `{n}` "
                      "(1..count).")
    names: list[Annotated[str, Field(pattern=IFNAME_PATTERN)]] | None = Field(
        None, description="The NICs by name, in rail order (instead of `count`).")

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

    role: ServerRole = Field(ServerRole.GPU, description="`gpu` or `storage`: `verify "
                             "--traffic` sends GPU-to-storage flows by it, and the source of "
                             "truth's device role follows it.")
    nics: NicSet = Field(description="Its fabric NICs; NIC k is on rail k.")
    mtu: Annotated[int, Field(ge=1280, le=9216)] | None = Field(
        None, description="The NICs' MTU. Default: `defaults.mtu`.")
    platform: str | None = Field(None, description="The servers' platform. Default: "
                                 "`defaults.platform`.")
    managed: StrictBool | None = Field(
        default=None, description=f"{MANAGED_HELP} For every server of this profile (a "
        "server's own `managed` wins). Default: `defaults.managed`.")


class NicCable(Strict):
    """Explicit cabling of one NIC (irregular sites)."""

    leaf: str = Field(description="The leaf the NIC is cabled to.")
    port: Annotated[int, Field(ge=1, le=512)] = Field(description="The leaf's host port "
                                                      "(slot) it is cabled to.")


class Server(Strict):
    """`servers:` in hosts.yaml: a server placed by hand. Either in an SU's slot (`su` and
    `port`, cabled by the SU's scheme), or cabled NIC by NIC (`cabling`, in NIC order)."""

    name: str = Field(description="The server's name.")
    profile: str = Field(description="Its profile (a key of `profiles`).")
    su: Annotated[int, Field(ge=1)] | None = Field(None, description="The SU whose slot it "
                                                   "takes (with `port`).")
    port: Annotated[int, Field(ge=1, le=512)] | None = Field(
        None, description="Its slot in the SU: port `port` of the SU's leaves.")
    cabling: list[NicCable] | None = Field(None, description="Where each NIC is cabled, in "
                                           "NIC order (instead of `su` and `port`).")
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
