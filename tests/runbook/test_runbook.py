"""Rollout plans: validation with precise errors, device schedules, gate scoping."""

from __future__ import annotations

from pathlib import Path

import pytest

from flatfab.checks import CATALOG, Finding, Severity
from flatfab.errors import InputError
from flatfab.model.state import FabricState
from flatfab.runbook.loader import check_against_fabric, load_runbook
from flatfab.runbook.model import RolloutPlan
from flatfab.runbook.schedule import schedule
from flatfab.workflows.commands.rollout import relevant, restrict
from flatfab.workflows.project.layout import Project
from tests.support.paths import ROOT

SHIPPED = sorted((ROOT / "runbooks").glob("*.yaml"))


@pytest.fixture(scope="module")
def lab_plan() -> FabricState:
    return Project(root=ROOT, fabric="lab").plan


def _load(tmp_path: Path, text: str, plan: FabricState) -> object:
    path = tmp_path / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    rollout, doc = load_runbook(path)
    return check_against_fabric(rollout, doc, str(path), plan, {}, CATALOG)


def _error(tmp_path: Path, text: str, plan: FabricState) -> str:
    with pytest.raises(InputError) as caught:
        _load(tmp_path, text, plan)
    return str(caught.value)


@pytest.fixture(scope="module")
def rail_plan() -> FabricState:
    return Project(root=ROOT, fabric="rail").plan


def test_seven_plans_are_shipped() -> None:
    assert [p.name for p in SHIPPED] == ["add-leaf.yaml", "first-bring-up.yaml",
                                         "fleet-bring-up.yaml", "lossless-change.yaml",
                                         "rail-bring-up.yaml", "to-lossless.yaml",
                                         "to-lossy.yaml"]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_plans_validate_against_their_fabric(path: Path, lab_plan: FabricState,
                                                     rail_plan: FabricState) -> None:
    plan = rail_plan if path.stem.startswith("rail") else lab_plan
    rollout, doc = load_runbook(path)
    found = check_against_fabric(rollout, doc, str(path), plan, {}, CATALOG)
    scheduled = [d for p in found.phases for d in p.devices]
    assert sorted(scheduled) == sorted(plan.devices)  # every device exactly once
    assert len(scheduled) == len(set(scheduled))


def test_rail_bring_up_takes_the_canary_su_then_whole_pods_then_super_spines(
        rail_plan: FabricState) -> None:
    path = ROOT / "runbooks" / "rail-bring-up.yaml"
    rollout, doc = load_runbook(path)
    found = check_against_fabric(rollout, doc, str(path), rail_plan, {}, CATALOG)
    batches = [(p.phase.name, list(b)) for p in found.phases for b in p.batches]
    assert batches[0] == ("canary-su", ["p1-pod1-spine1", "p2-pod1-spine1"]
                          + [f"su1-leaf{k}" for k in (1, 2, 3, 4)]
                          + ["su1-s1", "su1-s2", "store1"])
    assert batches[1] == ("pods", ["p1-pod2-spine1", "p2-pod2-spine1"]
                          + [f"su2-leaf{k}" for k in (1, 2, 3, 4)] + ["su2-s1", "su2-s2"])
    assert batches[2:] == [("superspines", [n]) for n in ("p1-ss1", "p1-ss2", "p2-ss1",
                                                          "p2-ss2")]


@pytest.mark.parametrize(("select", "expected"), [
    ("{sus: [7]}", "phases[0].select.sus[0]: fabric rail has no su 7 (sus: 1, 2)"),
    ("{pods: [3]}", "phases[0].select.pods[0]: fabric rail has no pod 3 (pods: 1, 2)"),
    ("{planes: [0]}", "phases[0].select.planes[0]"),
])
def test_a_phase_selecting_a_unit_the_fabric_lacks_is_refused(
        tmp_path: Path, rail_plan: FabricState, select: str, expected: str) -> None:
    text = f"name: x\nphases:\n  - name: a\n    select: {select}\n"
    assert expected in _error(tmp_path, text, rail_plan).replace(str(tmp_path) + "/", "")


def test_planes_and_sus_select_their_devices(rail_plan: FabricState) -> None:
    rollout = RolloutPlan.model_validate({"name": "x", "phases": [
        {"name": "plane2", "select": {"planes": [2]}, "batch_by": "pod", "batch": 1},
        {"name": "su2", "select": {"sus": [2]}}]})
    found = schedule(rollout, rail_plan, {})
    first, second = found.phases
    # super-spines belong to no pod: they are a batch of their own
    assert [sorted(b) for b in first.batches] == [
        ["p2-ss1", "p2-ss2"], sorted(["p2-pod1-spine1", "su1-leaf3", "su1-leaf4"]),
        sorted(["p2-pod2-spine1", "su2-leaf3", "su2-leaf4"])]
    assert second.devices == ["su2-leaf1", "su2-leaf2", "su2-s1", "su2-s2"]


