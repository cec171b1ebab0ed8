"""flatfab: plan, render, check, roll out and verify a flat L3 AI fabric; run its lab.

Exit codes: 0 all good; 1 findings, drift, or a rollout that did not land; 2 could not run;
3 incomplete: some devices could not be read (each named with why), nothing read is wrong.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer
from rich.markup import escape
from typer.core import TyperGroup

from flatfab.cli import distributed as dist
from flatfab.cli import logs, ops
from flatfab.cli.acceptance import accept
from flatfab.cli.checks import checks
from flatfab.cli.cluster import cluster_app
from flatfab.cli.console import Format, console, emit_json, err_console, warn_input
from flatfab.cli.context import LazyProject, nornir_for, project_of
from flatfab.cli.init import init
from flatfab.cli.lab import lab_app
from flatfab.cli.options import (
    BreakLockOpt,
    FormatOpt,
    SchedulerOpt,
    ShardByOpt,
    TimeoutOpt,
    WorkersOpt,
)
from flatfab.cli.sot import sot_app
from flatfab.cli.watch import watch
from flatfab.errors import FlatfabError, InputError

if TYPE_CHECKING:
    from flatfab.workflows.commands.rollout import RolloutResult
    from flatfab.workflows.project.layout import Project

# the order an operator meets the commands in (typer lists them as registered, groups last):
# start a project, plan and check it, try it in a lab, roll it out, verify, audit and watch
# it, then the runs and their rollback, the source of truth, the distributed workers
COMMAND_ORDER: Final = ("init", "plan", "check", "checks", "render", "lab", "rollout", "verify",
                        "accept", "audit", "watch", "runs", "rollback", "cluster", "sot", "worker",
                        "beat")


class OperatorOrder(TyperGroup):
    """Lists commands in COMMAND_ORDER (any other after them, as registered)."""

    # Any: typer's Context type is click's in one typer release and its own copy's in another
    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        return sorted(names, key=lambda n: COMMAND_ORDER.index(n) if n in COMMAND_ORDER
                      else len(COMMAND_ORDER))


app = typer.Typer(cls=OperatorOrder, no_args_is_help=True, pretty_exceptions_enable=False,
                  help=__doc__, context_settings={"help_option_names": ["-h", "--help"]})
app.command()(init)
app.command()(checks)
app.add_typer(lab_app, name="lab")
app.add_typer(cluster_app, name="cluster")
app.add_typer(sot_app, name="sot")
ops.register(app)
dist.register(app)
app.command()(watch)
app.command()(accept)


def _version(value: bool) -> None:
    if not value:
        return
    from importlib import metadata

    try:
        number = metadata.version("flatfab")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        number = "unknown (not installed)"
    console.print(f"flatfab {number}")
    raise typer.Exit()


@app.callback()
def _global(ctx: typer.Context,
            fabric: Annotated[str | None, typer.Option(
                help="fabric name: intents/<fabric>/ (default: the project file's, else lab)")
            ] = None,
            root: Annotated[Path | None, typer.Option(
                help="project root (default: the nearest folder upwards with a "
                "flatfab.yaml, else this one)", file_okay=False)] = None,
            inventory_dir: Annotated[Path | None, typer.Option(
                "--inventory", help="Nornir inventory (default inventory/<fabric>/)")] = None,
            state_dir: Annotated[Path | None, typer.Option(
                help="journals and locks (default .flatfab/)")] = None,
            connect_timeout: Annotated[float | None, typer.Option(
                min=0.1, max=600, help="seconds a device's session may take to open (TCP, "
                "SSH, login) before the device is named unread (default: the project "
                "file's, else 10)")] = None,
            command_timeout: Annotated[float | None, typer.Option(
                min=0.1, max=3600, help="seconds one show command may take to answer before "
                "the device is named unread (default: the project file's, else 60)")] = None,
            debug: Annotated[bool, typer.Option(
                "--debug", help="print tracebacks and the connection libraries' logs on "
                "stderr (never a password)")] = False,
            log_file: Annotated[Path | None, typer.Option(
                help="write tracebacks and the connection libraries' logs to this file "
                "(never a password)", dir_okay=False)] = None,
            ask_pass: Annotated[bool, typer.Option(
                "--ask-pass", help="ask for the password of each credential set (the inventory "
                "entry that names the user) once, without echo, before connecting; wins over "
                "FLATFAB_PASSWORD_<SET> and FLATFAB_PASSWORD")] = False,
            _version_option: Annotated[bool, typer.Option(
                "--version", is_eager=True, callback=_version,
                help="print flatfab's version and exit")] = False,
            ) -> None:
    logs.configure(debug=debug, log_file=log_file)
    ctx.obj = LazyProject(lambda: project_from(fabric, root, inventory_dir, state_dir,
                                               timeouts=(connect_timeout, command_timeout),
                                               ask_pass=ask_pass))


def project_from(fabric: str | None, root: Path | None, inventory_dir: Path | None,
                 state_dir: Path | None, *,
                 timeouts: tuple[float | None, float | None] = (None, None),
                 ask_pass: bool = False) -> Project:
    """The project the options name: the command line first, then the project file."""
    from flatfab.cli.password_prompt import ask_password
    from flatfab.workflows.devices.credentials import Credentials
    from flatfab.workflows.project import projectfile
    from flatfab.workflows.project.layout import Project

    top = root.resolve() if root is not None else (projectfile.find_root(Path.cwd().resolve())
                                                   or Path.cwd().resolve())
    settings = projectfile.load(top)
    name = fabric if fabric is not None else settings.fabric or projectfile.DEFAULT_FABRIC
    if inventory_dir is None and settings.inventory is not None:
        inventory_dir = top / settings.inventory.replace("{fabric}", name)
    if state_dir is None and settings.state_dir is not None:
        state_dir = top / settings.state_dir
    return Project(root=top, fabric=name, settings=settings,
                   inventory_override=inventory_dir.resolve() if inventory_dir else None,
                   state_override=state_dir.resolve() if state_dir else None,
                   on_warning=warn_input, connect_timeout=timeouts[0],
                   command_timeout=timeouts[1],
                   credentials=Credentials(ask=ask_password if ask_pass else None))


@app.command()
def plan(ctx: typer.Context, fmt: FormatOpt = Format.TABLE,
         diagram: Annotated[Path | None, typer.Option(
             help="also write the fabric's diagram to this SVG file")] = None) -> None:
    """Show the planned state of every device (addresses, ASNs, sessions, VRFs)."""
    from flatfab.cli import output
    from flatfab.workflows.commands.render_files import write_diagram

    project = project_of(ctx)
    if diagram is not None:
        write_diagram(project.plan, diagram)
    if fmt is Format.JSON:
        emit_json(project.plan.model_dump(mode="json"))
    else:
        output.plan_table(project.plan)


@app.command()
def render(ctx: typer.Context,
           out: Annotated[Path, typer.Option(help="directory for <device>.conf files")],
           device: Annotated[list[str] | None, typer.Option(help="only these devices")] = None,
           ) -> None:
    """Write every device's configuration (byte-identical for the same intent)."""
    from flatfab.outdir import ready_dir
    from flatfab.workflows.commands.render_files import write_configs

    project = project_of(ctx)
    unknown = [d for d in device or [] if d not in project.plan.devices]
    if unknown:
        raise InputError.single("--device", "", f"not in the plan: {', '.join(unknown)}")
    names = device or list(project.plan.devices)
    write_configs(project.plan, ready_dir(out, "--out"), names)
    err_console.print(f"wrote {len(names)} configs to {out}")


