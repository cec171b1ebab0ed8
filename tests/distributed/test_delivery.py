"""One delivery of a shard task against a real Redis: counted, retried once, failed for good
after two, stored exactly once, skipped once its run is over; and the coordinator reading
every outcome back (a result from another plan refused, naming worker and shard)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from flatfab.distributed.coordinator import PlanMismatchError, forget, outcomes
from flatfab.distributed.delivery import Step, deliver
from flatfab.distributed.keys import RunKeys
from flatfab.workflows.sharding.shard_codec import as_data, unpack
from flatfab.workflows.sharding.shard_run import RunSpec, ShardOutput
from flatfab.workflows.sharding.shards import Shard
from tests.support.distributed import REDIS, RedisServer

pytestmark = pytest.mark.skipif(not Path(REDIS).exists(),
                                reason="redis-server missing (make nautobot-deps installs it)")
RUN = "20261128T000000Z-verify-lab-0000abcd"
SPEC = RunSpec(kind="verify", fabric="lab", shard_by="leaves:1", plan_hash="p1")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    found = RedisServer(tmp_path_factory.mktemp("redis")).start()
    try:
        yield found
    finally:
        found.stop()


@pytest.fixture
def store(server: RedisServer) -> redis.Redis:
    client = server.client()
    client.flushdb()
    client.set(RunKeys(RUN).spec, json.dumps(SPEC.as_dict()))
    return client


def _payload(worker: str, shard: str = "s1", plan: str = "p1") -> dict[str, Any]:
    return {"worker": worker, "plan_hash": plan, "shard": shard,
            "output": as_data(ShardOutput(shard=shard, seconds={"collect_s": 1.0}))}


def _boom(spec: RunSpec) -> dict[str, Any]:
    raise OSError("no inventory here")


def test_a_delivery_stores_its_result_once_and_announces_it(store: redis.Redis) -> None:
    keys = RunKeys(RUN).shard("s1")
    step, key = deliver(store, RUN, "s1", "w1@h", 60, lambda spec: _payload("w1@h"))
    assert (step, key) == (Step.DONE, keys.result)
    assert unpack(store.get(keys.result))["worker"] == "w1@h"
    assert store.lrange(RunKeys(RUN).done, 0, -1) == [b"s1"]
    assert store.ttl(keys.result) > 0 and store.ttl(keys.deliveries) > 0
    # delivered again (a redelivery after it finished): nothing is read or counted again
    step, key = deliver(store, RUN, "s1", "w2@h", 60, _boom)
    assert (step, key) == (Step.DONE, keys.result) and store.get(keys.deliveries) == b"1"


def test_an_exception_is_retried_once_then_the_shard_fails_naming_both(
        store: redis.Redis) -> None:
    keys = RunKeys(RUN).shard("s1")
    assert deliver(store, RUN, "s1", "w1@h", 60, _boom) == (Step.RETRY, "")
    assert deliver(store, RUN, "s1", "w2@h", 60, _boom) == (Step.DONE, keys.failed)
    assert store.get(keys.failed).decode() == (
        "tried 2 times: delivery 1: w1@h: OSError: no inventory here; "
        "delivery 2: w2@h: OSError: no inventory here")
    assert store.lrange(RunKeys(RUN).done, 0, -1) == [b"s1"]


def test_two_lost_deliveries_fail_the_third_without_reading(store: redis.Redis) -> None:
    keys = RunKeys(RUN).shard("s1")
    read: list[str] = []

    def dies(spec: RunSpec) -> dict[str, Any]:
        raise SystemExit  # stands in for a process killed mid-shard: nothing is recorded

    for worker in ("w1@h", "w2@h"):
        with pytest.raises(SystemExit):
            deliver(store, RUN, "s1", worker, 60, dies)
    step, key = deliver(store, RUN, "s1", "w3@h", 60, lambda s: read.append("w3") or {})
    assert (step, key) == (Step.DONE, keys.failed) and not read
    assert store.get(keys.failed).decode() == (
        "tried 2 times: delivery 1: w1@h was lost mid-shard (no result, no error); "
        "delivery 2: w2@h was lost mid-shard (no result, no error)")


def test_of_two_deliveries_that_both_finish_the_first_result_wins(store: redis.Redis) -> None:
    keys = RunKeys(RUN).shard("s1")
    inside, release = threading.Barrier(2), threading.Event()

    def slow(worker: str) -> Any:
        def read(spec: RunSpec) -> dict[str, Any]:
            inside.wait(5)  # both deliveries are past their checks and reading
            if worker == "w2@h":
                release.wait(5)  # w2 finishes second
            return _payload(worker)
        return read

    first = threading.Thread(target=deliver, args=(store, RUN, "s1", "w1@h", 60, slow("w1@h")))
    second = threading.Thread(target=deliver, args=(store, RUN, "s1", "w2@h", 60,
                                                    slow("w2@h")))
    first.start()
    second.start()
    first.join(10)
    release.set()
    second.join(10)
    assert unpack(store.get(keys.result))["worker"] == "w1@h"
    assert store.lrange(RunKeys(RUN).done, 0, -1) == [b"s1"]  # announced once


def test_a_delivery_after_its_run_is_over_does_nothing(store: redis.Redis) -> None:
    store.delete(RunKeys(RUN).spec)
    assert deliver(store, RUN, "s1", "w1@h", 60, _boom) == (Step.SKIPPED, "")
    assert store.keys("*") == []


def test_the_coordinator_reads_outcomes_and_refuses_another_plan(store: redis.Redis) -> None:
    shards = [Shard("s1", ("leaf1",)), Shard("s2", ("leaf2",)), Shard("s3", ("spine1",))]
    deliver(store, RUN, "s1", "w1@h", 60, lambda spec: _payload("w1@h", "s1"))
    deliver(store, RUN, "s2", "w1@h", 60, _boom)
    deliver(store, RUN, "s2", "w2@h", 60, _boom)
    deliver(store, RUN, "s3", "w2@h", 60, lambda spec: _payload("w2@h", "s3"))
    gathered = outcomes(store, RUN, shards, "p1", 0.0)
    assert list(gathered.outputs) == ["s1", "s3"]
    assert gathered.failed["s2"].startswith("tried 2 times: delivery 1: w1@h: OSError")
    forget(store, RUN, shards)
    assert store.keys("*") == []

    store.set(RunKeys(RUN).spec, json.dumps(SPEC.as_dict()))
    deliver(store, RUN, "s1", "w9@far", 60, lambda spec: _payload("w9@far", "s1", "p2"))
    with pytest.raises(PlanMismatchError, match=r"w9@far \(shard s1, plan p2\)"):
        outcomes(store, RUN, shards[:1], "p1", 0.0)
