"""Day-to-day operations commands: rollback, runs, audit; and the rollout plan plumbing."""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from flatfab.cli import distributed as dist
from flatfab.cli.console import Format, console, emit_json, err_console
from flatfab.cli.context import nornir_for, project_of
from flatfab.cli.options import BreakLockOpt, FormatOpt, ShardByOpt, TimeoutOpt, WorkersOpt
from flatfab.errors import FlatfabError, InputError

if TYPE_CHECKING:
    from nornir.core import Nornir

    from flatfab.reports.model import AuditReport
    from flatfab.runbook.model import RolloutPlan
    from flatfab.runbook.schedule import Schedule
    from flatfab.workflows.commands.rollout import Ask
    from flatfab.workflows.project.layout import Project
    from flatfab.workflows.runs.journal import Journal
    from flatfab.workflows.runs.lock import Held
    from flatfab.workflows.runs.runstate import RunState

def inventory_groups(nornir: Nornir) -> dict[str, list[str]]:
    """Device -> its inventory groups (what a runbook's `group:` selects)."""
    return {name: [g.name for g in host.groups] for name, host in nornir.inventory.hosts.items()}


def load_plan(project: Project, groups: Mapping[str, Sequence[str]], runbook: Path | None,
              workers: int, revert_in: int | None,
              gate_timeout: float) -> tuple[RolloutPlan, Schedule]:
    """The rollout plan (a runbook, or the whole fabric at once) and its device schedule."""
    from flatfab.checks import CATALOG
    from flatfab.runbook.loader import check_against_fabric, load_runbook
    from flatfab.runbook.model import whole_fabric
    from flatfab.runbook.schedule import schedule

    if runbook is None:
        whole = whole_fabric(revert_in or 180, gate_timeout, workers)
        return whole, schedule(whole, project.plan, groups)
    rollout_plan, doc = load_runbook(runbook)
    return rollout_plan, check_against_fabric(rollout_plan, doc, str(runbook), project.plan,
                                              groups, CATALOG)


def resumable(project: Project, nornir: Nornir,
              run_id: str) -> tuple[Journal, RunState, RolloutPlan, Schedule]:
    """An interrupted or stopped run, ready to continue where it left off."""
    from flatfab.checks import CATALOG
    from flatfab.runbook.loader import check_against_fabric, load_runbook
    from flatfab.workflows.commands.rollout import managed_configs
    from flatfab.workflows.runs.journal import Journal
    from flatfab.workflows.runs.runstate import RunState

    journal = Journal.open(project.state_dir, run_id)
    state = RunState.load(journal)
    if state is None or state.kind != "rollout" or state.fabric != project.fabric:
        raise InputError.single("--resume", "", f"run {run_id} is not a rollout of fabric "
                                f"{project.fabric}")
    if state.shown_status not in {"interrupted", "stopped"}:
        raise InputError.single("--resume", "", f"run {run_id} is {state.shown_status}; only "
                                "an interrupted or stopped run can be resumed")
    configs = managed_configs(project.plan)
    changed = sorted(n for n, text in configs.items()
                     if journal.read(f"configs/{n}.conf") != text)
    if changed:
        raise InputError.single("--resume", "", f"the intent changed since run {run_id} "
                                f"started ({', '.join(changed[:5])} render differently); "
                                f"roll it back with `flatfab rollback --run {run_id}` instead")
    runbook_file = journal.directory / "runbook.yaml"
    rollout_plan, doc = load_runbook(runbook_file)
    found = check_against_fabric(rollout_plan, doc, str(runbook_file), project.plan,
                                 inventory_groups(nornir), CATALOG)
    return journal, state, rollout_plan, found


def after_break(project: Project, held: Held) -> None:
    """Say whose lock was broken; the runs it left marked running count as interrupted."""
    from flatfab.workflows.runs.runstate import mark_lock_broken

    if held.broken is None:
        return
    marked = mark_lock_broken(project.state_dir, project.fabric, held.broken)
    err_console.print(f"[yellow]warning:[/] broke the lock of {escape(held.broken.describe())}"
                      + (f"; its runs {', '.join(marked)} now count as interrupted"
                         if marked else ""), soft_wrap=True)


def pause_answer(rollout_plan: RolloutPlan, *, yes: bool, dry_run: bool,
                 from_phase: int = 0) -> Ask | None:
    """How the pauses of the phases still to run are answered: --yes, the operator at a
    terminal, or refuse up front."""
    pauses = [p.name for p in rollout_plan.phases[from_phase:-1] if p.pause]
    if dry_run or not pauses or yes:
        return (lambda _question: True) if yes else None
    if not sys.stdin.isatty():
        raise InputError.single("--yes", "", f"plan {rollout_plan.name} pauses for "
                                f"confirmation after phase {pauses[0]}; run it on a "
                                "terminal or pass --yes")
    return lambda question: typer.confirm(question, default=False)


