"""Which devices each phase of a rollout plan takes, in which batches. Pure and deterministic.

A device belongs to the first phase that selects it, so "canary, then the rest" is two
phases whose second selects everything. Devices no phase selects are left alone, and so is
every unmanaged host (hosts.yaml `managed: false`): no phase ever takes one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from flatfab.model.state import DeviceState, FabricState, IfKind, Role
from flatfab.runbook.model import Phase, RolloutPlan, Select


@dataclass(frozen=True)
class ScheduledPhase:
    index: int
    phase: Phase
    batches: tuple[tuple[str, ...], ...]

    @property
    def devices(self) -> list[str]:
        return [d for batch in self.batches for d in batch]


@dataclass(frozen=True)
class Schedule:
    phases: tuple[ScheduledPhase, ...]
    unselected: tuple[str, ...]  # planned devices no phase takes
    unmanaged: tuple[str, ...] = ()  # planned hosts no rollout touches


def hosts_by_leaf(plan: FabricState) -> dict[str, list[str]]:
    """Leaf -> the managed hosts cabled to it, in plan order."""
    out: dict[str, list[str]] = {}
    for device in plan.devices.values():
        if device.role is Role.HOST and device.managed:
            for iface in device.interfaces.values():
                if iface.kind is IfKind.NIC and iface.peer is not None:
                    out.setdefault(iface.peer.device, []).append(device.name)
                    break
    return out


def matches(select: Select, device: DeviceState, groups: Sequence[str]) -> bool:
    if select.role and device.role not in select.role:
        return False
    if select.names and not any(fnmatchcase(device.name, p) for p in select.names):
        return False
    for wanted, have in ((select.sus, device.su), (select.pods, device.pod),
                         (select.planes, device.plane)):
        if wanted and have not in wanted:
            return False
    return select.group is None or select.group in groups


def schedule(rollout: RolloutPlan, plan: FabricState,
             groups: Mapping[str, Sequence[str]]) -> Schedule:
    """Assign every planned device but the unmanaged hosts to at most one phase and batch."""
    attached = hosts_by_leaf(plan)
    taken: set[str] = set()
    phases: list[ScheduledPhase] = []
    for index, phase in enumerate(rollout.phases):
        units: list[list[str]] = []  # a selected device, with its hosts when attached
        for name, device in plan.devices.items():
            if name in taken or not device.managed or not matches(phase.select, device,
                                                                   groups.get(name, ())):
                continue
            unit = [name]
            taken.add(name)
            if phase.select.attached_hosts and device.role is Role.LEAF:
                riders = [h for h in attached.get(name, []) if h not in taken]
                unit += riders
                taken.update(riders)
            units.append(unit)
        if phase.batch_by is not None:
            # one unit per pod (SU, plane), in the order the plan first names each
            grouped: dict[int | None, list[str]] = {}
            for unit in units:
                key = getattr(plan.devices[unit[0]], phase.batch_by)
                grouped.setdefault(key, []).extend(unit)
            units = list(grouped.values())
        size = phase.batch_size(len(units)) if units else 1
        batches = tuple(tuple(d for unit in units[i:i + size] for d in unit)
                        for i in range(0, len(units), size))
        phases.append(ScheduledPhase(index=index, phase=phase, batches=batches))
    unmanaged = tuple(plan.unmanaged())
    unselected = tuple(n for n, d in plan.devices.items() if n not in taken and d.managed)
    return Schedule(phases=tuple(phases), unselected=unselected, unmanaged=unmanaged)
