"""What flatfab reads from a source of truth, in its own neutral shape.

A client (flatfab.sot.nautobot) fills a Snapshot from the API; everything after that (import,
the check mode, write-back plans, the audit) works on the snapshot alone, so it is
deterministic and tested without a server. Every object keeps the source's id and a
human label, so a disagreement can name the exact object an operator has to fix.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SotModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SotRef(SotModel):
    """Which source object a fact came from: its type, id and a readable label."""

    kind: str  # e.g. "dcim.device", "dcim.cable"
    id: str
    label: str

    def __str__(self) -> str:
        return f"{self.kind} {self.label} ({self.id})"


class SotDevice(SotModel):
    ref: SotRef
    name: str
    role: str | None  # the source's role name; None when the device has none
    platform: str | None  # the source's platform (network driver); None when unset
    primary_ip4: str | None = None
    loopback: str | None = None  # an address, from the loopback interface's IP
    asn: int | None = None
    tenant: str | None = None
    # where a switch sits in an AI back-end (custom fields; see flatfab.sot.nautobot)
    plane: int | None = None
    pod: int | None = None
    su: int | None = None
    rail: int | None = None


INCOMPLETE = "(no interface)"  # the far end of a cable path that stops short of one


class SotCable(SotModel):
    """A cable path between two ports: one cable, or several through patch panels."""

    ref: SotRef
    a_device: str
    a_port: str
    b_device: str
    b_port: str
    outside: list[str] = Field(default_factory=list)  # end devices the filters do not select
    length_m: float | None = None  # the recorded cable length, when the source has one


class SotTenant(SotModel):
    ref: SotRef
    name: str


class Snapshot(SotModel):
    """A fabric as the source of truth holds it (sorted by name: reads are deterministic)."""

    source: str  # where it was read from (a URL), for messages
    devices: list[SotDevice] = Field(default_factory=list)
    cables: list[SotCable] = Field(default_factory=list)
    tenants: list[SotTenant] = Field(default_factory=list)
