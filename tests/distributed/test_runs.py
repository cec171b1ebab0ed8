"""Distributed runs for real: the simulated fleet (tests/doubles/fleet/: the lab's switches
and hosts over SSH on 127.0.0.1), a redis-server on a free loopback port with a password,
two `flatfab worker` processes (Celery, prefork) reading shards of it, and the CLI: in this
process where a run ends in a report (an interpreter's start-up costs seconds on a busy
machine), in a process of its own where it ends in an error line (main() makes those).

The fleet's faults: leaf2's swp51 at MTU 1500 (config drift; interface.mtu and, judged
against spine1's end in another shard, link.mtu_match), leaf3-h1 refusing logins, leaf4
answering slowly (its shard is the one a worker is killed in). Whole-shard faults come from
tests/doubles/shard_faults.py. The tests run in file order: the last kills a worker.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.doubles.shard_faults import write_faults
from tests.fleet.served import PASSWORD, intent_copy, served
from tests.support.distributed import (
    REDIS,
    RedisServer,
    Run,
    Worker,
    cli,
    command,
    env_for,
    flatfab,
    masked,
    stop,
    workers,
)
from tests.support.paths import ROOT
from tests.support.waiting import wait_for

pytestmark = pytest.mark.skipif(not Path(REDIS).exists(),
                                reason="redis-server missing (make nautobot-deps installs it)")

FLEET_FAULTS = ("leaf2=mtu:swp51=1500", "leaf3-h1=refuse", "leaf4=slow:0.2")
SHARDS = ["leaves-001", "leaves-002", "leaves-003", "leaves-004", "spines"]
BY = ("--shard-by", "leaves:1")


@dataclass
class Cluster:
    root: Path
    work: Path
    inventory: Path
    redis: RedisServer
    env: dict[str, str]
    workers: list[Worker]

    def faults(self, **faults: dict[str, int]) -> None:
        write_faults(self.work / "shard-faults.json", self.work / "shard-state", **faults)

    def run(self, *args: str, **env: str) -> Run:
        """In a process of its own, as an operator runs it."""
        return flatfab(self.root, *args, env={**self.env, **env})

    def single(self, *args: str) -> Run:
        """A single-process run here, reading the fleet itself."""
        return cli(self.root, "--inventory", str(self.inventory), *args, env=self.cli_env)

    def distributed(self, *args: str) -> Run:
        """A distributed run coordinated here (no inventory: the workers read the fleet)."""
        return cli(self.root, *args, "--distributed", env=self.cli_env)

    @property
    def cli_env(self) -> dict[str, str]:
        return {k: v for k, v in self.env.items() if k.startswith("FLATFAB_")}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    work = tmp_path_factory.mktemp("distributed")
    root = work / "project"
    intent = intent_copy("lab", root, {})
    faults = work / "shard-faults.json"
    write_faults(faults, work / "shard-state")
    redis = RedisServer(work / "redis").start()
    try:
        env = env_for(redis, faults=faults, password=PASSWORD)
        fleet_args = [a for fault in FLEET_FAULTS for a in ("--fault", fault)]
        with served(intent, work / "fleet", *fleet_args) as fleet, \
                workers(root, env, work, fleet.inventory) as started:
            yield Cluster(root, work, fleet.inventory, redis, env, started)
    finally:
        redis.stop()


def _same(distributed: Run, single: Run) -> None:
    assert distributed.code == single.code, distributed.stderr + single.stderr
    assert masked(distributed.json()) == masked(single.json())
    assert "Traceback" not in distributed.stderr


def _no_secret(cluster: Cluster, *texts: str) -> None:
    for text in (*texts, *(w.output() for w in cluster.workers)):
        assert cluster.redis.password not in text


def test_distributed_verify_audit_and_dry_run_equal_single_ones(cluster: Cluster) -> None:
    cluster.faults()
    single = cluster.single("verify", "-f", "json")
    assert single.code == 1
    assert [(f["check"], f["device"]) for f in single.json()["findings"]] == [
        ("device.reachable", "leaf3-h1"), ("interface.mtu", "leaf2"),
        ("link.mtu_match", "leaf2")]
    distributed = cluster.distributed("verify", *BY, "-f", "json")
    _same(distributed, single)
    assert "5 shards by leaves:1, 0 failed" in distributed.stderr
    _same(cluster.distributed("verify", "-f", "json"), single)  # default: leaves:8

    reports = cluster.work / "reports"
    single = cluster.single("audit", "--report-dir", str(reports / "single"), "-f", "json")
    distributed = cluster.distributed("audit", *BY, "--report-dir", str(reports / "shards"),
                                      "-f", "json")
    _same(distributed, single)
    # leaf3-h1 refuses every login: unread, never drift
    assert [d["device"] for d in distributed.json()["drift"]] == ["leaf2"]
    assert [u["device"] for u in distributed.json()["unread"]] == ["leaf3-h1"]
    name = "flatfab-audit-lab.json"
    assert masked(json.loads((reports / "shards" / name).read_text())) == \
        masked(json.loads((reports / "single" / name).read_text()))
    assert sorted(p.name for p in (reports / "shards").iterdir()) == \
        sorted(p.name for p in (reports / "single").iterdir())

    single = cluster.single("rollout", "--dry-run", "-f", "json")
    distributed = cluster.distributed("rollout", "--dry-run", *BY, "-f", "json")
    _same(distributed, single)
    assert distributed.code == 3  # a dry run that could not diff leaf3-h1 is incomplete
    assert list(distributed.json()["diffs"]) == ["leaf2"]
    assert list(distributed.json()["errors"]) == list(distributed.json()["unread"]) == [
        "leaf3-h1"]
    # a runbook: its phases from the inventory's groups, read here; the diffs from the workers
    runbook = ("--runbook", str(ROOT / "runbooks" / "first-bring-up.yaml"))
    single = cluster.single("rollout", "--dry-run", *runbook, "-f", "json")
    distributed = cluster.distributed("--inventory", str(cluster.inventory), "rollout",
                                      "--dry-run", *runbook, *BY, "-f", "json")
    _same(distributed, single)
    assert len(distributed.json()["phases"]) == 3
    _no_secret(cluster, distributed.stderr, distributed.stdout)


def test_an_operator_s_distributed_verify_prints_what_a_single_one_does(
        cluster: Cluster) -> None:
    cluster.faults()
    _same(cluster.run("verify", "--distributed", "-f", "json"),
          cluster.single("verify", "-f", "json"))


def test_a_shard_that_fails_once_is_retried_and_counted_once(cluster: Cluster) -> None:
    cluster.faults(fail={"leaves-002": 1})
    distributed = cluster.distributed("verify", *BY, "-f", "json")
    _same(distributed, cluster.single("verify", "-f", "json"))
    deliveries = (cluster.work / "shard-state" / "leaves-002.deliveries").read_text()
    assert len(deliveries.splitlines()) == 2


def test_a_shard_that_fails_twice_is_named_in_the_report(cluster: Cluster) -> None:
    cluster.faults(fail={"leaves-001": 2})
    single = cluster.single("audit", "-f", "json")
    distributed = cluster.distributed("audit", *BY, "-f", "json")
    assert distributed.code == 1
    lost = ["leaf1", "leaf1-h1", "leaf1-h2"]
    assert (f"error: shard leaves-001 (3 devices: {', '.join(lost)}) failed: tried 2 times: "
            "delivery 1: w") in distributed.stderr
    found = distributed.json()
    named = {f["device"]: f["message"] for f in found["findings"]
             if f["check"] == "device.reachable"}
    for device in lost:
        assert named[device].startswith(f"{device} could not be read: shard leaves-001 "
                                        "failed: tried 2 times: delivery 1: w")
        assert "RuntimeError: injected failure of shard leaves-001 (delivery 2)" in \
            named[device]
    assert [d["device"] for d in found["drift"]] == ["leaf2"]  # the lost shard's: unread
    assert [u["device"] for u in found["unread"]] == [*lost, "leaf3-h1"]
    # every other device reads as in a single run
    others = [f for f in found["findings"] if f["device"] not in lost]
    assert others == [f for f in single.json()["findings"] if f["device"] not in lost]


def test_a_pool_process_that_dies_twice_is_named_as_lost(cluster: Cluster) -> None:
    cluster.faults(die={"spines": 2})
    distributed = cluster.distributed("verify", *BY, "-f", "json")
    assert distributed.code == 1
    messages = [f["message"] for f in distributed.json()["findings"]
                if f["device"] in ("spine1", "spine2") and f["check"] == "device.reachable"]
    assert len(messages) == 2
    assert all("shard spines failed: tried 2 times: delivery 1: w" in m and
               "was lost mid-shard (no result, no error); delivery 2: w" in m
               for m in messages), messages


def test_a_worker_that_planned_another_intent_is_refused(cluster: Cluster) -> None:
    other = cluster.work / "other"
    intent_copy("lab", other, {"fabric.yaml": ("cable_m: 3", "cable_m: 4")})
    env = {**cluster.env, "FLATFAB_QUEUE": "other"}
    with workers(other, env, cluster.work, names=("w3",)):
        refused = cluster.run("verify", "--distributed", "--timeout", "60", FLATFAB_QUEUE="other")
    assert refused.code == 2 and refused.stdout == ""
    line = refused.stderr.strip()
    assert "\n" not in line and line.startswith("error: workers planned the fabric "
                                                "differently from this plan")
    assert "w3@" in line and "shard leaves-001" in line and "no report written" in line


def test_a_timeout_names_the_shards_still_outstanding(cluster: Cluster) -> None:
    reports = cluster.work / "timeout-reports"
    late = cluster.run("audit", "--distributed", *BY, "--timeout", "2", "--report-dir",
                       str(reports), FLATFAB_QUEUE="nobody")
    assert late.code == 2
    line = late.stderr.strip()
    assert "\n" not in line and "timed out after 2 s with 5 of 5 shards outstanding " \
        f"(14 devices): {', '.join(SHARDS)}" in line
    assert "queue nobody" in line and not any(reports.glob("*"))


def test_beat_sends_the_scheduled_audit_and_workers_write_its_reports(
        cluster: Cluster) -> None:
    cluster.faults()
    reports = cluster.work / "beat-reports"
    single = cluster.single("audit", "-f", "json")
    log = cluster.work / "beat.log"
    with log.open("wb") as out:
        beat = subprocess.Popen(command(cluster.root, "beat", "--every", "2s", "--report-dir",
                                        str(reports), "--shard-by", "leaves:2"),
                                cwd=ROOT, env=cluster.env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    every = {f"flatfab-audit-lab{s}" for s in (".html", ".json", ".junit.xml", ".md", ".prom")}
    try:
        wait_for(lambda: all((reports / name).exists() for name in every),
                 "beat's first audit reports", timeout=90)
    finally:
        stop(beat)
    written = reports / "flatfab-audit-lab.json"
    assert masked(json.loads(written.read_text())) == masked(single.json())
    # a later round's worker may be writing its reports (a hidden temp file each, renamed over
    # the report when whole): the reports are these five
    assert {p.name for p in reports.iterdir() if not p.name.startswith(".")} == every
    assert cluster.redis.password not in log.read_text()


def test_a_worker_killed_mid_shard_has_its_shard_read_by_the_other(cluster: Cluster) -> None:
    cluster.faults()
    single = cluster.single("verify", "-f", "json")
    store = cluster.redis.client()
    run = subprocess.Popen(command(cluster.root, "verify", "--distributed", *BY, "-f", "json"),
                           cwd=ROOT, env=cluster.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    seen: dict[str, str] = {}

    def slow_shard() -> dict[str, str]:
        """Deliveries of leaves-004 (slow leaf4's shard) so far, as they were last seen."""
        for key in store.scan_iter("flatfab:run:*:shard:leaves-004:attempts"):
            seen.update({k.decode(): v.decode() for k, v in store.hgetall(key).items()})
        return seen

    wait_for(lambda: "lost" in slow_shard().get("1", ""), "a worker reading leaves-004",
             timeout=60)
    holder = next(w for w in cluster.workers if seen["1"].startswith(f"{w.name}@"))
    other = next(w for w in cluster.workers if w is not holder)
    holder.kill()
    deadline = time.monotonic() + 90
    while run.poll() is None and time.monotonic() < deadline:
        slow_shard()
        time.sleep(0.05)
    stdout, stderr = run.communicate(timeout=30)
    assert run.returncode == single.code, stderr
    assert masked(json.loads(stdout)) == masked(single.json())
    # delivered again after the visibility timeout, read by the other worker, once
    assert seen["1"].startswith(f"{holder.name}@") and seen["2"].startswith(f"{other.name}@")
    assert "3" not in seen