@app.command()
def check(ctx: typer.Context, scheduler: SchedulerOpt = None,
          fmt: FormatOpt = Format.TABLE) -> None:
    """Run the static checks on the plan, before anything is pushed."""
    from flatfab.checks import CATALOG, CheckContext, Stage, run_checks
    from flatfab.cli import output
    from flatfab.workflows.commands import scheduler as sched

    project = project_of(ctx)
    given = sched.read_files(scheduler or [])
    findings = run_checks(CheckContext(state=project.plan, plan=project.plan,
                                       stage=Stage.STATIC))
    if given:
        findings = sorted(findings + sched.judge(project.plan, given),
                          key=lambda f: f.sort_key)
    if fmt is Format.JSON:
        emit_json(output.findings_json(findings, fabric=project.fabric, stage="static"))
    else:
        static = [c for c in sorted(CATALOG) if Stage.STATIC in CATALOG[c].stages]
        static += sched.ids_for(given, live=False)
        output.checks_table(static, findings, f"static checks of {project.fabric}")
        output.findings_table(findings, f"findings in the plan of {project.fabric}")
        console.print(f"static checks of {project.fabric}: {len(findings)} findings"
                      if findings else f"static checks of {project.fabric}: all passed")
    raise typer.Exit(1 if any(f.severity.fails for f in findings) else 0)


