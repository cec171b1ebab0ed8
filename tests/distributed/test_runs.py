"""Distributed runs for real: a redis-server on a free loopback port with a password, two
`flatfab worker` processes (Celery, prefork), and the CLI: in this process where a run ends
in a report (an interpreter's start-up costs seconds here), in a process of its own where
it ends in an error line (main() makes those).

What they need is a project root and its inventory: the devices answer through the device
double (tests/doubles/shard_devices.py) in every process alike, so a distributed run and a
single one read the same fabric. The tests run in file order: the last kills a worker.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tasks.model.state import FabricState
from tasks.workflows.project import Project
from tests.doubles.shard_devices import ShardDevices, read_faults
from tests.support.distributed import (
    REDIS,
    RedisServer,
    Worker,
    cli,
    command,
    devices_file,
    env_for,
    flatfab,
    masked,
    project,
    stop,
    wait_for,
    workers,
)
from tests.support.paths import ROOT

pytestmark = pytest.mark.skipif(not Path(REDIS).exists(),
                                reason="redis-server missing (make nautobot-deps installs it)")

FAULTS: dict[str, Any] = {"unreachable": {"leaf3-h1": "no route to host (injected)"},
                          "drift": {"leaf2": "ip prefix-list oob seq 5 permit any"}}
SHARDS = ["leaves-001", "leaves-002", "leaves-003", "leaves-004", "spines"]


@dataclass
class Cluster:
    root: Path
    work: Path
    redis: RedisServer
    env: dict[str, str]
    workers: list[Worker]

    def faults(self, **extra: Any) -> None:
        devices_file(self.work, self.root, "lab", **{**FAULTS, **extra})

    def run(self, *args: str, **env: str) -> Any:
        """In a process of its own, as an operator runs it."""
        return flatfab(self.root, *args, env={**self.env, **env})

    def single(self, *args: str) -> Any:
        """A single-process run here, its devices read through the double."""
        double = ShardDevices(self.plan, read_faults(self.work / "devices.json"))
        return cli(self.root, *args, env=self.cli_env, double=double)

    def distributed(self, *args: str) -> Any:
        """A distributed run coordinated here (the workers read the devices)."""
        return cli(self.root, *args, "--distributed", env=self.cli_env)

    @property
    def plan(self) -> FabricState:
        return Project(root=self.root, fabric="lab").plan

    @property
    def cli_env(self) -> dict[str, str]:
        return {k: v for k, v in self.env.items() if k.startswith("FLATFAB_")}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    work = tmp_path_factory.mktemp("distributed")
    root = project(work / "project")
    devices = devices_file(work, root, "lab", **FAULTS)
    redis = RedisServer(work / "redis").start()
    try:
        env = env_for(redis, devices=devices)
        with workers(root, env, work) as started:
            yield Cluster(root, work, redis, env, started)
    finally:
        redis.stop()


def _same(distributed: Any, single: Any) -> None:
    assert distributed.code == single.code, distributed.stderr + single.stderr
    assert masked(distributed.json()) == masked(single.json())
    assert "Traceback" not in distributed.stderr


def _no_secret(cluster: Cluster, *texts: str) -> None:
    for text in (*texts, *(w.output() for w in cluster.workers)):
        assert cluster.redis.password not in text


def test_distributed_verify_audit_and_dry_run_equal_single_ones(cluster: Cluster) -> None:
    cluster.faults()
    by = ("--shard-by", "leaves:1")
    single = cluster.single("verify", "-f", "json")
    assert single.code == 1 and single.json()["findings"][0]["device"] == "leaf3-h1"
    distributed = cluster.distributed("verify", *by, "-f", "json")
    _same(distributed, single)
    assert "5 shards by leaves:1, 0 failed" in distributed.stderr
    _same(cluster.distributed("verify", "-f", "json"), single)  # default: leaves:8

    reports = cluster.work / "reports"
    single = cluster.single("audit", "--report-dir", str(reports / "single"), "-f", "json")
    distributed = cluster.distributed("audit", *by, "--report-dir", str(reports / "shards"),
                                      "-f", "json")
    _same(distributed, single)
    assert [d["device"] for d in distributed.json()["drift"]] == ["leaf2", "leaf3-h1"]
    name = "flatfab-audit-lab.json"
    assert masked(json.loads((reports / "shards" / name).read_text())) == \
        masked(json.loads((reports / "single" / name).read_text()))
    assert sorted(p.name for p in (reports / "shards").iterdir()) == \
        sorted(p.name for p in (reports / "single").iterdir())

    single = cluster.single("rollout", "--dry-run", "-f", "json")
    distributed = cluster.distributed("rollout", "--dry-run", *by, "-f", "json")
    _same(distributed, single)
    assert list(distributed.json()["diffs"]) == ["leaf2"]
    _no_secret(cluster, distributed.stderr, distributed.stdout)


def test_an_operator_s_distributed_verify_prints_what_a_single_one_does(
        cluster: Cluster) -> None:
    cluster.faults()
    _same(cluster.run("verify", "--distributed", "-f", "json"),
          cluster.single("verify", "-f", "json"))


def test_a_shard_that_fails_once_is_retried_and_counted_once(cluster: Cluster) -> None:
    cluster.faults(fail_shard={"leaves-002": 1})
    distributed = cluster.distributed("verify", "--shard-by", "leaves:1", "-f", "json")
    _same(distributed, cluster.single("verify", "-f", "json"))
    deliveries = (cluster.work / "double-state" / "leaves-002.deliveries").read_text()
    assert len(deliveries.splitlines()) == 2


def test_a_shard_that_fails_twice_is_named_in_the_report(cluster: Cluster) -> None:
    cluster.faults(fail_shard={"leaves-003": 2})
    single = cluster.single("audit", "-f", "json")
    distributed = cluster.distributed("audit", "--shard-by", "leaves:1", "-f", "json")
    assert distributed.code == 1
    lost = ["leaf3", "leaf3-h1", "leaf3-h2"]
    assert (f"error: shard leaves-003 (3 devices: {', '.join(lost)}) failed: tried 2 times: "
            "delivery 1: w") in distributed.stderr
    found = distributed.json()
    named = {f["device"]: f["message"] for f in found["findings"]
             if f["check"] == "device.reachable"}
    for device in lost:
        assert named[device].startswith(f"{device} could not be read: shard leaves-003 "
                                        "failed: tried 2 times: delivery 1: w")
        assert "RuntimeError: injected failure of shard leaves-003 (delivery 2)" in \
            named[device]
    assert {d["device"]: bool(d["error"]) for d in found["drift"]} == {
        "leaf2": False, "leaf3": True, "leaf3-h1": True, "leaf3-h2": True}
    # every other device reads as in a single run
    others = [f for f in found["findings"] if f["device"] not in lost]
    assert others == [f for f in single.json()["findings"] if f["device"] not in lost]


def test_a_pool_process_that_dies_twice_is_named_as_lost(cluster: Cluster) -> None:
    cluster.faults(die_shard={"spines": 2})
    distributed = cluster.distributed("verify", "--shard-by", "leaves:1", "-f", "json")
    assert distributed.code == 1
    messages = [f["message"] for f in distributed.json()["findings"]
                if f["device"] in ("spine1", "spine2")]
    assert len(messages) == 2
    assert all("shard spines failed: tried 2 times: delivery 1: w" in m and
               "was lost mid-shard (no result, no error); delivery 2: w" in m
               for m in messages), messages


def test_a_worker_that_planned_another_intent_is_refused(cluster: Cluster) -> None:
    other = cluster.work / "other"
    project(other)
    qos = other / "intents" / "lab" / "fabric.yaml"
    qos.write_text(qos.read_text().replace("cable_m: 3", "cable_m: 4", 1))
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
    late = cluster.run("audit", "--distributed", "--shard-by", "leaves:1", "--timeout", "2",
                       "--report-dir", str(reports), FLATFAB_QUEUE="nobody")
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
    try:
        written = reports / "flatfab-audit-lab.json"
        wait_for(written.exists, "beat's first audit report", timeout=90)
    finally:
        stop(beat)
    assert masked(json.loads(written.read_text())) == masked(single.json())
    assert {p.name for p in reports.iterdir()} == {
        f"flatfab-audit-lab{s}" for s in (".html", ".json", ".junit.xml", ".md", ".prom")}
    assert cluster.redis.password not in log.read_text()


def test_a_worker_killed_mid_shard_has_its_shard_read_by_the_other(cluster: Cluster) -> None:
    cluster.faults(slow_s=1.0)
    single = cluster.single("verify", "-f", "json")
    store = cluster.redis.client()
    run = subprocess.Popen(command(cluster.root, "verify", "--distributed", "--shard-by",
                                   "leaves:1", "-f", "json"),
                           cwd=ROOT, env=cluster.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    seen: dict[str, dict[str, str]] = {}

    def attempts() -> dict[str, dict[str, str]]:
        for key in store.scan_iter("flatfab:run:*:attempts"):
            found = {k.decode(): v.decode() for k, v in store.hgetall(key).items()}
            if found:
                seen[key.decode()] = found
        return seen

    w1 = cluster.workers[0]
    wait_for(lambda: any(v.get("1", "").startswith("w1@") and "lost" in v["1"]
                         for v in attempts().values()), "w1 reading a shard", timeout=60)
    killed = next(k for k, v in seen.items() if v.get("1", "").startswith("w1@"))
    w1.kill()
    deadline = time.monotonic() + 90
    while run.poll() is None and time.monotonic() < deadline:
        attempts()
        time.sleep(0.05)
    stdout, stderr = run.communicate(timeout=30)
    assert run.returncode == single.code, stderr
    assert masked(json.loads(stdout)) == masked(single.json())
    # the shard w1 held: delivered again after the visibility timeout, read by w2 only
    history = seen[killed]
    assert history["1"].startswith("w1@") and history["2"].startswith("w2@"), history
    assert "3" not in history
