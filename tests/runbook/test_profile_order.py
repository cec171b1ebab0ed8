"""The order a rollout plan may move a fabric between congestion profiles in: towards lossy
from the edge to the core, towards lossless from the core to the edge; any other order is
refused before anything is touched, naming the two devices and their phases."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flatfab.checks import CATALOG
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState
from flatfab.plan.planner import plan
from flatfab.runbook.loader import check_against_fabric, load_runbook
from tests.support.paths import ROOT

RUNBOOKS = ROOT / "runbooks"


def _moving(tmp_path: Path, head: str, drop: str | None = None) -> FabricState:
    target = tmp_path / "lab"
    shutil.copytree(ROOT / "intents" / "lab", target)
    qos = target / "qos.yaml"
    lines = [line for line in qos.read_text().splitlines() if drop is None or drop not in line]
    qos.write_text(head + "\n".join(lines) + "\n")
    return plan(load_intent(target))


@pytest.fixture(scope="module")
def to_lossy(tmp_path_factory: pytest.TempPathFactory) -> FabricState:
    return _moving(tmp_path_factory.mktemp("lossy"),
                   "profile: lossy\ntransition_from: lossless\n", "priorities:")


@pytest.fixture(scope="module")
def to_lossless(tmp_path_factory: pytest.TempPathFactory) -> FabricState:
    return _moving(tmp_path_factory.mktemp("lossless"), "transition_from: lossy\n")


def _check(path: Path, fabric: FabricState) -> None:
    rollout, doc = load_runbook(path)
    check_against_fabric(rollout, doc, str(path), fabric, {}, CATALOG)


def test_the_shipped_plans_go_each_way_in_order(to_lossy: FabricState,
                                                to_lossless: FabricState) -> None:
    _check(RUNBOOKS / "to-lossy.yaml", to_lossy)
    _check(RUNBOOKS / "to-lossless.yaml", to_lossless)


def test_a_plan_in_the_wrong_order_is_refused_naming_both_devices(
        to_lossy: FabricState, to_lossless: FabricState) -> None:
    with pytest.raises(InputError) as caught:
        _check(RUNBOOKS / "to-lossless.yaml", to_lossy)
    problem = caught.value.problems[0]
    assert problem.path == "phases[0].select" and problem.line == 12
    assert problem.reason == (
        "spine1 changes to lossy (phase 'spines' batch 1) before leaf1 (by phase 'leaves' "
        "batch 1); a move to lossy goes from the edge to the core: each device after every "
        "one below it")
    with pytest.raises(InputError) as caught:
        _check(RUNBOOKS / "to-lossy.yaml", to_lossless)
    assert caught.value.problems[0].reason.startswith("leaf1 changes to lossless (phase "
                                                      "'leaves' batch 1) before spine1")


def test_plans_outside_a_move_are_not_ordered(tmp_path: Path) -> None:
    # the same qos.yaml without transition_from: any order is a plain rollout
    fabric = _moving(tmp_path, "profile: lossy\n", "priorities:")
    _check(RUNBOOKS / "to-lossless.yaml", fabric)


def test_unmanaged_hosts_are_their_owners_to_move(tmp_path: Path) -> None:
    # no rollout takes leaf1's hosts: leaf1 moving before them is not refused
    fabric = _moving(tmp_path, "profile: lossy\ntransition_from: lossless\n", "priorities:")
    hosts = {n: d.model_copy(update={"managed": False}) for n, d in fabric.devices.items()
             if n.startswith("leaf1-h")}
    _check(RUNBOOKS / "to-lossy.yaml",
           fabric.model_copy(update={"devices": {**fabric.devices, **hosts}}))