@app.command()
def rollout(ctx: typer.Context,
            runbook: Annotated[Path | None, typer.Option(
                help="rollout plan (runbooks/*.yaml); default: every device in one phase",
                dir_okay=False)] = None,
            dry_run: Annotated[bool, typer.Option("--dry-run", help="diff only")] = False,
            yes: Annotated[bool, typer.Option("--yes", help="continue at phase pauses "
                                              "without asking")] = False,
            resume: Annotated[str | None, typer.Option(
                help="continue an interrupted or stopped run")] = None,
            revert_in: Annotated[int | None, typer.Option(
                min=30, max=3600, help="seconds before an unconfirmed commit reverts "
                "(default: the plan's, else 180)")] = None,
            gate_timeout: Annotated[float, typer.Option(
                min=5, max=1800, help="seconds to wait for convergence (without "
                "--runbook)")] = 90,
            break_lock: BreakLockOpt = False,
            distributed: Annotated[bool, typer.Option(
                "--distributed", help="with --dry-run: diff in shards on flatfab workers "
                "(FLATFAB_BROKER_URL)")] = False,
            shard_by: ShardByOpt = None, timeout: TimeoutOpt = None,
            workers: WorkersOpt = 20, fmt: FormatOpt = Format.TABLE) -> None:
    """Diff every device, then commit phase by phase with a revert timer, gate, confirm."""
    from flatfab.cli.rollout_telemetry import source_for
    from flatfab.workflows.commands.rollout import rollout as run_rollout
    from flatfab.workflows.devices.progress import RichProgress
    from flatfab.workflows.runs.journal import Journal
    from flatfab.workflows.runs.lock import fabric_lock
    from flatfab.workflows.runs.runstate import refuse_if_interrupted
    from flatfab.yamlio import dump_yaml

    project = project_of(ctx)
    dist.refuse_options(distributed, shard_by, timeout)
    dist.refuse_ask_pass(project, distributed)
    if distributed:
        if not dry_run or resume is not None:
            raise InputError.single("--distributed", "", "only with --dry-run and without "
                                    "--resume: a distributed rollout only diffs")
        distributed_dry_run(project, runbook, shard_by, timeout, break_lock, workers, fmt,
                            revert_in, gate_timeout)
        return
    plan_state = project.plan
    nornir = nornir_for(project, workers)
    with fabric_lock(project.state_dir, project.fabric, "rollout", break_lock) as held:
        ops.after_break(project, held)
        if resume is not None:
            journal, state, rollout_plan, schedule = ops.resumable(project, nornir, resume)
            ask = ops.pause_answer(rollout_plan, yes=yes, dry_run=dry_run,
                                   from_phase=state.phase_index)
            telemetry = None if dry_run else source_for(project, rollout_plan, workers)
        else:
            if not dry_run:
                refuse_if_interrupted(project.state_dir, project.fabric)
            rollout_plan, schedule = ops.load_plan(project, ops.inventory_groups(nornir),
                                                   runbook, workers, revert_in, gate_timeout)
            ask = ops.pause_answer(rollout_plan, yes=yes, dry_run=dry_run)  # before any journal
            # bad gNMI entries are refused before any journal too
            telemetry = None if dry_run else source_for(project, rollout_plan, workers)
            state = None
            journal = Journal.start(project.state_dir, "rollout", project.fabric)
            journal.write("runbook.yaml", dump_yaml(rollout_plan.model_dump(mode="json")))
        if revert_in is not None:
            rollout_plan = rollout_plan.model_copy(update={"revert_in": revert_in})
        result = run_rollout(nornir, plan_state, rollout_plan, schedule, journal,
                             dry_run=dry_run, ask=ask, resume=state,
                             progress=RichProgress(enabled=fmt is Format.TABLE),
                             telemetry=telemetry)
    nornir.close_connections()
    _show_rollout(result, len(plan_state.managed()), fmt)


