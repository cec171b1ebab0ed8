"""The coordinator's side of a distributed run: shard the plan, have the shards read
(`Gather`: Celery workers, or anything that runs flatfab.workflows.sharding.shard_run), then
build the one report a single run gives, through the same functions.

Equality with a single run holds by construction: shards read each device with the single
run's per-device functions, their DeviceStates come back field for field
(flatfab.workflows.sharding.shard_codec), and the judging phase (observed_state, verify.judge,
audit.audit_report, rollout.diff_only) is the single run's own, on the whole fabric in plan
order. Only timings and run ids differ.

A shard that failed (twice, flatfab.distributed) is never dropped: each of its devices is
reported unread with the shard and the reason (device.reachable names them in verify and
audit, an error entry in the audit's drift and in a dry run's diffs).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from flatfab.errors import FlatfabError
from flatfab.model.state import DeviceState, FabricState
from flatfab.reports.model import AuditReport, DeviceDrift
from flatfab.workflows.commands.audit import SotChecks, audit_checks, audit_report
from flatfab.workflows.commands.rollout import DeviceOutcome
from flatfab.workflows.commands.verify import Report, judge
from flatfab.workflows.devices.collect import observed_state, unread
from flatfab.workflows.runs.fingerprint import plan_hash
from flatfab.workflows.sharding.shard_run import Kind, RunSpec, ShardOutput
from flatfab.workflows.sharding.shards import Shard, ShardBy, shards


@dataclass
class Gathered:
    """Every shard's output, or why it failed; `seconds`: wall time of the whole read."""

    outputs: dict[str, ShardOutput] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def missing(self, expected: list[Shard]) -> list[str]:
        return [s.id for s in expected if s.id not in self.outputs and s.id not in self.failed]


# runs every shard of `spec` and returns when each has an output or has failed; raises
# FlatfabError when it cannot (no broker, timeout): then there is no report at all
Gather = Callable[[RunSpec, list[Shard]], Gathered]


@dataclass
class Sharding:
    """A run's plan split: the spec every shard gets and the shards."""

    spec: RunSpec
    shards: list[Shard]

    @classmethod
    def of(cls, plan: FabricState, kind: Kind, by: ShardBy, *, probes: bool = True,
           probe_fanout: int | None = None, hashed: str | None = None,
           physical: bool = False) -> Sharding:
        """`hashed`: the plan's hash when the caller has it already (it costs a dump)."""
        return cls(spec=RunSpec(kind=kind, fabric=plan.fabric, shard_by=str(by),
                                plan_hash=hashed or plan_hash(plan), probes=probes,
                                probe_fanout=probe_fanout, physical=physical),
                   shards=shards(plan, by))


def failure(shard: Shard, reason: str) -> str:
    return f"shard {shard.id} failed: {reason}"


def _gather(sharding: Sharding, gather: Gather) -> Gathered:
    gathered = gather(sharding.spec, sharding.shards)
    missing = gathered.missing(sharding.shards)
    if missing:  # a Gather that returns must account for every shard
        raise FlatfabError(f"shards without an outcome (expired from the broker?): "
                           f"{', '.join(missing)}; no report written")
    return gathered


def merged_devices(plan: FabricState, sharding: Sharding,
                   gathered: Gathered) -> dict[str, DeviceState]:
    devices: dict[str, DeviceState] = {}
    for shard in sharding.shards:
        output = gathered.outputs.get(shard.id)
        for name in shard.devices:
            found = output.devices.get(name) if output is not None else None
            devices[name] = found if found is not None else unread(plan.devices[name], failure(
                shard, gathered.failed.get(shard.id, "no state returned for it")))
    return devices


def merged_drift(sharding: Sharding, gathered: Gathered) -> list[DeviceDrift]:
    drift: list[DeviceDrift] = []
    for shard in sharding.shards:
        output = gathered.outputs.get(shard.id)
        if output is not None:
            drift += output.drift
        else:
            why = failure(shard, gathered.failed[shard.id])
            drift += [DeviceDrift(device=name, error=why) for name in shard.devices]
    return sorted(drift, key=lambda d: d.device)


def verify_sharded(plan: FabricState, sharding: Sharding, gather: Gather,
                   only_checks: list[str] | None) -> tuple[Report, Gathered]:
    """verify, its devices read by shards and judged here once."""
    started = time.monotonic()
    gathered = _gather(sharding, gather)
    observed = observed_state(plan, merged_devices(plan, sharding, gathered))
    return judge(plan, observed, only_checks, collect_s=gathered.seconds,
                 started=started), gathered


def audit_sharded(plan: FabricState, sharding: Sharding, gather: Gather, *,
                  lossless: bool = True, physical: bool = False,
                  sot: SotChecks | None = None,
                  clock: Callable[[], float] = time.time) -> tuple[AuditReport, Gathered]:
    """audit, its drift and devices read by shards and judged here once."""
    started_epoch = clock()
    started = time.monotonic()
    gathered = _gather(sharding, gather)
    observed = observed_state(plan, merged_devices(plan, sharding, gathered))
    report = judge(plan, observed, audit_checks(lossless, physical), collect_s=gathered.seconds,
                   started=started)
    return audit_report(plan, merged_drift(sharding, gathered), report, sot=sot,
                        started_epoch=started_epoch, started=started), gathered


class ShardedDiffs:
    """rollout --dry-run's diff pass (flatfab.workflows.commands.rollout.DiffPass) run by shards;
    each worker renders its devices' configs itself, so the configs given are not sent."""

    def __init__(self, plan: FabricState, sharding: Sharding, gather: Gather) -> None:
        self.plan, self.sharding, self.gather = plan, sharding, gather
        self.gathered = Gathered()

    def __call__(self, configs: dict[str, str]) -> dict[str, DeviceOutcome]:
        self.gathered = _gather(self.sharding, self.gather)
        outcomes: dict[str, DeviceOutcome] = {}
        for shard in self.sharding.shards:
            output = self.gathered.outputs.get(shard.id)
            for name in shard.devices:
                found = output.diffs.get(name) if output is not None else None
                outcomes[name] = found if found is not None else DeviceOutcome(error=failure(
                    shard, self.gathered.failed.get(shard.id, "no diff returned for it")))
        return {name: outcomes[name] for name in self.plan.devices if name in outcomes}
