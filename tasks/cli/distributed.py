"""The distributed side of the CLI: `verify/audit --distributed`, `rollout --dry-run
--distributed`, `worker` and `beat`.

Celery is imported inside these functions only, so plan, render, check and a single-process
verify never load it. The coordinator needs no device credentials and no inventory (a
runbook that selects inventory groups aside): workers read the devices.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from flatfab.cli.console import err_console
from flatfab.cli.context import project_of
from flatfab.cli.options import ShardByOpt, WorkersOpt
from flatfab.errors import InputError
from flatfab.extras import require

if TYPE_CHECKING:
    from flatfab.distributed.config import Config
    from flatfab.distributed.coordinator import CeleryGather
    from flatfab.model.state import FabricState
    from flatfab.reports.model import AuditReport
    from flatfab.runbook.schedule import Schedule
    from flatfab.workflows.commands.audit import SotChecks
    from flatfab.workflows.commands.rollout import RolloutResult
    from flatfab.workflows.commands.verify import Report
    from flatfab.workflows.project.layout import Project
    from flatfab.workflows.runs.journal import Journal
    from flatfab.workflows.sharding.shard_run import Kind
    from flatfab.workflows.sharding.sharded import Gathered, Sharding
    from flatfab.workflows.sharding.shards import ShardBy

DEFAULT_TIMEOUT = 900.0


def refuse_options(distributed: bool, shard_by: str | None, timeout: float | None) -> None:
    """--shard-by and --timeout mean something only for a distributed run."""
    if distributed:
        return
    for option, value in (("--shard-by", shard_by), ("--timeout", timeout)):
        if value is not None:
            raise InputError.single(option, "", "only with --distributed")


def refuse_ask_pass(project: Project, distributed: bool) -> None:
    """A distributed run's workers log in, each with its own credentials: a password typed
    here would go nowhere."""
    if distributed and project.credentials.asking:
        raise InputError.single("--ask-pass", "", "a distributed run's workers log in to the "
                                "devices, with their own credentials: start them with "
                                "`flatfab --ask-pass worker` (or give them FLATFAB_PASSWORD_* "
                                "variables)")


def _config() -> Config:
    require("distributed", "a distributed run (Celery on Redis)")
    from flatfab.distributed.config import from_env

    return from_env()


def _gather(timeout: float | None) -> CeleryGather:
    config = _config()
    from flatfab.distributed.coordinator import CeleryGather

    return CeleryGather(config, timeout or DEFAULT_TIMEOUT)


def _sharding(plan: FabricState, kind: Kind, by: ShardBy | None, *, probes: bool = True,
              probe_fanout: int | None = None, physical: bool = False) -> Sharding:
    from flatfab.workflows.sharding.sharded import Sharding
    from flatfab.workflows.sharding.shards import default_shard_by

    return Sharding.of(plan, kind, by or default_shard_by(plan), probes=probes,
                       probe_fanout=probe_fanout, physical=physical)


def _by(shard_by: str | None) -> ShardBy | None:
    from flatfab.workflows.sharding.shards import parse_shard_by

    return parse_shard_by(shard_by) if shard_by else None


def _tell(sharding: Sharding, gather: CeleryGather, gathered: Gathered) -> None:
    """On stderr: the run, and every shard that failed with its devices (the report names
    each device too)."""
    err_console.print(f"distributed run {gather.run_id}: {len(sharding.shards)} shards by "
                      f"{sharding.spec.shard_by}, {len(gathered.failed)} failed",
                      soft_wrap=True)
    for shard in sharding.shards:
        if shard.id in gathered.failed:
            err_console.print(f"[red]error:[/] shard {shard.id} ({len(shard.devices)} devices: "
                              f"{escape(', '.join(shard.devices))}) failed: "
                              f"{escape(gathered.failed[shard.id])}", soft_wrap=True)


def verify(project: Project, *, shard_by: str | None, timeout: float | None, probes: bool,
           probe_fanout: int | None, only_checks: list[str] | None) -> Report:
    from flatfab.workflows.commands.verify import asks_physical
    from flatfab.workflows.sharding.sharded import verify_sharded

    by = _by(shard_by)
    gather = _gather(timeout)
    plan = project.plan
    sharding = _sharding(plan, "verify", by, probes=probes, probe_fanout=probe_fanout,
                         physical=asks_physical(only_checks))
    report, gathered = verify_sharded(plan, sharding, gather, only_checks)
    _tell(sharding, gather, gathered)
    return report


def audit(project: Project, *, shard_by: str | None, timeout: float | None, lossless: bool,
          probes: bool, sot: SotChecks | None, physical: bool = False) -> AuditReport:
    from flatfab.workflows.sharding.sharded import audit_sharded

    by = _by(shard_by)
    gather = _gather(timeout)
    plan = project.plan
    sharding = _sharding(plan, "audit", by, probes=probes, physical=physical)
    report, gathered = audit_sharded(plan, sharding, gather, lossless=lossless,
                                     physical=physical, sot=sot)
    _tell(sharding, gather, gathered)
    return report


def dry_run(project: Project, schedule: Schedule, journal: Journal, *, shard_by: str | None,
            timeout: float | None) -> RolloutResult:
    """rollout --dry-run with its diff pass in shards (nothing else of a rollout is)."""
    from flatfab.workflows.commands.rollout import diff_only
    from flatfab.workflows.sharding.sharded import ShardedDiffs

    by = _by(shard_by)
    gather = _gather(timeout)
    plan = project.plan
    sharding = _sharding(plan, "diff", by)
    diffs = ShardedDiffs(plan, sharding, gather)
    result = diff_only(plan, schedule, journal, diffs)
    _tell(sharding, gather, diffs.gathered)
    return result


def worker(ctx: typer.Context,
           concurrency: Annotated[int, typer.Option(
               min=1, max=64, help="shards this worker reads at once (one process each)")] = 2,
           name: Annotated[str, typer.Option(
               help="worker name, unique per broker (%h: this host's name)")] = "flatfab@%h",
           loglevel: Annotated[str, typer.Option(help="DEBUG, INFO, WARNING or ERROR")] = "INFO",
           workers: WorkersOpt = 20) -> None:
    """Read shards of distributed runs of this project (a Celery worker).

    It consumes FLATFAB_BROKER_URL's queue; device credentials come from its own
    environment and inventory, never from the broker. With --ask-pass it asks for the
    fabric's (--fabric) credential sets once, at start, and keeps them in memory."""
    from flatfab.sot import inventory as sot_inventory

    project = project_of(ctx)
    config = _config()
    from flatfab.distributed import worker as celery_worker
    from flatfab.distributed.context import WorkerContext
    from flatfab.distributed.store import client, reachable

    reachable(config, client(config))
    credentials = project.credentials
    if credentials.asking:
        # checked and asked now, at the terminal: its pool processes have none
        sot_inventory.build(project.inventory_dir, project.plan, workers,
                            project.address_spaces, credentials=credentials)
        credentials = credentials.settled()
    celery_worker.serve(WorkerContext(root=project.root, config=config, workers=workers,
                                      inventory_override=project.inventory_override,
                                      state_override=project.state_override,
                                      timeouts=project.timeouts,
                                      credentials=credentials),
                        concurrency=concurrency, name=name, loglevel=_level(loglevel))


