"""The Celery app of flatfab's distributed runs, configured from flatfab.distributed.config.

Delivery settings, and why:
- `task_acks_late` + `task_reject_on_worker_lost`: a task is acknowledged when it ends, not
  when it is taken, so a shard whose worker dies is delivered again (a dead pool process:
  at once; a dead worker: after the visibility timeout, see config);
- prefetch 1: a worker holds no more tasks than it runs, so a busy or dying worker does not
  sit on shards another could read;
- the Redis transport's visibility timeout from FLATFAB_VISIBILITY_TIMEOUT, and its sweep
  for unacked tasks often enough for that timeout to mean something;
- `worker_cancel_long_running_tasks_on_connection_loss`: a worker cut off from the broker
  stops its shards (the broker redelivers them) rather than finish them twice.
Task messages are JSON; a shard task's arguments are only (fabric, shard id, run id, kind).
"""

from __future__ import annotations

from typing import Any

from celery import Celery

from flatfab.distributed.config import Config

SHARD_TASK = "flatfab.shard"
AUDIT_TASK = "flatfab.audit"  # beat's: plan, shard, fan the shards out as a chord
REPORT_TASK = "flatfab.audit_report"  # the chord's callback: merge and write the reports


def make_app(config: Config) -> Any:  # celery ships no type information
    app = Celery("flatfab", broker=config.broker_url, backend=config.result_backend,
                 set_as_current=False)
    transport = {"visibility_timeout": int(config.visibility_timeout),
                 "unacked_restore_interval": config.restore_interval,
                 "unacked_restore_throttle": 1}
    app.conf.update(
        task_default_queue=config.queue,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        worker_cancel_long_running_tasks_on_connection_loss=True,
        worker_enable_remote_control=False,
        broker_transport_options=transport,
        result_backend_transport_options={"socket_connect_timeout": 5},
        broker_connection_retry_on_startup=True,
        broker_connection_timeout=5,
        result_expires=config.result_ttl,
        task_serializer="json", result_serializer="json", accept_content=["json"],
        enable_utc=True, timezone="UTC",
    )
    return app