def _show_rollout(result: RolloutResult, total: int, fmt: Format) -> None:
    """`total`: the devices a rollout may touch (every one but the unmanaged hosts)."""
    from flatfab.cli import output

    output.unread_lines(result.unread)
    if fmt is Format.JSON:
        emit_json(result.summary())
    else:
        output.rollout_report(result, total)
    raise typer.Exit(result.exit_code)


def distributed_dry_run(project: Project, runbook: Path | None, shard_by: str | None,
                        timeout: float | None, break_lock: bool, workers: int, fmt: Format,
                        revert_in: int | None, gate_timeout: float) -> None:
    """rollout --dry-run --distributed: the plan, its schedule and the journal here, the
    diffs from the workers. The inventory is read here only for a runbook's groups."""
    from flatfab.sot import inventory as sot_inventory
    from flatfab.workflows.runs.journal import Journal
    from flatfab.workflows.runs.lock import fabric_lock
    from flatfab.yamlio import dump_yaml

    plan_state = project.plan
    groups = ops.inventory_groups(sot_inventory.build(  # read only: the workers log in
        project.inventory_dir, plan_state, workers, project.address_spaces,
        connects=False)) if runbook else {}
    with fabric_lock(project.state_dir, project.fabric, "rollout", break_lock) as held:
        ops.after_break(project, held)
        rollout_plan, schedule = ops.load_plan(project, groups, runbook, workers, revert_in,
                                               gate_timeout)
        journal = Journal.start(project.state_dir, "rollout", project.fabric)
        journal.write("runbook.yaml", dump_yaml(rollout_plan.model_dump(mode="json")))
        result = dist.dry_run(project, schedule, journal, shard_by=shard_by, timeout=timeout)
    _show_rollout(result, len(plan_state.managed()), fmt)


