"""A rollout's diff pass never takes a device it could not read for one with no change.

The device side is a double (tests/doubles/rollout.FakeDevice behind the diff pass's own
`device_io.config_diff`, the gate passing): what is tested is what the run makes of a read
that failed. A dry run names each such device and exits 3; a real run never commits to it,
never counts it as converged, and does not end "done" with exit 0: planned for a phase it
fails the run before any change (beyond the plan's tolerance: halted) or is tolerated and
not landed (exit 1); in no phase at all it is named, and the run exits 3.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nornir.core import Nornir
from nornir.core.inventory import Defaults, Groups, Host, Hosts, Inventory
from nornir.core.task import Task
from nornir.plugins.runners import ThreadedRunner

from flatfab.model.state import FabricState
from flatfab.runbook.model import whole_fabric
from flatfab.runbook.schedule import schedule
from flatfab.workflows.commands import rollout as rollout_mod
from flatfab.workflows.devices import device_io
from flatfab.workflows.devices.connections import ConnectError
from flatfab.workflows.runs.journal import Journal
from tests.doubles.rollout import FakeDevice
from tests.support.telemetry_streams import lab_plan

PLAN = lab_plan()
DOWN = "leaf3"
WHY = "timed out after 10 s connecting to 192.0.2.15:22"


def _nornir(plan: FabricState) -> Nornir:
    hosts = Hosts({name: Host(name=name, hostname="192.0.2.1", platform=d.platform)
                   for name, d in plan.devices.items()})
    return Nornir(inventory=Inventory(hosts=hosts, groups=Groups(), defaults=Defaults()),
                  runner=ThreadedRunner(num_workers=8))


@pytest.fixture
def devices(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, FakeDevice]]:
    """Every device at intent but leaf1 (old config); leaf3 cannot be reached."""
    configs = rollout_mod.render_all(PLAN)
    fakes = {name: FakeDevice("old\n" if name == "leaf1" else text, lambda: None)
             for name, text in configs.items()}

    def config_diff(task: Task, intended: str, read_only: bool) -> tuple[str, list[str]]:
        if task.host.name == DOWN:
            raise ConnectError(WHY)
        device = fakes[task.host.name]
        device.load_replace_candidate(intended)
        diff = device.compare_config()
        device.discard_config()
        return diff, []

    def driver(task: Task, *, read_only: bool) -> Any:
        if task.host.name == DOWN:
            raise ConnectError(WHY)
        return fakes[task.host.name]

    monkeypatch.setattr(device_io, "config_diff", config_diff)
    monkeypatch.setattr(rollout_mod, "driver", driver)
    monkeypatch.setattr(rollout_mod, "release", lambda _task: None)
    monkeypatch.setattr(rollout_mod, "run_gate", lambda *_a, **_k: [])
    yield fakes


def _run(tmp_path: Path, *, dry_run: bool, groups: dict[str, list[str]] | None = None,
         tolerate: int = 0, runbook_only: list[str] | None = None,
         ) -> rollout_mod.RolloutResult:
    plan = whole_fabric(180, 5, 8)
    if runbook_only is not None:  # one phase selecting only these devices
        phase = plan.phases[0].model_copy(update={"select": plan.phases[0].select.model_copy(
            update={"names": runbook_only})})
        plan = plan.model_copy(update={"phases": [phase]})
    plan = plan.model_copy(update={"failure": plan.failure.model_copy(
        update={"max_failed_devices": tolerate})})
    journal = Journal.start(tmp_path, "rollout", PLAN.fabric)
    return rollout_mod.rollout(_nornir(PLAN), PLAN, plan, schedule(plan, PLAN, groups or {}),
                               journal, dry_run=dry_run)


def test_a_dry_run_names_the_unread_device_and_exits_3(
        devices: dict[str, FakeDevice], tmp_path: Path) -> None:
    result = _run(tmp_path, dry_run=True)
    assert result.unread == {DOWN: WHY}
    assert [n for n, o in result.devices.items() if o.diff] == ["leaf1"]
    assert result.exit_code == 3 and result.summary()["unread"] == {DOWN: WHY}


def test_a_real_rollout_halts_before_any_change_when_it_cannot_read_a_planned_device(
        devices: dict[str, FakeDevice], tmp_path: Path) -> None:
    result = _run(tmp_path, dry_run=False)
    assert result.status == "halted" and DOWN in result.reason and result.exit_code == 1
    assert devices["leaf1"].history == []  # nothing committed


def test_a_tolerated_unread_device_is_not_landed_never_converged(
        devices: dict[str, FakeDevice], tmp_path: Path) -> None:
    result = _run(tmp_path, dry_run=False, tolerate=1)
    assert result.status == "done" and result.tolerated == {DOWN: WHY}
    assert result.exit_code == 1 and DOWN not in result.confirmed
    assert devices["leaf1"].history == ["commit", "confirm"]


def test_an_unread_device_no_phase_selects_still_makes_the_run_incomplete(
        devices: dict[str, FakeDevice], tmp_path: Path) -> None:
    result = _run(tmp_path, dry_run=False, runbook_only=["leaf1"])
    assert result.status == "done" and result.ok and result.confirmed == ["leaf1"]
    assert result.unread == {DOWN: WHY} and result.exit_code == 3