def test_first_bring_up_order(lab_plan: FabricState) -> None:
    path = ROOT / "runbooks" / "first-bring-up.yaml"
    rollout, doc = load_runbook(path)
    found = check_against_fabric(rollout, doc, str(path), lab_plan, {}, CATALOG)
    batches = [(p.phase.name, list(b)) for p in found.phases for b in p.batches]
    assert batches == [
        ("canary-leaf", ["leaf1", "leaf1-h1", "leaf1-h2"]),
        ("spines", ["spine1"]), ("spines", ["spine2"]),
        ("leaves", ["leaf2", "leaf2-h1", "leaf2-h2"]),  # 25 % of 3 leaves: one at a time
        ("leaves", ["leaf3", "leaf3-h1", "leaf3-h2"]),
        ("leaves", ["leaf4", "leaf4-h1", "leaf4-h2"]),
    ]


@pytest.mark.parametrize(("text", "expected"), [
    ("phases: []\nname: x\n", "plan.yaml:1: phases: List should have at least 1 item"),
    ("name: x\nphases:\n  - name: a\n    batch: 0%\n",
     "plan.yaml:4: phases[0].batch: batch '0%' is neither"),
    ("name: x\nphases:\n  - name: a\n    batch: 0\n", "phases[0].batch"),
    ("name: x\nphases:\n  - name: a\n    select: {role: router}\n",
     "plan.yaml:4: phases[0].select.role[0]: Input should be 'superspine', 'spine', 'leaf' "
     "or 'host'"),
    ("name: x\nphases:\n  - name: a\n    gate: {timeout: 5}\n",
     "plan.yaml:4: phases[0].gate.timeout: unknown key 'timeout'"),
    ("name: x\nphases:\n  - name: a\n  - name: a\n", "phase name 'a' is used twice"),
    ("name: x\nfailure: {rollback: everything}\nphases:\n  - name: a\n",
     "plan.yaml:2: failure.rollback: Input should be 'device', 'phase' or 'run'"),
    ("name: x\nrevert_in: 5\nphases:\n  - name: a\n", "revert_in: Input should be greater"),
    ("name: x\nphases:\n  - name: a\n    gate: {checks: [bgp.sesion]}\n",
     "plan.yaml:4: phases[0].gate.checks[0]: unknown check id 'bgp.sesion'"),
    ("name: x\nphases:\n  - name: a\n    select: {names: [leaf9]}\n",
     "plan.yaml:4: phases[0].select.names[0]: 'leaf9' matches no device of fabric lab"),
    ("name: x\nphases:\n  - name: a\n    select: {group: gpu}\n",
     "phases[0].select.group: no inventory group 'gpu'"),
    ("name: x\nphases:\n  - name: a\n  - name: b\n    select: {role: spine}\n",
     "phase 'b' selects no device (earlier phases took every match)"),
    ("- just a list\n", "plan.yaml: a rollout plan is a mapping"),
    ("name: x\nphases:\n  - name: a\n    gate:\n      telemetry: {checks: [telemetry.storm]}\n",
     "plan.yaml:5: phases[0].gate.telemetry.checks[0]: unknown telemetry check "
     "'telemetry.storm' (known: telemetry.pause_storm, telemetry.lossless_drops"),
    ("name: x\nphases:\n  - name: a\n    gate:\n      telemetry: {quiet_s: 0}\n",
     "plan.yaml:5: phases[0].gate.telemetry.quiet_s: Input should be greater than or equal "
     "to 1"),
    ("name: x\nphases:\n  - name: a\n    gate:\n      telemetry: {quiet_s: 7200}\n",
     "phases[0].gate.telemetry.quiet_s: Input should be less than or equal to 3600"),
    ("name: x\nphases:\n  - name: a\n    gate:\n      telemetry: {checks: []}\n",
     "phases[0].gate.telemetry.checks: List should have at least 1 item"),
    ("name: x\nphases:\n  - name: a\n    gate:\n      telemetry: {quiet: 60}\n",
     "phases[0].gate.telemetry.quiet: unknown key 'quiet'"),
    ("name: x\nphases:\n  - name: a\n    gate:\n      telemetry:\n"
     "        checks: [telemetry.watchdog, telemetry.watchdog]\n",
     "phases[0].gate.telemetry.checks: telemetry check 'telemetry.watchdog' is listed twice"),
    ("name: x\nphases:\n  - name: a\n    gate: {checks: [telemetry.pause_storm]}\n",
     "phases[0].gate.checks[0]: unknown check id 'telemetry.pause_storm' (telemetry checks "
     "go under gate.telemetry.checks)"),
    ("name: x\nphases: [\n", "plan.yaml:3: malformed YAML"),
])
def test_malformed_plans_are_rejected_with_file_key_and_line(
        tmp_path: Path, lab_plan: FabricState, text: str, expected: str) -> None:
    message = _error(tmp_path, text, lab_plan)
    assert expected in message.replace(str(tmp_path) + "/", "")


