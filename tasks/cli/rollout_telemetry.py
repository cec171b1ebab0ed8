"""The rollout's telemetry gate source, built from the project as `flatfab watch` builds its
own: gNMI targets from the inventory, a Nornir poller for the rest, the intent's thresholds."""

from __future__ import annotations

from nornir.core import Nornir

from flatfab.intent.thresholds import thresholds_of
from flatfab.runbook.model import RolloutPlan
from flatfab.sot import inventory as sot_inventory
from flatfab.telemetry.targets import gnmi_targets
from flatfab.workflows.commands.telemetry_gate import TelemetrySource
from flatfab.workflows.commands.watch import NornirPoller, Poller, pollable
from flatfab.workflows.devices.connections import with_timeouts
from flatfab.workflows.project.layout import Project


def source_for(project: Project, rollout_plan: RolloutPlan,
               workers: int) -> TelemetrySource | None:
    """The counter source of a plan whose gates watch telemetry (None: none does). Bad
    gNMI entries in the inventory are refused here, before anything changes. Pollers get
    their own Nornir: a poll never shares a session with a commit."""
    if not any(p.gate.telemetry is not None for p in rollout_plan.phases):
        return None

    def build() -> Nornir:
        return with_timeouts(sot_inventory.build(project.inventory_dir, project.plan, workers,
                                                 project.address_spaces,
                                                 credentials=project.credentials),
                             project.timeouts)

    targets = gnmi_targets(build(), project.inventory_dir)

    def poller(devices: list[str]) -> Poller | None:
        polled, _nothing = pollable(project.plan, devices)
        return NornirPoller(build(), project.plan, polled) if polled else None

    return TelemetrySource(thresholds_of(project.intent.qos.telemetry), targets, poller)