def rollback(ctx: typer.Context,
             run: Annotated[str, typer.Option("--run", help="the run to undo (see `runs`)")],
             yes: Annotated[bool, typer.Option("--yes", help="do not ask")] = False,
             break_lock: BreakLockOpt = False, workers: WorkersOpt = 20,
             fmt: FormatOpt = Format.TABLE) -> None:
    """Restore every device a past run changed to the backup that run took."""
    from flatfab.workflows.commands.rollback import rollback_run
    from flatfab.workflows.devices.progress import RichProgress
    from flatfab.workflows.runs.journal import Journal
    from flatfab.workflows.runs.lock import fabric_lock
    from flatfab.workflows.runs.runstate import RunState, refuse_if_interrupted

    project = project_of(ctx)
    target = Journal.open(project.state_dir, run)
    target_state = RunState.load(target)
    if target_state is None or target_state.fabric != project.fabric:
        raise InputError.single("--run", "", f"run {run} has no state for fabric "
                                f"{project.fabric}")
    devices = [d for d in target_state.changed if d not in target_state.rolled_back]
    if target_state.status == "running" and not target_state.interrupted:
        raise FlatfabError(f"run {run} is still running (pid {target_state.pid})")
    if devices and not yes and sys.stdin.isatty() and not typer.confirm(
            f"restore {len(devices)} devices ({', '.join(devices)}) to their state before "
            f"run {run}?", default=False):
        raise typer.Exit(1)
    nornir = nornir_for(project, workers)
    with fabric_lock(project.state_dir, project.fabric, f"rollback of {run}",
                     break_lock) as held:
        after_break(project, held)
        refuse_if_interrupted(project.state_dir, project.fabric, allow=run)
        journal = Journal.start(project.state_dir, "rollback", project.fabric)
        result = rollback_run(nornir, target, target_state, journal,
                              progress=RichProgress(enabled=fmt is Format.TABLE))
    nornir.close_connections()
    if fmt is Format.JSON:
        emit_json({"run_id": result.run_id, "target": run, "ok": result.ok,
                   "restored": result.restored, "failed": result.failed,
                   "seconds": result.seconds})
    elif result.ok:
        console.print(f"rolled back run {run}: {len(result.restored)} devices restored to "
                      f"their backups in {result.seconds:.1f} s (run {result.run_id})")
    else:
        for name, error in result.failed.items():
            err_console.print(f"[red]{name}: {error}", soft_wrap=True)
        console.print(f"[red]rollback of {run} incomplete: {len(result.failed)} devices "
                      "failed")
    raise typer.Exit(0 if result.ok else 1)


def list_runs(ctx: typer.Context,
              limit: Annotated[int, typer.Option(min=1, help="newest runs shown")] = 20,
              fmt: FormatOpt = Format.TABLE) -> None:
    """Recent change runs of the fabric, newest first; interrupted ones need a decision."""
    from rich.table import Table

    from flatfab.workflows.runs.runstate import runs

    project = project_of(ctx)
    found = runs(project.state_dir, project.fabric)[:limit]
    rows = [{"run_id": s.run_id, "kind": s.kind, "plan": s.runbook, "status": s.shown_status,
             "phase": s.phase, "changed": s.changed, "rolled_back": s.rolled_back,
             "failed": s.failed, "reason": s.reason, "started": round(s.started, 3)}
            for _, s in found]
    if fmt is Format.JSON:
        emit_json({"fabric": project.fabric, "runs": rows})
        return
    table = Table(title=f"change runs of {project.fabric}", title_justify="left")
    for column in ("run", "plan", "status", "phase", "changed", "note"):
        table.add_column(column, overflow="fold")
    for _, s in found:
        table.add_row(s.run_id, s.runbook, s.shown_status, s.phase or "", str(len(s.changed)),
                      s.reason)
    console.print(table)


