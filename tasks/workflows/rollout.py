"""rollout: render, diff, commit with a timed revert, gate on convergence, confirm.

If any device fails to commit, or the fabric does not converge before the gate timeout,
every device changed in this run is rolled back. The journal keeps plan, configs, backups,
diffs and events under .flatfab/runs/<id>/.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from nornir.core import Nornir
from nornir.core.task import Result, Task

from tasks.checks import CheckContext, Finding, Stage, run_checks
from tasks.gcpause import gc_paused
from tasks.model.state import FabricState
from tasks.platforms.registry import get as get_platform
from tasks.workflows.collect import collect
from tasks.workflows.connections import driver
from tasks.workflows.journal import Journal
from tasks.workflows.progress import RichProgress

GATE_CHECKS = ("device.reachable", "bgp.session")


def render_all(plan: FabricState) -> dict[str, str]:
    with gc_paused():
        return {name: get_platform(d.platform).render(d) for name, d in plan.devices.items()}


@dataclass
class DeviceOutcome:
    diff: str = ""
    changed: bool = False
    error: str | None = None


@dataclass
class RolloutResult:
    run_id: str
    dry_run: bool
    devices: dict[str, DeviceOutcome] = field(default_factory=dict)
    gate_findings: list[Finding] = field(default_factory=list)
    confirmed: list[str] = field(default_factory=list)
    rolled_back: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def changed(self) -> list[str]:
        return [n for n, o in self.devices.items() if o.changed]

    @property
    def errors(self) -> dict[str, str]:
        return {n: o.error for n, o in self.devices.items() if o.error}

    @property
    def ok(self) -> bool:
        return not self.errors and not self.gate_findings and not self.rolled_back


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _push(task: Task, configs: dict[str, str], dry_run: bool, revert_in: int,
          journal: Journal) -> Result:
    name = task.host.name
    try:
        device = driver(task, read_only=dry_run)
        device.load_replace_candidate(config=configs[name])
        diff = device.compare_config()
        if not diff or dry_run:
            device.discard_config()
            return Result(host=task.host, result=DeviceOutcome(diff=diff))
        journal.write(f"backups/{name}.conf", device.get_config(retrieve="running")["running"])
        journal.write(f"diffs/{name}.diff", diff)
        journal.event("commit", device=name, revert_in=revert_in)
        confirmable = get_platform(str(task.host.platform)).commit_confirm
        device.commit_config(revert_in=revert_in if confirmable else None)
        journal.event("committed", device=name)
        return Result(host=task.host, result=DeviceOutcome(diff=diff, changed=True))
    except Exception as exc:  # noqa: BLE001 - reported per device, then rolled back
        journal.event("error", device=name, error=_first_line(exc))
        return Result(host=task.host, result=DeviceOutcome(error=_first_line(exc)))


def _finish(task: Task, action: str, journal: Journal) -> Result:
    device = driver(task, read_only=False)
    try:
        if action == "confirm":
            device.confirm_commit()
        else:
            device.rollback()
    except Exception as exc:  # noqa: BLE001
        journal.event(f"{action}-failed", device=task.host.name, error=_first_line(exc))
        return Result(host=task.host, result=_first_line(exc), failed=True)
    journal.event(f"{action}ed", device=task.host.name)
    return Result(host=task.host, result="ok")


def _gate(nornir: Nornir, plan: FabricState, timeout: float) -> list[Finding]:
    """Wait until the gate checks pass; the findings still open at the timeout."""
    deadline = time.monotonic() + timeout
    while True:
        observed = collect(nornir, plan, read_only=False, name="gate").state
        findings = run_checks(CheckContext(state=observed, plan=plan, stage=Stage.LIVE),
                              GATE_CHECKS)
        if not findings or time.monotonic() > deadline:
            return findings
        time.sleep(1.0)


def rollout(nornir: Nornir, plan: FabricState, journal: Journal, *, dry_run: bool = False,
            revert_in: int = 180, gate_timeout: float = 90,
            progress: RichProgress | None = None) -> RolloutResult:
    started = time.monotonic()
    configs = render_all(plan)
    journal.write_json("plan.json", plan.model_dump(mode="json"))
    for name, text in configs.items():
        journal.write(f"configs/{name}.conf", text)
    result = RolloutResult(run_id=journal.run_id, dry_run=dry_run)
    runner = nornir.with_processors([progress]) if progress else nornir
    pushed = runner.run(task=_push, name="rollout: diff" if dry_run else "rollout: commit",
                        configs=configs, dry_run=dry_run, revert_in=revert_in, journal=journal)
    for name in plan.devices:
        outcome = pushed.get(name)
        result.devices[name] = (outcome[0].result if outcome and not outcome.failed
                                and isinstance(outcome[0].result, DeviceOutcome)
                                else DeviceOutcome(error="not in the inventory" if not outcome
                                                   else _first_line(outcome[0].exception
                                                                    or Exception("failed"))))
    result.timings["commit_s"] = round(time.monotonic() - started, 3)
    changed = result.changed
    if dry_run or (not changed and not result.errors):
        journal.event("done", changed=0, dry_run=dry_run)
        return result
    touched = nornir.filter(filter_func=lambda h: h.name in set(changed))
    if result.errors:
        journal.event("rollback", reason="device errors", devices=changed)
    else:
        gate_started = time.monotonic()
        result.gate_findings = _gate(nornir, plan, gate_timeout)
        result.timings["gate_s"] = round(time.monotonic() - gate_started, 3)
        journal.event("gate", passed=not result.gate_findings,
                      findings=[f.as_dict() for f in result.gate_findings])
    action = "confirm" if not result.errors and not result.gate_findings else "rollback"
    finished = touched.run(task=_finish, name=f"rollout: {action}", action=action,
                           journal=journal)
    done = sorted(h for h, r in finished.items() if not r.failed)
    if action == "confirm":
        result.confirmed = done
    else:
        result.rolled_back = done
    result.timings["total_s"] = round(time.monotonic() - started, 3)
    journal.write_json("result.json", _summary(result))
    journal.event("done", changed=len(changed), action=action)
    return result


def _summary(result: RolloutResult) -> dict[str, Any]:
    return {"run_id": result.run_id, "dry_run": result.dry_run, "changed": result.changed,
            "errors": result.errors, "confirmed": result.confirmed,
            "rolled_back": result.rolled_back,
            "gate_findings": [f.as_dict() for f in result.gate_findings],
            "timings": result.timings}
