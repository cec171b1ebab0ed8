"""rollout: phased, gated commits with a timed revert; automatic rollback on failure.

Every device is diffed first. Then, phase by phase and batch by batch (flatfab.runbook), the
devices that differ are committed with a revert timer, the phase's gate checks run until
they pass or time out, a telemetry gate (flatfab.workflows.commands.telemetry_gate) watches the live
counters of the batch's devices for new storms and drops when the phase asks for one, and
the batch is confirmed. A device error beyond the plan's
tolerance, or a gate that does not pass, halts the run and rolls back the plan's scope
(device, phase or run). The journal (.flatfab/runs/<id>/) keeps plan, configs, backups,
diffs, the run state and every event. An unmanaged host (hosts.yaml `managed: false`) is never
diffed, committed or read by a gate: the result names it as not touched.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Container
from dataclasses import dataclass, field
from typing import Any

from nornir.core import Nornir
from nornir.core.task import Result, Task

from flatfab import exitcodes
from flatfab.checks import CATALOG, CheckContext, Finding, Severity, Stage, run_checks
from flatfab.cpupin import threads_on_one_cpu
from flatfab.gcpause import gc_paused
from flatfab.model.state import FabricState
from flatfab.platforms.registry import get as get_platform
from flatfab.runbook.model import Gate, RollbackScope, RolloutPlan
from flatfab.runbook.schedule import Schedule, ScheduledPhase
from flatfab.telemetry import conditions
from flatfab.workflows.commands.telemetry_gate import BatchWatch, TelemetrySource
from flatfab.workflows.devices import device_io
from flatfab.workflows.devices.collect import collect
from flatfab.workflows.devices.connections import driver, release, unread_reason
from flatfab.workflows.devices.progress import RichProgress
from flatfab.workflows.devices.results import first_line, host_values, subset
from flatfab.workflows.runs.journal import Journal
from flatfab.workflows.runs.runstate import RunState

Ask = Callable[[str], bool]


def render_all(plan: FabricState, only: set[str] | None = None) -> dict[str, str]:
    """Every device's intended config (or only some devices'), in plan order."""
    with gc_paused():
        return {name: get_platform(d.platform).render(d) for name, d in plan.devices.items()
                if only is None or name in only}


def managed_configs(plan: FabricState) -> dict[str, str]:
    """The intended configs a rollout diffs and pushes: every device but the unmanaged hosts
    (their configs are `flatfab render`'s, for the team that runs them)."""
    return render_all(plan, set(plan.managed()))


@dataclass
class DeviceOutcome:
    diff: str = ""
    changed: bool = False
    error: str | None = None
    notes: list[str] = field(default_factory=list)  # what the change needs beyond a commit


@dataclass
class RolloutResult:
    run_id: str
    dry_run: bool
    schedule: Schedule | None = None
    devices: dict[str, DeviceOutcome] = field(default_factory=dict)
    gate_findings: list[Finding] = field(default_factory=list)
    confirmed: list[str] = field(default_factory=list)
    rolled_back: list[str] = field(default_factory=list)
    tolerated: dict[str, str] = field(default_factory=dict)  # failed within the plan's limit
    status: str = "done"  # done | halted | stopped
    reason: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    # devices the diff pass could not read, and why: never "no change" (a dry run exits 3)
    unread: dict[str, str] = field(default_factory=dict)

    @property
    def changed(self) -> list[str]:
        return [n for n, o in self.devices.items() if o.changed]

    @property
    def unmanaged(self) -> list[str]:
        """Planned hosts the run never touched (not diffed, not changed, not read)."""
        return list(self.schedule.unmanaged) if self.schedule is not None else []

    @property
    def errors(self) -> dict[str, str]:
        return {n: o.error for n, o in self.devices.items() if o.error}

    @property
    def ok(self) -> bool:
        return (self.status == "done" and not self.gate_findings and not self.rolled_back
                and not self.tolerated)

    @property
    def exit_code(self) -> int:
        """0 done (a dry run: every device diffed), 1 not landed, 3 done with devices the
        diff pass could not read (a dry run's, or those no phase selects)."""
        return exitcodes.judged(failed=not self.ok, unread=bool(self.unread))

    def summary(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "dry_run": self.dry_run, "ok": self.ok,
                "status": self.status, "reason": self.reason, "changed": self.changed,
                "errors": self.errors, "confirmed": self.confirmed,
                "rolled_back": self.rolled_back, "tolerated": self.tolerated,
                "unread": self.unread, "exit_code": self.exit_code,
                "diffs": {n: o.diff for n, o in self.devices.items() if o.diff},
                "notes": {n: o.notes for n, o in self.devices.items() if o.notes},
                "gate_findings": [f.as_dict() for f in self.gate_findings],
                "phases": [{"name": p.phase.name, "batches": [list(b) for b in p.batches]}
                           for p in (self.schedule.phases if self.schedule else ())],
                "unselected": list(self.schedule.unselected) if self.schedule else [],
                "unmanaged": self.unmanaged,
                "timings": self.timings}


# ---- per-device Nornir tasks -------------------------------------------------------------

def _diff(task: Task, configs: dict[str, str], read_only: bool) -> Result:
    """The device's diff and its platform's notes on it, read without changing anything (its
    session closed after: a commit opens its own, so a fleet's diff pass holds at most
    --workers sessions). A device it cannot read is an error, the reason in one line."""
    try:
        diff, notes = device_io.config_diff(task, configs[task.host.name], read_only)
    except Exception as exc:  # noqa: BLE001 - an unread device is named, never "no change"
        return Result(host=task.host, result=DeviceOutcome(error=unread_reason(exc, task)))
    finally:
        release(task)
    return Result(host=task.host, result=DeviceOutcome(diff=diff, notes=notes))


def diff_devices(nornir: Nornir, configs: dict[str, str], *, read_only: bool,
                 progress: RichProgress | None = None) -> dict[str, DeviceOutcome]:
    """The diff pass on the devices `configs` holds (the fabric's, or a shard's): name ->
    its outcome (an error where it could not be read), in the order of `configs`."""
    target = nornir.filter(filter_func=lambda h: h.name in configs)
    runner = target.with_processors([progress]) if progress else target
    with threads_on_one_cpu(len(configs)):
        values = host_values(runner.run(task=_diff, name="rollout: diff", configs=configs,
                                        read_only=read_only, on_failed=True), list(configs))
    return {name: value if ok and isinstance(value, DeviceOutcome)
            else DeviceOutcome(error=str(value)) for name, (ok, value) in values.items()}


def unread_in(outcomes: dict[str, DeviceOutcome]) -> dict[str, str]:
    """The devices a diff pass could not read, and why."""
    return {name: o.error for name, o in outcomes.items() if o.error}


def _commit(task: Task, configs: dict[str, str], revert_in: int, journal: Journal) -> Result:
    name = task.host.name
    try:
        device = driver(task, read_only=False)
        device.load_replace_candidate(config=configs[name])
        diff = device.compare_config()
        if not diff:
            device.discard_config()
            return Result(host=task.host, result=DeviceOutcome())
        # the backup is in the journal before anything changes
        journal.write(f"backups/{name}.conf", device.get_config(retrieve="running")["running"])
        journal.write(f"diffs/{name}.diff", diff)
        journal.event("commit", device=name, revert_in=revert_in)
        confirmable = get_platform(str(task.host.platform)).commit_confirm
        device.commit_config(revert_in=revert_in if confirmable else None)
        journal.event("committed", device=name)
        return Result(host=task.host, result=DeviceOutcome(diff=diff, changed=True))
    except Exception as exc:  # noqa: BLE001 - reported per device, then handled by policy
        journal.event("error", device=name, error=first_line(exc))
        return Result(host=task.host, result=DeviceOutcome(error=first_line(exc)))


def _confirm(task: Task, journal: Journal) -> Result:
    try:
        device = driver(task, read_only=False)
        if device.has_pending_commit():
            device.confirm_commit()
    except Exception as exc:  # noqa: BLE001
        journal.event("confirm-failed", device=task.host.name, error=first_line(exc))
        return Result(host=task.host, result=first_line(exc), failed=True)
    journal.event("confirmed", device=task.host.name)
    return Result(host=task.host, result="ok")


def undo(task: Task, backups: Journal, journal: Journal) -> Result:
    """Put a device back as it was before `backups`' run: cancel a pending commit, or
    restore the backup that run took (the device is committed again, without a timer)."""
    name = task.host.name
    try:
        device = driver(task, read_only=False)
        if device.has_pending_commit():
            device.rollback()
            journal.event("reverted", device=name)
            return Result(host=task.host, result="reverted")
        backup = backups.read(f"backups/{name}.conf")
        if backup is None:
            raise RuntimeError(f"no backup of {name} in run {backups.run_id}")
        device.load_replace_candidate(config=backup)
        if not device.compare_config():
            device.discard_config()
            journal.event("restored", device=name, changed=False)
            return Result(host=task.host, result="unchanged")
        device.commit_config()
        device.load_replace_candidate(config=backup)
        left = device.compare_config()
        device.discard_config()
        if left:
            raise RuntimeError(f"{name} still differs from its backup after the restore")
        journal.event("restored", device=name, changed=True)
        return Result(host=task.host, result="restored")
    except Exception as exc:  # noqa: BLE001
        journal.event("rollback-failed", device=name, error=first_line(exc))
        return Result(host=task.host, result=first_line(exc), failed=True)


# ---- helpers ------------------------------------------------------------------------------

def _peers_of(plan: FabricState, device: str, ports: str | None) -> set[str]:
    found: set[str] = set()
    planned = plan.devices.get(device)
    if planned is None or not ports:
        return found
    for port in ports.split(","):
        iface = planned.interfaces.get(port.strip())
        if iface is not None and iface.peer is not None:
            found.add(iface.peer.device)
    return found


def relevant(finding: Finding, plan: FabricState, ready: set[str]) -> bool:
    """A gate finding counts when its device is at intent and, if it names ports, at least
    one far end is too (a session to a spine not rolled out yet cannot be up)."""
    if finding.device is None or finding.device not in ready:
        return finding.device is None
    if finding.link:
        ends = {part.split(":", 1)[0] for part in finding.link.split("--")}
        return ends <= ready
    peers = _peers_of(plan, finding.device, finding.port)
    return not peers or bool(peers & ready)


def restrict(plan: FabricState, ready: set[str]) -> FabricState:
    """The plan as far as the ready devices go: what a gate may expect mid-rollout (no
    sessions, paths or tenant members through devices that are not at intent yet)."""
    devices = {}
    for name, device in plan.devices.items():
        if name in ready:
            bgp = {vrf: instance.model_copy(update={"peers": {
                key: peer for key, peer in instance.peers.items()
                if peer.peer_device is None or peer.peer_device in ready}})
                for vrf, instance in device.bgp.items()}
            devices[name] = device.model_copy(update={"bgp": bgp})
    tenants = {name: tenant.model_copy(update={
        "members": [m for m in tenant.members if m in ready],
        "subnets": {leaf: net for leaf, net in tenant.subnets.items() if leaf in ready}})
        for name, tenant in plan.tenants.items()}
    links = [link for link in plan.links if link.a.device in ready and link.b.device in ready]
    return plan.model_copy(update={"devices": devices, "links": links, "tenants": tenants})


def gate_checks(gate: Gate) -> list[str]:
    checks = set(gate.checks)
    if gate.lossless:
        checks |= {c for c, item in CATALOG.items() if item.lossless}
    return sorted(c for c in checks if Stage.LIVE in CATALOG[c].stages)


def run_gate(nornir: Nornir, plan: FabricState, gate: Gate, ready: set[str],
             journal: Journal, batch: Container[str] = ()) -> list[Finding]:
    """Wait until the gate's checks pass on the ready devices; what is open at the timeout.

    The batch's devices keep their sessions (a commit is confirmed or rolled back through
    the driver that made it); every other device's is closed once read."""
    checks = gate_checks(gate)
    time.sleep(gate.wait_s)
    deadline = time.monotonic() + gate.timeout_s
    expected = restrict(plan, ready)
    attempt = 0
    while True:
        attempt += 1
        observed = collect(nornir, expected, read_only=False, only=ready, name="gate",
                           close=True, keep_open=batch).state
        # what fails verify holds a gate; an info or not-judged finding never does
        findings = [f for f in run_checks(CheckContext(state=observed, plan=expected,
                                                       stage=Stage.LIVE), checks)
                    if f.severity.fails and relevant(f, plan, ready)]
        if not findings or time.monotonic() > deadline:
            journal.event("gate", passed=not findings, attempts=attempt,
                          findings=[f.as_dict() for f in findings[:50]])
            return findings
        time.sleep(gate.interval_s)


# ---- the run ------------------------------------------------------------------------------

@dataclass
class _Run:
    nornir: Nornir
    plan: FabricState
    rollout: RolloutPlan
    schedule: Schedule
    journal: Journal
    state: RunState
    result: RolloutResult
    configs: dict[str, str]
    ready: set[str]
    progress: RichProgress | None
    telemetry: TelemetrySource | None = None

    def run(self, names: list[str], workers: int, **task: Any) -> dict[str, tuple[bool, Any]]:
        """One Nornir task on the named devices: name -> (ok, result or error). Never on one
        CPU (flatfab.cpupin): a batch's sessions stay open until it is confirmed, and a
        thousand sessions' reader threads on one core with the run's starved it (a
        10,000-device rollout stalled in its first leaf batch)."""
        return host_values(subset(self.nornir, names, workers, self.progress).run(**task),
                           names)

    def save(self) -> None:
        self.state.confirmed = sorted(set(self.state.confirmed))
        self.state.save(self.journal)

    def commit_batch(self, names: list[str], workers: int) -> list[str]:
        pushed = self.run(names, workers, task=_commit, name="rollout: commit",
                          configs=self.configs, revert_in=self.rollout.revert_in,
                          journal=self.journal)
        committed: list[str] = []
        for name in names:
            ok, value = pushed[name]
            outcome = value if ok and isinstance(value, DeviceOutcome) else DeviceOutcome(
                error=str(value))
            previous = self.result.devices.get(name, DeviceOutcome())
            outcome.diff = outcome.diff or previous.diff
            self.result.devices[name] = outcome
            if outcome.error:
                self.state.failed[name] = outcome.error
            elif outcome.changed:
                committed.append(name)
                self.state.changed.append(name)
        self.save()
        return committed

    def confirm(self, names: list[str]) -> None:
        done = self.run(names, 50, task=_confirm, name="rollout: confirm", journal=self.journal)
        self.close(names)
        confirmed = [n for n in names if done[n][0]]
        self.state.confirmed += confirmed
        self.result.confirmed = sorted(set(self.state.confirmed))
        failed = [n for n in names if n not in confirmed]
        for name in failed:
            self.state.failed[name] = f"confirm failed: {done[name][1]}"
        self.save()

    def roll_back(self, names: list[str]) -> None:
        if not names:
            return
        self.journal.event("rollback", devices=names)
        done = self.run(names, 50, task=undo, name="rollout: rollback", backups=self.journal,
                        journal=self.journal)
        self.close(names)
        back = [n for n in names if done[n][0]]
        self.state.rolled_back += back
        self.result.rolled_back = sorted(set(self.state.rolled_back))
        self.state.confirmed = [d for d in self.state.confirmed if d not in back]
        self.result.confirmed = sorted(set(self.state.confirmed))
        for name in names:
            if name not in back:
                self.state.failed[name] = f"rollback failed: {done[name][1]}"
        self.save()

    def close(self, names: list[str]) -> None:
        """The batch is done with: its sessions closed (a run holds a batch's, not all)."""
        for name in names:
            host = self.nornir.inventory.hosts.get(name)
            if host is not None:
                host.close_connections()

    def watch_batch(self, gate: Gate, devices: list[str]) -> BatchWatch | list[Finding] | None:
        """The batch's telemetry gate (None: the gate has none), or why it cannot run."""
        if gate.telemetry is None:
            return None
        if self.telemetry is None:
            return [Finding(check=conditions.SILENT, severity=Severity.ERROR, device=None,
                            message="the gate needs telemetry and this rollout has no "
                            "counter source", expected="gNMI targets or polling",
                            actual="none")]
        watch = BatchWatch(self.telemetry, self.plan, gate.telemetry, devices,
                           self.journal.event)
        blind = watch.blind()
        if blind:
            watch.stop()
            return blind
        return watch

    def halt(self, reason: str, phase: ScheduledPhase, batch: list[str],
             named: set[str]) -> None:
        """Stop the run and undo the failure policy's scope."""
        scope = self.rollout.failure.rollback
        if scope is RollbackScope.DEVICE:
            mine = [d for d in batch if d in self.state.changed]
            targets = [d for d in mine if d in named] or mine
        elif scope is RollbackScope.PHASE:
            members = set(phase.devices)
            targets = [d for d in self.state.changed if d in members]
        else:
            targets = list(self.state.changed)
        targets = [d for d in targets if d not in self.state.rolled_back]
        self.journal.event("halt", reason=reason, scope=scope.value, devices=targets)
        self.roll_back(targets)
        self.result.status = self.state.status = "halted"
        self.result.reason = self.state.reason = reason
        self.save()


DiffPass = Callable[[dict[str, str]], dict[str, DeviceOutcome]]


def diff_only(plan: FabricState, schedule: Schedule, journal: Journal, diff_pass: DiffPass,
              *, started: float | None = None) -> RolloutResult:
    """rollout --dry-run: journal the plan and its configs, diff every device, change
    nothing. `diff_pass` diffs the devices of the configs it is given: this process's
    Nornir, or the shards of a distributed run."""
    started = time.monotonic() if started is None else started
    configs = managed_configs(plan)
    result = RolloutResult(run_id=journal.run_id, dry_run=True, schedule=schedule)
    journal.write_model("plan.json", plan)
    for name, text in configs.items():
        journal.write(f"configs/{name}.conf", text)
    outcomes = diff_pass(configs)
    for name in configs:
        result.devices[name] = outcomes.get(name) or DeviceOutcome(error="not diffed")
    result.unread = unread_in(result.devices)
    result.timings["diff_s"] = round(time.monotonic() - started, 3)
    differ = sorted(n for n, o in result.devices.items() if o.diff)
    journal.event("done", dry_run=True, differ=differ, unread=result.unread)
    return result


def rollout(nornir: Nornir, plan: FabricState, rollout_plan: RolloutPlan, schedule: Schedule,
            journal: Journal, *, dry_run: bool = False, ask: Ask | None = None,
            progress: RichProgress | None = None, resume: RunState | None = None,
            telemetry: TelemetrySource | None = None) -> RolloutResult:
    """Run (or, with `resume`, continue) a phased rollout; see the module docstring.
    `telemetry` feeds the gates that watch counters (a runbook gate's `telemetry:`)."""
    started = time.monotonic()
    if dry_run and resume is None:
        return diff_only(plan, schedule, journal, lambda configs: diff_devices(
            nornir, configs, read_only=True, progress=progress), started=started)
    configs = managed_configs(plan)
    result = RolloutResult(run_id=journal.run_id, dry_run=dry_run, schedule=schedule)
    if resume is None:
        journal.write_model("plan.json", plan)
        for name, text in configs.items():
            journal.write(f"configs/{name}.conf", text)
    state = resume or RunState(run_id=journal.run_id, kind="rollout", fabric=plan.fabric,
                               runbook=rollout_plan.name)
    if not dry_run:
        state.save(journal)
    run = _Run(nornir=nornir, plan=plan, rollout=rollout_plan, schedule=schedule,
               journal=journal, state=state, result=result, configs=configs, ready=set(),
               progress=progress, telemetry=telemetry)

    if resume is not None:
        state.failed, state.status, state.reason = {}, "running", ""
        state.pid, state.host = os.getpid(), socket.gethostname()
        journal.event("resume", pending=state.pending, phase=state.phase)
    if resume is not None and state.pending:
        # commits the killed run left pending are reverted first, then redone below
        run.roll_back(state.pending)
        state.changed = [d for d in state.changed if d not in state.rolled_back]
        state.rolled_back, result.rolled_back = [], []
    result.devices.update(diff_devices(nornir, configs, read_only=dry_run, progress=progress))
    result.unread = unread_in(result.devices)
    result.timings["diff_s"] = round(time.monotonic() - started, 3)
    differ = {n for n, o in result.devices.items() if o.diff}
    # the gate checks every device that should work now: all but those still waiting for
    # a later batch of this run (a device no phase selects keeps running as it is)
    waiting = differ & {d for p in schedule.phases for d in p.devices}
    run.ready = {n for n, o in result.devices.items() if n not in waiting and not o.error}
    if dry_run:
        journal.event("done", dry_run=True, differ=sorted(differ), unread=result.unread)
        return result
    unreachable = {n: o.error for n, o in result.devices.items() if o.error}
    planned = {d for p in schedule.phases for d in p.devices}
    blocking = {n: e for n, e in unreachable.items() if n in planned}
    if len(blocking) > rollout_plan.failure.max_failed_devices:
        state.failed.update({n: e or "" for n, e in blocking.items()})
        result.status = state.status = "halted"
        result.reason = state.reason = (f"{len(blocking)} devices cannot be read before any "
                                        f"change: {', '.join(sorted(blocking))}")
        journal.event("halt", reason=result.reason, devices=[])
        state.save(journal)
        return result
    state.failed.update({n: e or "" for n, e in blocking.items()})

    for scheduled in schedule.phases:
        if scheduled.index < state.phase_index:
            continue
        phase = scheduled.phase
        state.phase = phase.name
        journal.event("phase", phase=phase.name, batches=len(scheduled.batches))
        for b, batch in enumerate(scheduled.batches):
            if scheduled.index == state.phase_index and b < state.batch_index:
                continue
            state.phase_index, state.batch_index = scheduled.index, b
            state.save(journal)
            todo = [d for d in batch if d in differ and d not in state.failed]
            run.ready |= {d for d in batch if d not in differ and d not in state.failed}
            if not todo:
                continue
            journal.event("batch", phase=phase.name, batch=b + 1, devices=todo)
            watch = run.watch_batch(phase.gate, todo)
            if isinstance(watch, list):
                result.gate_findings = watch
                run.halt(f"phase {phase.name}: the telemetry gate cannot watch the batch "
                         f"({watch[0].message})", scheduled, batch=list(batch),
                         named={f.device for f in watch if f.device})
                break
            try:
                if watch is not None:
                    watch.baseline()  # before the commit: what is active already is not new
                committed = run.commit_batch(todo, phase.concurrency)
                failures = sorted(d for d in batch if d in state.failed)
                if len(state.failed) > rollout_plan.failure.max_failed_devices:
                    run.halt(f"phase {phase.name}: {len(state.failed)} devices failed "
                             f"({', '.join(sorted(state.failed))}); the plan tolerates "
                             f"{rollout_plan.failure.max_failed_devices}",
                             scheduled, batch=list(batch), named=set(failures))
                    break
                run.ready |= set(committed)
                gate_started = time.monotonic()
                findings = run_gate(nornir, plan, phase.gate, run.ready, journal,
                                    batch=committed)
                why = f"gate did not pass within {phase.gate.timeout_s:g} s"
                if not findings and watch is not None and committed:
                    findings = watch.judge(committed)
                    why = (f"telemetry gate: {findings[0].message}" if len(findings) == 1
                           else f"telemetry gate: {findings[0].message} and "
                           f"{len(findings) - 1} more") if findings else why
                result.timings["gate_s"] = round(result.timings.get("gate_s", 0)
                                                 + time.monotonic() - gate_started, 3)
            finally:
                if watch is not None:
                    watch.stop()
            if findings:
                result.gate_findings = findings
                run.halt(f"phase {phase.name}: {why} ({len(findings)} findings)", scheduled,
                         batch=list(batch), named={f.device for f in findings if f.device})
                break
            run.confirm(committed)
        if state.status == "halted":
            break
        state.phase_index, state.batch_index = scheduled.index + 1, 0
        state.save(journal)
        last = scheduled.index == len(schedule.phases) - 1
        if phase.pause and not last and not (ask and ask(
                f"phase {phase.name} is done and confirmed; continue with phase "
                f"{schedule.phases[scheduled.index + 1].phase.name}?")):
            result.status = state.status = "stopped"
            result.reason = state.reason = (f"stopped by the operator after phase "
                                            f"{phase.name}; `flatfab rollout --resume "
                                            f"{journal.run_id}` continues")
            break
    if state.status == "running":
        state.status = "done"
        if state.failed:
            # the plan let the run go on without them: it is done, but it did not land there
            result.tolerated = dict(sorted(state.failed.items()))
            result.reason = state.reason = (
                f"{len(state.failed)} devices failed within the plan's tolerance "
                f"(max_failed_devices {rollout_plan.failure.max_failed_devices}) and did not "
                f"get the change: {', '.join(result.tolerated)}; run `flatfab rollout` again "
                "once they are reachable")
    result.confirmed = sorted(set(state.confirmed))
    result.timings["total_s"] = round(time.monotonic() - started, 3)
    state.save(journal)
    journal.write_json("result.json", result.summary())
    journal.event("done", status=state.status, changed=len(state.changed))
    return result
