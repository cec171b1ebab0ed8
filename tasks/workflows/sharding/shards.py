"""Split a plan's devices into shards for a distributed run. Pure and deterministic.

A shard is what one worker reads in one task. Shards reuse the rollout plan's selection
(flatfab.runbook.schedule): "shard by pod" takes exactly the devices a runbook phase selecting
that pod takes, each leaf with its attached hosts (a host rides with the leaf of its first
NIC, as in a phase with `attached_hosts`), and a device belongs to the first shard that
selects it. What no unit takes (super-spines, pod spines when sharding by SU, spines of a
classic leaf-spine, hosts on no leaf) gets a shard per role of its own.

Shard ids name what they hold: `pod-3`, `plane-1`, `su-12`, `leaves-001`, `spines`,
`superspines`, `hosts`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from flatfab.errors import InputError
from flatfab.model.state import FabricState, Role
from flatfab.runbook.model import Phase, RolloutPlan, Select
from flatfab.runbook.schedule import schedule

Unit = Literal["pod", "plane", "su", "leaves"]
_SPEC = re.compile(r"^(?:(pod|plane|su)|leaves:([1-9]\d{0,5}))$")
_UNITS: dict[str, Unit] = {"pod": "pod", "plane": "plane", "su": "su"}
# the shard of each role no unit took, in this order (every role is here: nothing is left)
_REST = ((Role.SUPERSPINE, "superspines"), (Role.SPINE, "spines"), (Role.LEAF, "leaves"),
         (Role.HOST, "hosts"))


@dataclass(frozen=True)
class ShardBy:
    """How a run is sharded: by pod, plane or scalable unit, or `size` leaves a shard."""

    unit: Unit
    size: int = 0  # leaves per shard (unit "leaves" only)

    def __str__(self) -> str:
        return f"leaves:{self.size}" if self.unit == "leaves" else self.unit


@dataclass(frozen=True)
class Shard:
    id: str
    devices: tuple[str, ...]


def parse_shard_by(text: str, option: str = "--shard-by") -> ShardBy:
    """'pod', 'plane', 'su' or 'leaves:N' -> ShardBy; anything else is one input error."""
    match = _SPEC.match(text.strip())
    if match is None:
        raise InputError.single(option, "", f"{text!r} is not one of pod, plane, su or "
                                "leaves:N (N leaves with their hosts a shard)")
    if match.group(1):
        return ShardBy(unit=_UNITS[match.group(1)])
    return ShardBy(unit="leaves", size=int(match.group(2)))


def default_shard_by(plan: FabricState) -> ShardBy:
    """By pod where the plan has pods, else 8 leaves (with their hosts) a shard."""
    return ShardBy("pod") if any(d.pod is not None for d in plan.devices.values()) \
        else ShardBy("leaves", 8)


def _units(plan: FabricState, by: ShardBy, option: str) -> list[Phase]:
    if by.unit == "leaves":
        return [Phase(name="leaf-batches", batch=by.size,
                      select=Select(role=[Role.LEAF], attached_hosts=True))]
    found = sorted({value for d in plan.devices.values()
                    if (value := getattr(d, by.unit)) is not None})
    if not found:
        raise InputError.single(option, "", f"fabric {plan.fabric} has no {by.unit}s "
                                "(an AI back-end's pods, planes and SUs); use leaves:N")
    field = {"pod": "pods", "plane": "planes", "su": "sus"}[by.unit]
    return [Phase(name=f"{by.unit}-{value}",
                  select=Select(**{field: [value]}, attached_hosts=True)) for value in found]


def shards(plan: FabricState, by: ShardBy, option: str = "--shard-by") -> list[Shard]:
    """Every planned device in exactly one shard, in a fixed order (units, then the rest)."""
    units = _units(plan, by, option)
    rest = [Phase(name=name, select=Select(role=[role])) for role, name in _REST]
    done = schedule(RolloutPlan(name="shards", phases=[*units, *rest]), plan, {})
    found: list[Shard] = []
    for scheduled in done.phases:
        name = scheduled.phase.name
        if by.unit == "leaves" and scheduled.index == 0:
            width = max(3, len(str(len(scheduled.batches))))
            found += [Shard(id=f"leaves-{n:0{width}d}", devices=batch)
                      for n, batch in enumerate(scheduled.batches, start=1)]
        elif scheduled.devices:
            found.append(Shard(id=name, devices=tuple(scheduled.devices)))
    return found


def by_id(found: list[Shard]) -> dict[str, Shard]:
    return {shard.id: shard for shard in found}
