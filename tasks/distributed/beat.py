"""`flatfab beat`: Celery beat sending a fabric's scheduled audit, and the two tasks the
workers run for it.

Every `--every` beat sends one `flatfab.audit` task (it expires after one interval, so a
backlog never piles up). A worker takes it, plans and shards the fabric, stores the run's
spec and fans the shards out as a chord: the shard tasks are the ones a distributed CLI
run sends, and the chord's callback (`flatfab.audit_report`) runs once every shard ended.
It reads the outcomes, refuses results from another plan, builds the audit with the
coordinator's functions (flatfab.workflows.sharding.sharded) and writes every report format into
`--report-dir` on the worker that runs it, each file atomically (flatfab.reports.write_all):
put the report directory on storage every worker sees, or run one worker.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from celery import chord

from flatfab import reports
from flatfab.distributed import context
from flatfab.distributed.app import AUDIT_TASK, REPORT_TASK, SHARD_TASK, make_app
from flatfab.distributed.config import Config
from flatfab.distributed.coordinator import PlanMismatchError, forget, outcomes
from flatfab.distributed.keys import RunKeys, new_run_id
from flatfab.model.state import FabricState
from flatfab.outdir import ready_dir
from flatfab.workflows.sharding.shard_run import RunSpec
from flatfab.workflows.sharding.sharded import Gathered, Sharding, audit_sharded
from flatfab.workflows.sharding.shards import Shard, ShardBy, default_shard_by, parse_shard_by

log = logging.getLogger("flatfab.beat")


def _sharding(ctx: context.WorkerContext, fabric: str, shard_by: str,
              probes: bool) -> tuple[FabricState, Sharding]:
    _, plan, hashed = ctx.plan(fabric)
    by = parse_shard_by(shard_by) if shard_by else default_shard_by(plan)
    return plan, Sharding.of(plan, "audit", by, probes=probes, hashed=hashed)


def scheduled_audit(task: Any, fabric: str, report_dir: str, shard_by: str, lossless: bool,
                    probes: bool) -> str:
    """Beat's task: start one sharded audit of `fabric` as a chord; returns its run id."""
    ctx = context.current()
    _, sharding = _sharding(ctx, fabric, shard_by, probes)
    started_epoch = time.time()
    run_id = new_run_id("audit", fabric, started_epoch)
    ctx.store.set(RunKeys(run_id).spec, json.dumps(sharding.spec.as_dict()),
                  ex=ctx.config.result_ttl)
    queue = ctx.config.queue
    header = [task.app.signature(SHARD_TASK, args=(fabric, s.id, run_id, "audit"), queue=queue)
              for s in sharding.shards]
    callback = task.app.signature(REPORT_TASK, args=(fabric, run_id, report_dir,
                                                     sharding.spec.shard_by, lossless, probes,
                                                     started_epoch), queue=queue)
    chord(header)(callback)
    log.info("audit %s: run %s, %d shards", fabric, run_id, len(sharding.shards))
    return run_id


def audit_report(task: Any, keys: list[str], fabric: str, run_id: str, report_dir: str,
                 shard_by: str, lossless: bool, probes: bool, started_epoch: float) -> str:
    """The chord's callback: merge every shard into one audit and write its reports."""
    del task, keys  # outcomes are read by shard from Redis, not from the chord's results
    ctx = context.current()
    started = time.monotonic()
    plan, sharding = _sharding(ctx, fabric, shard_by, probes)
    store = ctx.store
    raw = store.get(RunKeys(run_id).spec)
    if raw is None:
        raise LookupError(f"run {run_id} has no spec left (expired?): no report written")
    expected = RunSpec.from_dict(json.loads(raw)).plan_hash
    if expected != sharding.spec.plan_hash:
        raise PlanMismatchError(f"run {run_id} was planned as {expected}, this worker plans "
                                f"{sharding.spec.plan_hash}: no report written")
    gathered = outcomes(store, run_id, sharding.shards, expected, started)

    def gather(spec: RunSpec, found: list[Shard]) -> Gathered:
        return gathered

    report, _ = audit_sharded(plan, sharding, gather, lossless=lossless,
                              clock=lambda: started_epoch)
    written = reports.write_all(report, ready_dir(Path(report_dir), "--report-dir"))
    forget(store, run_id, sharding.shards)
    for shard_id, why in sorted(gathered.failed.items()):
        log.error("audit %s: shard %s failed: %s", fabric, shard_id, why)
    log.info("audit %s: %s, %d findings, drift on %d devices; reports in %s", fabric,
             report.status_word, len(report.findings), len(report.drift),
             written["html"].parent)
    return str(written["json"])


def register(app: Any) -> None:
    app.task(name=AUDIT_TASK, bind=True)(scheduled_audit)
    app.task(name=REPORT_TASK, bind=True)(audit_report)


def run_beat(config: Config, *, fabric: str, every_s: float, report_dir: Path,
             shard_by: ShardBy | None, lossless: bool, probes: bool, schedule_file: Path,
             loglevel: str = "INFO") -> None:
    """Run beat until it is stopped; it sends tasks and never reads a device itself."""
    app = make_app(config)
    register(app)
    app.conf.beat_schedule = {f"flatfab-audit-{fabric}": {
        "task": AUDIT_TASK, "schedule": every_s,
        "args": (fabric, str(report_dir), str(shard_by) if shard_by else "", lossless, probes),
        "options": {"queue": config.queue, "expires": every_s}}}
    app.Beat(schedule=str(schedule_file), loglevel=loglevel,
             max_interval=min(60.0, every_s)).run()
