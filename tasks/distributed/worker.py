"""`flatfab --root DIR worker`: a Celery worker reading shards of the project's fabrics.

A shard task carries only (fabric, shard id, run id, kind). The worker reads the run's
spec from Redis, plans the fabric from its own intent (cached by intent digest), finds the
shard in its own plan, reads its devices with its own inventory and credentials (its
environment, as every flatfab command), drivers opened read-only, Nornir's threaded runner
with `--workers` threads, and stores the output with its plan hash under the shard's key.
The task returns only that key.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from flatfab import cpupin
from flatfab.distributed import beat, context
from flatfab.distributed.app import SHARD_TASK, make_app
from flatfab.distributed.delivery import Step, deliver
from flatfab.workflows.commands.verify import verify_probes
from flatfab.workflows.sharding import shard_run
from flatfab.workflows.sharding.shard_codec import as_data
from flatfab.workflows.sharding.shard_run import RunSpec
from flatfab.workflows.sharding.shards import by_id, parse_shard_by, shards


def read_shard(ctx: context.WorkerContext, spec: RunSpec, shard_id: str,
               worker: str) -> dict[str, Any]:
    """The payload a shard stores: who read it, from which plan, and what it read (nothing
    when this worker's plan is not the coordinator's: the coordinator refuses it)."""
    project, plan, mine = ctx.plan(spec.fabric)
    payload: dict[str, Any] = {"worker": worker, "plan_hash": mine, "shard": shard_id,
                               "output": None}
    if mine != spec.plan_hash:
        return payload
    nornir, shared = ctx.fabric_parts(spec.fabric, project, plan, mine)
    by = shared.get(("shards", spec.shard_by))
    if by is None:
        by = shared[("shards", spec.shard_by)] = by_id(shards(plan,
                                                              parse_shard_by(spec.shard_by)))
    found = by.get(shard_id)
    if found is None:
        raise LookupError(f"no shard {shard_id} in the plan of {spec.fabric} "
                          f"(by {spec.shard_by})")
    probes = shared.get(("probes", spec.probes, spec.probe_fanout))
    if probes is None:
        probes = shared[("probes", spec.probes, spec.probe_fanout)] = verify_probes(
            plan, spec.probes, spec.probe_fanout)
    try:
        output = shard_run.run_shard(nornir, plan, spec, shard_id, found.devices, probes)
    finally:
        nornir.close_connections()
    payload["output"] = as_data(output)
    return payload


def shard_task(task: Any, fabric: str, shard_id: str, run_id: str, kind: str) -> str:
    """Celery task body: one delivery of one shard; returns the key its outcome is under."""
    ctx = context.current()
    worker = str(task.request.hostname or "worker")

    def read(spec: RunSpec) -> dict[str, Any]:
        if spec.fabric != fabric or spec.kind != kind:
            raise ValueError(f"task says {kind} of {fabric}, run {run_id} is {spec.kind} of "
                             f"{spec.fabric}")
        return read_shard(ctx, spec, shard_id, worker)

    step, key = deliver(ctx.store, run_id, shard_id, worker, ctx.config.result_ttl, read)
    if step is Step.RETRY:
        raise task.retry(countdown=0, max_retries=None)
    return key


def register(app: Any) -> None:
    app.task(name=SHARD_TASK, bind=True, acks_late=True, reject_on_worker_lost=True,
             max_retries=None)(shard_task)
    beat.register(app)


def serve(ctx: context.WorkerContext, *, concurrency: int, name: str,
          loglevel: str = "INFO") -> None:
    """Run the worker until it is stopped (SIGTERM: warm shutdown, shards finish)."""
    context.install(ctx)
    # workers share a machine's CPUs with each other: a read pinned to the CPU each happened
    # to be on could put two on one CPU, where the scheduler could not part them
    os.environ.setdefault(cpupin.ENV, "0")
    # Nornir logs every task's arguments (plans, intended configs) at INFO, paramiko every
    # login: the worker's log keeps what the worker itself says
    for noisy in ("nornir", "paramiko", "netmiko", "napalm"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    app = make_app(ctx.config)
    register(app)
    app.worker_main(["worker", f"--concurrency={concurrency}", f"--hostname={name}",
                     f"--queues={ctx.config.queue}", f"--loglevel={loglevel}", "--pool=prefork",
                     "--without-gossip", "--without-mingle", "--without-heartbeat"])
