"""The coordinator of a distributed run: send one task per shard, wait until every shard
has an outcome, read the outcomes. It holds no device credentials and sends no inventory
and no plan: only the run's spec (what to read, the plan hash it expects) and the tasks'
(fabric, shard id, run id, kind).

Anything that keeps it from hearing every shard (no broker, a broker going away, the
timeout) is one line and no report: a report is only built once every shard ended.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import redis

from flatfab.distributed.app import SHARD_TASK, make_app
from flatfab.distributed.config import Config
from flatfab.distributed.keys import RunKeys, new_run_id
from flatfab.distributed.store import LOST, BrokerError, blob, client, reachable, text
from flatfab.errors import FlatfabError
from flatfab.workflows.devices.results import first_line
from flatfab.workflows.sharding.shard_codec import from_data, unpack
from flatfab.workflows.sharding.shard_run import RunSpec
from flatfab.workflows.sharding.sharded import Gathered
from flatfab.workflows.sharding.shards import Shard


class PlanMismatchError(FlatfabError):
    """A worker read a shard against another plan than the coordinator's."""


def _names(items: list[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def outcomes(store: redis.Redis, run_id: str, found: list[Shard], plan_hash: str,
             started: float) -> Gathered:
    """Every shard's stored outcome (a result wins over a failure written after it).

    A result read against another plan is refused: the run stops, naming each such worker
    and shard (judging them against this plan would report nonsense as findings)."""
    keys = RunKeys(run_id)
    gathered = Gathered()
    wrong: list[str] = []
    for shard in found:
        mine = keys.shard(shard.id)
        stored = store.get(mine.result)
        if stored is not None:
            payload = unpack(blob(stored))
            if payload.get("plan_hash") != plan_hash or payload.get("output") is None:
                wrong.append(f"{payload.get('worker')} (shard {shard.id}, plan "
                             f"{payload.get('plan_hash')})")
                continue
            gathered.outputs[shard.id] = from_data(payload["output"])
            continue
        why = store.get(mine.failed)
        if why is not None:
            gathered.failed[shard.id] = text(why)
    if wrong:
        raise PlanMismatchError(f"workers planned the fabric differently from this plan "
                                f"{plan_hash}: {_names(wrong)}; run every worker on the same "
                                "intent and flatfab version (no report written)")
    gathered.seconds = time.monotonic() - started
    return gathered


def forget(store: redis.Redis, run_id: str, found: list[Shard]) -> None:
    """Drop the run's keys: a late delivery then finds no spec and does nothing."""
    keys = RunKeys(run_id)
    names = [keys.spec, keys.done, *(k for s in found for k in keys.shard(s.id).all())]
    store.delete(*names)


@dataclass
class CeleryGather:
    """flatfab.workflows.sharding.sharded.Gather over Celery workers (see the module docstring)."""

    config: Config
    timeout_s: float
    clock: Callable[[], float] = time.time
    run_id: str = ""

    def __call__(self, spec: RunSpec, found: list[Shard]) -> Gathered:
        store = client(self.config)
        reachable(self.config, store)
        self.run_id = new_run_id(spec.kind, spec.fabric, self.clock())
        started = time.monotonic()
        keys = RunKeys(self.run_id)
        ttl = max(self.config.result_ttl, int(self.timeout_s) + 600)
        gone = False
        try:
            store.set(keys.spec, json.dumps(spec.as_dict()), ex=ttl)
            self._send(spec, found)
            pending = self._wait(store, keys, found, started)
            if pending:
                devices = sum(len(s.devices) for s in found if s.id in pending)
                raise FlatfabError(
                    f"run {self.run_id}: timed out after {self.timeout_s:g} s with "
                    f"{len(pending)} of {len(found)} shards outstanding ({devices} devices): "
                    f"{_names(pending)}; are workers consuming queue {self.config.queue} "
                    f"of {self.config.broker}? (no report written)")
            return outcomes(store, self.run_id, found, spec.plan_hash, started)
        except BrokerError:
            gone = True  # the tasks could not be sent: nothing more to say to it
            raise
        except LOST as exc:
            gone = True
            raise BrokerError(f"broker {self.config.broker} went away mid-run (run "
                              f"{self.run_id}): {first_line(exc)}; no report written") from None
        finally:
            # whatever else ended the run: late deliveries find no spec and do nothing
            if not gone:
                with contextlib.suppress(*LOST):
                    forget(store, self.run_id, found)
            store.close()

    def _send(self, spec: RunSpec, found: list[Shard]) -> None:
        app = make_app(self.config)
        policy = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5,
                  "interval_max": 1}
        try:
            with app.producer_or_acquire() as producer:
                for shard in found:
                    app.send_task(SHARD_TASK, args=(spec.fabric, shard.id, self.run_id,
                                                    spec.kind),
                                  queue=self.config.queue, producer=producer,
                                  retry=True, retry_policy=policy, ignore_result=True)
        except Exception as exc:  # noqa: BLE001 - kombu's errors differ by transport
            raise BrokerError(f"broker {self.config.broker} went away mid-run (run "
                              f"{self.run_id}): its tasks were not all sent: "
                              f"{first_line(exc)}; no report written") from None
        finally:
            app.close()

    def _wait(self, store: redis.Redis, keys: RunKeys, found: list[Shard],
              started: float) -> list[str]:
        """Shards still without an outcome at the timeout (none: all ended)."""
        pending = {s.id for s in found}
        deadline = started + self.timeout_s
        while pending:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            item = store.blpop([keys.done], timeout=min(1.0, max(left, 0.01)))
            if item is not None:
                pending.discard(text(item[1]))
        return [s.id for s in found if s.id in pending]
