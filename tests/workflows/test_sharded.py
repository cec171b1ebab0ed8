"""A run read in shards and judged once equals the single run, in process (no broker):
every shard's output goes through the wire format a worker's result travels in, and the
devices answer through the device double for both runs alike."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from nornir.core import Nornir

from flatfab import reports
from flatfab.checks import CATALOG
from flatfab.model.state import FabricState
from flatfab.reports import json_report
from flatfab.runbook.model import whole_fabric
from flatfab.runbook.schedule import schedule
from flatfab.workflows.commands.audit import audit
from flatfab.workflows.commands.rollout import RolloutResult, diff_devices, diff_only
from flatfab.workflows.commands.verify import verify
from flatfab.workflows.devices.inventory import build
from flatfab.workflows.project.layout import Project
from flatfab.workflows.runs.journal import Journal
from flatfab.workflows.sharding.sharded import ShardedDiffs, Sharding, audit_sharded, verify_sharded
from flatfab.workflows.sharding.shards import parse_shard_by
from tests.doubles.shard_devices import Faults, ShardDevices
from tests.support.distributed import in_process, lab_inventory, masked, masked_report
from tests.support.paths import ROOT

LINE = "ip prefix-list oob seq 5 permit any"
# per fabric: an unreachable host, and config drift on a leaf and a spine
FAULTS = {"lab": ("leaf3-h1", "leaf2", "spine1"), "rail": ("su2-s1", "su1-leaf2", "p1-ss1")}


def _faults(fabric: FabricState) -> Faults:
    down, *drifting = FAULTS[fabric.fabric]
    return Faults(unreachable={down: "no route to host (injected)"},
                  drift=dict.fromkeys(drifting, LINE))


@pytest.fixture(scope="module", params=["lab", "rail"])
def fabric(request: pytest.FixtureRequest) -> FabricState:
    return Project(root=ROOT, fabric=request.param).plan


@pytest.fixture
def nornir(tmp_path: Path, fabric: FabricState) -> Iterator[Nornir]:
    double = ShardDevices(fabric, _faults(fabric)).install()
    try:
        yield build(lab_inventory(tmp_path / "inventory", fabric), fabric)
    finally:
        double.uninstall()


SPECS = {"lab": ["leaves:1", "leaves:3"], "rail": ["pod", "plane", "su", "leaves:2"]}


def _specs(fabric: FabricState) -> list[str]:
    return SPECS[fabric.fabric]


def test_a_sharded_verify_equals_the_single_one(fabric: FabricState, nornir: Nornir) -> None:
    checks = sorted(CATALOG)
    single = verify(nornir, fabric, only_checks=checks)
    assert {f.check for f in single.findings} >= {"device.reachable"}  # the fault is seen
    for spec in _specs(fabric):
        sharding = Sharding.of(fabric, "verify", parse_shard_by(spec))
        report, gathered = verify_sharded(fabric, sharding, in_process(nornir, fabric), checks)
        assert not gathered.failed
        assert report.findings == single.findings, spec
        assert report.checks_run == single.checks_run and report.devices == single.devices
        assert report.observed == single.observed
        assert report.timings.keys() == single.timings.keys()


def test_a_sharded_audit_writes_the_single_audit_s_reports(
        fabric: FabricState, nornir: Nornir, tmp_path: Path) -> None:
    single = audit(nornir, fabric)
    down, *drifting = FAULTS[fabric.fabric]
    assert {d.device for d in single.drift} == set(drifting)  # the device down is not drift
    assert list(single.unread) == [down]
    reports.write_all(masked_report(single), tmp_path / "single")
    for spec in _specs(fabric):
        sharding = Sharding.of(fabric, "audit", parse_shard_by(spec))
        report, _ = audit_sharded(fabric, sharding, in_process(nornir, fabric))
        assert masked(json.loads(json_report.render(report))) == \
            masked(json.loads(json_report.render(single)))
        assert report.timings.keys() == single.timings.keys()
        out = tmp_path / spec.replace(":", "-")
        reports.write_all(masked_report(report), out)
        for path in sorted((tmp_path / "single").iterdir()):  # every format, byte for byte
            assert (out / path.name).read_bytes() == path.read_bytes(), (spec, path.name)


def _summary(result: RolloutResult) -> dict[str, object]:
    return {k: v for k, v in result.summary().items() if k not in ("run_id", "timings")}


def test_a_sharded_dry_run_equals_the_single_one(fabric: FabricState, nornir: Nornir,
                                                  tmp_path: Path) -> None:
    whole = whole_fabric()
    order = schedule(whole, fabric, {})
    single = diff_only(fabric, order, Journal.start(tmp_path, "rollout", fabric.fabric),
                       lambda configs: diff_devices(nornir, configs, read_only=True))
    down, *drifting = FAULTS[fabric.fabric]
    assert sorted(n for n, o in single.devices.items() if o.diff) == sorted(drifting)
    assert single.devices[down].error == "no route to host (injected)"
    for spec in _specs(fabric):
        sharding = Sharding.of(fabric, "diff", parse_shard_by(spec))
        journal = Journal.start(tmp_path, "rollout", fabric.fabric)
        sharded = diff_only(fabric, order, journal,
                            ShardedDiffs(fabric, sharding, in_process(nornir, fabric)))
        assert _summary(sharded) == _summary(single), spec
        assert (journal.directory / "plan.json").exists()


def test_a_failed_shard_names_its_devices_and_the_reason(fabric: FabricState,
                                                         nornir: Nornir) -> None:
    spec = _specs(fabric)[0]
    sharding = Sharding.of(fabric, "audit", parse_shard_by(spec))
    lost = sharding.shards[1]
    why = "tried 2 times: delivery 1: w1@h was lost mid-shard; delivery 2: w2@h: OSError: x"
    report, gathered = audit_sharded(fabric, sharding,
                                     in_process(nornir, fabric, failed={lost.id: why}))
    assert gathered.failed == {lost.id: why}
    named = {f.device: f.message for f in report.findings if f.check == "device.reachable"}
    for device in lost.devices:
        assert named[device] == f"{device} could not be read: shard {lost.id} failed: {why}"
    assert not {d.device for d in report.drift} & set(lost.devices)  # unread, never drift
    assert all(report.unread[d] == f"shard {lost.id} failed: {why}" for d in lost.devices)
    assert {d.name for d in report.devices if not d.reachable} >= set(lost.devices)