@app.command()
def verify(ctx: typer.Context,
           probes: Annotated[bool, typer.Option(help="ping between hosts")] = True,
           probe_fanout: Annotated[int | None, typer.Option(
               min=0, help="leaves each host pings (default: enough to cover every leaf "
               "pair, at most 16; 0: all)")] = None,
           check_ids: Annotated[list[str] | None, typer.Option(
               "--check", help="run only these check ids")] = None,
           lossless: Annotated[bool, typer.Option(
               "--lossless", help="also check the lossless plane end to end")] = False,
           physical: Annotated[bool, typer.Option(
               "--physical", help="also check the physical layer: modules against the link "
               "classes, FEC, BER, optical power, flaps, speed and lanes")] = False,
           traffic: Annotated[bool, typer.Option(
               "--traffic", help="send RoCEv2 and CNP flows and follow them by class "
               "counters")] = False,
           burn_in: Annotated[str | None, typer.Option(
               "--burn-in", metavar="DURATION", help="accept or reject every link: read the "
               "physical layer, send the test flows for this long (30s, 10m, 1h), read it "
               "again")] = None,
           report_dir: Annotated[Path | None, typer.Option(
               help="with --burn-in: write its report here in every format (html, json, "
               "junit.xml, md, prom)")] = None,
           scheduler: SchedulerOpt = None,
           distributed: Annotated[bool, typer.Option(
               "--distributed", help="read the devices in shards on flatfab workers "
               "(FLATFAB_BROKER_URL) and judge here")] = False,
           shard_by: ShardByOpt = None, timeout: TimeoutOpt = None,
           workers: WorkersOpt = 20, fmt: FormatOpt = Format.TABLE) -> None:
    """Read every device (read-only) and run the live checks: BGP, ECMP, MTU, tenancy."""
    from flatfab.checks import CATALOG
    from flatfab.cli import output
    from flatfab.reports.model import judged
    from flatfab.workflows.commands import scheduler as sched
    from flatfab.workflows.commands.traffic import TRAFFIC_CHECKS, run_traffic
    from flatfab.workflows.commands.verify import verify as run_verify
    from flatfab.workflows.devices.progress import RichProgress

    project = project_of(ctx)
    given = sched.read_files(scheduler or [])
    if report_dir is not None and burn_in is None:
        raise InputError.single("--report-dir", "", "only with --burn-in (audit writes its "
                                "own reports)")
    if burn_in is not None:
        _refuse_with_burn_in(check_ids=bool(check_ids), traffic=traffic, lossless=lossless,
                             physical=physical, distributed=distributed,
                             scheduler=bool(given))
        _burn_in(project, burn_in, report_dir, workers, fmt)
    unknown = [c for c in check_ids or [] if c not in CATALOG]
    if unknown:
        raise InputError.single("--check", "", f"unknown check id {unknown[0]!r}")
    dist.refuse_options(distributed, shard_by, timeout)
    dist.refuse_ask_pass(project, distributed)
    if distributed and traffic:
        raise InputError.single("--traffic", "", "flows are sent and followed from one "
                                "process: not with --distributed")
    if not check_ids:
        check_ids = [c for c, item in CATALOG.items()
                     if (lossless or not item.lossless) and (physical or not item.physical)]
    if distributed:
        report = dist.verify(project, shard_by=shard_by, timeout=timeout, probes=probes,
                             probe_fanout=probe_fanout, only_checks=check_ids)
    else:
        nornir = nornir_for(project, workers)
        report = run_verify(nornir, project.plan, probes=probes, probe_fanout=probe_fanout,
                            only_checks=check_ids,
                            progress=RichProgress(enabled=fmt is Format.TABLE))
        if traffic:
            flows = run_traffic(nornir, project.plan)
            report.findings = sorted(report.findings + flows.findings,
                                     key=lambda f: f.sort_key)
            report.checks_run = sorted({*report.checks_run, *TRAFFIC_CHECKS})
            report.timings["traffic_s"] = flows.timings["total_s"]
            report.timings["traffic_packets"] = flows.packets
        nornir.close_connections()
    if given and report.observed is not None:
        report.findings = sorted(report.findings + sched.judge(project.plan, given,
                                                                report.observed),
                                 key=lambda f: f.sort_key)
        report.checks_run = sorted({*report.checks_run, *sched.ids_for(given, live=True)})
    output.unread_lines(report.unread)
    if fmt is Format.JSON:
        emit_json(output.findings_json(report.findings, fabric=project.fabric, stage="live",
                                       checks=report.checks_run, devices=report.devices,
                                       timings=report.timings, unread=report.unread,
                                       unmanaged=report.unmanaged,
                                       exit_code=report.exit_code))
    else:
        read = report.devices - len(report.unmanaged)  # the devices verify reads
        output.checks_table(report.checks_run, report.findings, f"verify {project.fabric}",
                            report.unread, read)
        output.findings_table(output.read_findings(report.findings, report.unread),
                              f"findings on {project.fabric}")
        status = ("[red]FAILED" if report.failed else "[yellow]INCOMPLETE" if report.incomplete
                  else "[green]passed")
        found = output.read_findings(report.findings, report.unread)
        verdicts = judged(found)
        skipped = len(found) - len(verdicts)
        unmanaged = (f" ({len(report.unmanaged)} unmanaged hosts never read)"
                     if report.unmanaged else "")
        console.print(f"verify {project.fabric}: {status}[/] - {len(report.checks_run)} checks "
                      f"on {read - len(report.unread)} of {read} devices"
                      f"{output.unread_note(report.unread)}{unmanaged}, {len(verdicts)} findings"
                      f"{f', {skipped} not judged' if skipped else ''}"
                      f"{output.settings_note(found)}, "
                      f"{report.timings['total_s']:.1f} s", soft_wrap=True)
    raise typer.Exit(report.exit_code)