def audit(ctx: typer.Context,
          report_dir: Annotated[Path | None, typer.Option(
              help="write every report format here (html, json, junit.xml, md, prom)")] = None,
          every: Annotated[str | None, typer.Option(
              help="repeat: an interval like 15m, 1h or 30s")] = None,
          jitter: Annotated[str | None, typer.Option(
              help="up to this much random extra delay per round (default 10% of "
              "--every)")] = None,
          count: Annotated[int | None, typer.Option(min=1, help="rounds, with --every")] = None,
          lossless: Annotated[bool, typer.Option(help="include the lossless catalog")] = True,
          physical: Annotated[bool, typer.Option(
              "--physical", help="include the physical layer: modules, FEC, optics, "
              "flaps")] = False,
          probes: Annotated[bool, typer.Option(help="ping between hosts")] = True,
          sot: Annotated[bool, typer.Option(
              "--sot", help="also compare cabling (LLDP) and devices with the source of "
              "truth (inventory/<fabric>/source.yaml)")] = False,
          distributed: Annotated[bool, typer.Option(
              "--distributed", help="read the devices in shards on flatfab workers "
              "(FLATFAB_BROKER_URL) and judge here")] = False,
          shard_by: ShardByOpt = None, timeout: TimeoutOpt = None,
          workers: WorkersOpt = 20, fmt: FormatOpt = Format.TABLE) -> None:
    """Read-only drift audit: running vs intended config, and the live checks."""
    from flatfab import reports
    from flatfab.cli.sot import audit_checks as sot_checks
    from flatfab.outdir import ready_dir
    from flatfab.workflows.commands.audit import audit as run_audit
    from flatfab.workflows.commands.audit import parse_duration, scheduled
    from flatfab.workflows.devices.progress import RichProgress

    project = project_of(ctx)
    interval = parse_duration(every, "--every") if every else None
    spread = (parse_duration(jitter, "--jitter") if jitter else
              (interval or 0) * 0.1)
    if count is not None and interval is None:
        raise InputError.single("--count", "", "only with --every")
    dist.refuse_options(distributed, shard_by, timeout)
    dist.refuse_ask_pass(project, distributed)
    plan_state = project.plan
    # a folder that cannot take the reports is refused before any device is read
    target = ready_dir(report_dir, "--report-dir") if report_dir is not None else None
    nornir = None if distributed else nornir_for(project, workers)

    def once() -> int:
        if nornir is None:
            report = dist.audit(project, shard_by=shard_by, timeout=timeout,
                                lossless=lossless, physical=physical, probes=probes,
                                sot=sot_checks(project) if sot else None)
        else:
            report = run_audit(nornir, plan_state, lossless=lossless, physical=physical,
                               probes=probes,
                               progress=RichProgress(enabled=fmt is Format.TABLE),
                               sot=sot_checks(project) if sot else None)
            nornir.close_connections()
        written = reports.write_all(report, target) if target is not None else {}
        _show_audit(report, fmt, written)
        return report.status.exit_code

    code = once() if interval is None else scheduled(once, interval, spread, count)
    raise typer.Exit(code)


def _show_audit(report: AuditReport, fmt: Format, written: dict[str, Path]) -> None:
    from flatfab.cli import output
    from flatfab.reports import json_report
    from flatfab.reports.model import AuditStatus

    output.unread_lines(report.unread)
    if fmt is Format.JSON:
        sys.stdout.write(json_report.render(report))
        sys.stdout.flush()
        return
    output.findings_table(report.read_findings, f"findings on {report.fabric}")
    for device in report.drift:
        for section in device.sections:
            output.diff_text(f"{device.device} [{section.section}] drift", section.diff)
    drifted = [d.device for d in report.drift]
    status = {AuditStatus.CLEAN: "[green]clean", AuditStatus.DRIFT: "[red]DRIFT",
              AuditStatus.ERROR: "[red]ERROR",
              AuditStatus.INCOMPLETE: "[yellow]INCOMPLETE"}[report.status]
    unmanaged = sum(1 for d in report.devices if not d.managed)
    read = len(report.devices) - unmanaged  # the devices an audit reads
    skipped = len(report.read_findings) - len(report.judged_findings)
    console.print(f"audit {report.fabric} {time.strftime('%H:%M:%S')}: {status}[/] - "
                  f"{read - len(report.unread)} of {read} "
                  f"devices read{escape(output.unread_note(report.unread))}"
                  f"{f' ({unmanaged} unmanaged hosts never read)' if unmanaged else ''}, "
                  f"{len(report.checks_run)} checks, {len(report.judged_findings)} findings"
                  f"{f', {skipped} not judged' if skipped else ''}"
                  f"{output.settings_note(report.read_findings)}, "
                  f"config drift on {len(drifted)} devices"
                  f"{': ' + ', '.join(drifted) if drifted else ''}; "
                  f"{report.duration_s:.1f} s", soft_wrap=True)
    if "html" in written:
        console.print(f"reports: {written['html'].parent} (open {written['html'].name})")


def register(app: typer.Typer) -> None:
    app.command()(rollback)
    app.command("runs")(list_runs)
    app.command()(audit)