def test_a_bad_telemetry_block_is_one_problem(tmp_path: Path, lab_plan: FabricState) -> None:
    text = ("name: x\nphases:\n  - name: a\n    gate:\n"
            "      telemetry: {quiet_s: 60, checks: [telemetry.pause_storm, drops]}\n")
    with pytest.raises(InputError) as caught:
        _load(tmp_path, text, lab_plan)
    assert len(caught.value.problems) == 1
    assert caught.value.problems[0].path == "phases[0].gate.telemetry.checks[1]"


def test_a_telemetry_gate_defaults_to_storms_drops_and_the_watchdog() -> None:
    gate = RolloutPlan.model_validate({"name": "x", "phases": [
        {"name": "a", "gate": {"telemetry": {}}}]}).phases[0].gate
    assert gate.telemetry is not None and gate.telemetry.quiet_s == 60
    assert gate.telemetry.checks == ["telemetry.pause_storm", "telemetry.lossless_drops",
                                     "telemetry.watchdog"]
    assert RolloutPlan.model_validate({"name": "x", "phases": [{"name": "a"}]}).phases[
        0].gate.telemetry is None  # only where a runbook asks for it


def test_first_phase_wins_and_attached_hosts_ride_with_their_leaf(
        lab_plan: FabricState) -> None:
    rollout = RolloutPlan.model_validate({"name": "x", "phases": [
        {"name": "canary", "select": {"names": ["leaf2"], "attached_hosts": True}},
        {"name": "rest", "select": {}, "batch": "50%"}]})
    found = schedule(rollout, lab_plan, {})
    assert found.phases[0].devices == ["leaf2", "leaf2-h1", "leaf2-h2"]
    rest = found.phases[1]
    assert "leaf2" not in rest.devices and len(rest.batches) == 2
    assert sorted(rest.devices + found.phases[0].devices) == sorted(lab_plan.devices)


def test_unselected_devices_are_listed(lab_plan: FabricState) -> None:
    rollout = RolloutPlan.model_validate({"name": "x", "phases": [
        {"name": "s", "select": {"role": "spine", "group": "core"}}]})
    found = schedule(rollout, lab_plan, {"spine1": ["core"]})
    assert found.phases[0].devices == ["spine1"]
    assert "spine2" in found.unselected and "leaf1-h1" in found.unselected


def test_restricted_plan_expects_nothing_through_devices_not_ready(
        lab_plan: FabricState) -> None:
    ready = {"leaf1", "spine1", "leaf1-h1"}
    view = restrict(lab_plan, ready)
    assert sorted(view.devices) == sorted(ready)
    peers = {p.peer_device for b in view.devices["leaf1"].bgp.values() for p in b.peers.values()}
    assert peers == {"spine1"}
    assert all({link.a.device, link.b.device} <= ready for link in view.links)
    assert view.tenants["blue"].members == ["leaf1-h1"]
    assert list(view.tenants["blue"].subnets) == ["leaf1"]
    assert len(lab_plan.devices) == 14  # the plan itself is untouched


def test_gate_findings_count_only_between_ready_devices(lab_plan: FabricState) -> None:
    def finding(device: str, port: str | None = None, link: str | None = None) -> Finding:
        return Finding(check="x", severity=Severity.ERROR, device=device, message="m",
                       port=port, link=link)

    ready = {"leaf1", "spine1"}
    assert relevant(finding("leaf1", "swp51"), lab_plan, ready)  # swp51 faces spine1
    assert not relevant(finding("leaf1", "swp52"), lab_plan, ready)  # spine2 not ready
    assert relevant(finding("leaf1", "swp51,swp52"), lab_plan, ready)
    assert not relevant(finding("leaf2"), lab_plan, ready)
    assert relevant(finding("leaf1"), lab_plan, ready)
    assert not relevant(finding("leaf1", link="leaf1:swp52--spine2:swp1"), lab_plan, ready)