def _refuse_with_burn_in(**given: bool) -> None:
    """A burn-in runs every live check, the flows and the physical layer, from one process:
    an option that would narrow or split it is refused, not ignored."""
    for name, set_ in given.items():
        if set_:
            raise InputError.single(f"--{name.replace('_', '-')}", "", "not with --burn-in: "
                                    "it runs every check, the flows and the physical layer, "
                                    "from this process")


def _burn_in(project: Any, duration: str, report_dir: Path | None, workers: int,
             fmt: Format) -> None:
    from flatfab import reports
    from flatfab.cli import output
    from flatfab.outdir import ready_dir
    from flatfab.workflows.commands.audit import parse_duration
    from flatfab.workflows.commands.burnin import burn_in_report, run_burn_in
    from flatfab.workflows.devices.progress import RichProgress

    seconds = parse_duration(duration, "--burn-in")
    target = ready_dir(report_dir, "--report-dir") if report_dir is not None else None
    nornir = nornir_for(project, workers)
    run = run_burn_in(nornir, project.plan, seconds,
                      progress=RichProgress(enabled=fmt is Format.TABLE),
                      tell=lambda what: err_console.print(
                          f"burn-in {project.fabric}: {what}", soft_wrap=True))
    nornir.close_connections()
    report = burn_in_report(project.plan, run)
    written = reports.write_all(report, target) if target is not None else {}
    result = run.report
    output.unread_lines(result.unread)
    if fmt is Format.JSON:
        emit_json(output.findings_json(
            result.findings, fabric=project.fabric, stage="burn-in", checks=result.checks_run,
            devices=result.devices, timings=result.timings, unread=result.unread,
            unmanaged=result.unmanaged, exit_code=result.exit_code,
            burn_in=output.burn_in_json(run.info),
            reports={k: str(v) for k, v in written.items()}))
    else:
        output.burn_in_table(run.info, project.fabric)
        output.findings_table(output.read_findings(result.findings, result.unread),
                              f"findings on {project.fabric}")
        for fmt_name, path in sorted(written.items()):
            err_console.print(f"wrote {fmt_name} report {path}", soft_wrap=True)
        console.print(output.burn_in_summary(run.info, project.fabric, result.exit_code),
                      soft_wrap=True)
    raise typer.Exit(result.exit_code)


@functools.cache
def command() -> Any:
    """The click command tree, built once per process: typer builds it again on every call,
    which costs more than most refusals (measured: 0.1 s of CPU a command)."""
    return typer.main.get_command(app)


def main() -> None:
    """Console entry point: bad input and unreachable labs become one line and exit 2."""
    try:
        command()()
    except InputError as exc:
        for problem in exc.problems:
            err_console.print(f"[red]error:[/] {escape(str(problem))}", soft_wrap=True)
        sys.exit(2)
    except FlatfabError as exc:
        err_console.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("[red]interrupted")
        sys.exit(2)
    except Exception as exc:
        logs.log_exception("internal error")  # --debug: on stderr; --log-file: in the file
        if os.environ.get("FLATFAB_DEBUG"):
            raise
        err_console.print(f"[red]internal error:[/] {type(exc).__name__}: {escape(str(exc))}"
                          + ("" if logs.debugging() else " (--debug shows its traceback)"),
                          soft_wrap=True)
        sys.exit(2)

