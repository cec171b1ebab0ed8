"""One delivery of a shard task on a worker: count it, run the shard, store what it read
exactly once.

A shard is tried at most twice (keys.MAX_DELIVERIES). Every delivery is counted in Redis
(INCR), whether it came from the queue, from a retry after an exception, or from the
Redis transport handing a dead worker's unacked task to another worker. So:
- an exception in the shard: the first delivery asks for a retry, the second records the
  failure;
- a worker that dies mid-shard leaves its delivery counted with no outcome; the next
  delivery runs it again, and a third one (two deaths) records the failure, naming who
  lost it both times;
- the result is stored with SET NX: if two deliveries both finish (a worker cut off from
  the broker, a visibility timeout shorter than the shard), the first stored result wins
  and nothing is counted twice.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from enum import Enum
from typing import Any

import redis

from flatfab.distributed.keys import MAX_DELIVERIES, RunKeys
from flatfab.distributed.store import text
from flatfab.workflows.devices.results import first_line
from flatfab.workflows.sharding.shard_codec import pack
from flatfab.workflows.sharding.shard_run import RunSpec


class Step(Enum):
    DONE = "done"  # a result or a failure is stored (by this delivery or an earlier one)
    RETRY = "retry"  # failed for the first time: deliver it once more
    SKIPPED = "skipped"  # the run is over (collected, timed out or expired): nothing to do


# reads the shard for the spec: the payload to store (worker, plan hash, output)
Reader = Callable[[RunSpec], dict[str, Any]]


def _finish(store: redis.Redis, keys: RunKeys, shard_id: str, key: str, value: bytes,
            ttl: int) -> None:
    """Store the shard's outcome unless one is there already; announce the first only."""
    if store.set(key, value, nx=True, ex=ttl):
        store.rpush(keys.done, shard_id)
        store.expire(keys.done, ttl)


def _failed(store: redis.Redis, keys: RunKeys, shard_id: str, ttl: int) -> tuple[Step, str]:
    mine = keys.shard(shard_id)
    why = f"tried {MAX_DELIVERIES} times: {history(store, keys, shard_id)}"
    _finish(store, keys, shard_id, mine.failed, why.encode(), ttl)
    return Step.DONE, mine.failed


def history(store: redis.Redis, keys: RunKeys, shard_id: str) -> str:
    """What became of each delivery so far, oldest first."""
    raw = store.hgetall(keys.shard(shard_id).attempts)
    notes = {int(text(k)): text(v) for k, v in raw.items()}
    return "; ".join(f"delivery {n}: {notes[n]}" for n in sorted(notes))


def deliver(store: redis.Redis, run_id: str, shard_id: str, worker: str, ttl: int,
            read: Reader) -> tuple[Step, str]:
    """Handle one delivery of shard `shard_id` of run `run_id` on `worker`: what it came
    to, and the key of the shard's outcome (its result, or why it failed)."""
    keys = RunKeys(run_id)
    mine = keys.shard(shard_id)
    if store.exists(mine.result):
        return Step.DONE, mine.result  # a delivery after the outcome was stored
    if store.exists(mine.failed):
        return Step.DONE, mine.failed
    raw = store.get(keys.spec)
    if raw is None:
        return Step.SKIPPED, ""
    spec = RunSpec.from_dict(json.loads(raw))
    count = int(store.incr(mine.deliveries))
    store.expire(mine.deliveries, ttl)
    if count > MAX_DELIVERIES:
        return _failed(store, keys, shard_id, ttl)
    # what the next delivery reads if this worker dies before it says otherwise
    store.hset(mine.attempts, str(count), f"{worker} was lost mid-shard (no result, no error)")
    store.expire(mine.attempts, ttl)
    try:
        payload = read(spec)
    except Exception as exc:  # noqa: BLE001 - any failure of a shard is retried or reported
        store.hset(mine.attempts, str(count), f"{worker}: {type(exc).__name__}: "
                   f"{first_line(exc)}")
        if count < MAX_DELIVERIES:
            return Step.RETRY, ""
        return _failed(store, keys, shard_id, ttl)
    store.hset(mine.attempts, str(count), f"{worker}: read")
    _finish(store, keys, shard_id, mine.result, pack(payload), ttl)
    return Step.DONE, mine.result
