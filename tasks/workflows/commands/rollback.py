"""rollback --run ID: put every device a past run changed back to that run's backups.

The rollback is a change run of its own: it takes the fabric lock, journals the running
config of each device before touching it (so it can be undone too), cancels commits still
pending confirmation, restores the rest and checks each device now equals its backup.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from nornir.core import Nornir
from nornir.core.task import Result, Task

from flatfab.workflows.commands.rollout import undo
from flatfab.workflows.devices.connections import driver
from flatfab.workflows.devices.progress import RichProgress
from flatfab.workflows.devices.results import first_line, host_values, subset
from flatfab.workflows.runs.journal import Journal
from flatfab.workflows.runs.runstate import RunState


@dataclass
class RollbackResult:
    run_id: str
    target: str
    restored: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failed


def _backup_then_undo(task: Task, target: Journal, journal: Journal) -> Result:
    try:
        device = driver(task, read_only=False)
        journal.write(f"backups/{task.host.name}.conf",
                      device.get_config(retrieve="running")["running"])
    except Exception as exc:  # noqa: BLE001
        journal.event("error", device=task.host.name, error=first_line(exc))
        return Result(host=task.host, result=first_line(exc), failed=True)
    return undo(task, target, journal)


def rollback_run(nornir: Nornir, target: Journal, target_state: RunState, journal: Journal,
                 progress: RichProgress | None = None) -> RollbackResult:
    started = time.monotonic()
    devices = [d for d in target_state.changed if d not in target_state.rolled_back]
    state = RunState(run_id=journal.run_id, kind="rollback", fabric=target_state.fabric,
                     runbook=f"rollback of {target.run_id}", changed=list(devices))
    state.save(journal)
    result = RollbackResult(run_id=journal.run_id, target=target.run_id)
    journal.event("rollback", target=target.run_id, devices=devices)
    if devices:
        outcome = host_values(subset(nornir, devices, 50, progress).run(
            task=_backup_then_undo, name="rollback", target=target, journal=journal), devices)
        for name, (ok, value) in outcome.items():
            if ok:
                result.restored.append(name)
            else:
                result.failed[name] = str(value)
    target_state.rolled_back = sorted({*target_state.rolled_back, *result.restored})
    if not result.failed:
        target_state.status, target_state.rolled_back_by = "rolled-back", journal.run_id
    target_state.save(target)
    state.status = "done" if result.ok else "halted"
    state.confirmed, state.failed = list(result.restored), dict(result.failed)
    state.save(journal)
    result.seconds = round(time.monotonic() - started, 3)
    journal.event("done", restored=len(result.restored), failed=len(result.failed))
    return result
