"""The per-device phase of one shard of a distributed run, as a single run does it.

A shard reads its devices with the very functions a single verify, audit or rollout
--dry-run runs on every device (collect_devices with audit.DriftRead, diff_devices, all through
flatfab.workflows.devices.device_io, drivers opened read-only), and nothing else: checks read peers'
observed state, so a shard never judges; the coordinator judges the whole fabric once
(flatfab.workflows.sharding.sharded).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from nornir.core import Nornir

from flatfab.errors import InputError
from flatfab.model.state import DeviceState, FabricState, Probe
from flatfab.reports.model import DeviceDrift
from flatfab.workflows.commands.audit import DriftRead
from flatfab.workflows.commands.rollout import DeviceOutcome, diff_devices, render_all
from flatfab.workflows.commands.verify import verify_probes
from flatfab.workflows.devices.collect import collect_devices

Kind = Literal["verify", "audit", "diff"]
KINDS: tuple[Kind, ...] = ("verify", "audit", "diff")


@dataclass(frozen=True)
class RunSpec:
    """What every shard of one run does. No secret and no plan: a worker plans the fabric
    from its own project and reads devices with its own inventory and credentials."""

    kind: Kind
    fabric: str
    shard_by: str  # flatfab.workflows.sharding.shards.ShardBy, as text
    plan_hash: str  # the coordinator's plan (flatfab.workflows.runs.fingerprint)
    probes: bool = True
    probe_fanout: int | None = None
    physical: bool = False  # read each port's physical layer too (verify --physical)

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "fabric": self.fabric, "shard_by": self.shard_by,
                "plan_hash": self.plan_hash, "probes": self.probes,
                "probe_fanout": self.probe_fanout, "physical": self.physical}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSpec:
        kind = data.get("kind")
        if kind not in KINDS:
            raise InputError.single("run spec", "kind", f"unknown kind {kind!r}")
        fanout = data.get("probe_fanout")
        return cls(kind=kind, fabric=str(data["fabric"]), shard_by=str(data["shard_by"]),
                   plan_hash=str(data["plan_hash"]), probes=bool(data.get("probes", True)),
                   probe_fanout=None if fanout is None else int(fanout),
                   physical=data.get("physical") is True)


@dataclass
class ShardOutput:
    """What one shard read: observed devices (verify, audit), config drift (audit: only the
    devices that drift or could not be read) or diffs (diff), and how long each step took."""

    shard: str
    devices: dict[str, DeviceState] = field(default_factory=dict)
    drift: list[DeviceDrift] = field(default_factory=list)
    diffs: dict[str, DeviceOutcome] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def run_shard(nornir: Nornir, plan: FabricState, spec: RunSpec, shard: str,
              devices: tuple[str, ...],
              probes: dict[str, list[Probe]] | None = None) -> ShardOutput:
    """Read the shard's devices for the run's kind (`nornir` may hold more hosts; `probes`:
    the run's pings, computed here from the plan when not given)."""
    only = set(devices)
    out = ShardOutput(shard=shard)
    started = time.monotonic()
    if spec.kind == "diff":
        out.diffs = diff_devices(nornir, render_all(plan, only), read_only=True)
        out.seconds["diff_s"] = round(time.monotonic() - started, 3)
        return out
    drift = DriftRead(plan) if spec.kind == "audit" else None
    out.devices = collect_devices(nornir, plan, read_only=True, only=only,
                                  probes=probes if probes is not None else
                                  verify_probes(plan, spec.probes, spec.probe_fanout),
                                  name=f"{spec.kind}: read", close=True, before=drift,
                                  physical=spec.physical)
    out.drift = drift.drift() if drift is not None else []
    out.seconds["collect_s"] = round(time.monotonic() - started, 3)
    return out