def _level(text: str) -> str:
    if text.upper() not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
        raise InputError.single("--loglevel", "", f"{text!r} is not DEBUG, INFO, WARNING or "
                                "ERROR")
    return text.upper()


def beat(ctx: typer.Context,
         every: Annotated[str, typer.Option(help="audit interval, like 15m or 1h")],
         report_dir: Annotated[Path, typer.Option(
             help="where the worker that merges writes every report format (a path every "
             "worker can write)", file_okay=False)],
         shard_by: ShardByOpt = None,
         lossless: Annotated[bool, typer.Option(help="include the lossless catalog")] = True,
         probes: Annotated[bool, typer.Option(help="ping between hosts")] = True,
         loglevel: Annotated[str, typer.Option(help="DEBUG, INFO, WARNING or ERROR")] = "INFO",
         ) -> None:
    """Send the fabric's audit to the workers every --every (Celery beat).

    The workers read it in shards; the one that merges writes the reports once every
    shard ended."""
    from flatfab.workflows.commands.audit import parse_duration
    from flatfab.workflows.sharding.shards import default_shard_by, shards

    project = project_of(ctx)
    interval = parse_duration(every, "--every")
    by = _by(shard_by)
    plan = project.plan  # a bad intent or shard spec is refused here, not on every round
    shards(plan, by or default_shard_by(plan))
    config = _config()
    from flatfab.distributed.beat import run_beat
    from flatfab.distributed.store import client, reachable

    reachable(config, client(config))
    project.state_dir.mkdir(parents=True, exist_ok=True)
    run_beat(config, fabric=project.fabric, every_s=interval, report_dir=report_dir.resolve(),
             shard_by=by, lossless=lossless, probes=probes,
             schedule_file=project.state_dir / f"beat-{project.fabric}.schedule",
             loglevel=_level(loglevel))


def register(app: typer.Typer) -> None:
    app.command()(worker)
    app.command()(beat)
